"""The lab's plots: fixed views (no mouse zoom, no menu), a small title, a left axis wide
enough for "−0.25" and never rescaled to an SI prefix."""

from __future__ import annotations

import pyqtgraph as pg

from attnsim.panels.kit.hidpi import title_size


def fixed_plot(title: str, *, xlabel: str = "", ylabel: str = "") -> pg.PlotWidget:
    w = pg.PlotWidget(enableMenu=False)  # no context menu to build (a third of the cost)
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setTitle(title, size=title_size())
    if xlabel:
        w.setLabel("bottom", xlabel)
    if ylabel:
        w.setLabel("left", ylabel)
    for side in ("bottom", "left"):
        # a difference of 1e-3 reads as such, not as "(x0.001)"
        w.getAxis(side).enableAutoSIPrefix(False)
    w.getAxis("left").setWidth(44)
    w.setMinimumSize(160, 90)
    return w
