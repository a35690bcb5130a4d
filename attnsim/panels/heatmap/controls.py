"""The heatmap's controls: which stages to show, the mask, the "mask with 0" mistake, the
temperature (slider and typed value), the 1/√d_k switch and the cell numbers.

``refresh(ControlsData)`` shows the scenario's settings without emitting anything; each gesture
is a signal the panel turns into an edit.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE
from attnsim.model.workbench import new_drag_id
from attnsim.viewmodels.heatmap import VIEWS, ControlsData

from ..kit.choice_combo import ChoiceCombo
from ..kit.log_slider import LogSlider
from ..widgets import FlowLayout, SignificantSpinBox, group

MASKS = [("none", "none (bidirectional)"), ("causal", "causal"), ("custom", "custom (click cells)")]


class HeatmapControls(QWidget):
    """Two flow rows of controls (they wrap in a narrow dock instead of widening the panel)."""

    view_picked = Signal(str)
    mask_picked = Signal(str)
    zero_toggled = Signal(bool)
    scale_toggled = Signal(bool)
    numbers_toggled = Signal(bool)
    temperature_set = Signal(float, object)  # T, drag id (None: a typed or single step)
    temperature_released = Signal()
    refused = Signal(str)  # a typed temperature out of range

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._drag: int | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        row1 = FlowLayout(h_spacing=10, v_spacing=3)
        self.view_box = ChoiceCombo()
        for key, (text, _) in VIEWS.items():
            self.view_box.addItem(text, key)
        self.view_box.setToolTip("Which stages of the computation to draw side by side")
        self.view_box.currentIndexChanged.connect(
            lambda i: i >= 0 and self.view_picked.emit(str(self.view_box.itemData(i)))
        )
        show = group(QLabel("Show:"), self.view_box, grow=self.view_box)
        # the views' names are the longer ones: of the spare width it takes the larger share
        policy = show.sizePolicy()
        policy.setHorizontalStretch(3)
        show.setSizePolicy(policy)
        row1.addWidget(show)
        self.mask_box = ChoiceCombo()
        for key, text in MASKS:
            self.mask_box.addItem(text, key)
        self.mask_box.setToolTip(
            "none: every query reads every key; causal: only keys at or before it; "
            "custom: click a cell to allow or forbid it"
        )
        self.mask_box.currentIndexChanged.connect(
            lambda i: i >= 0 and self.mask_picked.emit(str(self.mask_box.itemData(i)))
        )
        row1.addWidget(group(QLabel("Mask:"), self.mask_box, grow=self.mask_box))
        # (Each asks for its choice's whole width, so the row wraps before a choice is cut; a
        # dock narrower than a choice still shrinks it.)
        self.zero_box = QCheckBox("mask with 0, not −∞")
        self.zero_box.setToolTip(
            "The classic mistake: writing 0 into forbidden logits instead of −∞, so forbidden "
            "keys still receive weight"
        )
        self.zero_box.toggled.connect(self.zero_toggled)
        row1.addWidget(self.zero_box)
        layout.addLayout(row1)

        row2 = FlowLayout(h_spacing=10, v_spacing=3)
        self.t_slider = LogSlider()
        self.t_slider.setToolTip(
            f"Logits are divided by T (log scale, {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g})"
        )
        self.t_slider.sliderPressed.connect(self._slider_pressed)
        self.t_slider.sliderReleased.connect(self._slider_released)
        self.t_slider.valueChanged.connect(self._slider_moved)
        self.t_slider.setMinimumWidth(60)
        # The scenario's whole range, to 4 significant digits (0.001234 as well as 1000).
        self.t_spin = SignificantSpinBox(MIN_TEMPERATURE, MAX_TEMPERATURE, digits=4)
        self.t_spin.refused.connect(self.refused)
        self.t_spin.setToolTip(
            f"Temperature, {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g} "
            "(type a value and press Enter)"
        )
        self.t_spin.valueChanged.connect(lambda v: self.temperature_set.emit(float(v), None))
        self.t_spin.setMaximumWidth(84)
        row2.addWidget(
            group(QLabel("Temperature T:"), self.t_slider, self.t_spin, grow=self.t_slider)
        )
        self.scale_box = QCheckBox("÷ √d_k")
        self.scale_box.setToolTip("Divide q·k by the square root of the key width d_k")
        self.scale_box.toggled.connect(self.scale_toggled)
        row2.addWidget(self.scale_box)
        self.numbers_box = QCheckBox("numbers")
        self.numbers_box.setChecked(True)
        self.numbers_box.setToolTip(
            "Write each cell's value (when n ≤ 16 and cells are big enough)"
        )
        self.numbers_box.toggled.connect(self.numbers_toggled)
        row2.addWidget(self.numbers_box)
        layout.addLayout(row2)

    def _slider_pressed(self) -> None:
        self._drag = new_drag_id()

    def _slider_released(self) -> None:
        self._drag = None
        self.temperature_released.emit()

    def _slider_moved(self, pos: int) -> None:
        drag = self._drag if self.t_slider.isSliderDown() else None
        self.temperature_set.emit(self.t_slider.value_at(pos), drag)

    def refresh(self, data: ControlsData) -> None:
        """Show ``data`` (no signal is emitted; a slider being dragged keeps its place)."""
        widgets = (self.view_box, self.mask_box, self.zero_box, self.t_slider, self.t_spin,
                   self.scale_box)  # fmt: skip
        blockers = [QSignalBlocker(w) for w in widgets]
        try:
            self.view_box.setCurrentIndex(list(VIEWS).index(data.view))
            self.mask_box.setCurrentIndex([k for k, _ in MASKS].index(data.mask_kind))
            self.zero_box.setChecked(data.mask_zero)
            if not self.t_slider.isSliderDown():
                self.t_slider.show_value(data.temperature)
            if self.t_spin.value() != data.temperature:  # (the same value repaints it)
                self.t_spin.setValue(data.temperature)
            self.scale_box.setChecked(data.scale)
            self.scale_box.setText(f"÷ √d_k (√{data.d_k})")
        finally:
            del blockers
