"""The receiving query's mixture Σ w v, one bar per value coordinate, grouped by field."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.viewmodels.fields_lab import FIELD_NAMES, MixtureData

from .canvas import FAINT, FIELD_COLORS, NO_FIELD, TEXT, Canvas


class MixtureView(Canvas):
    """The receiving query's mixture Σ w v: one bar per value coordinate, grouped by field."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros(0)
        self.value_field = np.zeros(0, dtype=int)
        self.axes: list[str] = []
        self.title = ""

    def sizeHint(self) -> QSize:
        return QSize(420, 190)

    def refresh(self, data: MixtureData) -> None:
        self.values = data.values
        self.value_field = data.value_field
        self.axes = list(data.axes)
        self.title = data.title
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
            text = fmt_fixed(v, 2)
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
