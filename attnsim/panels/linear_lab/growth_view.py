"""Memory as n grows: numbers held by the linear memory S (flat), a KV cache (growing like n)
and softmax's score matrix (n²) on log-log axes, the scenario's n marked. The curves, the
marker and the legend are made once and updated in place."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.linear_lab import SETTINGS, GrowthData

from ..kit.control_row import ControlRow
from ..style import KEY, OUTPUT, QUERY
from .plots import fixed_plot

INK = QColor("#444444")


class GrowthControls(ControlRow):
    """The plot's largest n."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("plot_n",), parent=parent)
        self.n_box = self.boxes["plot_n"]


class GrowthView(QWidget):
    """The log-log plot and its caption."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        w = fixed_plot(
            "Numbers kept between tokens (log-log)", xlabel="sequence length n",
            ylabel="numbers held",
        )  # fmt: skip
        w.setMinimumSize(160, 120)
        w.getAxis("bottom").setStyle(hideOverlappingLabels=False)
        w.getAxis("left").setStyle(hideOverlappingLabels=False)
        w.showGrid(x=True, y=True, alpha=0.15)
        legend = w.addLegend(offset=(8, 4), labelTextSize=title_size(8.0), verSpacing=-4)
        legend.setBrush(pg.mkBrush(255, 255, 255, 225))  # the n marker may pass behind it
        self.plot = w
        self.memory_curve = w.plot([], [], pen=pg.mkPen(QUERY, width=2.5), name="linear memory S")
        self.kv_curve = w.plot([], [], pen=pg.mkPen(KEY, width=2), name="KV cache n(d_k + d_v)")
        self.score_curve = w.plot(
            [], [], pen=pg.mkPen(OUTPUT, width=2, style=Qt.PenStyle.DashLine),
            name="softmax scores n²",
        )  # fmt: skip
        self.marker = pg.InfiniteLine(angle=90, pen=pg.mkPen(INK, width=1))
        w.addItem(self.marker)
        self.points = pg.ScatterPlotItem(size=8, pen=pg.mkPen(INK), brush=pg.mkBrush("w"))
        w.addItem(self.points)
        self.n_text = pg.TextItem(color=INK, anchor=(0, 1))
        w.addItem(self.n_text)
        lay.addWidget(w, 1)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.caption)
        self._ticks: tuple | None = None

    def refresh(self, data: GrowthData) -> None:
        x = data.x
        self.memory_curve.setData(x, data.log(data.memory))
        self.kv_curve.setData(x, data.log(data.kv_cache))
        self.score_curve.setData(x, data.log(data.scores))
        cx = float(np.log10(data.current))
        self.marker.setPos(cx)
        self.points.setData([cx] * 3, list(np.log10(np.array(data.at_current, dtype=float))))
        self.n_text.setText(f"n = {data.current}")
        y_lo, y_hi = data.y_range
        # at the foot of the marker (the legend holds the top left), on the side with room
        right = cx < 0.8 * float(x[-1])
        self.n_text.setAnchor((0, 1) if right else (1, 1))
        self.n_text.setPos(cx, y_lo)
        ticks = (data.x_ticks, data.y_ticks)
        if ticks != self._ticks:
            self._ticks = ticks
            self.plot.getAxis("bottom").setTicks([list(data.x_ticks)])
            self.plot.getAxis("left").setTicks([list(data.y_ticks)])
        self.plot.setXRange(0.0, float(x[-1]), padding=0.02)
        self.plot.setYRange(y_lo, y_hi, padding=0.04)
        self.caption.setText(data.caption)
