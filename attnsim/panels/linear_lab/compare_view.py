"""Linear vs softmax attention on the same q, k, v: one output coordinate of each at every
position as grouped bars, the largest |difference| per position below, and why softmax has no
running memory. Every bar and line is made once and updated in place."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from attnsim.panels.kit.hidpi import title_size
from attnsim.panels.widgets import compact_combo
from attnsim.viewmodels.linear_lab import SETTINGS, ComparisonData, LinearLabState

from ..kit.control_row import ControlRow
from ..style import KEY, MUTED, OUTPUT, QUERY
from .plots import fixed_plot

LABELS_MAX = 16  # more positions than this are labelled by number, every few


class CompareControls(ControlRow):
    """Which output coordinate the bars show, from the scenario's value axes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("coord",), combos=("coord",), parent=parent)
        self.coord_combo = compact_combo(self.combos["coord"], 10)

    def show_comparison(self, st: LinearLabState, data: ComparisonData) -> None:
        self.set_items("coord", data.v_axes)
        self.coord_combo.setEnabled(not data.message)
        if data.v_axes:
            self.refresh(st, values={"coord": data.coord})


class CompareView(QWidget):
    """Grouped bars (linear, softmax) per position; max |difference| per position below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.outputs = fixed_plot("Outputs at each position", ylabel="output")
        self.linear_bars = pg.BarGraphItem(
            x=[], height=[], width=0.38, brush=QUERY, pen=QUERY.darker(130), name="linear (elu+1)"
        )
        self.softmax_bars = pg.BarGraphItem(
            x=[], height=[], width=0.38, brush=KEY, pen=KEY.darker(130), name="softmax"
        )
        for item in (self.linear_bars, self.softmax_bars):
            self.outputs.addItem(item)
        self.zero = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen(MUTED, width=1))
        self.outputs.addItem(self.zero)
        self.marks = []
        self.differences = fixed_plot("max |linear − softmax| per position", ylabel="|diff|")
        self.diff_bars = pg.BarGraphItem(
            x=[], height=[], width=0.6, brush=OUTPUT, pen=OUTPUT.darker(130)
        )
        self.differences.addItem(self.diff_bars)
        for plot in (self.outputs, self.differences):
            mark = pg.InfiniteLine(
                angle=90, pen=pg.mkPen(QColor("#444444"), width=1, style=Qt.PenStyle.DashLine)
            )
            plot.addItem(mark)
            self.marks.append(mark)
        lay.addWidget(self.outputs, 3)
        lay.addWidget(self.differences, 2)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.message)
        self._ticks: list | None = None
        self._bars: tuple[tuple[np.ndarray, ...], tuple] | None = None

    def refresh(self, data: ComparisonData) -> None:
        self.message.setText(data.message or data.caption)
        drawn = not data.message
        self.outputs.setVisible(drawn)
        self.differences.setVisible(drawn)
        if not drawn:
            return
        n = data.linear.shape[0]
        for mark in self.marks:
            mark.setPos(float(data.position + 1))
        bars = (data.linear, data.softmax, data.max_abs_difference)
        names = (data.tokens, data.coord_label)
        if (
            self._bars is not None
            and self._bars[1] == names
            and all(
                np.array_equal(a, b, equal_nan=True)
                for a, b in zip(self._bars[0], bars, strict=True)
            )
        ):
            return  # a step only moved the marker: the bars and axes stay as drawn
        self._bars = (bars, names)
        x = np.arange(1, n + 1, dtype=float)
        self.linear_bars.setOpts(x=x - 0.2, height=data.linear)
        self.softmax_bars.setOpts(x=x + 0.2, height=data.softmax)
        self.diff_bars.setOpts(x=x, height=data.max_abs_difference)
        # the key to the colours sits in the title: a legend inside would cover late bars
        self.outputs.setTitle(
            f"Output “{data.coord_label}” at each position: "
            f"<span style='color:{QUERY.name()}'>■ linear (elu + 1)</span>&nbsp;&nbsp;"
            f"<span style='color:{KEY.name()}'>■ softmax</span>",
            size=title_size(),
        )
        ticks = self._tick_labels(data.tokens, n)
        if ticks != self._ticks:
            self._ticks = ticks
            for plot in (self.outputs, self.differences):
                plot.getAxis("bottom").setTicks([ticks])
        for plot in (self.outputs, self.differences):
            plot.setXRange(0.4, n + 0.6, padding=0)
        both = np.concatenate([data.linear, data.softmax, [0.0]])
        finite = both[np.isfinite(both)]
        lo, hi = float(finite.min()), float(finite.max())
        pad = 0.08 * (hi - lo) or 0.5
        self.outputs.setYRange(lo - pad, hi + pad, padding=0)
        d = data.max_abs_difference[np.isfinite(data.max_abs_difference)]
        top = float(d.max(initial=0.0)) or 1.0
        self.differences.setYRange(0.0, 1.1 * top, padding=0)

    @staticmethod
    def _tick_labels(tokens: tuple[str, ...], n: int) -> list[tuple[float, str]]:
        if n <= LABELS_MAX:
            return [(float(j + 1), tokens[j] if j < len(tokens) else str(j + 1)) for j in range(n)]
        every = max(1, round(n / 8))
        return [(float(j), str(j)) for j in range(every, n + 1, every)]
