"""The stepper's curves: loss per step and the reading token's attention to the clue word,
one line per sentence, with a colour legend.

``rebuild(dataset)`` after a model or dataset change (one line per sentence), then
``refresh(history)`` after every step.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from attnsim.engine.training import Dataset
from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.stepper import nice_extent

from ..kit.plot_note import PlotNote
from ..style import CATEGORICAL

# What an empty plot says before the first step.
NO_STEPS = "No training steps yet"


class Curves(QWidget):
    """Two pyqtgraph plots over the training history, one curve per sentence."""

    def __init__(self, parent: QWidget | None = None, *, later: bool = False) -> None:
        """With ``later``, the second plot waits for :meth:`add_clue_plot` (a panel opened in
        steps makes each plot in a turn of its own: each is some 20 ms)."""
        super().__init__(parent)
        cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(2)
        self.loss_items: list[pg.PlotDataItem] = []
        self.clue_items: list[pg.PlotDataItem] = []
        self._x_max = 0.0
        self._loss_max = 0.0
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        cl.addWidget(self.legend)
        self.loss_plot = _plot("loss per step")
        self.notes = [PlotNote(self.loss_plot, NO_STEPS)]
        cl.addWidget(self.loss_plot, 1)
        if not later:
            self.add_clue_plot()

    def add_clue_plot(self) -> None:
        """The plot of the attention to the clue word, under the loss plot."""
        self.clue_plot = _plot("attention to the clue word")
        self.clue_plot.setYRange(0.0, 1.0, padding=0.02)
        self.clue_plot.getPlotItem().getViewBox().setMouseEnabled(y=False)
        self.notes.append(PlotNote(self.clue_plot, NO_STEPS))
        self.layout().addWidget(self.clue_plot, 1)

    def rebuild(self, ds: Dataset) -> None:
        """One curve per sentence of ``ds`` in both plots, and the legend naming them."""
        self._x_max = self._loss_max = 0.0
        for plot, items in ((self.loss_plot, self.loss_items), (self.clue_plot, self.clue_items)):
            for item in items:
                plot.removeItem(item)
            items.clear()
        legend = []
        for i, (tokens, _) in enumerate(ds.sentences):
            colour = QColor(CATEGORICAL[i % len(CATEGORICAL)])
            legend.append(f"<span style='color:{colour.name()}'>■</span>&nbsp;{' '.join(tokens)}")
            for plot, items in (
                (self.loss_plot, self.loss_items),
                (self.clue_plot, self.clue_items),
            ):
                item = pg.PlotDataItem(pen=pg.mkPen(colour, width=1.5))
                item.setClipToView(True)
                item.setDownsampling(auto=True, method="peak")
                plot.addItem(item)
                items.append(item)
        self.legend.setText("<span style='font-size:8pt'>" + " &nbsp; ".join(legend) + "</span>")
        clues = sorted(ds.clue_words())
        reader = {t[-1] for t, _ in ds.sentences}
        self.clue_plot.setTitle(
            f"{'/'.join(sorted(reader))} → clue word, weight per step", size=title_size()
        )
        self.clue_plot.setToolTip(
            "Weight from the token the classifier reads to the first clue word of each sentence "
            f"(words used with one label only: {', '.join(clues) or 'none'})"
        )

    def refresh(self, h) -> None:
        """Show the history ``h`` (steps, losses, clue weights and sentence of each step)."""
        step, loss, clue, sent = h.step, h.loss, h.clue, h.sentence
        for i, (li, ci) in enumerate(zip(self.loss_items, self.clue_items, strict=True)):
            sel = sent == i
            xs = step[sel]
            li.setData(xs, loss[sel])
            ys = clue[sel]
            ok = ~np.isnan(ys)
            ci.setData(xs[ok], ys[ok])
        for note in self.notes:
            note.set_shown(not h.n)
        last = float(step[-1]) if h.n else 0.0
        # x grows in steps of half a power of ten (300 -> 350 -> 400), so the axis moves rarely
        unit = 10.0 ** np.floor(np.log10(max(last, 10.0))) / 2
        x_max = float(max(10.0, np.ceil(last / unit) * unit))
        if x_max != self._x_max:
            self._x_max = x_max
            for plot in (self.loss_plot, self.clue_plot):
                plot.setXRange(0.0, x_max, padding=0.02)
        top = nice_extent(float(np.max(loss))) if h.n else 1.0
        if top != self._loss_max:
            self._loss_max = top
            self.loss_plot.setYRange(0.0, top, padding=0.02)


def _plot(title: str) -> pg.PlotWidget:
    # No context menus to build (a third of a plot's cost).
    plot = pg.PlotWidget(enableMenu=False)
    plot.setTitle(title, size=title_size())
    plot.setMinimumHeight(120)
    # No grid: with one, pyqtgraph drops the labels of the range's ends (0 and 1 of a weight)
    # wherever they reach past the axis, which the ends' labels do.
    plot.setMenuEnabled(False)
    # Ranges are set in nice steps by refresh: an axis that changed every step would be
    # re-laid-out on every frame of continuous training.
    plot.disableAutoRange()
    plot.getPlotItem().hideButtons()
    for name in ("left", "bottom"):
        # Axes change only when a range does: painting them from a cached pixmap saves most
        # of a plot's repaint time.
        plot.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # The ends of the range (0 and 1 of a weight, the last step) are labelled too: pyqtgraph
        # would hide their labels for reaching past the axis's edge.
        plot.getAxis(name).setStyle(hideOverlappingLabels=False)
    return plot
