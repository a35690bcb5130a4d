"""A plot of the routing lab whose title is a head and a detail (see PlotRow.fit_titles)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.hidpi import title_size


class TitledPlot(pg.PlotWidget):
    def __init__(self, title: str, parent: QWidget | None = None, **kwargs) -> None:
        kwargs.setdefault("enableMenu", False)  # no context menu to build (a third of the cost)
        super().__init__(parent=parent, **kwargs)
        self.setTitle(title, size=title_size())
        self.hideButtons()
        self.setMinimumSize(140, 120)
        # room for a one-letter axis name beside ticks such as "−1.5"
        self.getPlotItem().getAxis("left").setWidth(44)
        #: (head, detail) of the title, set by each refresh; None until the first.
        self.title_parts: tuple[str, str] | None = None
        self._shown: tuple[str, str] | None = None

    def show_title(self, text: str, size: str) -> None:
        # Setting a title re-lays out its plot: only when it changed (not every drag frame).
        if self._shown != (text, size):
            self.setTitle(text, size=size)
            self._shown = (text, size)
