"""The change line: the edit that made the current state, and whether it moved the route (the
weights) and/or the payload (the output)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from attnsim.panels.kit.numbers import fmt_significant
from attnsim.viewmodels.routing_lab import LabView

from .parts import esc

NO_EDIT = (
    "<i>No edit yet. Change something below (or drag a tip in the key plane): the lab marks "
    "whether the route and the output moved.</i>"
)


def badge(text: str, on: bool) -> str:
    if on:
        return (
            f"<span style='background:#D55E00;color:white;font-weight:bold'>&nbsp;{text}&nbsp;"
            "</span>"
        )
    return f"<span style='background:#e4e4e4;color:#222'>&nbsp;{text}&nbsp;</span>"


def change_html(view: LabView) -> str:
    text, ch = view.last_text, view.change
    if not text:
        return NO_EDIT
    if ch is None:
        return f"<b>{esc(text)}</b>: the lab starts here."
    route_badge = badge(
        "ROUTE CHANGED" if ch.route_changed else "route unchanged", ch.route_changed
    )
    out_badge = badge(
        "OUTPUT MOVED" if ch.output_changed else "output unchanged", ch.output_changed
    )
    numbers = f"max Δw {fmt_significant(ch.max_dw)}"
    if ch.added or ch.removed:
        numbers = f"{ch.shared} keys kept, " + numbers
        if ch.added:
            numbers += f", new keys took {fmt_significant(ch.new_weight)}"
    numbers += " · output moved by " + (
        "—" if math.isnan(ch.output_shift) else fmt_significant(ch.output_shift)
    )
    return (
        f"<b>{esc(text)}</b> &nbsp;{route_badge} {out_badge}&nbsp; "
        f"<span style='color:#333'>{esc(numbers)}</span>"
        " <span style='color:#777'>(dashed: before)</span>"
    )


class ChangeLine(QLabel):
    """One line of rich text above the plots (a caption in figures once an edit was made)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setToolTip(
            "The edit that made the current state, and what it changed: the route (the "
            "weights) and/or the payload (the output). Dashed shapes show the state before it."
        )

    def refresh(self, view: LabView) -> None:
        self.setText(change_html(view))
