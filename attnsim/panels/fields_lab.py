"""The three-fields lab: how far a query reaches into three clusters of keys.

Runs on the live workbench when the scenario is a direct scenario whose keys are labelled by
field (the rule is in :mod:`attnsim.views.fields_lab`; the three-fields preset follows it). For
every query it shows the weight gathered from each field (sums of the head's weights over the
field's keys), the entropy of the weights, and, for the receiving query, the mixture it
returns; a small scatter shows keys and queries on their best 2-D plane. Three sliders set how
much the receiving query points into each field (one undoable edit per drag).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.experiments import three_fields
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.views.fields_lab import (
    FIELD_NAMES,
    FieldLayout,
    field_layout,
    field_sums,
    mix_after_slider,
    mix_of_query,
    plane_coords,
    query_from_mix,
    span_fraction,
)

from .base import Panel, content_parts
from .style import QUERY, fmt
from .widgets import SoftLabel, column, open_preset

# Okabe-Ito, distinct from the vermillion of queries.
FIELD_COLORS = (QColor("#0072B2"), QColor("#009E73"), QColor("#CC79A7"))
NO_FIELD = QColor("#9A9A9A")
TEXT = QColor("#222222")
FAINT = QColor("#777777")
PRESET = "three-fields"
SLIDER_STEPS = 100
SLIDERS_ONE_ROW_WIDTH = 560  # narrower than this, each field label goes above its slider


def fit_points(
    points: ArrayLike, width: float, height: float, margin: float = 14.0
) -> tuple[NDArray[np.float64], float]:
    """Pixel positions of 2-D points in a ``width`` x ``height`` box, equal scale on both axes.

    ``points`` (m, 2) in data units; returns pixels (m, 2) with y pointing down, and the
    pixels per data unit. The points' bounding box is centred in the box.
    """
    P = np.asarray(points, dtype=float).reshape(-1, 2)
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    ppu = float(min((width - 2 * margin) / span[0], (height - 2 * margin) / span[1]))
    ppu = max(ppu, 1e-9)
    mid = (lo + hi) / 2
    x = width / 2 + (P[:, 0] - mid[0]) * ppu
    y = height / 2 - (P[:, 1] - mid[1]) * ppu
    return np.column_stack([x, y]), ppu


def stacked_segments(fractions: ArrayLike, x0: float, width: float) -> NDArray[np.float64]:
    """(left, width) in pixels of each segment of a stacked bar: (k,) fractions -> (k, 2)."""
    f = np.clip(np.asarray(fractions, dtype=float), 0.0, None)
    widths = f * width
    lefts = x0 + np.concatenate([[0.0], np.cumsum(widths)[:-1]])
    return np.column_stack([lefts, widths])


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


def place_label(
    anchor: ArrayLike,
    size: tuple[float, float],
    gap: float,
    bounds: tuple[float, float, float, float],
    taken: list[tuple[float, float, float, float]],
) -> tuple[float, float]:
    """Top-left corner of a ``size`` (w, h) label near ``anchor`` (2,), inside ``bounds``
    (x, y, w, h), overlapping the ``taken`` rectangles as little as possible.

    Tries right, left, below, above and the diagonals at ``gap`` and farther; the first spot
    that is inside and overlaps nothing wins, otherwise the least overlapping one.
    """
    ax, ay = (float(v) for v in np.asarray(anchor, dtype=float)[:2])
    w, h = size
    bx, by, bw, bh = bounds
    best, best_cost = (ax + gap, ay - h / 2), math.inf
    for extra in (0.0, 10.0, 22.0):
        g = gap + extra
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, -1), (1, 1), (-1, 1)):
            x = ax + g if dx > 0 else ax - g - w if dx < 0 else ax - w / 2
            y = ay + g if dy > 0 else ay - g - h if dy < 0 else ay - h / 2
            x = min(max(x, bx), bx + bw - w)
            y = min(max(y, by), by + bh - h)
            cost = sum(_overlap((x, y, w, h), t) for t in taken)
            cost += 0.01 * math.hypot(x + w / 2 - ax, y + h / 2 - ay)
            if cost < best_cost:
                best, best_cost = (x, y), cost
            if cost < 1.0:
                return x, y
    return best


@cache
def reference_result() -> dict[str, object]:
    """The engine's three-fields experiment (seed 4, gain 3), shown when the lab is off."""
    return three_fields()


class _Canvas(QWidget):
    """A painted figure: text drawn with QPainter so SVG exports keep it as text."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 90)

    def font_of(self, scale: float = 1.0, bold: bool = False) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(max(self.font().pointSizeF() * scale, 6.0))
        f.setBold(bold)
        return f

    def title_font(self) -> QFont:
        return self.font_of(0.95, bold=True)

    def draw_title(self, p: QPainter, text: str, width: float) -> None:
        """The figure's bold title at the top left, elided to ``width`` px."""
        font = self.title_font()
        p.setFont(font)
        p.setPen(TEXT)
        p.drawText(QRectF(4, 0, width, 18), Qt.AlignmentFlag.AlignLeft
                   | Qt.AlignmentFlag.AlignVCenter, QFontMetricsF(font).elidedText(
                       text, Qt.TextElideMode.ElideRight, width))  # fmt: skip


class FieldBarsView(_Canvas):
    """Stacked bars: the weight each query gathers from each field, with numbers and entropy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: list[str] = []
        self.sums = np.zeros((0, 3))
        self.entropy = np.zeros(0)
        self.max_entropy = np.zeros(0)  # each row's entropy ceiling in bits (n_q,)
        self.selected = 0
        self.row_rects: list[QRectF] = []

    def sizeHint(self) -> QSize:
        return QSize(420, 150)

    def set_data(self, labels, sums, entropy, max_entropy, selected) -> None:
        """``sums`` (n_q, 3), ``entropy`` and ``max_entropy`` (n_q,) in bits (the trace's)."""
        self.labels = list(labels)
        self.sums = np.asarray(sums, dtype=float)
        self.entropy = np.asarray(entropy, dtype=float)
        self.max_entropy = np.broadcast_to(
            np.asarray(max_entropy, dtype=float), self.entropy.shape
        ).copy()
        self.selected = int(selected)
        self.update()

    def shared_ceiling(self) -> float | None:
        """The rows' common entropy ceiling, or None when a mask gives rows different ones."""
        m = self.max_entropy
        return float(m[0]) if m.size and bool(np.all(m == m[0])) else None

    def entropy_text(self, r: int) -> str:
        """Row r's entropy as shown: against its own ceiling when the rows differ."""
        if self.shared_ceiling() is None:
            return f"{fmt(self.entropy[r], 2)} / {fmt(self.max_entropy[r], 2)}"
        return f"{fmt(self.entropy[r], 2)} bits"

    def header_texts(self) -> tuple[str, str]:
        """The entropy column's header, long and short."""
        ceiling = self.shared_ceiling()
        if ceiling is None:
            return "entropy / max, bits", "bits / max"
        return f"entropy, bits (max {fmt(ceiling, 2)})", f"bits (max {fmt(ceiling, 2)})"

    def layout_rows(self) -> tuple[list[QRectF], float, float, float]:
        """Row rectangles (label line + bar line), bar x and width, numbers column x."""
        w, h = float(self.width()), float(self.height())
        n = max(len(self.labels), 1)
        top = 20.0
        row_h = min((h - top - 2) / n, 44.0)
        num_w = 3 * 40.0 + 74.0
        bar_x = 8.0
        bar_w = max(w - bar_x - num_w - 10, 40.0)
        rows = [QRectF(2, top + r * row_h, w - 4, row_h - 2) for r in range(n)]
        return rows, bar_x, bar_w, bar_x + bar_w + 8

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        rows, bar_x, bar_w, num_x = self.layout_rows()
        self.row_rects = rows
        header_font = self.font_of(0.85)
        title_text = "Weight gathered from each field"
        title_need = QFontMetricsF(self.title_font()).horizontalAdvance(title_text)
        header, short_header = self.header_texts()
        header_w = QFontMetricsF(header_font).horizontalAdvance(header) + 4
        if title_need + header_w + 12 > self.width():  # narrow: a shorter header
            header = short_header
            header_w = QFontMetricsF(header_font).horizontalAdvance(header) + 4
        self.draw_title(p, title_text, self.width() - header_w - 12)
        p.setFont(header_font)
        p.setPen(FAINT)
        p.drawText(QRectF(self.width() - header_w - 4, 0, header_w, 18),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   header)  # fmt: skip
        label_font = self.font_of(0.9)
        num_font = self.font_of(0.9)
        for r, rect in enumerate(rows):
            if r >= len(self.labels):
                break
            sel = r == self.selected
            if sel:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(213, 94, 0, 28))
                p.drawRoundedRect(rect, 4, 4)
            line_h = rect.height() / 2
            p.setFont(self.font_of(0.9, bold=sel))
            p.setPen(QUERY.darker(130) if sel else TEXT)
            # The label line is free above the numbers too: it may run the row's full width.
            p.drawText(QRectF(bar_x, rect.top(), rect.right() - bar_x - 2, line_h),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                       ("▶ " if sel else "") + self.labels[r])  # fmt: skip
            bar = QRectF(bar_x, rect.top() + line_h + 1, bar_w, max(line_h - 5, 6))
            segs = stacked_segments(self.sums[r], bar_x, bar_w)
            for f, (left, width) in enumerate(segs):
                p.setPen(QPen(QColor("white"), 1))
                p.setBrush(FIELD_COLORS[f % 3])
                p.drawRect(QRectF(left, bar.top(), width, bar.height()))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor("#444444"), 0.8))
            p.drawRect(bar)
            p.setFont(num_font)
            for f in range(self.sums.shape[1]):
                cell = QRectF(num_x + 40 * f, bar.top() - 2, 38, bar.height() + 4)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(FIELD_COLORS[f % 3])
                p.drawRect(QRectF(cell.left(), cell.center().y() - 3.5, 7, 7))
                p.setPen(TEXT)
                p.drawText(cell.adjusted(9, 0, 0, 0), Qt.AlignmentFlag.AlignLeft
                           | Qt.AlignmentFlag.AlignVCenter, fmt(self.sums[r, f], 2))  # fmt: skip
            p.setFont(label_font)
            p.drawText(QRectF(num_x + 120, bar.top() - 2, 74, bar.height() + 4),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       self.entropy_text(r))  # fmt: skip
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        for r, rect in enumerate(self.row_rects):
            if rect.contains(pos):
                self.picked.emit(r)
                return
        super().mousePressEvent(event)


class MixtureView(_Canvas):
    """The receiving query's mixture Σ w v: one bar per value coordinate, grouped by field."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros(0)
        self.value_field = np.zeros(0, dtype=int)
        self.axes: list[str] = []
        self.title = ""

    def sizeHint(self) -> QSize:
        return QSize(420, 190)

    def set_data(self, values, value_field, axes, title) -> None:
        self.values = np.asarray(values, dtype=float)
        self.value_field = np.asarray(value_field, dtype=int)
        self.axes = list(axes)
        self.title = title
        self.update()

    def bar_slots(self, x0: float, width: float) -> NDArray[np.float64]:
        """(d, 2) left x and width of each bar, with a gap wherever the field changes."""
        d = self.values.size
        if d == 0:
            return np.zeros((0, 2))
        breaks = int(np.count_nonzero(np.diff(self.value_field) != 0))
        gap = 8.0
        slot = max((width - gap * breaks) / d, 2.0)
        lefts, x = [], x0
        for j in range(d):
            if j and self.value_field[j] != self.value_field[j - 1]:
                x += gap
            lefts.append(x)
            x += slot
        return np.column_stack([lefts, np.full(d, slot)])

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h = float(self.width()), float(self.height())
        self.draw_title(p, self.title, w - 8)
        d = self.values.size
        if d == 0:
            p.end()
            return
        slots = self.bar_slots(10.0, w - 20.0)
        num_font = self.font_of(0.78)
        fm = QFontMetricsF(num_font)
        rotate = fm.horizontalAdvance("−0.00") > slots[0, 1] - 1
        # Room for the value labels above positive bars and below negative ones.
        extent = (fm.horizontalAdvance("−0.00") if rotate else fm.height()) + 3
        top, bottom = 20.0 + extent, h - 32.0
        if np.any(self.values < 0):
            bottom -= extent
        vmax = float(np.max(self.values, initial=0.0))
        vmin = float(np.min(self.values, initial=0.0))
        span = max(vmax - vmin, 1e-9)
        zero_y = top + (vmax / span) * (bottom - top)
        for j, (left, slot) in enumerate(slots):
            f = int(self.value_field[j]) if j < self.value_field.size else -1
            v = float(self.values[j])
            y = top + ((vmax - v) / span) * (bottom - top)
            rect = QRectF(left + 1.5, min(y, zero_y), max(slot - 3, 1), abs(zero_y - y))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(FIELD_COLORS[f] if f >= 0 else NO_FIELD)
            p.drawRect(rect)
            p.setFont(num_font)
            p.setPen(TEXT)
            text = fmt(v, 2)
            anchor_y = rect.top() - 2 if v >= 0 else rect.bottom() + 2
            if rotate:
                p.save()
                p.translate(left + slot / 2 + fm.height() / 3, anchor_y)
                p.rotate(-90)
                flip = v < 0
                p.drawText(QPointF(-fm.horizontalAdvance(text) if flip else 0, 0), text)
                p.restore()
            else:
                box = QRectF(left - 4, anchor_y - 14 if v >= 0 else anchor_y, slot + 8, 14)
                p.drawText(box, Qt.AlignmentFlag.AlignHCenter | (Qt.AlignmentFlag.AlignBottom
                           if v >= 0 else Qt.AlignmentFlag.AlignTop), text)  # fmt: skip
        p.setPen(QPen(QColor("#444444"), 1))
        p.drawLine(QPointF(8, zero_y), QPointF(w - 8, zero_y))
        # Under each field's group of bars: its name; under each bar: its index in the group.
        p.setFont(self.font_of(0.78))
        p.setPen(FAINT)
        for j, (left, slot) in enumerate(slots):
            p.drawText(QRectF(left, h - 30, slot, 12), Qt.AlignmentFlag.AlignHCenter,
                       str(j + 1))  # fmt: skip
        p.setFont(self.font_of(0.85))
        start = 0
        for j in range(1, d + 1):
            if j == d or self.value_field[j] != self.value_field[start]:
                f = int(self.value_field[start])
                name = FIELD_NAMES[f] if f >= 0 else "other coordinates"
                x0, x1 = slots[start, 0], slots[j - 1].sum()
                p.setPen(FIELD_COLORS[f].darker(120) if f >= 0 else FAINT)
                p.drawText(QRectF(x0 - 10, h - 17, x1 - x0 + 20, 14),
                           Qt.AlignmentFlag.AlignHCenter, name)  # fmt: skip
                start = j
        p.end()


class ScatterView(_Canvas):
    """Keys (dots, by field) and queries (diamonds) on their best 2-D plane."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key_xy = np.zeros((0, 2))
        self.query_xy = np.zeros((0, 2))
        self.origin_xy = np.zeros(2)
        self.key_field = np.zeros(0, dtype=int)
        self.query_labels: list[str] = []
        self.explained = np.zeros(2)
        self.selected = 0
        self.query_px = np.zeros((0, 2))

    def sizeHint(self) -> QSize:
        return QSize(260, 300)

    def set_data(self, key_xy, query_xy, origin_xy, key_field, query_labels, explained,
                 selected) -> None:  # fmt: skip
        self.key_xy = np.asarray(key_xy, dtype=float)
        self.query_xy = np.asarray(query_xy, dtype=float)
        self.origin_xy = np.asarray(origin_xy, dtype=float)
        self.key_field = np.asarray(key_field, dtype=int)
        self.query_labels = list(query_labels)
        self.explained = np.asarray(explained, dtype=float)
        self.selected = int(selected)
        self.setToolTip(
            "Keys (dots, coloured by field) and queries (diamonds) on the plane through their "
            f"mean that keeps most of their spread ({100 * float(self.explained.sum()):.0f} %). "
            "Click a query to make it the receiving one."
        )
        self.update()

    def plot_rect(self) -> QRectF:
        return QRectF(4, 22, self.width() - 8, self.height() - 44)

    def pixel_positions(self) -> tuple[NDArray[np.float64], NDArray[np.float64], np.ndarray]:
        """Pixels of keys (n_k, 2), queries (n_q, 2) and the origin (2,) inside plot_rect."""
        r = self.plot_rect()
        pts = np.vstack([self.key_xy, self.query_xy, self.origin_xy[None, :]])
        px, _ = fit_points(pts, r.width(), r.height(), margin=30.0)
        px += [r.left(), r.top()]
        nk, nq = len(self.key_xy), len(self.query_xy)
        return px[:nk], px[nk : nk + nq], px[-1]

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h = float(self.width()), float(self.height())
        # A narrow view says less rather than cutting its title off.
        title = "Keys and queries, best 2-D plane"
        if QFontMetricsF(self.title_font()).horizontalAdvance(title) > w - 8:
            title = "Keys, queries (2-D)"
        self.draw_title(p, title, w - 8)
        r = self.plot_rect()
        p.setPen(QPen(QColor("#DDDDDD"), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(r)
        if len(self.key_xy) == 0:
            p.end()
            return
        keys, queries, origin = self.pixel_positions()
        self.query_px = queries
        # The origin and the lines to each query: a query is a direction from the origin.
        p.setPen(QPen(QColor("#BBBBBB"), 1, Qt.PenStyle.DashLine))
        for q in queries:
            p.drawLine(QPointF(*origin), QPointF(*q))
        p.setPen(QPen(QColor("#555555"), 1.2))
        o = QPointF(*origin)
        p.drawLine(o + QPointF(-4, 0), o + QPointF(4, 0))
        p.drawLine(o + QPointF(0, -4), o + QPointF(0, 4))
        small = self.font_of(0.78)
        p.setFont(small)
        p.setPen(FAINT)
        p.drawText(o + QPointF(5, 11), "0")
        for j, k in enumerate(keys):
            f = int(self.key_field[j])
            p.setPen(QPen(QColor("white"), 1))
            p.setBrush(FIELD_COLORS[f] if f >= 0 else NO_FIELD)
            p.drawEllipse(QPointF(*k), 5, 5)
        # Labels go where they cover no point and no other label (field names first).
        taken = [(x - 6, y - 6, 12, 12) for x, y in np.vstack([keys, queries])]
        bounds = (r.left() + 2, r.top() + 2, r.width() - 4, r.height() - 4)
        name_font = self.font_of(0.85, bold=True)
        fm = QFontMetricsF(name_font)
        p.setFont(name_font)
        for f in range(3):
            members = keys[self.key_field == f]
            if not len(members):
                continue
            c = members.mean(axis=0)
            spread = float(np.max(np.hypot(*(members - c).T), initial=0.0))
            size = (fm.horizontalAdvance(FIELD_NAMES[f]) + 4, fm.height())
            x, y = place_label(c, size, spread + 6, bounds, taken)
            taken.append((x, y, *size))
            p.setPen(FIELD_COLORS[f].darker(130))
            p.drawText(QRectF(x, y, *size), Qt.AlignmentFlag.AlignCenter, FIELD_NAMES[f])
        for i, q in enumerate(queries):
            sel = i == self.selected
            size = 7.5 if sel else 5.5
            c = QPointF(*q)
            diamond = [c + QPointF(0, -size), c + QPointF(size, 0), c + QPointF(0, size),
                       c + QPointF(-size, 0)]  # fmt: skip
            p.setPen(QPen(QColor("#222222") if sel else QColor("white"), 1.5 if sel else 1))
            p.setBrush(QUERY)
            p.drawPolygon(diamond)
        for i, q in enumerate(queries):
            sel = i == self.selected
            font = self.font_of(0.8, bold=sel)
            fm = QFontMetricsF(font)
            text = self.query_labels[i]
            box_size = (fm.horizontalAdvance(text) + 4, fm.height())
            x, y = place_label(q, box_size, 9.0, bounds, taken)
            taken.append((x, y, *box_size))
            box = QRectF(x, y, *box_size)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(255, 255, 255, 210))
            p.drawRect(box)
            p.setFont(font)
            p.setPen(QUERY.darker(140))
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        p.setFont(small)
        p.setPen(FAINT)
        ex = self.explained
        footer = f"the plane keeps {fmt(100 * float(ex.sum()), 0)} % of the spread (PCA)"
        p.drawText(QRectF(4, h - 20, w - 8, 18), Qt.AlignmentFlag.AlignLeft
                   | Qt.AlignmentFlag.AlignVCenter, QFontMetricsF(small).elidedText(
                       footer, Qt.TextElideMode.ElideRight, w - 8))  # fmt: skip
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = np.array([event.position().x(), event.position().y()])
        if len(self.query_px):
            dist = np.hypot(*(self.query_px - pos).T)
            i = int(np.argmin(dist))
            if dist[i] <= 12:
                self.picked.emit(i)
                return
        super().mousePressEvent(event)


class FieldsLabPanel(Panel):
    """Three fields of keys: per-field weights, entropy, mixture, and queries built from fields."""

    panel_id = "fields_lab"
    title = "Three fields"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._drag: int | None = None
        self._drag_field: int | None = None
        self._drag_mix: np.ndarray | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        self.stack.addWidget(self._build_lab())
        # The explanation scrolls in a short dock rather than being cut off.
        off = QScrollArea()
        off.setWidget(self._build_off())
        off.setWidgetResizable(True)
        off.setFrameShape(QFrame.Shape.NoFrame)
        off.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.stack.addWidget(off)
        self.schedule_refresh()

    # ---- construction -------------------------------------------------------------------------
    def _build_lab(self) -> QWidget:
        page, v = column(spacing=4)
        top = QHBoxLayout()
        top.addWidget(QLabel("Query:"))
        self.query_combo = QComboBox()
        self.query_combo.setToolTip("The receiving query: its sliders and its mixture are shown")
        self.query_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.query_combo.setMinimumContentsLength(10)
        self.query_combo.currentIndexChanged.connect(self._combo_picked)
        top.addWidget(self.query_combo, 1)
        self.info = QLabel()
        self.info.setStyleSheet("color: #555555;")
        self.info.setMinimumWidth(40)  # may be clipped in a narrow dock; the tooltip has it
        top.addWidget(self.info, 2)
        v.addLayout(top)
        grid = QGridLayout()
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(0)
        self._slider_grid = grid
        self._slider_parts: list[tuple[QLabel, QSlider, QLabel]] = []
        self._sliders_wide: bool | None = None
        self.sliders: list[QSlider] = []
        self.slider_values: list[QLabel] = []
        for f, name in enumerate(FIELD_NAMES):
            # Soft: the label goes above its slider in a narrow panel, so it never widens it.
            label = SoftLabel(
                f"<span style='color:{FIELD_COLORS[f].name()}'>■</span> {name}"
            )  # fmt: skip
            s = QSlider(Qt.Orientation.Horizontal)
            s.setRange(0, SLIDER_STEPS)
            s.setPageStep(10)
            s.setMinimumWidth(30)
            s.setToolTip(
                f"How much the receiving query points into {name}: its coefficient on the "
                f"field's direction. The other fields rescale so the query keeps its length."
            )
            s.setObjectName(f"fields_lab-slider-{f}")
            s.sliderPressed.connect(lambda f=f: self._slider_pressed(f))
            s.sliderReleased.connect(self._slider_released)
            s.valueChanged.connect(lambda value, f=f: self._slider_moved(f, value))
            value = QLabel("0.00")
            value.setMinimumWidth(30)
            self._slider_parts.append((label, s, value))
            self.sliders.append(s)
            self.slider_values.append(value)
        self._place_sliders()
        v.addLayout(grid)
        charts = QHBoxLayout()
        charts.setSpacing(6)
        left = QVBoxLayout()
        left.setSpacing(2)
        self.bars = FieldBarsView()
        self.bars.picked.connect(self._set_receiving)
        self.mixture = MixtureView()
        left.addWidget(self.bars, 4)
        left.addWidget(self.mixture, 5)
        charts.addLayout(left, 3)
        self.scatter = ScatterView()
        self.scatter.picked.connect(self._set_receiving)
        charts.addWidget(self.scatter, 2)
        v.addLayout(charts, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555555;")
        v.addWidget(self.note)
        return page

    def _place_sliders(self) -> None:
        """One row (label, slider, value) x 3 when wide; narrow, each label above its slider."""
        wide = self.width() >= SLIDERS_ONE_ROW_WIDTH
        if wide == self._sliders_wide:
            return
        self._sliders_wide = wide
        grid = self._slider_grid
        for parts in self._slider_parts:
            for w in parts:
                grid.removeWidget(w)
        for c in range(9):
            grid.setColumnStretch(c, 0)
        for f, (label, slider, value) in enumerate(self._slider_parts):
            if wide:
                grid.addWidget(label, 0, 3 * f)
                grid.addWidget(slider, 0, 3 * f + 1)
                grid.addWidget(value, 0, 3 * f + 2)
                grid.setColumnStretch(3 * f + 1, 1)
            else:
                grid.addWidget(label, 0, 2 * f, 1, 2)
                grid.addWidget(slider, 1, 2 * f)
                grid.addWidget(value, 1, 2 * f + 1)
                grid.setColumnStretch(2 * f, 1)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_sliders()

    def _build_off(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        self.off_text = QLabel()
        self.off_text.setWordWrap(True)
        self.off_text.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.off_text)
        self.open_button = QPushButton("Open the three-fields preset")
        self.open_button.setToolTip("Replace the scenario by the three-fields preset (undoable)")
        self.open_button.clicked.connect(self.open_preset)
        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addStretch(1)
        v.addLayout(row)
        self.reference = QLabel()
        self.reference.setTextFormat(Qt.TextFormat.RichText)
        self.reference.setWordWrap(True)
        v.addWidget(self.reference)
        v.addStretch(1)
        return page

    # ---- state read from the workbench --------------------------------------------------------
    def field_layout(self) -> FieldLayout | str:
        """The current scenario's field layout (memoised by the workbench)."""
        return self.wb.derived(_field_layout)

    @property
    def active(self) -> bool:
        return isinstance(self.field_layout(), FieldLayout)

    def numbers(self) -> dict[str, np.ndarray]:
        """What the lab shows, from the engine: per-field sums (n_q, 3), entropy (n_q,),
        the receiving query's mixture (d_v,) and mix (3,)."""
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            raise ValueError(f"the lab does not apply: {layout}")
        tr = self.wb.result.heads[0]
        i = self.wb.receiving
        assert self.wb.scenario.Q is not None
        return {
            "per_field": field_sums(tr.weights, layout.key_field, len(layout.fields)),
            "entropy": tr.entropy,
            "mixture": tr.output[i],
            "mix": mix_of_query(self.wb.scenario.Q[i], layout.directions),
        }

    # ---- user actions -------------------------------------------------------------------------
    def open_preset(self) -> None:
        open_preset(self, PRESET)

    def _combo_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self._set_receiving(index)

    def _set_receiving(self, index: int) -> None:
        if 0 <= index < self.wb.scenario.n_queries:
            self.wb.set_receiving(index)

    def _slider_pressed(self, f: int) -> None:
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            return
        self._drag = new_drag_id()
        self._drag_field = f
        assert self.wb.scenario.Q is not None
        self._drag_mix = mix_of_query(self.wb.scenario.Q[self.wb.receiving], layout.directions)

    def _slider_released(self) -> None:
        self._drag = self._drag_field = self._drag_mix = None
        self.schedule_refresh()

    def _slider_moved(self, f: int, value: int) -> None:
        if self.is_updating:
            return
        if self._drag is not None and f == self._drag_field and self._drag_mix is not None:
            self.set_field_share(f, value / SLIDER_STEPS, base=self._drag_mix, drag=self._drag)
        else:
            self.set_field_share(f, value / SLIDER_STEPS)

    def set_field_share(
        self, f: int, share: float, *, base: np.ndarray | None = None, drag: int | None = None
    ) -> None:
        """Point the receiving query ``share`` (0..1) into field ``f``: one undoable edit.

        ``base`` is the mix the change starts from (during a drag: the mix at the press, so the
        dragged slider never fights the mouse); the query keeps its length.
        """
        layout = self.field_layout()
        sc = self.wb.scenario
        if not isinstance(layout, FieldLayout) or sc.Q is None:
            return
        i = self.wb.receiving
        q = np.asarray(sc.Q[i])
        length = float(np.linalg.norm(q)) or 1.0
        start = mix_of_query(q, layout.directions) if base is None else base

        def make() -> Scenario:
            mix = mix_after_slider(start, layout.directions, f, share)
            return edits.set_vector(sc, "q", i, query_from_mix(mix, layout.directions, length))

        label = sc.query_labels[i]
        self.propose(make, f"Point '{label}' {share:.2f} into {layout.fields[f]}", drag=drag)

    def show_refusal(self, text: str) -> None:
        self.note.setText(text)

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.bars, self.mixture, self.scatter)

    def figure_unavailable(self) -> str:
        layout = self.field_layout()
        return "" if isinstance(layout, FieldLayout) else layout

    def refresh(self) -> None:
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            self._show_off(layout)
            return
        self.stack.setCurrentIndex(0)
        wb = self.wb
        sc = wb.scenario
        assert sc.Q is not None and sc.K is not None
        tr = wb.result.heads[0]
        i = wb.receiving
        labels = list(sc.query_labels)
        nums = self.numbers()
        mix = nums["mix"]
        with self.updating():
            if [self.query_combo.itemText(j) for j in range(self.query_combo.count())] != labels:
                self.query_combo.clear()
                self.query_combo.addItems(labels)
            self.query_combo.setCurrentIndex(i)
            for f, s in enumerate(self.sliders):
                # The slider under the mouse stays where the user holds it.
                if not (self._drag is not None and f == self._drag_field):
                    s.setValue(round(float(np.clip(mix[f], 0.0, 1.0)) * SLIDER_STEPS))
                self.slider_values[f].setText(fmt(float(mix[f]), 2))
        info = (
            f"logit = q·k / {fmt(tr.divisor, 3)}  ·  |q| = {fmt(float(np.linalg.norm(sc.Q[i])), 2)}"
        )
        self.info.setText(info)
        self.info.setToolTip(info)
        self.bars.set_data(labels, nums["per_field"], nums["entropy"], tr.max_entropy, i)
        self.mixture.set_data(
            nums["mixture"],
            layout.value_field,
            sc.v_axes,
            f"Mixture Σ w·v returned to “{labels[i]}”",
        )
        basis, explained, centre, key_xy, query_xy = plane_coords(sc.K, sc.Q)
        origin_xy = (-centre) @ basis
        self.scatter.set_data(
            key_xy, query_xy, origin_xy, layout.key_field, labels, explained, i
        )  # fmt: skip
        inside = span_fraction(sc.Q[i], layout.directions)
        where = (
            "axes named after the fields"
            if layout.source == "axes"
            else "the mean of each field's keys"
        )
        text = (
            f"Sliders: the query’s coefficient on each field’s direction ({where}); moving one "
            "rescales the others so the query keeps its length. The 3-D view shows the same "
            "clusters."
        )
        if inside < 0.999:
            text += (
                f" {fmt(100 * (1 - inside), 0)} % of this query lies outside the fields’ "
                "directions; a slider edit drops that part."
            )
        self.note.setText(text)

    def _show_off(self, reason: str) -> None:
        self.stack.setCurrentIndex(1)
        names = ", ".join(f"“{n}”" for n in FIELD_NAMES)
        self.off_text.setText(
            "<b>The three-fields lab</b> asks what one attention operation gathers from three "
            "clusters of keys (fields) in 12-D, for a query inside one field, one spanning two, "
            "and one with no direction.<br><br>"
            "It runs on a <i>direct</i> scenario whose every key label starts with a field "
            f"name ({names}, e.g. “acoustics 1”) and where each field has at least one key. "
            f"It does not run here: {reason}."
        )
        ref = reference_result()
        rows = "".join(
            f"<tr><td>{r['query']}</td>"
            + "".join(f"<td align='right'>{r['per_field'][f]:.2f}</td>" for f in FIELD_NAMES)
            + f"<td align='right'>{r['entropy']:.2f}</td></tr>"
            for r in ref["results"]  # type: ignore[union-attr]
        )
        head = "".join(
            f"<th style='color:{FIELD_COLORS[f].name()}'>{n}</th>"
            for f, n in enumerate(FIELD_NAMES)
        )
        self.reference.setText(
            "What the preset shows (engine, seed 4, logits 3·q·k):"
            f"<table cellspacing='6'><tr><th align='left'>query</th>{head}"
            f"<th>entropy (bits)</th></tr>{rows}</table>"
        )


__all__ = ["FieldsLabPanel", "fit_points", "place_label", "stacked_segments"]


def _field_layout(wb: Workbench) -> FieldLayout | str:
    return field_layout(wb.scenario)
