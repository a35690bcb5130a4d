"""The stepper's dataset page: a text editor of "words = label" lines and two buttons.

"Train on these" emits ``use_requested(text)``, "Model's own" ``restore_requested``; the panel
answers with :meth:`DatasetEditor.show_message` (accepted or refused, in words).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget


class DatasetEditor(QWidget):
    use_requested = Signal(str)
    restore_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        el = QVBoxLayout(self)
        el.setContentsMargins(2, 2, 2, 2)
        hint = QLabel("One sentence per line: words = label")
        hint.setWordWrap(True)
        el.addWidget(hint)
        self.dataset_edit = QPlainTextEdit()
        self.dataset_edit.setPlaceholderText("the river bank = water\nthe money bank = finance")
        el.addWidget(self.dataset_edit, 1)
        buttons = QHBoxLayout()
        self.use_dataset_button = QPushButton("Train on these")
        self.use_dataset_button.setToolTip(
            "Start a fresh run of the current model on these sentences"
        )
        self.use_dataset_button.clicked.connect(
            lambda: self.use_requested.emit(self.dataset_edit.toPlainText())
        )
        buttons.addWidget(self.use_dataset_button)
        self.restore_dataset_button = QPushButton("Model's own")
        self.restore_dataset_button.setToolTip("Back to the model's own dataset")
        self.restore_dataset_button.clicked.connect(self.restore_requested)
        buttons.addWidget(self.restore_dataset_button)
        el.addLayout(buttons)
        self.dataset_message = QLabel()
        self.dataset_message.setWordWrap(True)
        el.addWidget(self.dataset_message)

    def set_text(self, text: str) -> None:
        """The dataset in use, as editor text (not an edit of the user's)."""
        with QSignalBlocker(self.dataset_edit):
            self.dataset_edit.setPlainText(text)

    def show_message(self, text: str, *, refused: bool) -> None:
        self.dataset_message.setStyleSheet("color: #B00020" if refused else "color: #225522")
        self.dataset_message.setText(text)
