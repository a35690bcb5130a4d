"""A sentence in the middle of a plot that has nothing to draw yet ("No training steps yet"):
on screen and in an exported figure, an empty pair of axes says why it is empty."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsSimpleTextItem

NOTE_INK = QColor("#666666")


class PlotNote:
    """A grey sentence centred in ``plot``'s view box, shown while :meth:`set_shown` says so.

    A plain text item of the view box itself (its pixels, not the data's coordinates): it
    follows the box's size, never its ranges, and costs a tenth of a plot text item to make.
    """

    def __init__(self, plot: pg.PlotWidget, text: str) -> None:
        self.vb: pg.ViewBox = plot.getPlotItem().getViewBox()
        self.item = QGraphicsSimpleTextItem(text, self.vb)
        self.item.setBrush(QBrush(NOTE_INK))
        self.item.setZValue(-5)  # under the curves drawn later
        self.vb.sigResized.connect(self._place)
        self._place()

    def text(self) -> str:
        return self.item.text()

    def set_shown(self, shown: bool) -> None:
        self.item.setVisible(shown)

    def shown(self) -> bool:
        return self.item.isVisible()

    def _place(self, *_: object) -> None:
        box, size = self.vb.rect(), self.item.boundingRect()
        self.item.setPos(box.center().x() - size.width() / 2, box.center().y() - size.height() / 2)
