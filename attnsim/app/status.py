"""The status bar: the receiving token's formula, cut between items to fit, and the transient
messages that take its place while they last."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QLabel, QMainWindow, QSizePolicy

from attnsim.model.workbench import Workbench
from attnsim.panels.kit.labels import ELLIPSIS
from attnsim.panels.kit.numbers import fmt_number, fmt_vector

if TYPE_CHECKING:
    # For type checkers only: a mixin's methods run on the MainWindow.
    _Base = QMainWindow
else:
    _Base = object


# The most keys the status formula lists by name (its tool tip shows the whole formula).
STATUS_KEYS = 64


class StatusMixin(_Base):
    """The MainWindow's status line."""

    wb: Workbench
    message_label: QLabel
    _status: QLabel
    _status_full: str

    def _build_status_bar(self) -> None:
        # Two labels share the bar: the receiving token's formula, and transient messages
        # ("Saved …", refusals, drag hints). A message hides the formula while it lasts, so
        # it always has the whole width; the formula is cut between items, never mid-number.
        bar = self.statusBar()
        self.message_label = QLabel()
        self.message_label.setObjectName("status-message")
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.message_label.hide()
        self._status = QLabel()
        self._status.setObjectName("status-formula")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar.addPermanentWidget(self.message_label, 1)
        bar.addPermanentWidget(self._status, 1)
        bar.setSizeGripEnabled(True)
        bar.messageChanged.connect(self._show_message)
        self._status_full = ""
        self._status_items: list[str] = []
        # The formula went out of date while a message hid it (a drag's hint lasts the whole
        # drag): it is made again when the message goes, not on every step under it.
        self._status_stale = False

    def _show_message(self, text: str) -> None:
        self.message_label.setText(self._elided_message(text))
        self.message_label.setToolTip(text)
        self.message_label.setVisible(bool(text))
        if not text and self._status_stale:
            self._update_status()
        self._status.setVisible(not text)

    def _elided_message(self, text: str) -> str:
        fm = QFontMetricsF(self.message_label.font())
        room = max(self.statusBar().width() - 40, 60)
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, room)

    def status_parts(self) -> list[str]:
        """The receiving token's formula values, in the order the status bar shows them: the
        weights key by key, then the softmax, the entropy and the output."""
        wb = self.wb
        tr = wb.trace
        i = wb.receiving
        sc = wb.scenario
        head = f"{sc.query_labels[i]} attends:"
        # No bar holds more than a few dozen keys: at n = 4,096 formatting and measuring all
        # of them took 20-40 ms of the turn an edit's trace arrived in (and a tool tip wider
        # than any screen). The keys past STATUS_KEYS are counted, not listed.
        shown = min(sc.n_tokens, STATUS_KEYS)
        row = tr.weights[i, :shown].tolist()
        weights = [f"{sc.tokens[j]} {fmt_number(row[j], 2)}" for j in range(shown)]
        if shown < sc.n_tokens:
            weights.append(f"and {sc.n_tokens - shown:,} more keys")
        weights[0] = f"{head} {weights[0]}"
        return [
            *[w + (" ·" if k + 1 < len(weights) else "") for k, w in enumerate(weights)],
            f"|   softmax(q·k / {fmt_number(tr.divisor, 3)})",
            f"|   entropy {fmt_number(tr.entropy[i], 2)} bits",
            f"|   output {fmt_vector(tr.output[i], 2, max_items=6)}",
        ]

    def status_text(self) -> str:
        """The whole status line (the bar shows as much of it as fits, cut between items)."""
        return " ".join(self.status_parts())

    def _update_status(self) -> None:
        if self.statusBar().currentMessage():  # hidden under a message: made when it goes
            self._status_stale = True
            return
        self._status_stale = False
        if self.wb.computing:  # a large scenario's first trace: the formula comes with it
            self._status_items = ["Computing the attention of this scenario…"]
            self._status_full = self._status_items[0]
            self._status.setToolTip("")
            self._status.setText(self._status_full)
            return
        self._status_items = self.status_parts()
        self._status_full = " ".join(self._status_items)
        self._status.setToolTip(self._status_full)
        self._fit_status()

    def _fit_status(self) -> None:
        if self._status_stale:  # nothing to fit under a message; made afresh after it
            return
        if not self._status_items:
            self._update_status()
            return
        if not self.isVisible():  # no width to fit yet; the show event fits it
            self._status.setText(self._status_full)
            return
        fm = QFontMetricsF(self._status.font())
        room = max(self.statusBar().width() - 24, 60)
        self._status.setText(fit_items(self._status_items, fm.horizontalAdvance, room))


def fit_items(parts: Sequence[str], measure: Callable[[str], float], room: float) -> str:
    """What ``kit.labels.fit_parts(parts, measure, room, sep=" ")`` gives (as many whole parts
    as fit, then " …"), found by halving: a handful of measurements of the line, not one per
    part (the line grows with each part, so those that fit come first)."""

    def line(k: int) -> str:  # the first k parts, and " …" when some are left out
        text = " ".join(parts[:k])
        return text if k == len(parts) else text + " …"

    n = len(parts)
    if n == 0 or measure(line(n)) <= room:
        return line(n)
    lo, hi = 0, n - 1  # lo fits (0: nothing does), every k > hi does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(line(mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return line(lo) if lo else ELLIPSIS
