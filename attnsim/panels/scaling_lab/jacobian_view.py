"""The Jacobian side of the scaling lab: the softmax Jacobian of the receiving row as a
numbered matrix (the kit's canvas), its sizes, and how they collapse as the row's logits grow.

``refresh(JacobianData)`` draws it; the view emits nothing (it has no gestures).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.scaling_lab import MAX_JACOBIAN_KEYS, JacobianData

from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.numbers import fmt_fixed
from ..kit.plot_labels import PlotLabels
from ..style import KEY, QUERY, score_cmap
from .plots import log2_plot


def size_text(x: float) -> str:
    """A Jacobian size: 4 decimals, or 3 significant digits when a saturated row makes it tiny."""
    return fmt_fixed(x, 4) if x == 0 or x >= 1e-3 else f"{x:.3g}".replace("-", "−")


@cache
def _signed_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class JacobianMap(MatrixCanvas):
    """J as a numbered matrix on the diverging map, centred at 0, with its colour bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, font_pt=8.0, max_cell=64.0)
        self.setMinimumSize(180, 120)

    @property
    def matrix(self) -> np.ndarray:
        return self.values

    @property
    def labels(self) -> list[str]:
        return self.row_labels

    def colour_limit(self) -> float:
        return max(float(np.max(np.abs(self.values))) if self.values.size else 0.0, 1e-12)

    def set_jacobian(self, matrix: np.ndarray, labels: list[str]) -> None:
        m = np.asarray(matrix, dtype=float)
        vmax = max(float(np.max(np.abs(m))) if m.size else 0.0, 1e-12)
        self.set_matrix(
            m, row_labels=labels, scale=ColourScale(_signed_lut(), -vmax, vmax),
            digits=3, min_digits=2,
            bar_labels=[(1.0, fmt_fixed(vmax, 2)), (0.5, fmt_fixed(0.0, 2)),
                        (0.0, fmt_fixed(-vmax, 2))],
            tooltip=lambda i, j: f"∂w[{labels[i]}] / ∂z[{labels[j]}] = {m[i, j]!r}",
        )  # fmt: skip


class JacobianView(QWidget):
    """Title, the Jacobian map, its sizes and the saturation plot, top to bottom."""

    def __init__(self, parent: QWidget | None = None, *, later: bool = False) -> None:
        """With ``later``, the saturation plot waits for :meth:`add_saturation_plot` (a panel
        opened in steps makes it in a turn of its own)."""
        super().__init__(parent)
        v = self._v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(2)
        self.jac_title = QLabel()
        self.jac_title.setWordWrap(True)
        self.jac_title.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.jac_title)
        self.jac_map = JacobianMap()
        self.jac_map.setToolTip(
            "J[i, j] = ∂w_i/∂z_j = (1/T) w_i (δ_ij − w_j): how the weight of key i moves when "
            "the scaled score z_j of key j moves (z = q·k / √d_k, before the temperature)"
        )
        v.addWidget(self.jac_map, 3)
        self.jac_stats = QLabel()
        self.jac_stats.setWordWrap(True)
        v.addWidget(self.jac_stats)
        if not later:
            self.add_saturation_plot()

    def add_saturation_plot(self) -> None:
        """How J's sizes collapse as the row's logits grow (under the map)."""
        self.sat_plot = log2_plot("J as the logits grow", "logits × c", "size of J")
        sat_legend = self.sat_plot.addLegend(offset=(-4, 4), labelTextSize=title_size(8.0))
        self.frob_curve = self.sat_plot.plot(pen=pg.mkPen(KEY, width=2), name="‖J‖_F")
        self.max_curve = self.sat_plot.plot(
            pen=pg.mkPen(QUERY, width=2, style=Qt.PenStyle.DashLine), name="max |J|"
        )
        self.now_marker = self.sat_plot.plot(
            pen=None, symbol="o", symbolSize=8, symbolBrush="#222222", symbolPen=None
        )
        self.now_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#222222", width=1))
        self.sat_plot.addItem(self.now_line)
        self.now_text = pg.TextItem("now", color="#222222", anchor=(1, 1))
        self.sat_plot.addItem(self.now_text)
        self.unscaled_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#777777", width=1, style=Qt.PenStyle.DotLine)
        )
        self.sat_plot.addItem(self.unscaled_line)
        self.unscaled_text = pg.TextItem("without 1/√d_k", color="#555555", anchor=(0, 1))
        self.sat_plot.addItem(self.unscaled_text)
        # the labels keep off the two curves too (at d_k = 2 "without 1/√d_k" sat on max |J|)
        self.sat_texts = PlotLabels(
            self.sat_plot, avoid=(sat_legend,),
            lines=(self.frob_curve, self.max_curve, self.now_line, self.unscaled_line),
        )  # fmt: skip
        ticks = [(k, f"×{2.0**k:g}") for k in range(-2, 5)]
        self.sat_plot.getAxis("bottom").setTicks([ticks])
        self.sat_plot.setXRange(-2.1, 4.35, padding=0)
        self._v.addWidget(self.sat_plot, 3)

    def show_waiting(self, query: str) -> None:
        """What the view says while the receiving row's Jacobian is being computed (a long
        row, on the runner): the picture of the row before stays."""
        if not self.jac_title.text():
            self.jac_title.setText(f"<b>Softmax Jacobian</b> of <b>{query}</b>'s weights")
        self.jac_stats.setText("Computing the Jacobian of this row and its sizes…")

    def refresh(self, d: JacobianData) -> None:
        self.jac_map.set_jacobian(d.matrix, list(d.labels))
        self.jac_map.setVisible(d.drawn)
        self.jac_title.setText(
            f"<b>Softmax Jacobian</b> of <b>{d.query}</b>'s weights, T = {d.temperature:g}: "
            # the formula in one piece: a line break inside it would read as two
            # (a word joiner after the slash: Qt breaks a line after "/")
            "<span style='white-space: nowrap'>J&nbsp;=&nbsp;(1/\u2060T)&nbsp;w<sub>i</sub>"
            "(δ<sub>ij</sub>&nbsp;−&nbsp;w<sub>j</sub>)</span>"
        )
        k = d.keys.size
        note = ""
        if k == 1:
            note = " · one legal key: its weight is 1 whatever the scores, so J = 0"
        if d.forbidden:
            note += (
                f" · {d.forbidden} forbidden key{'s take' if d.forbidden > 1 else ' takes'} part "
                "(mask value 0 holds its logit at 0)"
            )
        if not d.drawn:
            note += (
                f" · {k} keys: J ({k}×{k}) is too large to draw "
                f"(shown up to {MAX_JACOBIAN_KEYS} keys); its sizes come from closed forms"
            )
        self.jac_stats.setText(
            f"max |J| = {size_text(d.max_abs)} · ‖J‖_F = {size_text(d.frobenius)} · "
            f"top weight {fmt_fixed(d.top_weight, 3)}{note}"
        )
        curve = d.curve
        lx = np.log2(curve.factor)
        self.frob_curve.setData(lx, curve.frobenius)
        self.max_curve.setData(lx, curve.max_abs)
        self.now_marker.setData([0.0, 0.0], [d.frobenius, d.max_abs])
        self.now_line.setPos(0.0)
        top = max(float(curve.frobenius.max()), float(curve.max_abs.max()), 1e-6)
        self.sat_plot.setYRange(0, top * 1.1, padding=0)
        self.sat_texts.want(self.now_text, -0.03, 0.0, (1, 1))
        # With the 1/sqrt(d_k) divisor on, dropping it multiplies these logits by sqrt(d_k).
        at = d.unscaled_at
        show = at is not None and 0.0 < at <= 4.0
        self.unscaled_line.setVisible(show)
        self.unscaled_text.setVisible(show)
        if show:
            self.unscaled_line.setPos(at)
            self.sat_texts.want(self.unscaled_text, at + 0.03, 0.0, (0, 1), short="no 1/√d_k")
        self.sat_texts.place()
