"""A sentence in the middle of a plot that has nothing to draw yet ("No training steps yet"):
on screen and in an exported figure, an empty pair of axes says why it is empty."""

from __future__ import annotations

import pyqtgraph as pg


class PlotNote:
    """A grey sentence centred in ``plot``'s view, shown while :meth:`set_shown` says so."""

    def __init__(self, plot: pg.PlotWidget, text: str) -> None:
        self.item = pg.TextItem(text, color="#666666", anchor=(0.5, 0.5))
        self.item.setZValue(-5)  # under any curve drawn later
        self.vb: pg.ViewBox = plot.getPlotItem().getViewBox()
        plot.addItem(self.item, ignoreBounds=True)  # (it moves no range)
        self.vb.sigRangeChanged.connect(self._place)
        self._place()

    def set_shown(self, shown: bool) -> None:
        self.item.setVisible(shown)

    def shown(self) -> bool:
        return self.item.isVisible()

    def _place(self, *_: object) -> None:
        (x0, x1), (y0, y1) = self.vb.viewRange()
        self.item.setPos((x0 + x1) / 2, (y0 + y1) / 2)
