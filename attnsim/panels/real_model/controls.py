"""The panel's controls: the model, the text and its token pieces, Run / Cancel with progress,
the head metric, the selected head's ablation toggle, the probe and "Open head in workbench".

``show_state(...)`` writes the state into the controls without emitting anything. Edits emit
``model_chosen(str)`` and ``metric_chosen(str)``; the text is only read when Run is pressed
(``run_clicked``), so typing is not a stream of undo steps; ``text_edited`` lets the panel show
the pieces as the user types.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.views.real_model import METRIC_TITLES, METRICS, MODEL_TITLES, MODELS

from ..widgets import FlowLayout, SoftLabel


class ControlsView(QWidget):
    model_chosen = Signal(str)
    metric_chosen = Signal(str)
    text_edited = Signal()
    run_clicked = Signal()
    cancel_clicked = Signal()
    ablate_clicked = Signal()
    probe_clicked = Signal()
    open_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_combo = QComboBox()
        for key in MODELS:
            self.model_combo.addItem(MODEL_TITLES[key], key)
        self.model_combo.setToolTip("MiniLM is small and fast; SmolLM2 predicts the next token")
        self.model_combo.currentIndexChanged.connect(
            lambda: self.model_chosen.emit(self.model_combo.currentData())
        )
        self.metric_combo = QComboBox()
        for key in METRICS:
            self.metric_combo.addItem(f"colour/sort by {METRIC_TITLES[key]}", key)
        self.metric_combo.setToolTip(
            "previous-token: mean weight on the token before; sink: mean weight on the first "
            "token; entropy: how spread a row is, in bits"
        )
        self.metric_combo.currentIndexChanged.connect(
            lambda: self.metric_chosen.emit(self.metric_combo.currentData())
        )
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the model on the text in the background")
        self.run_button.clicked.connect(self.run_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(120)
        self.ablate_button = QPushButton("Ablate head")
        self.ablate_button.setCheckable(True)
        self.ablate_button.setToolTip("Zero the selected head's output and run again")
        self.ablate_button.clicked.connect(self.ablate_clicked)
        self.probe_button = QPushButton("Probe")
        self.probe_button.setToolTip(
            "20 random tokens repeated once: rank SmolLM2's heads by induction score and zero "
            "the top 4 against 4 random heads"
        )
        self.probe_button.clicked.connect(self.probe_clicked)
        self.open_button = QPushButton("Open head in workbench")
        self.open_button.setToolTip(
            "The selected head on this text becomes the workbench's scenario (its queries, "
            "keys and values), so every other panel shows it"
        )
        self.open_button.clicked.connect(self.open_clicked)

        self.text_edit = QPlainTextEdit()
        self.text_edit.setPlaceholderText("Type a text (up to 512 tokens), then Run")
        self.text_edit.setTabChangesFocus(True)
        self.text_edit.setFixedHeight(3 * self.text_edit.fontMetrics().lineSpacing() + 12)
        self.text_edit.textChanged.connect(self.text_edited)
        self.pieces = SoftLabel("")
        self.pieces.setWordWrap(True)
        self.pieces.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QWidget()
        flow = FlowLayout(buttons, h_spacing=4, v_spacing=3)
        for w in (
            self.model_combo,
            self.run_button,
            self.cancel_button,
            self.progress,
            self.metric_combo,
            self.ablate_button,
            self.probe_button,
            self.open_button,
        ):
            flow.addWidget(w)  # fmt: skip
        text_row = QHBoxLayout()
        text_row.setContentsMargins(0, 0, 0, 0)
        text_row.addWidget(self.text_edit, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(buttons)
        layout.addLayout(text_row)
        layout.addWidget(self.pieces)
        self.show_running(False)

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def show_state(self, model: str, metric: str, text: str, ablated: bool) -> None:
        for combo, key in ((self.model_combo, model), (self.metric_combo, metric)):
            with QSignalBlocker(combo):
                combo.setCurrentIndex(combo.findData(key))
        if self.text() != text:
            with QSignalBlocker(self.text_edit):
                self.text_edit.setPlainText(text)
        self.ablate_button.setChecked(ablated)
        self.probe_button.setEnabled(model == "smollm2")

    def show_running(self, running: bool, fraction: float = 0.0) -> None:
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.progress.setValue(round(100 * fraction))
