"""Keys and queries of the lab on their best 2-D plane; a click picks the receiving query."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.style import QUERY
from attnsim.viewmodels.fields_lab import FIELD_NAMES, ScatterData, fit_points, place_label

from .canvas import FAINT, FIELD_COLORS, NO_FIELD, Canvas


class ScatterView(Canvas):
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

    def refresh(self, data: ScatterData) -> None:
        self.key_xy = data.key_xy
        self.query_xy = data.query_xy
        self.origin_xy = data.origin_xy
        self.key_field = data.key_field
        self.query_labels = list(data.query_labels)
        self.explained = data.explained
        self.selected = int(data.selected)
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
        footer = f"the plane keeps {fmt_fixed(100 * float(ex.sum()), 0)} % of the spread (PCA)"
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
