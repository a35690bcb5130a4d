"""The line under the heatmaps: what the rows and columns are, the receiving row's entropy,
which head is shown, and how much weight a "mask with 0" leaks to forbidden keys."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario
from attnsim.viewmodels.heatmap import forbidden_summary

from ..kit.numbers import fmt_fixed
from ..widgets import CaptionLabel


class _Escaped:
    """``labels[i]`` HTML-escaped on demand."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self._labels = labels

    def __getitem__(self, i: int) -> str:
        return html.escape(self._labels[i])


def heatmap_note(
    sc: Scenario, trace: HeadTrace, heads: tuple[HeadTrace, ...], receiving: int, focused: int,
    *, hints: bool = True,
) -> str:  # fmt: skip
    """The note as rich text (only the labels it names are escaped, not all n of them);
    without ``hints`` (a figure's), it says nothing about what to click."""
    i = receiving
    labels = _Escaped(sc.query_labels)
    ent = trace.entropy
    # The receiving row's ceiling: under a 0 mask forbidden keys take weight too.
    top = float(trace.max_entropy[i])
    parts = []
    if len(heads) > 1:
        name = sc.heads[focused].name if sc.mode == "tokens" else ""
        parts.append(
            f"Head {focused + 1} of {len(heads)}"
            + (f" ({name})" if name else "")
            + (" · click a thumbnail to focus another." if hints else ".")
        )
    parts.append(
        "Rows: the query that attends; columns: the key it attends to. "
        f"Receiving <b>{labels[i]}</b>: entropy {fmt_fixed(float(ent[i]), 3)} bits "
        f"(at most {fmt_fixed(top, 3)}). n = {sc.n_tokens} keys, mask: {sc.mask_kind}"
        + (" — click a cell to allow/forbid it." if sc.mask_kind == "custom" and hints else ".")
    )
    if trace.mask_value == 0.0:
        fs = forbidden_summary(trace)
        if fs.n_forbidden == 0:
            parts.append("Mask value 0 changes nothing here: no key is forbidden.")
        else:
            parts.append(
                "<span style='color:#b00020'><b>Masked with 0 instead of −∞:</b> "
                f"forbidden keys still receive weight: up to {fmt_fixed(fs.worst, 3)} of a "
                f"row's attention (row {labels[fs.worst_row]}), {fmt_fixed(fs.mean, 3)} per row "
                f"on average; {labels[i]}: {fmt_fixed(float(fs.per_row[i]), 3)}.</span>"
            )
    return " ".join(parts)


class NoteBox(QWidget):
    """The note under the heatmaps (a word-wrapped caption) in a box of its own.

    Every step of a drag changes the note's numbers, and a label whose text changes asks its
    parent's layout for a new layout pass, which climbs through the panel to its dock. In this
    box a new text that needs the same height at the note's width only repaints the note; one
    that needs another height asks the panel's layout as before, and so does the next resize
    after texts that did not (the layout keeps sizes it read for other widths).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = CaptionLabel(parent=self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setStyleSheet("background: white; padding: 2px 4px;")
        policy = QSizePolicy(self.label.sizePolicy())
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self._told: int | None = None  # what the panel's layout was told
        self._stale = False  # a text went in without telling the layout
        self._checked: tuple | None = None  # the text, font and width last checked

    # ---- the label's text ---------------------------------------------------------------------
    def text(self) -> str:
        return self.label.text()

    @property
    def figure_text(self) -> str:
        return self.label.figure_text

    def set_texts(self, screen: str, figure: str) -> None:
        """What the screen shows and what a figure shows (see CaptionLabel.set_texts)."""
        old = self.label.text()
        if screen != old or figure != self.label.figure_text:
            self.label.set_texts(screen, figure)
            if (
                self._checked is not None
                and self._what()[1:] == self._checked[1:]
                and (_same_but_digits(old, screen))
            ):
                # Only digits changed (a drag's new numbers), in the font and width last
                # checked: digits are all as wide, so the lines break where they did.
                self._checked = self._what()
                self._stale = True
            else:
                self._tell_layout()

    def _tell_layout(self) -> None:
        self._checked = self._what()
        needs = self._needs()
        if needs != self._told:
            self._told = needs
            self._stale = False
            self.updateGeometry()
        else:
            self._stale = True

    # ---- size: the label's ------------------------------------------------------------------
    def sizeHint(self) -> QSize:  # Qt's name
        return self.label.sizeHint()

    def minimumSizeHint(self) -> QSize:  # Qt's name
        return self.label.minimumSizeHint()

    def hasHeightForWidth(self) -> bool:  # Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # Qt's name
        return self.label.heightForWidth(width)

    def _what(self) -> tuple:
        return self.label.text(), self.label.font().key(), self.width()

    def _needs(self) -> int:
        """The note's height at its width: what the panel's layout gives it (its minimum is
        one line whatever the text, and a resize asks the layout afresh)."""
        return self.label.heightForWidth(self.width())

    def event(self, e: QEvent) -> bool:  # Qt's name
        if e.type() == QEvent.Type.LayoutRequest:  # the label's text or font changed
            if self._what() != self._checked:  # (a new text was checked as it went in)
                self._tell_layout()
            return True
        return super().event(e)

    def resizeEvent(self, e: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(e)
        self.label.setGeometry(self.rect())
        if self._stale:
            self._stale = False
            self.updateGeometry()
        self._told = self._needs()


def _same_but_digits(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with some digits replaced by other digits."""
    if len(a) != len(b):
        return False
    return all(x == y or (x.isdigit() and y.isdigit()) for x, y in zip(a, b, strict=True))
