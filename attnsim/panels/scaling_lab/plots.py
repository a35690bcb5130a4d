"""The lab's fixed plots: log2 axes whose ticks the lab sets, no mouse interaction."""

from __future__ import annotations

import pyqtgraph as pg

from attnsim.panels.kit.hidpi import title_size


class TickAxis(pg.AxisItem):
    """An axis whose ticks are set explicitly (values are log2 of what the labels say)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)
        # The last tick sits near the edge; pyqtgraph would hide its label otherwise.
        self.setStyle(hideOverlappingLabels=False)


def log2_plot(title: str, xlabel: str, ylabel: str) -> pg.PlotWidget:
    w = pg.PlotWidget(
        axisItems={"bottom": TickAxis("bottom"), "left": TickAxis("left")},
        enableMenu=False,  # no context menu to build (a third of the cost)
    )
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setTitle(title, size=title_size())
    w.setLabel("bottom", xlabel)
    w.setLabel("left", ylabel)
    w.setMinimumSize(150, 120)
    return w
