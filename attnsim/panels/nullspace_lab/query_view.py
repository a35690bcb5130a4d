"""The lab's 2-D view of the query space: fixed keys, the query M x and the query M e."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.panels.kit.arrows import paint_arrow
from attnsim.panels.kit.label_painter import paint_placed_label
from attnsim.panels.kit.labels import place_labels, segment_marks
from attnsim.panels.style import KEY, MUTED, QUERY
from attnsim.viewmodels.nullspace_lab import DEFAULT_KEYS, KEY_NAMES, QueryPlane

from .painting import INPUT_COLOUR, start_painting


class QuerySpaceView(QWidget):
    """The 2-D query space: fixed keys, the query M x and the query M e of the input e."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keys = np.array(DEFAULT_KEYS, dtype=float)
        self.query = np.zeros(2)
        self.base_query = np.zeros(2)
        self.extent = 6.0
        self.label_rects: list[tuple[float, float, float, float]] = []  # names, as drawn
        self.setMinimumSize(150, 110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(220, 190)

    def refresh(self, data: QueryPlane) -> None:
        self.keys = data.keys
        self.query, self.base_query = data.query, data.base_query
        self.extent = data.extent
        self.update()

    def to_screen(self, v: np.ndarray) -> QPointF:
        """Screen point of a query-space point (2,): the origin sits near the lower left."""
        w, h = self.width(), self.height()
        lo = -0.25 * self.extent
        scale = min((w - 16) / (self.extent - lo), (h - 26) / (self.extent - lo))
        return QPointF(8 + (float(v[0]) - lo) * scale, h - 18 - (float(v[1]) - lo) * scale)

    def paintEvent(self, event) -> None:
        p, fm = start_painting(self)
        E = self.extent
        p.setPen(QPen(MUTED, 1.0))
        o = self.to_screen(np.zeros(2))
        axes = [
            (self.to_screen(np.array([-0.25 * E, 0])), self.to_screen(np.array([E, 0]))),
            (self.to_screen(np.array([0, -0.25 * E])), self.to_screen(np.array([0, E]))),
        ]
        for a, b in axes:
            p.drawLine(a, b)
        p.setPen(QColor("#777777"))
        axis_names = []
        for pos, name in ((self.to_screen(np.array([E, 0])) + QPointF(-14, -4), "q1"),
                          (self.to_screen(np.array([0, E])) + QPointF(4, 10), "q2")):  # fmt: skip
            p.drawText(pos, name)
            axis_names.append((pos.x(), pos.y() - fm.ascent(), fm.horizontalAdvance(name),
                               float(fm.height())))  # fmt: skip
        names: list[tuple[QPointF, QPointF, QColor, str]] = []  # tip, direction, colour, text

        def arrow(v: np.ndarray, colour: QColor, width: float, text: str) -> None:
            tip = self.to_screen(v)
            paint_arrow(p, o, tip, colour, width, head_width_px=8.0)
            names.append((tip, QPointF(tip.x() - o.x(), tip.y() - o.y()), colour, text))

        for name, k in zip(KEY_NAMES, self.keys, strict=False):
            arrow(k, KEY, 1.6, name)
        # M e: where the query was for the unmoved input (a ring; the query arrow covers it
        # whenever the move is along the null space).
        ring = self.to_screen(self.base_query)
        p.setPen(QPen(INPUT_COLOUR, 1.2, Qt.PenStyle.DashLine))
        p.drawEllipse(ring, 7, 7)
        arrow(self.query, QUERY, 2.2, "q = M x")
        # The names together, so that keys ending close together ("k2", "k3") stay apart;
        # the query's name is placed first.
        names = names[-1:] + names[:-1]
        shafts = [
            m for tip, _, _, _ in names for m in segment_marks((o.x(), o.y()), (tip.x(), tip.y()))
        ]
        # The names keep off the axes and off the arrows' heads (just behind each tip) too.
        shafts += [
            m
            for a, b in axes
            for m in segment_marks((a.x(), a.y()), (b.x(), b.y()), step=5.0, max_marks=200)
        ]
        shafts.append((ring.x() - 8.0, ring.y() - 8.0, 16.0, 16.0))  # the ring M e
        for tip, d, _, _ in names:
            n = max(float(np.hypot(d.x(), d.y())), 1e-9)
            cx, cy = tip.x() - 4.0 * d.x() / n, tip.y() - 4.0 * d.y() / n
            shafts.append((cx - 6.0, cy - 6.0, 12.0, 12.0))
        caption_y = self.height() - fm.height() - 2
        placed = place_labels(
            [(tip.x(), tip.y()) for tip, _, _, _ in names],
            [(float(fm.horizontalAdvance(t)), float(fm.height())) for *_, t in names],
            directions=[(d.x(), d.y()) for _, d, _, _ in names],
            obstacles=[*axis_names, *shafts],
            bounds=(1.0, 1.0, self.width() - 2.0, caption_y - 1.0),
        )  # fmt: skip
        self.label_rects = [pl.rect for pl in placed]
        for (_, _, colour, text), pl in zip(names, placed, strict=True):
            paint_placed_label(p, pl, text, colour, fm)
        p.setPen(QColor("#555555"))
        p.drawText(
            QRectF(4, caption_y, self.width() - 8, fm.height()),
            Qt.AlignmentFlag.AlignLeft,
            "query space (2-D); ring: M e",
        )
        p.end()
