"""The running memory S_i: the feature map, the normaliser and the position i (Back / Step /
a slider / a box), S_i and the term v_i φ(k_i)ᵀ it just added as two numbered matrices on one
diverging colour scale, and what q_i reads from it beside the explicit sum."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from attnsim.views.linear_lab import FEATURE_CHOICES, FEATURE_NAMES, POSITION_MAX, StepData

from ..kit.flow_layout import FlowLayout, group
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.number_boxes import WholeNumberBox
from ..kit.numbers import fmt_number
from ..kit.painted import CachedCanvas
from ..style import score_cmap


@cache
def _signed_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class StepControls(QWidget):
    """Feature map, normaliser, Back / Step, the position slider and box.

    ``setting(name, value)`` for the combo (``feature_map`` as an index into FEATURE_CHOICES),
    the check box and the box (``position``, 1-based); ``step(delta)`` for Back / Step;
    ``slider_pressed()``, ``slider_moved(position)``, ``slider_released()`` for the slider.
    """

    setting = Signal(str, int)
    step = Signal(int)
    slider_pressed = Signal()
    slider_moved = Signal(int)
    slider_released = Signal()
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        holder = QWidget()
        flow = FlowLayout(holder, h_spacing=8, v_spacing=2)
        flow.setContentsMargins(0, 0, 0, 0)
        self.feature_combo = QComboBox()
        self.feature_combo.addItems([FEATURE_NAMES[f] for f in FEATURE_CHOICES])
        self.feature_combo.setToolTip("φ applied to every q and k before they meet")
        self.feature_combo.currentIndexChanged.connect(
            lambda i: self.setting.emit("feature_map", i)
        )
        flow.addWidget(group(QLabel("feature map φ"), self.feature_combo, spacing=4))
        self.normalise_check = QCheckBox("normalise by z_i · φ(q_i)")
        self.normalise_check.setToolTip(
            "Divide the read-out by z_i · φ(q_i), z_i = Σ φ(k_j): the weights of a row then sum "
            "to one (needs a positive φ, e.g. elu + 1)"
        )
        self.normalise_check.toggled.connect(lambda on: self.setting.emit("normalise", int(on)))
        flow.addWidget(self.normalise_check)
        self.back_button = QPushButton("◀ Back")
        self.step_button = QPushButton("Step ▶")
        self.back_button.setToolTip("Show the memory one token earlier")
        self.step_button.setToolTip("Add the next token's v φ(k)ᵀ to the memory")
        self.back_button.clicked.connect(lambda: self.step.emit(-1))
        self.step_button.clicked.connect(lambda: self.step.emit(1))
        flow.addWidget(group(self.back_button, self.step_button, spacing=4))
        lay.addWidget(holder)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("linear_lab-position")
        self.slider.setRange(1, 1)
        self.slider.setPageStep(1)
        self.slider.setMinimumWidth(60)
        self.slider.setToolTip("The token i whose memory S_i is shown")
        self.slider.valueChanged.connect(lambda v: self.slider_moved.emit(int(v)))
        self.slider.sliderPressed.connect(self.slider_pressed)
        self.slider.sliderReleased.connect(self.slider_released)
        self.position_box = WholeNumberBox(1, POSITION_MAX)
        self.position_box.setToolTip("Type the position i (1 … n)")
        self.position_box.valueChanged.connect(lambda v: self.setting.emit("position", int(v)))
        self.position_box.refused.connect(self.refused)
        self.token_label = QLabel()
        # A fixed width: a label that resized with each token would re-lay out the row (and
        # repaint the slider) on every step.
        self.token_label.setFixedWidth(
            QFontMetrics(self.font()).horizontalAdvance("of 0000: “") + 72
        )
        lay.addWidget(
            group(QLabel("i"), self.slider, self.position_box, self.token_label, spacing=4,
                  grow=self.slider)
        )  # fmt: skip

    def refresh(self, data: StepData, feature_map: str, normalise: bool, held: bool) -> None:
        """Show the settings; the slider stays where the mouse holds it (``held``)."""
        self.feature_combo.setCurrentIndex(FEATURE_CHOICES.index(feature_map))
        self.normalise_check.setChecked(normalise)
        n = max(data.n, 1)
        for w in (self.slider, self.position_box, self.back_button, self.step_button):
            w.setEnabled(not data.message and n > 1)
        self.slider.setRange(1, n)
        self.position_box.setRange(1, n)
        if not held:
            self.slider.setValue(data.position)
        self.position_box.setValue(data.position)
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
