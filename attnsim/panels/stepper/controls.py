"""The stepper's controls: the bar of pickers and buttons, and the divergence alert.

Both are sub-views: ``refresh(state)`` takes a :class:`~attnsim.viewmodels.stepper.ControlsState`;
the pickers report gestures as signals (``model_picked``, ``sentence_picked``, ...) and the
buttons are public, so the panel connects them to the training session.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QWidget,
)

from attnsim.engine.training import MODELS
from attnsim.model.training_session import SPEEDS
from attnsim.viewmodels.stepper import STAGES, ControlsState

from ..widgets import FlowLayout, SignificantSpinBox, group

PLANE_MODES = {"first": "plane e1, e2", "pca": "plane: PCA"}


def _button(text: str, tip: str = "") -> QPushButton:
    b = QPushButton(text)
    if tip:
        b.setToolTip(tip)
    return b


class StepperControls(QWidget):
    """Model, sentence, learning rate, stage, training and plane controls, wrapping in a flow."""

    model_picked = Signal(str)
    sentence_picked = Signal(int)
    stage_picked = Signal(int)
    speed_picked = Signal(int)
    plane_picked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        controls = FlowLayout(self, h_spacing=6, v_spacing=3)
        controls.setContentsMargins(0, 0, 0, 0)
        self.model_box = QComboBox()
        for name, spec in MODELS.items():
            self.model_box.addItem(name, name)
            self.model_box.setItemData(
                self.model_box.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole
            )
        self.model_box.currentIndexChanged.connect(self._model_index)
        controls.addWidget(group(QLabel("Model"), self.model_box))
        self.sentence_box = QComboBox()
        self.sentence_box.setMinimumContentsLength(16)
        self.sentence_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.sentence_box.currentIndexChanged.connect(self._sentence_index)
        controls.addWidget(group(QLabel("Sentence"), self.sentence_box))
        self.lr_box = SignificantSpinBox(0.0001, 10.0)
        self.lr_box.setToolTip("Learning rate of the following steps")
        controls.addWidget(group(QLabel("lr"), self.lr_box))
        self.send_button = _button(
            "Send to workbench",
            "Make the trained embeddings and projections the current scenario (undoable)",
        )
        controls.addWidget(self.send_button)

        self.prev_button = _button("◀ Previous stage")
        self.stage_group = QButtonGroup(self)
        self.stage_group.setExclusive(True)
        self.stage_buttons: list[QToolButton] = []
        for k, name in enumerate(STAGES, start=1):
            b = QToolButton()
            b.setText(str(k))
            b.setCheckable(True)
            b.setToolTip(f"Stage {k}: {name}")
            b.setMinimumWidth(24)
            self.stage_group.addButton(b, k)
            self.stage_buttons.append(b)
        self.stage_group.idClicked.connect(self.stage_picked)
        self.next_button = _button("Next stage ▶")
        controls.addWidget(
            group(self.prev_button, *self.stage_buttons, self.next_button, spacing=2)
        )
        self.apply_button = _button(
            "Apply update", "Take the optimizer step on this sentence (stage 8)"
        )
        self.next_sentence_button = _button(
            "Next sentence", "Follow the next example from stage 1, with the current parameters"
        )
        controls.addWidget(group(self.apply_button, self.next_sentence_button))

        self.train_button = _button("Train 20 steps")
        self.play_button = _button("▶ Play", "Train continuously at the chosen speed")
        self.play_button.setCheckable(True)
        self.speed_box = QComboBox()
        for v in SPEEDS:
            self.speed_box.addItem(f"{v} steps/s", v)
        self.speed_box.setToolTip("Speed of continuous training")
        self.speed_box.currentIndexChanged.connect(self._speed_index)
        controls.addWidget(group(self.train_button, self.play_button, self.speed_box))
        self.reset_button = _button(
            "Reset training", "Back to the same initial parameters, bit for bit"
        )
        controls.addWidget(self.reset_button)
        self.plane_box = QComboBox()
        for key, text in PLANE_MODES.items():
            self.plane_box.addItem(text, key)
        self.plane_box.setToolTip(
            "How vectors with more than two coordinates are drawn in the plane"
        )
        self.plane_box.currentIndexChanged.connect(self._plane_index)
        controls.addWidget(self.plane_box)
        self.status = QLabel()
        self.status.setMinimumWidth(140)
        controls.addWidget(self.status)

    def _model_index(self, index: int) -> None:
        if index >= 0:
            self.model_picked.emit(self.model_box.itemData(index))

    def _sentence_index(self, index: int) -> None:
        if index >= 0:
            self.sentence_picked.emit(index)

    def _speed_index(self, index: int) -> None:
        if index >= 0:
            self.speed_picked.emit(int(self.speed_box.itemData(index)))

    def _plane_index(self, index: int) -> None:
        if index >= 0:
            self.plane_picked.emit(self.plane_box.itemData(index))

    def set_structure(self, model: str, sentences: list[str], plane_enabled: bool) -> None:
        """After a model or dataset change: the model shown, the sentence list, the plane box.
        Nothing here is a gesture, so no signal goes out."""
        with QSignalBlocker(self.model_box):
            self.model_box.setCurrentIndex(self.model_box.findData(model))
        with QSignalBlocker(self.sentence_box):
            self.sentence_box.clear()
            self.sentence_box.addItems(sentences)
        with QSignalBlocker(self.plane_box):
            self.plane_box.setEnabled(plane_enabled)

    def refresh(self, state: ControlsState) -> None:
        self.stage_buttons[state.stage - 1].setChecked(True)
        self.sentence_box.setCurrentIndex(state.example)
        if abs(self.lr_box.value() - state.lr) > 1e-12:
            self.lr_box.setValue(state.lr)
        self.speed_box.setCurrentIndex(self.speed_box.findData(state.speed))
        self.prev_button.setEnabled(state.can_previous)
        self.next_button.setEnabled(state.can_next)
        self.apply_button.setEnabled(state.can_apply)
        self.play_button.setChecked(state.running)
        self.play_button.setText(state.play_text)
        self.status.setText(state.status)
        self.status.setToolTip(state.status_tip)
        self.lr_box.setToolTip(state.lr_tip)


class DivergenceAlert(QWidget):
    """Divergence is a lesson, not an error: say where it happened and offer the way back;
    before that, warn about a learning rate that is likely to diverge."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        alert = QHBoxLayout(self)
        alert.setContentsMargins(0, 0, 0, 0)
        alert.setSpacing(6)
        self.divergence_label = QLabel()
        self.divergence_label.setWordWrap(True)
        self.divergence_label.setStyleSheet("color: #B00020; font-weight: bold;")
        self.divergence_reset = _button(
            "Reset", "Back to the initial parameters; lower the learning rate before training again"
        )
        self.lr_warning = QLabel()
        self.lr_warning.setWordWrap(True)
        self.lr_warning.setStyleSheet("color: #8A5A00;")
        alert.addWidget(self.divergence_label, 1)
        alert.addWidget(self.divergence_reset)
        alert.addWidget(self.lr_warning, 1)
        for w in (self.divergence_label, self.divergence_reset, self.lr_warning):
            w.setVisible(False)
        self.setVisible(False)

    def refresh(self, state: ControlsState) -> None:
        diverged = bool(state.divergence)
        self.divergence_label.setText(state.divergence)
        self.divergence_label.setVisible(diverged)
        self.divergence_reset.setVisible(diverged)
        self.lr_warning.setText(state.lr_warning)
        self.lr_warning.setVisible(state.show_lr_warning)
        # Hidden when empty, so the row takes no room (as an empty layout would not).
        self.setVisible(state.show_alert)
