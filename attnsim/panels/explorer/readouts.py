"""The explorer's block of numbers: a title and one row (name, value, note) per quantity."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from attnsim.viewmodels.explorer import READOUT_KEYS, Number, Readouts, Text

from ..kit.numbers import fmt_fixed
from ..widgets import SoftLabel, significant_text

UNDEFINED = "undefined"


def number_text(n: Number) -> str:
    """How the explorer writes a number of a view-model (see :class:`Number`)."""
    if n.value is None:
        return UNDEFINED
    if n.style == "degrees":
        return f"{n.value:.{n.digits}f}°"
    if n.style == "significant":
        return significant_text(n.value, n.digits)
    return fmt_fixed(float(n.value), n.digits)


def join_text(parts: Text) -> str:
    return "".join(p if isinstance(p, str) else number_text(p) for p in parts)


class ReadoutsView(QWidget):
    """The title and the rows of :class:`Readouts`; rows it does not list are hidden.

    ``rows[key]`` is (name, value, note) labels; ``values[key]`` the value text shown (tests
    and the export read it). Narrow, the notes hide and each row's tool tip carries its note.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        self.title = QLabel()
        self.title.setWordWrap(True)
        grid.addWidget(self.title, 0, 0, 1, 3)
        self.rows: dict[str, tuple[QLabel, QLabel, QLabel]] = {}
        self.values: dict[str, str] = {}
        self.notes_shown = True
        value_font = QFont()
        value_font.setBold(True)
        for r, key in enumerate(READOUT_KEYS, start=1):
            # The note never widens the panel: narrow, it hides and the row's tool tip has it.
            name, value, note = QLabel(), QLabel(), SoftLabel()
            value.setFont(value_font)
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            note.setStyleSheet("color: #666666;")
            grid.addWidget(name, r, 0)
            grid.addWidget(value, r, 1)
            grid.addWidget(note, r, 2)
            self.rows[key] = (name, value, note)
        grid.setRowStretch(len(READOUT_KEYS) + 1, 1)
        grid.setColumnStretch(2, 1)

    def refresh(self, data: Readouts) -> None:
        self.title.setText(data.title)
        self.fit_title()
        for key in READOUT_KEYS:
            row = data.row(key)
            n, v, t = self.rows[key]
            visible = row is not None
            n.setVisible(visible)
            v.setVisible(visible)
            t.setVisible(visible and self.notes_shown)
            if row is None:
                self.values.pop(key, None)
                continue
            value, note = join_text(row.value), join_text(row.note)
            n.setText(row.name)
            v.setText(value)
            t.setText(note)
            for w in (n, v):
                w.setToolTip(note)
            self.values[key] = value

    def show_notes(self, shown: bool) -> None:
        self.notes_shown = shown
        for n, _v, t in self.rows.values():
            t.setVisible(shown and n.isVisibleTo(self))

    def fit_title(self) -> None:
        # A wrapped title in a grid gets one line's height unless asked: ask for all its lines,
        # so the second line is not drawn under the first row of numbers.
        t = self.title
        if t.width() < 60:  # not laid out yet
            return
        old = t.minimumHeight()
        t.setMinimumHeight(0)  # a label's height for a width never goes below its minimum
        need = max(t.heightForWidth(t.width()), 0)
        t.setMinimumHeight(need if need != old else old)
