"""The distractor tab: add a key that steals weight from the useful one, and see how much."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.widgets import FlowLayout
from attnsim.viewmodels.routing_lab import DistractorView

from .parts import esc, rich_label

NO_DISTRACTOR = (
    "Add a distractor and watch the weight it steals from the useful key (the one on top now) "
    "although that key's raw score q·k does not change: softmax is a contest among the "
    "candidates present."
)


class DistractorTab(QWidget):
    """Emits ``add_requested(kind)`` ("large-norm" or "near-duplicate") and
    ``remove_requested``."""

    add_requested = Signal(str)
    remove_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        row = FlowLayout()
        self.long_button = QPushButton("Add a long, off-target key")
        self.long_button.setToolTip(
            "A key 50° away from the query but 3× as long as the longest key; its value is 0"
        )
        self.long_button.clicked.connect(lambda: self.add_requested.emit("large-norm"))
        self.dup_button = QPushButton("Add a near-duplicate")
        self.dup_button.setToolTip(
            "The useful key turned by 5°, same length; its value is the useful value reversed "
            "(a contradicting copy)"
        )
        self.dup_button.clicked.connect(lambda: self.add_requested.emit("near-duplicate"))
        self.clear_button = QPushButton("Remove distractors")
        self.clear_button.clicked.connect(self.remove_requested)
        for b in (self.long_button, self.dup_button, self.clear_button):
            row.addWidget(b)
        lay.addLayout(row)
        self.label = rich_label()
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label, 1, Qt.AlignmentFlag.AlignTop)

    def refresh(self, v: DistractorView) -> None:
        if v.error:
            self.label.setText(f"<i>{esc(v.error)}</i>")
            return
        eff = v.effect
        self.clear_button.setEnabled(eff is not None)
        self.dup_button.setText(f"Add a near-duplicate of {v.top_label}")
        if eff is None:
            self.label.setText(NO_DISTRACTOR)
            return
        unchanged = "unchanged" if eff.score_after == eff.score_before else "changed"
        self.label.setText(
            f"Useful key <b>{esc(eff.useful)}</b> (on top without "
            f"{', '.join(eff.distractors)}):<br>"
            f"&nbsp;&nbsp;raw score q·k: {fmt_fixed(eff.score_before, 3)} → "
            f"<b>{fmt_fixed(eff.score_after, 3)}</b> ({unchanged})<br>"
            f"&nbsp;&nbsp;weight: {fmt_fixed(eff.weight_before, 3)} → "
            f"<b>{fmt_fixed(eff.weight_after, 3)}</b>"
            f" (the distractors took {fmt_fixed(eff.distractor_weight, 3)}; "
            f"{esc(eff.useful)} lost {fmt_fixed(eff.stolen, 3)})<br>"
            f"&nbsp;&nbsp;the output moved by {fmt_fixed(eff.output_shift, 3)}"
        )
