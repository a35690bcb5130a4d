"""The routing lab's three plots side by side: the key plane (the address), the route (the
weights) and the payload (w·v and the output), with titles fitted to their widths."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QWidget

from attnsim.panels.kit.hidpi import points
from attnsim.panels.kit.numbers import fmt_fixed, fmt_vector
from attnsim.panels.style import KEY, MUTED, OUTPUT, VALUE
from attnsim.viewmodels.routing_lab import BarsView, LabView, PayloadView

from .key_plane import KeyPlane
from .plot_layer import PlotLayer
from .titled_plot import TitledPlot

BLACK = QColor("#111111")


class RouteBars(TitledPlot):
    """The route: a bar per key (grey when masked), dashed bars for the weights before the last
    edit, each weight written above its bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("route: weights", parent=parent)
        self.setMouseEnabled(False, False)
        self.setMenuEnabled(False)
        self.layer = PlotLayer(self.getPlotItem(), z=2.0)
        self.bars = pg.BarGraphItem(
            x=[0.0], height=[0.0], width=0.6, pen=pg.mkPen("#222", width=0.6)
        )
        self.addItem(self.bars)
        self.before_bars = pg.BarGraphItem(
            x=[0.0], height=[0.0], width=0.78, brush=pg.mkBrush(0, 0, 0, 0),
            pen=pg.mkPen("#555555", width=1.3, style=Qt.PenStyle.DashLine),
        )  # fmt: skip
        self.before_bars.setZValue(1.0)
        self.addItem(self.before_bars)

    def refresh(self, v: BarsView) -> None:
        pi = self.getPlotItem()
        emulated = "" if v.emulated_d is None else f" (d = {v.emulated_d:g} emulated)"
        self.title_parts = ("route:", f"weights{emulated}")
        n = v.weights.shape[0]
        brushes = [pg.mkBrush(KEY if ok else MUTED) for ok in v.legal]
        self.bars.setOpts(x=np.arange(n, dtype=float), height=v.weights, width=0.6, brushes=brushes)
        self.before_bars.setVisible(bool(v.before_x.size))
        if v.before_x.size:
            self.before_bars.setOpts(x=v.before_x, height=v.before_h, width=0.78)
        layer = self.layer
        layer.begin()
        for j in range(n):
            layer.text(
                fmt_fixed(v.weights[j], 3), (float(j), v.label_tops[j]), BLACK, anchor=(0.5, 1.0)
            )
        layer.end()
        pi.getAxis("bottom").setTicks([[(float(j), t) for j, t in enumerate(v.tokens)]])
        pi.setXRange(-0.6, n - 0.4, padding=0)
        pi.setYRange(0.0, 1.12, padding=0)


class PayloadPlot(TitledPlot):
    """The payload: the values, each w_j v_j, the output (and, dashed, the output before)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("payload: w·v and the output", parent=parent)
        self.setMenuEnabled(False)
        self.getViewBox().setAspectLocked(True)
        self.setMouseEnabled(False, False)
        self.layer = PlotLayer(self.getPlotItem(), z=1.0)
        self.value_dots = pg.ScatterPlotItem(size=7, pen=pg.mkPen(VALUE), brush=None, symbol="o")
        self.addItem(self.value_dots)

    def refresh(self, v: PayloadView) -> None:
        pi = self.getPlotItem()
        layer = self.layer
        layer.begin()
        pi.setLabel("bottom", v.x_label)
        pi.setLabel("left", v.y_label)
        self.value_dots.setData(pos=v.values)
        for (x, y), label, shown in zip(v.values, v.value_labels, v.labelled, strict=True):
            if shown:
                layer.text(label, (x, y), VALUE, small=True)
        for (x, y), drawn in zip(v.contributions, v.drawn, strict=True):
            if drawn:
                layer.arrow((x, y), VALUE, 1.6)
        if v.before_output is not None:
            layer.arrow(v.before_output, MUTED, 1.4, dashed=True)
        layer.arrow(v.output, OUTPUT, 3.2)
        layer.text("output", v.output, OUTPUT, bold=True)
        layer.end()
        self.title_parts = (
            "payload:",
            f"output = {fmt_vector(v.output_vector, 2, item=fmt_fixed)}",
        )
        self.getViewBox().setRange(xRange=v.x_range, yRange=v.y_range, padding=0)


class PlotRow(QWidget):
    """The three plots in a row, their titles on one line each while they fit and all on two
    lines (head, then detail) once one does not, so no title is cut off and they stay level."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setSpacing(2)
        row.setContentsMargins(0, 0, 0, 0)
        self.plane = KeyPlane()
        self.route_plot = RouteBars()
        self.payload = PayloadPlot()
        self.plots: tuple[TitledPlot, ...] = (self.plane, self.route_plot, self.payload)
        for w in self.plots:
            row.addWidget(w, 1)
        self._font = QFont()
        self._font.setPointSizeF(9.0)

    def refresh(self, view: LabView) -> None:
        self.plane.refresh(view.plane)
        self.route_plot.refresh(view.bars)
        self.payload.refresh(view.payload)
        self.fit_titles()

    def fit_titles(self) -> None:
        self._font.setPointSizeF(points(9.0))
        metrics = QFontMetrics(self._font)
        fits = all(
            p.title_parts is None
            or metrics.horizontalAdvance(" ".join(p.title_parts)) <= p.width() - 16
            for p in self.plots
        )
        for p in self.plots:
            if p.title_parts is not None:
                head, detail = p.title_parts
                p.show_title(
                    *((f"{head} {detail}", "9pt") if fits else (f"{head}<br>{detail}", "8pt"))
                )

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_titles()
