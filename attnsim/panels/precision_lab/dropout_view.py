"""Dropout on the weights: the toggle, p, the seed and the train / eval switch; the realised
weights beside their expectation, and what the dropped weights do to the output."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.precision_lab import P_MAX, SEED_MAX, DropoutData

from ..kit.flow_layout import FlowLayout, group
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.number_boxes import WholeNumberBox
from ..kit.numbers import fmt_number
from ..style import score_cmap, weight_cmap

LABELS_MAX = 24
MIN_CELL = 1e-3  # px: a large head is pooled (one pixel a cell made 4,096-pixel images)
P_STEPS = 100  # the slider moves p in hundredths


@cache
def _luts() -> tuple[np.ndarray, np.ndarray]:
    return lut_from_cmap(weight_cmap()), lut_from_cmap(score_cmap())


class DropoutControls(QWidget):
    """Reports ``setting(name, value)`` with the state's names; the p slider also reports
    ``pressed("p")`` / ``released("p")`` so a drag merges into one edit."""

    setting = Signal(str, object)
    refused = Signal(str)
    pressed = Signal(str)
    released = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=8, v_spacing=2)
        flow.setContentsMargins(0, 0, 0, 0)
        self.on_check = QCheckBox("dropout on the weights")
        self.on_check.toggled.connect(lambda on: self.setting.emit("dropout", bool(on)))
        flow.addWidget(self.on_check)
        self.p_slider = QSlider(Qt.Orientation.Horizontal)
        self.p_slider.setRange(0, round(P_MAX * P_STEPS))
        self.p_slider.setMinimumWidth(110)
        self.p_slider.setToolTip("The probability that a weight is dropped")
        self.p_slider.valueChanged.connect(lambda v: self.setting.emit("p", v / P_STEPS))
        self.p_slider.sliderPressed.connect(lambda: self.pressed.emit("p"))
        self.p_slider.sliderReleased.connect(lambda: self.released.emit("p"))
        self.p_text = QLabel()
        self.p_text.setMinimumWidth(32)
        flow.addWidget(group(QLabel("p"), self.p_slider, self.p_text, grow=self.p_slider))
        self.seed_box = WholeNumberBox(0, SEED_MAX)
        self.seed_box.setToolTip("The random generator's seed: which weights are dropped")
        self.seed_box.valueChanged.connect(lambda v: self.setting.emit("seed", int(v)))
        self.seed_box.refused.connect(lambda r: self.refused.emit(f"seed: {r}"))
        self.next_seed = QPushButton("new seed")
        self.next_seed.setToolTip("Draw another mask of dropped weights (seed + 1)")
        self.next_seed.clicked.connect(
            lambda: self.setting.emit("seed", min(self.seed_box.value() + 1, SEED_MAX))
        )
        flow.addWidget(group(QLabel("seed"), self.seed_box, self.next_seed))
        self.train_radio = QRadioButton("train")
        self.eval_radio = QRadioButton("eval")
        self.eval_radio.setToolTip("Evaluation: dropout is off, the output is the reference")
        self.modes = QButtonGroup(self)
        self.modes.addButton(self.train_radio)
        self.modes.addButton(self.eval_radio)
        self.train_radio.toggled.connect(lambda on: self.setting.emit("train", bool(on)))
        flow.addWidget(group(QLabel("mode"), self.train_radio, self.eval_radio))

    def refresh(self, values: dict[str, object], slider_held: bool) -> None:
        """Show the state's ``values`` (a slider being dragged keeps its own position)."""
        self.on_check.setChecked(bool(values["dropout"]))
        p = float(values["p"])  # type: ignore[arg-type]
        if not slider_held:
            self.p_slider.setValue(round(p * P_STEPS))
        self.p_text.setText(fmt_number(p, 2))
        self.seed_box.setValue(int(values["seed"]))  # type: ignore[call-overload]
        train = bool(values["train"])
        (self.train_radio if train else self.eval_radio).setChecked(True)
        for w in (self.p_slider, self.seed_box, self.next_seed):
            w.setEnabled(bool(values["dropout"]) and train)


class DropoutView(QWidget):
    """Realised weights, their expectation and the output difference, with the summary."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        row = QHBoxLayout()
        row.setSpacing(4)
        # Both weight maps carry the bar, so their cells come out the same size side by side.
        # Cells may be smaller than a pixel: a large head is pooled to the pixels on screen.
        self.realised = MatrixCanvas(max_cell=48, min_cell=MIN_CELL)
        self.expected = MatrixCanvas(max_cell=48, min_cell=MIN_CELL)
        self.diff = MatrixCanvas(max_cell=48, min_cell=MIN_CELL)
        for w, stretch in ((self.realised, 1), (self.expected, 1), (self.diff, 1)):
            row.addWidget(w, stretch)
        lay.addLayout(row, 1)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)

    def refresh(self, data: DropoutData) -> None:
        weight_lut, signed_lut = _luts()
        rows, cols = data.row_labels, data.col_labels
        if max(len(rows), len(cols)) > LABELS_MAX:
            rows, cols = tuple(str(i + 1) for i in range(len(rows))), ()
        hi = max(1.0, float(np.max(data.realised, initial=0.0)))
        scale = ColourScale(weight_lut, 0.0, hi)
        common = {"row_labels": rows, "col_labels": cols, "scale": scale,
                  "forbidden": data.forbidden, "highlight_row": data.receiving}  # fmt: skip
        self.realised.set_matrix(
            data.realised, title="Realised weights",
            tooltip=lambda i, j: self._tip(data, i, j), **common,
        )  # fmt: skip
        self.expected.set_matrix(
            data.expected, title="Expectation (no dropout)",
            tooltip=lambda i, j: f"{data.row_labels[i]} → {data.col_labels[j]}: "
            f"{fmt_number(data.expected[i, j], 4)}",
            **common,
        )  # fmt: skip
        # An exact zero difference (evaluation) keeps a readable ±1 bar rather than ±1e-12.
        vmax = float(np.max(np.abs(data.output_diff), initial=0.0)) or 1.0
        # Value coordinates by number: names would not fit the narrow columns, and the kit
        # would then number the rows too. The tool tips keep the names.
        v_cols = tuple(str(j + 1) for j in range(len(data.v_labels)))
        v_cols = v_cols if len(rows) <= LABELS_MAX else ()
        self.diff.set_matrix(
            data.output_diff, row_labels=rows, col_labels=v_cols,
            scale=ColourScale(signed_lut, -vmax, vmax), title="Output − reference",
            highlight_row=data.receiving,
            tooltip=lambda i, j: f"{data.row_labels[i]}, {data.v_labels[j]}: "
            f"{fmt_number(data.output_diff[i, j], 4)}",
        )  # fmt: skip
        self.summary.setText(data.summary)

    @staticmethod
    def _tip(data: DropoutData, i: int, j: int) -> str:
        pair = f"{data.row_labels[i]} → {data.col_labels[j]}"
        if data.forbidden[i, j]:
            return f"{pair}: forbidden"
        kept = "kept" if data.kept[i, j] else "dropped"
        return (
            f"{pair}: {fmt_number(data.realised[i, j], 4)} ({kept}; expectation "
            f"{fmt_number(data.expected[i, j], 4)})"
        )
