"""The panel's controls: the model, the text and its token pieces, Run / Cancel with progress,
the head metric, the selected head's ablation toggle and the ablation mode, the probe and
"Open head in workbench".

``show_state(...)`` writes the state into the controls without emitting anything. Edits emit
``model_chosen(str)``, ``metric_chosen(str)`` and ``ablation_chosen(str)``; the text is only
read when Run is pressed (``run_clicked``), so typing is not a stream of undo steps;
``text_edited`` lets the panel show the pieces as the user types. The token picker
(``token_picked(position)``, -1 for none) highlights one token of the run in every head.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.real_model import (
    ABLATIONS,
    MAPS,
    METRIC_TITLES,
    METRICS,
    MODEL_TITLES,
    MODELS,
)

from ..widgets import CaptionLabel, FlowLayout
from .token_map import TokenPicker

TEXT_LINES = 2  # the text box's height; a longer text scrolls in it


class ElidedLabel(QLabel):
    """One line of text cut with "…" at the widget's width; the whole text is its tool tip.

    For the token pieces: a 500-token text would otherwise wrap over the maps."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)

    def set_full_text(self, text: str, error: bool = False) -> None:
        self.full = text
        self.setStyleSheet("color: #B00020;" if error else "")
        self.setToolTip(text if len(text) < 4000 else text[:4000] + "…")
        self._elide()

    def minimumSizeHint(self) -> QSize:  # Qt's name
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # Qt's name
        return QSize(0, super().sizeHint().height())

    def resizeEvent(self, e: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(e)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full, Qt.TextElideMode.ElideRight, self.width())
        if shown != self.text():
            self.setText(shown)


class ControlsView(QWidget):
    model_chosen = Signal(str)
    metric_chosen = Signal(str)
    ablation_chosen = Signal(str)
    maps_chosen = Signal(str)
    text_edited = Signal()
    run_clicked = Signal()
    cancel_clicked = Signal()
    ablate_clicked = Signal()
    probe_clicked = Signal()
    open_clicked = Signal()
    token_picked = Signal(int)

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
            self.metric_combo.addItem(f"by {METRIC_TITLES[key]}", key)
        self.metric_combo.setToolTip(
            "Colour the band left of each map and sort the Heads tab by: previous-token (mean "
            "weight on the token before), sink (mean weight on the first token), entropy (how "
            "spread a row is, in bits) or induction (mean weight from a repeated token to the "
            "token after its earlier occurrence)"
        )
        self.metric_combo.currentIndexChanged.connect(
            lambda: self.metric_chosen.emit(self.metric_combo.currentData())
        )
        self.maps_combo = QComboBox()
        for key, title in MAPS.items():
            self.maps_combo.addItem(f"maps: {title}", key)
        self.maps_combo.setToolTip(
            "What every head's map shows: its attention weights (how the query mixes the keys) "
            "or each key's contribution, the length of weight × value × the head's output "
            "projection (what the key really adds to the query's output)"
        )
        self.maps_combo.currentIndexChanged.connect(
            lambda: self.maps_chosen.emit(self.maps_combo.currentData())
        )
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the model on the text in the background")
        self.run_button.clicked.connect(self.run_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run or the probe in progress")
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFixedWidth(90)
        self.ablate_button = QPushButton("Ablate head")
        self.ablate_button.setCheckable(True)
        self.ablate_button.setToolTip(
            "Ablate the selected head and run again (the box beside it says how); the Heads "
            "tab has a check box for every head"
        )
        self.ablate_button.clicked.connect(self.ablate_clicked)
        self.ablation_combo = QComboBox()
        for key in ABLATIONS:
            self.ablation_combo.addItem(key, key)
        self.ablation_combo.setToolTip(
            "zero: an ablated head adds nothing; mean: it adds its average output over the "
            "text at every position (its constant part stays, what it reads from the text goes)"
        )
        self.ablation_combo.currentIndexChanged.connect(
            lambda: self.ablation_chosen.emit(self.ablation_combo.currentData())
        )
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
        self.token_picker = TokenPicker()
        self.token_picker.token_picked.connect(self.token_picked)

        self.text_edit = QPlainTextEdit()
        self._shown_text: str | None = None  # the settings' text the editor last showed
        self.text_edit.setPlaceholderText("Type a text (up to 512 tokens), then Run")
        self.text_edit.setTabChangesFocus(True)
        edit = self.text_edit
        edit.setFixedHeight(
            TEXT_LINES * edit.fontMetrics().lineSpacing()
            + 2 * round(edit.document().documentMargin()) + 2 * edit.frameWidth() + 2
        )  # fmt: skip
        self.text_edit.textChanged.connect(self.text_edited)
        self.pieces = ElidedLabel()
        # the status line: what was run (or what to do), with the progress bar while running
        self.note = CaptionLabel("")
        self.note.setWordWrap(True)

        buttons = QWidget()
        # (its rows are its least height: in a short dock the panel scrolls, and the last row
        # of buttons is not drawn under the text box)
        flow = FlowLayout(buttons, h_spacing=4, v_spacing=3, keep_rows=True)
        for w in (
            self.model_combo,
            self.run_button,
            self.cancel_button,
            self.probe_button,
            self.metric_combo,
            self.ablate_button,
            self.ablation_combo,
            self.open_button,
        ):
            flow.addWidget(w)  # fmt: skip
        note_row = QHBoxLayout()
        note_row.setContentsMargins(0, 0, 0, 0)
        note_row.addWidget(self.note, 1)
        note_row.addWidget(self.progress, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(buttons)
        layout.addWidget(self.text_edit)
        pieces_row = QHBoxLayout()  # the picker beside the pieces it picks from
        pieces_row.setContentsMargins(0, 0, 0, 0)
        pieces_row.addWidget(self.pieces, 1)
        pieces_row.addWidget(self.maps_combo)  # what the maps show, beside what they highlight
        pieces_row.addWidget(self.token_picker)
        layout.addLayout(pieces_row)
        layout.addLayout(note_row)
        self.show_running(False)

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def show_state(
        self, model: str, metric: str, text: str, ablated: bool, ablation: str = "zero",
        maps: str = "weights",
    ) -> None:  # fmt: skip
        combos = (
            (self.model_combo, model),
            (self.metric_combo, metric),
            (self.ablation_combo, ablation),
            (self.maps_combo, maps),
        )
        for combo, key in combos:
            with QSignalBlocker(combo):
                combo.setCurrentIndex(combo.findData(key))
        if text != self._shown_text:
            # the settings' text changed (a run, an undo): the editor shows it; any other
            # refresh (another panel's edit, a scenario opened) keeps what is being typed
            self._shown_text = text
            if self.text() != text:
                with QSignalBlocker(self.text_edit):
                    self.text_edit.setPlainText(text)
        self.ablate_button.setChecked(ablated)
        self.probe_button.setEnabled(model == "smollm2")

    def show_running(self, running: bool, fraction: float = 0.0) -> None:
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.progress.setValue(round(100 * fraction))
