"""The scaling part: the run's settings, Run / Cancel and its progress, and the two log-log
plots (measured forward time, analytic peak memory) of plain, tiled and linear attention."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.kernel_scaling import METHODS
from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.kernel_lab import METHOD_NAMES, SETTINGS, ScalingShown

from ..kit.control_row import ControlRow
from ..kit.flow_layout import group

# Okabe-Ito: distinguishable with any colour vision; each curve also has its own symbol.
COLOURS = {"plain": "#0072B2", "tiled": "#E69F00", "linear": "#009E73"}
SYMBOLS = {"plain": "o", "tiled": "s", "linear": "t"}
MARKS = {"plain": "●", "tiled": "■", "linear": "▼"}  # the symbols above, in text


class ScalingControls(ControlRow):
    """n_max, repeats and d (the lab's control row), Run and Cancel, progress and status."""

    run = Signal()
    cancel = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("n_max", "repeats", "d"), parent=parent)
        self.n_combo = self.combos["n_max"]
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Time every size in the background")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFixedWidth(120)
        self.progress.setMaximumHeight(16)
        self.status = QLabel()
        self.flow.addWidget(group(self.run_button, self.cancel_button, self.progress, self.status))

    def show_running(self, running: bool, fraction: float, status: str) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setValue(round(100 * fraction))
        self.status.setText(status)


def _plot(title: str, ylabel: str) -> pg.PlotWidget:
    w = pg.PlotWidget(enableMenu=False)  # no context menu to build (a third of the cost)
    w.setBackground("w")
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setTitle(title, size=title_size(), color="k")
    w.setLabel("bottom", "n (tokens)")
    w.setLabel("left", ylabel)
    w.setLogMode(True, True)
    w.showGrid(x=True, y=True, alpha=0.25)
    w.setMinimumSize(160, 120)
    for side in ("left", "bottom"):
        w.getAxis(side).setTextPen(QColor(30, 30, 30))
        w.getAxis(side).setPen(QColor(30, 30, 30))
    return w


class ScalingPlots(QWidget):
    """Time and memory against n on log-log axes; the curves are made once and updated."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        row = QHBoxLayout()
        self.time_plot = _plot("Forward time (measured)", "ms")
        self.memory_plot = _plot("Peak intermediate memory (analytic)", "MiB")
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        for which, plot in (("time", self.time_plot), ("memory", self.memory_plot)):
            for m in METHODS:
                self.curves[(which, m)] = plot.plot(
                    [], [], pen=pg.mkPen(COLOURS[m], width=2), symbol=SYMBOLS[m],
                    symbolBrush=COLOURS[m], symbolPen=None, symbolSize=6, name=METHOD_NAMES[m],
                )  # fmt: skip
            row.addWidget(plot, 1)
        lay.addLayout(row, 1)
        # The legend under the plots, for both: inside a plot it would cover a curve somewhere.
        self.legend = QLabel(
            "&nbsp;&nbsp;&nbsp;".join(
                f'<span style="color:{COLOURS[m]}">{MARKS[m]} {METHOD_NAMES[m]}</span>'
                for m in METHODS
            )
        )
        self.legend.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.legend)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.caption)

    def refresh(self, shown: ScalingShown) -> None:
        ticks = {"time": shown.ms_ticks, "memory": shown.mib_ticks}
        for which, plot in (("time", self.time_plot), ("memory", self.memory_plot)):
            # Explicit ticks: pyqtgraph's log-axis minor labels collide at these ranges.
            x, y = list(shown.x_ticks), list(ticks[which])
            plot.getAxis("bottom").setTicks([x, []] if x else None)
            plot.getAxis("left").setTicks([y, []] if y else None)
        for i, m in enumerate(METHODS):
            for which, ys in (("time", shown.ms), ("memory", shown.mib)):
                y = ys[i] if ys.shape[1] else np.zeros(0)
                keep = y > 0  # a log axis has no place for 0
                self.curves[(which, m)].setData(shown.n[keep], y[keep])
        self.caption.setText(shown.caption)
