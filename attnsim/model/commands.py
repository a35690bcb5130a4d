"""Undoable edits. One command class covers every kind of edit: it swaps two scenarios.

Scenarios are immutable and share unchanged arrays, so keeping the one before and the one after
is cheap and restores exactly the previous arrays on undo. A drag sends many commands with the
same drag id; the stack merges them into one step whose "before" is where the drag began.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtGui import QUndoCommand

from attnsim.engine.scenario import Scenario

if TYPE_CHECKING:
    from .workbench import Workbench

DRAG_COMMAND_ID = 7301  # any fixed id: Qt only tries mergeWith between commands of equal id
_KEEP = object()


def same_value(a: object, b: object) -> bool:
    """Equality for lab state fields: arrays by shape and content, anything else with ==."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and np.array_equal(a, b)
        )
    return bool(a == b)


class EditCommand(QUndoCommand):
    """Replace the workbench's scenario by ``after``; undo puts ``before`` back."""

    def __init__(
        self,
        workbench: Workbench,
        after: Scenario,
        text: str,
        *,
        drag: int | None = None,
        before: Scenario | None = None,
        path: Path | object | None = _KEEP,
    ) -> None:
        super().__init__(text)
        self._wb = workbench
        self.before = workbench.scenario if before is None else before
        self.after = after
        self.drag = drag
        # A new document replacing the scenario (a preset opened from a lab, a trained head)
        # must not be saved over the file the old one came from: such edits change the path.
        self._paths = None if path is _KEEP else (workbench.path, path)

    def release(self) -> None:
        """Drop the states this command holds (Qt has deleted it; see Workbench._push)."""
        self.before = self.after = None  # type: ignore[assignment]
        self._wb = None  # type: ignore[assignment]

    def id(self) -> int:
        return DRAG_COMMAND_ID if self.drag is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, EditCommand) or other.drag is None or other.drag != self.drag:
            return False
        self.after = other.after
        self.setText(other.text())  # the undo menu names where the drag ended
        # A drag that ends where it began leaves nothing to undo.
        self.setObsolete(self.after.equals(self.before))
        return True

    def redo(self) -> None:
        if self._paths is not None:
            self._wb.path = self._paths[1]  # type: ignore[assignment]
        self._wb._install(self.after)

    def undo(self) -> None:
        if self._paths is not None:
            self._wb.path = self._paths[0]  # type: ignore[assignment]
        self._wb._install(self.before)


def in_document(kind: type) -> bool:
    """Whether a lab's settings belong to the scenario document: reset when another document
    is opened, kept in its recovery file, and an edit of them marks it modified. A lab state
    class that stands apart from every document (the Real model panel's text and run) says
    ``IN_DOCUMENT = False``."""
    return bool(getattr(kind, "IN_DOCUMENT", True))


def edits_document(command: QUndoCommand) -> bool:
    """Whether an undo step changes the document (a step made of lab edits outside it does
    not)."""
    if isinstance(command, LabCommand):
        return in_document(command.kind)
    children = [command.child(i) for i in range(command.childCount())]
    return not children or any(edits_document(c) for c in children)


class LabCommand(QUndoCommand):
    """Replace one lab's settings (a frozen dataclass, keyed by its type); undo puts them back.

    Lab states are not saved with the scenario, but every change is undoable and a drag with
    one id merges into one step.
    """

    def __init__(
        self, workbench: Workbench, after: object, text: str, *, drag: int | None = None
    ) -> None:
        super().__init__(text)
        self._wb = workbench
        self.kind = type(after)
        self.before = workbench.lab_state(self.kind)
        self.after = after
        self.drag = drag

    def release(self) -> None:
        """Drop the states this command holds (Qt has deleted it; see Workbench._push)."""
        self.before = self.after = None  # type: ignore[assignment]
        self._wb = None  # type: ignore[assignment]

    def id(self) -> int:
        return DRAG_COMMAND_ID + 2 if self.drag is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if (
            not isinstance(other, LabCommand)
            or other.drag is None
            or other.drag != self.drag
            or other.kind is not self.kind
        ):
            return False
        self.after = other.after
        self.setText(other.text())
        self.setObsolete(same_state(self.after, self.before))
        return True

    def redo(self) -> None:
        self._wb._install_lab(self.kind, self.after)

    def undo(self) -> None:
        self._wb._install_lab(self.kind, self.before)


def same_state(a: object, b: object) -> bool:
    """Equality for lab states: field by field, arrays by shape and content."""
    if a is b:
        return True
    if type(a) is not type(b) or not dataclasses.is_dataclass(a):
        return same_value(a, b)
    return all(same_value(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
