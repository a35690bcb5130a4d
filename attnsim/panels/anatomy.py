"""Multi-head anatomy: every matrix of the block with its shape, learned or computed, and counts.

The diagram follows data through one self-attention sublayer: X, the focused head's Wq, Wk,
Wv (learned, amber) and Q, K, V, S, A, H (computed, blue), then Concat, Wo, Δ = Concat Wo and
Y = X + Δ. The receiving token's rows are highlighted; the head chips pick the focused head. A
caption counts the block's learned matrices, computed vectors and parameters; the calculator
page counts them for any n, h, d, d_k, d_v and number of blocks N.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QHelpEvent, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.arrows import arrow_heads
from attnsim.model.workbench import Workbench
from attnsim.views.anatomy import (
    BlockMatrix,
    block_matrices,
    count_lines,
    counts_of,
    head_superscript,
    multi_head_counts,
    sublayer_shape,
    visible_indices,
)

from .base import Panel, content_parts
from .kit.arrows import head_polygon
from .style import fmt
from .widgets import FlowLayout, WholeNumberBox
from .widgets import group as control_group

# Amber for learned parameters, blue for computed activations (Okabe-Ito hues, as in the
# reference figure); grey-blue for vectors a direct scenario gives as they are.
FILL = {"learned": QColor("#FBE5B6"), "computed": QColor("#D3E5F5"), "given": QColor("#E6E9ED")}
FILL_HI = {"learned": QColor("#F0B94A"), "computed": QColor("#86B9E3"), "given": QColor("#B9C2CC")}
EDGE = {"learned": QColor("#B07800"), "computed": QColor("#0072B2"), "given": QColor("#6B7785")}
FOCUS = QColor("#D55E00")
TEXT = QColor("#222222")
FAINT = QColor("#666666")

CELL_W = 38.0
CELL_H = 15.0
TITLE_H = 28.0
GAP = 12.0
CONNECTOR_W = 22.0
LINE_GAP = 14.0
MAX_CELLS = 8
MIN_SCALE = 0.8
MAX_SCALE = 1.25


def _pen(color: QColor, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    """A cosmetic pen: its width is in device pixels whatever the diagram's scale (and cosmetic
    pens are stroked much faster than scaled ones)."""
    pen = QPen(color, width, style)
    pen.setCosmetic(True)
    return pen


def cell_text(x: float) -> str:
    """A matrix entry in at most 5 characters: 2 decimals, fewer for large numbers."""
    a = abs(x)
    if a >= 999.5:
        return f"{x:.0e}".replace("+0", "").replace("+", "").replace("-", "−")
    return fmt(x, 0 if a >= 99.5 else 1 if a >= 9.995 else 2)


# ---- layout: pure geometry in design units (no Qt), so tests check numbers ----------------------
@dataclass
class MatrixBox:
    """Where one matrix goes: outer box (x, y, w, h), its row-label column, shown rows/cols."""

    key: str
    x: float
    y: float
    w: float
    h: float
    label_w: float
    rows: list[int | None]
    cols: list[int | None]

    @property
    def grid_x(self) -> float:
        return self.x + self.label_w

    @property
    def grid_y(self) -> float:
        return self.y + TITLE_H

    def cell_rect(self, r: int, c: int) -> tuple[float, float, float, float]:
        """(x, y, w, h) of the shown row ``r``, column ``c`` (positions in rows / cols)."""
        return (self.grid_x + c * CELL_W, self.grid_y + r * CELL_H, CELL_W, CELL_H)


@dataclass(frozen=True)
class Arrow:
    """One data-flow edge as drawn: ``kind`` "next" (a → between neighbours on a line),
    "down" (an elbow from a box to one on the next line, through the gap between lines) or
    "stub" (a short arrow into ``dst`` labelled with its source, when a line would have to
    cross other boxes). ``points`` is the polyline in design units, head at the end."""

    src: str
    dst: str
    kind: str
    points: tuple[tuple[float, float], ...]
    label: str = ""


@dataclass
class Diagram:
    boxes: dict[str, MatrixBox] = field(default_factory=dict)
    connectors: list[tuple[float, float, str]] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    chips: list[tuple[int, float, float, float, float]] = field(default_factory=list)
    notes: list[tuple[float, float, float, str]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    caption_y: float = 0.0
    caption_w: float = 0.0


def diagram_groups(mats: list[BlockMatrix], focused: int) -> list[list[str]]:
    """The rows of the diagram as lists of matrix keys (only the focused head's own).

    Each projection sits just left of what it makes (Wq, Q, Wk, K, Wv, V), so every arrow
    between neighbours on a line is a real step of the computation."""
    keys = {m.key for m in mats}
    h = focused
    if "X" not in keys:  # direct scenario
        return [["Q", "K", "V"], ["S", "A", "H"]]
    groups = [["X"], [f"Wq{h}", f"Q{h}", f"Wk{h}", f"K{h}", f"Wv{h}", f"V{h}"]]
    if "concat" in keys:
        groups += [[f"S{h}", f"A{h}", f"H{h}", "concat"], ["Wo", "delta", "Y"]]
    else:
        groups.append([f"S{h}", f"A{h}", f"H{h}"])
    return groups


def data_flow(mats: list[BlockMatrix], focused: int) -> list[tuple[str, str]]:
    """The block's data flow for the focused head, as (from, to) matrix keys: X → Q via Wq,
    X → K via Wk, X → V via Wv; Q, K → scores → weights; weights, V → head output; heads →
    concat → (· Wo) → Δ → + X → Y. Only edges between matrices that exist are listed."""
    keys = {m.key for m in mats}
    h = "" if "X" not in keys else str(focused)
    q, k, v, s, a, o = (f"{n}{h}" for n in ("Q", "K", "V", "S", "A", "H"))
    edges = []
    if "X" in keys:
        edges += [("X", q), (f"Wq{h}", q), ("X", k), (f"Wk{h}", k), ("X", v), (f"Wv{h}", v)]
    edges += [(q, s), (k, s), (s, a), (a, o), (v, o)]
    edges += [(o, "concat"), ("concat", "delta"), ("Wo", "delta"), ("delta", "Y"), ("X", "Y")]
    return [(f, t) for f, t in edges if f in keys and t in keys]


def _route(dia: Diagram, edges: list[tuple[str, str]], titles: dict[str, str]) -> None:
    """Turn data-flow edges into drawn arrows (see :class:`Arrow`) for the placed boxes."""
    line_top: dict[int, float] = {}
    for key, box in dia.boxes.items():
        line = dia.lines[key]
        line_top[line] = min(line_top.get(line, box.y), box.y)
    order = {key: i for i, key in enumerate(dia.boxes)}
    # Elbows into one line share its gap: one lane per target, so lines never run together.
    lanes: dict[int, list[str]] = {}
    for src, dst in edges:
        if dia.lines[dst] == dia.lines[src] + 1:
            lanes.setdefault(dia.lines[dst], [])
            if dst not in lanes[dia.lines[dst]]:
                lanes[dia.lines[dst]].append(dst)
    for src, dst in edges:
        a, b = dia.boxes[src], dia.boxes[dst]
        la, lb = dia.lines[src], dia.lines[dst]
        mid_a = a.y + TITLE_H + min(len(a.rows), 1) * CELL_H / 2
        if la == lb and order[dst] == order[src] + 1:
            x0, x1 = a.x + a.w + 2, b.x - 2
            dia.connectors.append((x0 + (x1 - x0) / 2 - 2, mid_a, "→"))
            dia.arrows.append(Arrow(src, dst, "next", ((x0, mid_a), (x1, mid_a))))
        elif lb == la + 1:
            targets = lanes[lb]
            lane = line_top[lb] - LINE_GAP * (targets.index(dst) + 1) / (len(targets) + 1)
            sx = a.x + min(a.w, a.label_w + 14.0)
            tx = b.grid_x + min(b.w - b.label_w, 14.0 + 6.0 * targets.index(dst)) / 2
            pts = ((sx, a.y + a.h), (sx, lane), (tx, lane), (tx, b.y - 1))
            dia.arrows.append(Arrow(src, dst, "down", pts))
        else:
            tx = b.x + b.w - 10.0
            pts = ((tx, b.y - LINE_GAP + 4), (tx, b.y - 1))
            label = f"+ {titles[src]}" if dst == "Y" else f"from {titles[src]}"
            dia.arrows.append(Arrow(src, dst, "stub", pts, label))


def layout_diagram(
    mats: list[BlockMatrix],
    *,
    focused: int,
    receiving: int,
    max_width: float,
    text_width: Callable[[str, bool], float],
    chip_labels: list[str] | None = None,
    caption_height: float = 0.0,
) -> Diagram:
    """Place the focused head's matrices in rows, wrapping a row wider than ``max_width``.

    ``text_width(text, bold)`` measures a string in design units. Returns boxes keyed by
    matrix key, the connectors (x, y, text) between boxes, the head chips (head, x, y, w, h),
    notes (x, y, w, text) and the total size, caption included.
    """
    by_key = {m.key: m for m in mats}
    dia = Diagram()
    y = 0.0
    line = 0
    for g, group in enumerate(diagram_groups(mats, focused)):
        x, line_h, labelled = 0.0, 0.0, set()
        for idx, key in enumerate(group):
            m = by_key[key]
            keep = receiving if m.rows in ("tokens", "queries") else None
            rows = visible_indices(m.shape[0], MAX_CELLS, keep)
            cols = visible_indices(m.shape[1], MAX_CELLS)
            labels_w = 6.0 + max(
                (text_width(m.row_labels[r], False) for r in rows if r is not None), default=0.0
            )
            title_w = max(text_width(f"{m.title}  {m.shape[0]}×{m.shape[1]}", True),
                          text_width(m.formula, False))  # fmt: skip
            # Row labels once per kind of rows on a line: rows of one kind line up across it.
            label_w = labels_w if m.rows not in labelled else 0.0
            w = max(label_w + len(cols) * CELL_W, title_w)
            h = TITLE_H + len(rows) * CELL_H
            if idx and x + CONNECTOR_W + w > max_width:
                # Wrap: the rest of this row goes on a new line.
                y += line_h + LINE_GAP
                x, line_h, labelled = 0.0, 0.0, set()
                line += 1
                label_w = labels_w
                w = max(label_w + len(cols) * CELL_W, title_w)
            if idx and x > 0:
                x += CONNECTOR_W
            dia.boxes[key] = MatrixBox(key, x, y, w, h, label_w, rows, cols)
            dia.lines[key] = line
            labelled.add(m.rows)
            x += w + GAP
            line_h = max(line_h, h)
            dia.width = max(dia.width, x - GAP)
        if g == 0 and chip_labels:
            # Head chips beside X: which head the rows below show.
            cx = x + CONNECTOR_W
            note = (
                f"the same X feeds all {len(chip_labels)} heads; showing:"
                if len(chip_labels) > 1
                else "X feeds the block's only head:"
            )
            dia.notes.append((cx, y + 2, text_width(note, False), note))
            cy = y + 18.0
            for hd, text in enumerate(chip_labels):
                cw = text_width(text, True) + 16.0
                if cx + cw > max(max_width, dia.width) and cx > x + CONNECTOR_W:
                    cx, cy = x + CONNECTOR_W, cy + 22.0
                dia.chips.append((hd, cx, cy, cw, 18.0))
                cx += cw + 6.0
            dia.width = max(dia.width, max(c[1] + c[3] for c in dia.chips))
            dia.width = max(dia.width, dia.notes[-1][0] + dia.notes[-1][2])
            line_h = max(line_h, cy + 18.0 - y)
        y += line_h + LINE_GAP
        line += 1
    _route(dia, data_flow(mats, focused), {m.key: m.title for m in mats})
    dia.caption_y = y
    dia.caption_w = max(max_width, dia.width)
    dia.height = y + caption_height
    return dia


def best_fit(
    make: Callable[[float], Diagram], avail_w: float, avail_h: float
) -> tuple[float, Diagram]:
    """The scale (MIN_SCALE..MAX_SCALE) and layout that fill ``avail_w`` x ``avail_h`` best.

    ``make(max_width)`` lays the diagram out for a design width. Wider layouts are tried at
    smaller scales; the largest scale whose layout fits wins. If none fits the height, the
    layout at MIN_SCALE is returned (the panel then scrolls).
    """
    best: tuple[float, Diagram] | None = None
    for s in (MAX_SCALE, 1.15, 1.05, 1.0, 0.95, 0.9, 0.85, MIN_SCALE):
        dia = make(avail_w / s)
        scale = min(s, avail_w / max(dia.width, 1.0), avail_h / max(dia.height, 1.0))
        if best is None or scale > best[0] + 1e-9:
            best = (scale, dia)
    assert best is not None
    scale, dia = best
    if scale < MIN_SCALE:
        dia = make(avail_w / MIN_SCALE)
        scale = min(MIN_SCALE, avail_w / max(dia.width, 1.0))
    return scale, dia


# ---- the painted diagram -----------------------------------------------------------------------
class BlockDiagram(QWidget):
    """Paints :func:`layout_diagram`'s boxes; clicks pick a head (chips) or a token (rows)."""

    def __init__(self, panel: AnatomyPanel) -> None:
        super().__init__()
        self.panel = panel
        self.mats: list[BlockMatrix] = []
        self.focused = 0
        self.receiving = 0
        self.chip_labels: list[str] = []
        self.caption: list[str] = []
        self.note = ""
        self.scale = 1.0
        self.dia = Diagram()
        self.avail = QSize(600, 400)
        self._fonts: dict[tuple[bool, float], QFont] = {}
        self._widths: dict[tuple[str, bool], float] = {}
        self._layout_key: tuple | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(False)

    # fonts, in design units (the painter is scaled)
    def _font(self, bold: bool = False, rel: float = 1.0) -> QFont:
        key = (bold, rel)
        font = self._fonts.get(key)
        if font is None:
            font = QFont(self.font())
            font.setPixelSize(max(round(11 * rel), 6))
            font.setBold(bold)
            self._fonts[key] = font
        return font

    def text_width(self, text: str, bold: bool) -> float:
        # Layout measures the same labels many times (several scales are tried): memoise.
        key = (text, bold)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 4096:
                self._widths.clear()
            w = QFontMetricsF(self._font(bold)).horizontalAdvance(text) + 2.0
            self._widths[key] = w
        return w

    def set_data(self, mats, focused, receiving, chip_labels, caption, note) -> None:
        self.mats = mats
        self.focused = focused
        self.receiving = receiving
        self.chip_labels = chip_labels
        self.caption = caption
        self.note = note
        self.relayout()

    def caption_lines(self) -> list[str]:
        return ([self.note] if self.note else []) + self.caption

    def relayout(self) -> None:
        if not self.mats:
            self.dia = Diagram()
            self.update()
            return
        avail_w = max(float(self.avail.width()) - 8, 120.0)
        avail_h = max(float(self.avail.height()) - 8, 80.0)
        # The layout depends on shapes and texts, not on the numbers: an edit of a value
        # (the common case, e.g. a drag elsewhere) reuses it and only repaints.
        key = (
            tuple((m.key, m.shape, m.title, m.formula, m.rows, m.row_labels) for m in self.mats),
            self.focused,
            self.receiving,
            tuple(self.chip_labels),
            tuple(self.caption_lines()),
            avail_w,
            avail_h,
        )
        if key == self._layout_key:
            self.update()
            return
        self._layout_key = key
        fm = QFontMetricsF(self._font())
        fm_bold = QFontMetricsF(self._font(True))

        def make(max_width: float) -> Diagram:
            cap = 20.0  # the legend line
            for i, line in enumerate(self.caption_lines()):
                metrics = fm_bold if i == 0 and self.note else fm
                rect = metrics.boundingRect(QRectF(0, 0, max_width, 1000),
                                            int(Qt.TextFlag.TextWordWrap), line)  # fmt: skip
                cap += rect.height() + 2
            return layout_diagram(
                self.mats,
                focused=self.focused,
                receiving=self.receiving,
                max_width=max_width,
                text_width=self.text_width,
                chip_labels=self.chip_labels,
                caption_height=cap,
            )

        self.scale, self.dia = best_fit(make, avail_w, avail_h)
        self.setMinimumHeight(int(self.dia.height * self.scale) + 8)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(640, 380)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        # Axis-aligned cells need no antialiasing; the chips turn it on for their corners.
        p.translate(4, 4)
        p.scale(self.scale, self.scale)
        # Only the matrices inside the exposed part (the rest is scrolled away).
        exposed = QRectF(event.rect())
        view = QRectF((exposed.x() - 4) / self.scale, (exposed.y() - 4) / self.scale,
                      exposed.width() / self.scale, exposed.height() / self.scale)  # fmt: skip
        by_key = {m.key: m for m in self.mats}
        for key, box in self.dia.boxes.items():
            if view.intersects(QRectF(box.x, box.y, box.w, box.h)):
                self._draw_matrix(p, by_key[key], box)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._draw_arrows(p)
        p.setFont(self._font())
        for x, y, w, text in self.dia.notes:
            p.setPen(FAINT)
            p.drawText(QRectF(x, y, w + 4, 14), Qt.AlignmentFlag.AlignLeft, text)
        for hd, x, y, w, h in self.dia.chips:
            focused = hd == self.focused
            p.setPen(_pen(FOCUS if focused else QColor("#999999"), 2.0 if focused else 1.0))
            p.setBrush(QColor(213, 94, 0, 40) if focused else QColor("#F4F4F4"))
            p.drawRoundedRect(QRectF(x, y, w, h), 5, 5)
            p.setFont(self._font(focused))
            p.setPen(FOCUS.darker(130) if focused else TEXT)
            p.drawText(QRectF(x, y, w, h), Qt.AlignmentFlag.AlignCenter, self.chip_labels[hd])
        self._draw_caption(p)
        p.end()

    def _draw_arrows(self, p: QPainter) -> None:
        pen = _pen(FAINT, 1.2)
        p.setFont(self._font(False, 0.9))
        for arrow in self.dia.arrows:
            pts = [QPointF(x, y) for x, y in arrow.points]
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPolyline(pts)
            # The polyline is the shaft; only its last leg carries the head.
            _, heads = arrow_heads(arrow.points[-2], arrow.points[-1], 6.0, 6.0, max_fraction=1.0)
            p.setBrush(FAINT)
            p.drawPolygon(head_polygon(heads[0]))
            if arrow.label:
                p.setPen(FAINT)
                p.drawText(
                    QRectF(pts[0].x() + 4, pts[0].y() - 2, 120, 12),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    arrow.label,
                )

    def _draw_caption(self, p: QPainter) -> None:
        width = self.dia.caption_w
        y = self.dia.caption_y
        x = 0.0
        p.setFont(self._font())
        for kind, text in (("learned", "learned parameter"), ("computed", "computed activation"),
                           ("given", "given vectors (direct)")):  # fmt: skip
            if kind == "given" and not any(m.kind == "given" for m in self.mats):
                continue
            p.setPen(_pen(EDGE[kind], 1))
            p.setBrush(FILL[kind])
            p.drawRect(QRectF(x, y + 3, 12, 10))
            p.setPen(TEXT)
            tw = self.text_width(text, False)
            p.drawText(QRectF(x + 16, y, tw + 4, 16), Qt.AlignmentFlag.AlignVCenter, text)
            x += 16 + tw + 14
        p.setPen(_pen(FOCUS, 1.6))
        p.setBrush(FILL_HI["computed"])
        p.drawRect(QRectF(x, y + 3, 12, 10))
        p.setPen(TEXT)
        label = self.panel.receiving_label()
        text = f"row of the receiving token “{label}”"
        p.drawText(QRectF(x + 16, y, self.text_width(text, False) + 4, 16),
                   Qt.AlignmentFlag.AlignVCenter, text)  # fmt: skip
        y += 20.0
        for i, line in enumerate(self.caption_lines()):
            p.setFont(self._font(bold=(i == 0 and bool(self.note))))
            p.setPen(TEXT if i or not self.note else FOCUS.darker(140))
            rect = QRectF(0, y, width, 1000)
            used = p.boundingRect(rect, int(Qt.TextFlag.TextWordWrap), line)
            p.drawText(rect, int(Qt.TextFlag.TextWordWrap), line)
            y += used.height() + 2

    def _draw_matrix(self, p: QPainter, m: BlockMatrix, box: MatrixBox) -> None:
        title = f"{m.title}  {m.shape[0]}×{m.shape[1]}"
        in_focus = m.head is not None
        p.setFont(self._font(True))
        p.setPen(EDGE[m.kind].darker(120))
        p.drawText(QRectF(box.x, box.y, box.w + 40, 14), Qt.AlignmentFlag.AlignLeft, title)
        p.setFont(self._font(False, 0.9))
        p.setPen(FAINT)
        p.drawText(QRectF(box.x, box.y + 13, box.w + 40, 13), Qt.AlignmentFlag.AlignLeft,
                   m.formula)  # fmt: skip
        token_rows = m.rows in ("tokens", "queries")
        value = m.value
        n_rows, n_cols = len(box.rows), len(box.cols)
        grid = QRectF(box.grid_x, box.grid_y, n_cols * CELL_W, n_rows * CELL_H)
        hi_row = next((ri for ri, r in enumerate(box.rows)
                       if token_rows and r == self.receiving), None)  # fmt: skip
        # Cells as plain fills with a one-pixel gap (fillRect is the painter's fast path).
        gap = 1.0 / max(self.scale, 0.1)
        for ri in range(n_rows):
            colour = FILL_HI[m.kind] if ri == hi_row else FILL[m.kind]
            y = box.grid_y + ri * CELL_H
            for ci in range(n_cols):
                p.fillRect(QRectF(box.grid_x + ci * CELL_W, y, CELL_W - gap, CELL_H - gap), colour)
        cell_font = self._font(False, 0.95)
        center = Qt.AlignmentFlag.AlignCenter
        for ri, r in enumerate(box.rows):
            hi = ri == hi_row
            y = box.grid_y + ri * CELL_H
            if box.label_w and r is not None:
                p.setFont(self._font(hi))
                p.setPen(FOCUS.darker(130) if hi else FAINT)
                p.drawText(QRectF(box.x, y, box.label_w - 4, CELL_H),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                           m.row_labels[r])  # fmt: skip
            p.setFont(cell_font)
            p.setPen(TEXT)
            for ci, c in enumerate(box.cols):
                if r is None or c is None:
                    text = "⋮" if r is None else "…"
                else:
                    text = cell_text(float(value[r, c]))
                p.drawText(QRectF(box.grid_x + ci * CELL_W, y, CELL_W, CELL_H), center, text)
        if hi_row is not None:
            p.setPen(_pen(FOCUS, 1.6))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRectF(box.grid_x, box.grid_y + hi_row * CELL_H, grid.width(), CELL_H))
        pen = _pen(EDGE[m.kind], 1.8 if in_focus else 1.2)
        if m.kind == "given":
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(grid)
        # The focused head's share of Concat (columns) and Wo (rows).
        span = self._focused_span(m, box)
        if span is not None:
            p.setPen(_pen(FOCUS, 1.6, Qt.PenStyle.DashLine))
            p.drawRect(span)

    def _focused_span(self, m: BlockMatrix, box: MatrixBox) -> QRectF | None:
        if m.key not in ("concat", "Wo") or len(self.chip_labels) < 2:
            return None
        d_v = m.shape[1 if m.key == "concat" else 0] // len(self.chip_labels)
        lo, hi = self.focused * d_v, (self.focused + 1) * d_v
        idx = box.cols if m.key == "concat" else box.rows
        shown = [k for k, i in enumerate(idx) if i is not None and lo <= i < hi]
        if not shown:
            return None
        a, b = min(shown), max(shown) + 1
        if m.key == "concat":
            return QRectF(box.grid_x + a * CELL_W, box.grid_y - 2, (b - a) * CELL_W,
                          len(box.rows) * CELL_H + 4)  # fmt: skip
        return QRectF(box.grid_x - 2, box.grid_y + a * CELL_H, len(box.cols) * CELL_W + 4,
                      (b - a) * CELL_H)  # fmt: skip

    # ---- hit testing ------------------------------------------------------------------------
    def to_design(self, pos: QPointF) -> tuple[float, float]:
        return ((pos.x() - 4) / self.scale, (pos.y() - 4) / self.scale)

    def hit(self, pos: QPointF) -> tuple[str, object] | None:
        """What is under a widget position: ("chip", head), ("cell", (key, row, col)) or None."""
        x, y = self.to_design(pos)
        for hd, cx, cy, cw, ch in self.dia.chips:
            if cx <= x <= cx + cw and cy <= y <= cy + ch:
                return ("chip", hd)
        for key, box in self.dia.boxes.items():
            gx, gy = box.grid_x, box.grid_y
            if gx <= x < gx + len(box.cols) * CELL_W and gy <= y < gy + len(box.rows) * CELL_H:
                ri, ci = int((y - gy) // CELL_H), int((x - gx) // CELL_W)
                return ("cell", (key, box.rows[ri], box.cols[ci]))
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        found = self.hit(event.position())
        if found is None:
            return super().mousePressEvent(event)
        kind, what = found
        if kind == "chip":
            self.panel.pick_head(int(what))  # type: ignore[call-overload]
        else:
            key, r, _c = what  # type: ignore[misc]
            m = {mm.key: mm for mm in self.mats}[key]
            if r is not None and m.rows in ("tokens", "queries"):
                self.panel.pick_receiving(int(r))

    def event(self, ev: QEvent) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            assert isinstance(ev, QHelpEvent)
            found = self.hit(QPointF(ev.pos()))
            if found and found[0] == "cell":
                key, r, c = found[1]  # type: ignore[misc]
                m = {mm.key: mm for mm in self.mats}[key]
                if r is not None and c is not None:
                    QToolTip.showText(
                        ev.globalPos(),
                        f"{m.title}[{m.row_labels[r]}, {m.col_labels[c]}] = {m.value[r, c]!r}"
                        f"\n{m.kind}: {m.formula}",
                        self,
                    )
                    return True
            QToolTip.hideText()
            ev.ignore()
            return True
        return super().event(ev)


class _Scroll(QScrollArea):
    """Tells the diagram how much room the viewport has, so it can pick its scale."""

    def __init__(self, diagram: BlockDiagram) -> None:
        super().__init__()
        self.diagram = diagram
        self.setWidget(diagram)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        size = self.viewport().size()
        if size != self.diagram.avail:
            self.diagram.avail = size
            self.diagram.relayout()


# ---- the counts calculator ---------------------------------------------------------------------
CALC_FIELDS = (
    ("n", "n tokens", 1, 100_000),
    ("h", "h heads", 1, 4096),
    ("d", "d model", 1, 100_000),
    ("d_k", "d_k", 1, 100_000),
    ("d_v", "d_v", 1, 100_000),
    ("blocks", "N blocks", 1, 10_000),
)
CALC_COLUMNS = ["object", "learned or computed", "count per block", "in N blocks", "shape of each"]


class CountsCalculator(QWidget):
    """Spin boxes for n, h, d, d_k, d_v, N and the counts table of a standard block."""

    def __init__(self, panel: AnatomyPanel) -> None:
        super().__init__()
        self.panel = panel
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        grid.setHorizontalSpacing(6)
        self.spins: dict[str, WholeNumberBox] = {}
        for i, (key, label, lo, hi) in enumerate(CALC_FIELDS):
            spin = WholeNumberBox(lo, hi)
            spin.setObjectName(f"anatomy-calc-{key}")
            spin.setToolTip(f"{label} ({lo} to {hi:,})")
            spin.valueChanged.connect(self.update_counts)
            grid.addWidget(QLabel(label), i // 3, 2 * (i % 3))
            grid.addWidget(spin, i // 3, 2 * (i % 3) + 1)
            self.spins[key] = spin
        v.addLayout(grid)
        row = QHBoxLayout()
        self.from_scenario = QPushButton("Use this scenario")
        self.from_scenario.setToolTip("Fill in n, h, d, d_k, d_v of the current token scenario")
        self.from_scenario.clicked.connect(self.load_scenario)
        row.addWidget(self.from_scenario)
        row.addStretch(1)
        v.addLayout(row)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.summary)
        self.table = QTableWidget(0, len(CALC_COLUMNS))
        self.table.setHorizontalHeaderLabels(CALC_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        # Every column as wide as its contents (a narrow dock scrolls sideways rather than
        # eliding the object names); the last one takes any spare width.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(20)
        v.addWidget(self.table, 1)
        self.set_values({"n": 3, "h": 2, "d": 4, "d_k": 2, "d_v": 2, "blocks": 1})

    def values(self) -> dict[str, int]:
        return {k: s.value() for k, s in self.spins.items()}

    def set_values(self, values: dict[str, int]) -> None:
        for k, val in values.items():
            spin = self.spins[k]
            spin.blockSignals(True)
            spin.setValue(int(val))
            spin.blockSignals(False)
        self.update_counts()

    def load_scenario(self) -> None:
        sc = self.panel.wb.scenario
        if sc.mode != "tokens":
            self.panel.refuse(ValueError("a direct scenario has no projections to count"))
            return
        self.set_values({**sublayer_shape(sc), "blocks": self.spins["blocks"].value()})

    def counts(self) -> dict[str, object]:
        v = self.values()
        return multi_head_counts(v["n"], v["h"], v["d"], v["d_k"], v["d_v"], blocks=v["blocks"])

    def update_counts(self) -> None:
        v = self.values()
        result = self.counts()
        totals = result["totals"]
        assert isinstance(totals, dict)
        lines = count_lines(totals, v["h"], v["blocks"])
        self.summary.setText("<br>".join(lines))
        rows = result["rows"]
        assert isinstance(rows, list)
        self.table.setRowCount(len(rows))
        for r, (name, kind, count, shape) in enumerate(rows):
            cells = [name, kind, str(count), f"{count * v['blocks']:,}", shape]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setBackground(FILL[kind])
                if c in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)  # fmt: skip
                self.table.setItem(r, c, item)


# ---- the panel ---------------------------------------------------------------------------------
class AnatomyPanel(Panel):
    """Every matrix of the multi-head block, learned or computed, with the counts."""

    panel_id = "anatomy"
    title = "Multi-head anatomy"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(6, 6, 6, 6)
        v.setSpacing(4)
        # A flow: in a narrow dock the controls wrap instead of widening the panel.
        top = FlowLayout(h_spacing=12, v_spacing=3)
        self.head_combo = QComboBox()
        self.head_combo.setToolTip("The focused head: its matrices are drawn below")
        self.head_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.head_combo.setMinimumContentsLength(8)
        self.head_combo.currentIndexChanged.connect(self._combo_head)
        top.addWidget(control_group(QLabel("Head:"), self.head_combo, grow=self.head_combo))
        self.token_combo = QComboBox()
        self.token_combo.setToolTip("The receiving token: its rows are highlighted")
        self.token_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.token_combo.setMinimumContentsLength(6)
        self.token_combo.currentIndexChanged.connect(self._combo_token)
        top.addWidget(control_group(QLabel("Receiving:"), self.token_combo, grow=self.token_combo))
        self.views = QButtonGroup(self)
        buttons = []
        for i, text in enumerate(("Diagram", "Counts")):
            b = QPushButton(text)
            b.setCheckable(True)
            b.setChecked(i == 0)
            self.views.addButton(b, i)
            buttons.append(b)
        top.addWidget(control_group(*buttons))
        self.views.idClicked.connect(self.show_view)
        v.addLayout(top)
        self.stack = QStackedWidget()
        self.diagram = BlockDiagram(self)
        self.scroll = _Scroll(self.diagram)
        self.stack.addWidget(self.scroll)
        self.calculator = CountsCalculator(self)
        self.stack.addWidget(self.calculator)
        v.addWidget(self.stack, 1)
        if workbench.scenario.mode == "tokens":
            self.calculator.load_scenario()
        self.schedule_refresh()

    # ---- data -------------------------------------------------------------------------------
    def matrices(self) -> list[BlockMatrix]:
        """Every matrix of the current scenario's block (memoised by the workbench)."""
        return self.wb.derived(_block_matrices)

    def counts(self) -> dict[str, int]:
        return counts_of(self.matrices())

    def receiving_label(self) -> str:
        labels = self.wb.scenario.query_labels
        return labels[min(self.wb.receiving, len(labels) - 1)]

    def caption(self) -> tuple[list[str], str]:
        """Count sentences for the current scenario, and a note on what is missing."""
        sc = self.wb.scenario
        if sc.mode == "direct":
            return (
                [
                    f"This scenario gives Q ({sc.n_queries}×{sc.d_k}), K ({sc.n_tokens}×{sc.d_k}) "
                    f"and V ({sc.n_tokens}×{sc.d_v}) directly; it computes S, A and H "
                    "(1 each)."
                ],
                "Direct scenario: no projections. Nothing here is learned: there is no X, "
                "no Wq, Wk, Wv, no Wo and no residual Y.",
            )
        c = self.counts()
        h = len(sc.heads)
        shape = f"n={sc.n_tokens}, h={h}, d={sc.d}, d_k={sc.d_k}, d_v={sc.d_v}"
        lines = [f"This block ({shape}): " + "; ".join(count_lines(c, h))]
        note = ""
        if self.wb.result.block is None:
            note = (
                f"No output projection: h·d_v = {h * sc.d_v} differs from d = {sc.d} and the "
                "scenario gives no Wo, so it stops at H (no Concat, Δ or Y)."
            )
        elif sc.Wo is None:
            note = "Wo is not given: the block uses the identity (h·d_v = d), counted as Wo."
        return lines, note

    # ---- actions ----------------------------------------------------------------------------
    def pick_head(self, h: int) -> None:
        if 0 <= h < len(self.wb.result.heads):
            self.wb.set_focused_head(h)

    def pick_receiving(self, i: int) -> None:
        if 0 <= i < self.wb.scenario.n_queries:
            self.wb.set_receiving(i)

    def _combo_head(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.pick_head(index)

    def _combo_token(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.pick_receiving(index)

    def show_view(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        button = self.views.button(index)
        if button is not None and not button.isChecked():
            button.setChecked(True)

    # ---- drawing ----------------------------------------------------------------------------
    def chip_labels(self) -> list[str]:
        sc = self.wb.scenario
        if sc.mode != "tokens":
            return []
        return [
            f"head {h + 1}{head_superscript(h)}" + (f" · {hd.name}" if hd.name else "")
            for h, hd in enumerate(sc.heads)
        ]

    def figure_widgets(self) -> list[QWidget]:
        page = self.diagram if self.stack.currentIndex() == 0 else self.calculator
        return content_parts(self, page)

    def refresh(self) -> None:
        wb = self.wb
        sc = wb.scenario
        mats = self.matrices()
        focused = min(wb.focused_head, len(wb.result.heads) - 1)
        chips = self.chip_labels()
        with self.updating():
            heads = chips or ["direct: no heads"]
            if [self.head_combo.itemText(i) for i in range(self.head_combo.count())] != heads:
                self.head_combo.clear()
                self.head_combo.addItems(heads)
            self.head_combo.setCurrentIndex(focused if chips else 0)
            self.head_combo.setEnabled(len(chips) > 1)
            labels = list(sc.query_labels)
            if [self.token_combo.itemText(i) for i in range(self.token_combo.count())] != labels:
                self.token_combo.clear()
                self.token_combo.addItems(labels)
            self.token_combo.setCurrentIndex(wb.receiving)
        caption, note = self.caption()
        self.diagram.set_data(mats, focused, wb.receiving, chips, caption, note)


def _block_matrices(wb: Workbench) -> list[BlockMatrix]:
    return block_matrices(wb.scenario, wb.result)


__all__ = ["AnatomyPanel", "best_fit", "cell_text", "diagram_groups", "layout_diagram"]
