"""Grouped-query and multi-query attention: h query heads above, g key/value heads below, a
line from each query head to the key/value head it reads; the shape's boxes and the counts."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from attnsim.viewmodels.position_lab import SETTINGS, SharingData

from ..kit.control_row import ControlRow
from ..style import CATEGORICAL, KEY, QUERY

INK = QColor("#222222")
DRAWN_MAX = 64  # more heads than this are drawn as bands, one per group


class SharingDiagram(QWidget):
    """Query heads (top row) joined to the key/value head (bottom row) each one reads."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: SharingData | None = None
        self.setMinimumSize(160, 90)
        self.setToolTip(
            "Each query head (top) reads one key/value head (bottom): query head j reads "
            "key/value head j // (h/g). g = h is multi-head, g = 1 multi-query attention."
        )

    def sizeHint(self) -> QSize:
        return QSize(360, 150)

    def refresh(self, data: SharingData) -> None:
        self.data = data
        self.update()

    def centres(self, count: int, y: float) -> list[QPointF]:
        """Centres of ``count`` boxes spread over the width, at height ``y``."""
        w = float(self.width()) - 16
        return [QPointF(8 + w * (i + 0.5) / count, y) for i in range(count)]

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        d = self.data
        if d is None:
            p.end()
            return
        font = QFont(self.font())
        p.setFont(font)
        fm = QFontMetricsF(font)
        top_y, bottom_y = fm.height() + 16, float(self.height()) - fm.height() - 16
        p.setPen(INK)
        p.drawText(QRectF(4, 0, self.width() - 8, fm.height() + 2), Qt.AlignmentFlag.AlignLeft,
                   f"{d.h} query heads")  # fmt: skip
        bottom = QRectF(4, self.height() - fm.height() - 2, self.width() - 8, fm.height() + 2)
        p.drawText(bottom, Qt.AlignmentFlag.AlignLeft, f"{d.g} key/value heads ({d.counts.kind})")
        box_h = 12.0
        if d.h <= DRAWN_MAX:
            tops = self.centres(d.h, top_y)
            bottoms = self.centres(d.g, bottom_y)
            # One batch of lines per group: one pen change and one call, not one per head.
            for grp in range(d.g):
                members = np.flatnonzero(d.group == grp)
                end = bottoms[grp] - QPointF(0, box_h / 2)
                p.setPen(QPen(QColor(CATEGORICAL[grp % len(CATEGORICAL)]), 1.4))
                p.drawLines([QLineF(tops[i] + QPointF(0, box_h / 2), end) for i in members])
            box = max(3.0, min(18.0, (self.width() - 16) / max(d.h, d.g) - 3))
            top_w = [box] * d.h
            note = ""
        else:
            # Too many heads to draw one by one: one band of query heads per drawn key/value
            # box, as wide as its share, fanning into it.
            g_drawn = next(k for k in range(min(d.g, DRAWN_MAX), 0, -1) if d.g % k == 0)
            tops = self.centres(g_drawn, top_y)
            bottoms = self.centres(g_drawn, bottom_y)
            band = (self.width() - 16) / g_drawn
            top_w = [max(3.0, band - 4)] * g_drawn
            box = max(3.0, min(18.0, band - 3))
            for k, (t, b) in enumerate(zip(tops, bottoms, strict=True)):
                p.setPen(QPen(QColor(CATEGORICAL[k % len(CATEGORICAL)]), 1.4))
                for dx in (-top_w[k] / 2, 0.0, top_w[k] / 2):
                    p.drawLine(t + QPointF(dx, box_h / 2), b - QPointF(0, box_h / 2))
            note = f"each band: {d.h // g_drawn} query heads"
            if d.g > g_drawn:
                note += f"; each box below: {d.g // g_drawn} key/value heads"
        for pts, widths, colour in ((tops, top_w, QUERY), (bottoms, [box] * len(bottoms), KEY)):
            for c, w in zip(pts, widths, strict=True):
                p.setPen(QPen(colour.darker(130), 1))
                p.setBrush(colour)
                p.drawRect(QRectF(c.x() - w / 2, c.y() - box_h / 2, w, box_h))
        if note:
            p.setPen(INK)
            w = fm.horizontalAdvance(note) + 8
            line = QRectF((self.width() - w) / 2, top_y + box_h + 2, w, fm.height())
            p.fillRect(line, QColor(255, 255, 255, 220))  # the note reads over the lines
            p.drawText(line, Qt.AlignmentFlag.AlignCenter, note)
        p.end()


class SharingControls(ControlRow):
    """h, g, d_model, d_k, n and the bytes per cached number: the lab's control row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        names = ("h", "g", "d_model", "d_k", "n", "dtype_bytes")
        super().__init__(SETTINGS, names, parent=parent)


class SharingView(QWidget):
    """The diagram, the counts table and the caption."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.diagram = SharingDiagram()
        lay.addWidget(self.diagram, 1)
        self.table = QLabel()
        self.table.setTextFormat(Qt.TextFormat.RichText)
        self.table.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.table)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)

    def refresh(self, data: SharingData) -> None:
        self.diagram.refresh(data)
        cells = "".join(
            f"<tr><td>{what}</td><td align='right'><b>{this}</b></td>"
            f"<td align='right'>{mha}</td></tr>"
            for what, this, mha in data.rows
        )
        self.table.setText(
            "<table cellspacing='0' cellpadding='1'><tr><th align='left'></th>"
            f"<th align='right'>&nbsp;{data.counts.kind}</th>"
            f"<th align='right'>&nbsp;&nbsp;MHA (g = h)</th></tr>{cells}</table>"
        )
        self.caption.setText(data.caption)
