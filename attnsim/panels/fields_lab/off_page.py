"""What the lab shows when it does not apply: why, a button to open the preset, and the
preset's reference numbers."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from attnsim.viewmodels.fields_lab import FIELD_NAMES, OffPageData

from .canvas import FIELD_COLORS


class OffPage(QWidget):
    """The explanation page; ``open_button`` opens the three-fields preset."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        v = QVBoxLayout(self)
        self.off_text = QLabel()
        self.off_text.setWordWrap(True)
        self.off_text.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.off_text)
        self.open_button = QPushButton("Open the three-fields preset")
        self.open_button.setToolTip("Replace the scenario by the three-fields preset (undoable)")
        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addStretch(1)
        v.addLayout(row)
        self.reference = QLabel()
        self.reference.setTextFormat(Qt.TextFormat.RichText)
        self.reference.setWordWrap(True)
        v.addWidget(self.reference)
        v.addStretch(1)

    def refresh(self, data: OffPageData) -> None:
        names = ", ".join(f"“{n}”" for n in FIELD_NAMES)
        self.off_text.setText(
            "<b>The three-fields lab</b> asks what one attention operation gathers from three "
            "clusters of keys (fields) in 12-D, for a query inside one field, one spanning two, "
            "and one with no direction.<br><br>"
            "It runs on a <i>direct</i> scenario whose every key label starts with a field "
            f"name ({names}, e.g. “acoustics 1”) and where each field has at least one key. "
            f"It does not run here: {data.reason}."
        )
        rows = "".join(
            f"<tr><td>{query}</td>"
            + "".join(f"<td align='right'>{w:.2f}</td>" for w in per_field)
            + f"<td align='right'>{entropy:.2f}</td></tr>"
            for query, per_field, entropy in data.rows
        )
        head = "".join(
            f"<th style='color:{FIELD_COLORS[f].name()}'>{n}</th>"
            for f, n in enumerate(FIELD_NAMES)
        )
        self.reference.setText(
            "What the preset shows (engine, seed 4, logits 3·q·k):"
            f"<table cellspacing='6'><tr><th align='left'>query</th>{head}"
            f"<th>entropy (bits)</th></tr>{rows}</table>"
        )
