"""The undo history replayed as a movie: one frame for the document as it was before the first
step, then one after each step up to the current one, each captioned with the step's name.

The states are read off the user's undo stack (each edit keeps its scenario, or its lab state,
before and after) without undoing anything: walking back from the current state, each step's
"before" is put in place of its "after". Steps grouped into one (a compound edit) are one
frame. Edits of a selection (the receiving query) are not undo steps and do not show.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QUndoCommand

from attnsim.engine.scenario import Scenario
from attnsim.model.commands import EditCommand, LabCommand
from attnsim.model.workbench import Workbench

__all__ = ["MAX_HISTORY_FRAMES", "HistoryReplay"]

MAX_HISTORY_FRAMES = 2000


@dataclass(frozen=True)
class State:
    scenario: Scenario
    labs: tuple[tuple[type, object], ...]  # every lab the history edits, as it was then
    caption: str


@dataclass(frozen=True, eq=False)
class HistoryReplay:
    """The frames' states, oldest first (see the module's help)."""

    states: tuple[State, ...]
    quantity = "history"
    panel = None

    @property
    def frames(self) -> int:
        return len(self.states)

    @classmethod
    def of(cls, wb: Workbench) -> HistoryReplay:
        stack = wb.undo_stack
        steps = [stack.command(i) for i in range(stack.index())]
        if not steps:
            raise ValueError("There is no undo history to replay yet: edit something first.")
        if len(steps) + 1 > MAX_HISTORY_FRAMES:
            steps = steps[-(MAX_HISTORY_FRAMES - 1) :]
        kinds = {c.kind for step in steps for c in _edits(step) if isinstance(c, LabCommand)}
        scenario = wb.scenario
        labs = {kind: wb.lab_state(kind) for kind in kinds}
        out = []
        for step in reversed(steps):
            out.append(State(scenario, tuple(labs.items()), f"after “{step.text()}”"))
            for c in reversed(_edits(step)):
                if isinstance(c, EditCommand):
                    scenario = c.before
                elif isinstance(c, LabCommand):
                    labs[c.kind] = c.before
        out.append(State(scenario, tuple(labs.items()), "before the first step"))
        return cls(tuple(reversed(out)))


def _edits(step: QUndoCommand) -> list[QUndoCommand]:
    """The edits one undo step made, in order (a compound step's children, nested ones too)."""
    if isinstance(step, EditCommand | LabCommand):
        return [step]
    out: list[QUndoCommand] = []
    for i in range(step.childCount()):
        out.extend(_edits(step.child(i)))
    return out
