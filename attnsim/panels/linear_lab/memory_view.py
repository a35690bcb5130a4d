"""The running memory S_i: the feature map, the normaliser and the position i (Back / Step /
a slider / a box), S_i and the term v_i φ(k_i)ᵀ it just added as two numbered matrices on one
diverging colour scale, and what q_i reads from it beside the explicit sum."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from attnsim.viewmodels.linear_lab import SETTINGS, LinearLabState, StepData

from ..kit.control_row import ControlRow
from ..kit.flow_layout import group
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.numbers import fmt_number
from ..kit.painted import CachedCanvas
from ..style import score_cmap


@cache
def _signed_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class StepControls(ControlRow):
    """Feature map, normaliser, Back / Step, and the position slider with its box on a line of
    its own: the lab's control row, with ``step(delta)`` for Back / Step."""

    step = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("feature_map", "normalise", "position"),
                         sliders=("position",), lines=("position",), boxed=("position",),
                         parent=parent)  # fmt: skip
        self.feature_combo = self.combos["feature_map"]
        self.normalise_check = self.checks["normalise"]
        self.slider, self.position_box = self.sliders["position"], self.boxes["position"]
        self.slider.setPageStep(1)
        self.back_button = QPushButton("◀ Back")
        self.step_button = QPushButton("Step ▶")
        self.back_button.setToolTip("Show the memory one token earlier")
        self.step_button.setToolTip("Add the next token's v φ(k)ᵀ to the memory")
        self.back_button.clicked.connect(lambda: self.step.emit(-1))
        self.step_button.clicked.connect(lambda: self.step.emit(1))
        self.flow.addWidget(group(self.back_button, self.step_button, spacing=4))
        self.token_label = QLabel()
        # A fixed width: a label that resized with each token would re-lay out the row (and
        # repaint the slider) on every step.
        self.token_label.setFixedWidth(
            QFontMetrics(self.font()).horizontalAdvance("of 0000: “") + 72
        )
        self.parts["position"].layout().addWidget(self.token_label)

    def show_step(self, st: LinearLabState, data: StepData) -> None:
        """Show the settings, the position clamped to the scenario's n."""
        n = max(data.n, 1)
        self.refresh(st, {"position": (1, n)}, {"position": data.position})
        for w in (self.slider, self.position_box, self.back_button, self.step_button):
            w.setEnabled(not data.message and n > 1)
        self.back_button.setEnabled(self.back_button.isEnabled() and data.position > 1)
        self.step_button.setEnabled(self.step_button.isEnabled() and data.position < n)
        text = f"of {n}: “{data.token}”" if data.token else f"of {n}"
        fm = self.token_label.fontMetrics()
        self.token_label.setText(
            fm.elidedText(text, Qt.TextElideMode.ElideMiddle, self.token_label.width())
        )
        self.token_label.setToolTip(text)


class MemoryView(QWidget):
    """S_i and the term just added, side by side; the read-out below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        # why nothing is drawn (cross-attention, a normaliser that cannot divide), at the top
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.message.setVisible(False)
        lay.addWidget(self.message, 1)
        row = QHBoxLayout()
        row.setSpacing(4)
        # kept paintings: an edit of a later token leaves S_i and its term as they were
        self.memory = CachedCanvas(colour_bar=False, max_cell=44, min_cell=1)
        self.term = CachedCanvas(max_cell=44, min_cell=1)
        self.memory.setToolTip("The memory S_i (d_v × d_k): rows are value axes, columns key axes")
        self.term.setToolTip("What token i added: v_i φ(k_i)ᵀ, an outer product of rank one")
        for canvas in (self.memory, self.term):
            # each paints its whole rectangle: Qt need not paint the page beneath first
            canvas.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        row.addWidget(self.memory, 1)
        row.addWidget(self.term, 1)
        lay.addLayout(row, 1)
        self.readout = QLabel()
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        mono.setPointSizeF(max(self.font().pointSizeF() - 1, 7.0))
        self.readout.setFont(mono)
        lay.addWidget(self.readout)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)

    def refresh(self, data: StepData) -> None:
        drawn = not data.message
        self.message.setText(data.message)
        self.message.setVisible(not drawn)
        for w in (self.memory, self.term, self.readout, self.caption):
            w.setVisible(drawn)
        if not drawn:
            return
        self.readout.setText(data.readout)
        self.caption.setText(data.caption)
        scale = ColourScale(_signed_lut(), -data.limit, data.limit)
        i = data.position
        common = {"row_labels": data.row_labels, "col_labels": data.col_labels, "scale": scale}
        title = f"memory S_{i}"
        if self._changed(self.memory, data.S, title, data):
            self.memory.set_matrix(
                data.S, title=title, **common,
                tooltip=lambda r, c: f"S_{i}[{data.row_labels[r]}, {data.col_labels[c]}] = "
                f"{fmt_number(data.S[r, c], 4)}",
            )  # fmt: skip
        k = f"φ(k_{i})" if data.feature_map == "elu+1" else f"k_{i}"
        title = f"just added: v_{i} {k}ᵀ"
        if self._changed(self.term, data.term, title, data):
            self.term.set_matrix(
                data.term, title=title, **common,
                tooltip=lambda r, c: f"v_{i}[{data.row_labels[r]}] × {k}[{data.col_labels[c]}] "
                f"= {fmt_number(data.term[r, c], 4)}",
            )  # fmt: skip

    @staticmethod
    def _changed(canvas: MatrixCanvas, values: np.ndarray, title: str, data: StepData) -> bool:
        """Whether ``canvas`` must be given new values: a scenario edit past token i leaves S_i
        and its term as they were, and the canvas then keeps its cached picture."""
        s = canvas.scale
        return not (
            s is not None
            and s.hi == data.limit
            and canvas.title == title
            and canvas.row_labels == list(data.row_labels)
            and canvas.col_labels == list(data.col_labels)
            and np.array_equal(canvas.values, values, equal_nan=True)
        )
