"""The lab's controls: preset, Play/Pause, Step, Reset, steps/s, and the model's settings.

``show_settings(state)`` writes a state into the controls without emitting anything; an edit
emits ``edited(InductionLabState)`` (or ``refused(text)`` when the settings do not fit
together). The training buttons emit ``play_toggled``, ``step_clicked`` and ``reset_clicked``.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QWidget

from attnsim.viewmodels.induction_lab import (
    LIMITS,
    PRESET_TITLES,
    PRESETS,
    SETTINGS,
    InductionLabState,
)

from ..widgets import FlowLayout, SignificantSpinBox, WholeNumberBox, group
from .steady import SteadyLabel

# (field, label, tool tip) of the whole-number settings, in the order they are shown
NUMBER_FIELDS = tuple(
    (n, SETTINGS[n].label, SETTINGS[n].tip)
    for n in ("seed", "n_layers", "n_heads", "d_model", "d_vocab", "half_len")
)


class ControlsView(QWidget):
    edited = Signal(object)  # the InductionLabState the controls now show
    refused = Signal(str)
    play_toggled = Signal()
    step_clicked = Signal()
    reset_clicked = Signal()

    def __init__(self, extra: tuple[QWidget, ...] = (), parent: QWidget | None = None) -> None:
        """``extra``: more buttons, after the training buttons."""
        super().__init__(parent)
        self._state = InductionLabState()
        # One flow for buttons and settings: a narrow dock wraps them onto as few rows as fit.
        flow = FlowLayout(self, h_spacing=4, v_spacing=3)
        self.preset_combo = QComboBox()
        for key in PRESETS:
            self.preset_combo.addItem(PRESET_TITLES[key], key)
        self.preset_combo.setToolTip("Train a model, or look at a circuit built by hand")
        self.preset_combo.currentIndexChanged.connect(self._edited)
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Train continuously in the background")
        self.play_button.clicked.connect(self.play_toggled)
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Train ten more steps")
        self.step_button.clicked.connect(self.step_clicked)
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Back to the seed's initial weights")
        self.reset_button.clicked.connect(self.reset_clicked)
        # as wide as it will get, so the controls after it do not move at every training chunk,
        # and a new count (every chunk) lays nothing out again
        self.speed = SteadyLabel(widest="step 100000, 999 steps/s")
        widgets = (self.preset_combo, self.play_button, self.step_button, self.reset_button)
        for w in (*widgets, self.speed, *extra):
            flow.addWidget(w)
        self.boxes: dict[str, WholeNumberBox] = {}
        for name, label, tip in NUMBER_FIELDS:
            box = WholeNumberBox(*LIMITS[name])
            box.setToolTip(tip)
            box.setMaximumWidth(96 if name == "seed" else 56)
            box.refused.connect(self.refused)
            box.valueChanged.connect(self._edited)
            self.boxes[name] = box
            flow.addWidget(group(QLabel(label), box))
        self.lr_box = SignificantSpinBox(1e-6, 1.0, digits=3)
        self.lr_box.setToolTip("Adam's learning rate")
        self.lr_box.setMaximumWidth(72)
        self.lr_box.refused.connect(self.refused)
        self.lr_box.valueChanged.connect(self._edited)
        flow.addWidget(group(QLabel("lr"), self.lr_box))
        self.show_settings(self._state)

    def show_settings(self, state: InductionLabState) -> None:
        self._state = state
        widgets = [self.preset_combo, self.lr_box, *self.boxes.values()]
        blockers = [QSignalBlocker(w) for w in widgets]
        # only what differs: a box set to its own value repaints (at every training chunk)
        if self.preset_combo.currentIndex() != PRESETS.index(state.preset):
            self.preset_combo.setCurrentIndex(PRESETS.index(state.preset))
        for name, box in self.boxes.items():
            if box.value() != getattr(state, name):
                box.setValue(getattr(state, name))
        if self.lr_box.value() != state.lr:
            self.lr_box.setValue(state.lr)
        del blockers
        trained = state.preset == "train"
        for w in (*self.boxes.values(), self.lr_box, self.play_button, self.step_button):
            w.setEnabled(trained)
        self.reset_button.setEnabled(trained)

    def show_running(self, running: bool) -> None:
        text = "Pause" if running else "Play"
        if self.play_button.text() != text:
            self.play_button.setText(text)

    def show_speed(self, step: int, steps_per_s: float) -> None:
        rate = f", {steps_per_s:.0f} steps/s" if steps_per_s > 0 else ""
        self.speed.setText(f"step {step}{rate}")

    def _edited(self, *_: object) -> None:
        changes: dict[str, object] = {name: box.value() for name, box in self.boxes.items()}
        changes["lr"] = float(self.lr_box.value())
        changes["preset"] = self.preset_combo.currentData()
        if any(changes[k] != getattr(self._state, k) for k in ("n_layers", "n_heads")):
            changes["ablated"] = ()  # the heads they named may be gone
        try:
            state = replace(self._state, **changes)
        except ValueError as exc:
            self.refused.emit(str(exc))
            self.show_settings(self._state)
            return
        self.edited.emit(state)
