"""The Lessons panel's side of the labs: a step's lab edits applied to the workbench (the
induction lab's settings undoable, its training not, as in the lab itself), the lab quantities
read from the lab's settings and the training session's weights, and a check again whenever
the lab changes or trains."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from attnsim.lessons.edits import LAB_EDITS, Edit, apply_lab_edits
from attnsim.lessons.labs import Labs, lab_values
from attnsim.model.workbench import Workbench
from attnsim.viewmodels.induction_lab import InductionLabState

__all__ = ["LabLink"]


class LabLink:
    """The labs of ``wb`` as a lesson reads and sets them."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self._cache: tuple[tuple, Mapping[str, float]] | None = None
        self._following = False

    @contextmanager
    def one_step(self, edits: Sequence[Edit], text: str) -> Iterator[None]:
        """The scenario's and the lab's parts of ``edits`` as one undo step."""
        both = any(e.set in LAB_EDITS for e in edits) and any(e.set not in LAB_EDITS for e in edits)
        if both:
            self.wb.undo_stack.beginMacro(text)
        try:
            yield
        finally:
            if both:
                self.wb.undo_stack.endMacro()

    def apply(self, edits: Sequence[Edit], text: str) -> None:
        """The lab's part of ``edits``: the induction lab's settings as an undoable edit, then
        its training (which, as in the lab, stays outside undo). ValueError naming a bad one."""
        lab = [e for e in edits if e.set in LAB_EDITS]
        if not lab:
            return
        before = self.wb.lab_state(InductionLabState)
        after = apply_lab_edits(Labs(before), lab).induction  # every edit checked first
        if after != before:
            self.wb.set_lab_state(after, text)
        for e in lab:
            if e.set == "reset_training":
                self.wb.induction.reset()
            elif e.set == "train":
                self.wb.induction.step(int(e.value))

    def values(self) -> Mapping[str, float]:
        """The induction lab's quantities now, from the lab's settings and the weights it
        shows (a preset's, or the training session's latest); kept until either changes."""
        state = self.wb.lab_state(InductionLabState)
        session = self.wb.induction
        key = (state, session.version if state.preset == "train" else None)
        if self._cache is None or self._cache[0] != key:
            params = session.params if state.preset == "train" else None
            self._cache = (key, lab_values(Labs(state), params))
        return self._cache[1]

    def follow(self, changed: Callable[[], None]) -> None:
        """Call ``changed`` whenever the lab changes or trains (connected once)."""
        if self._following:
            return
        self._following = True
        self.wb.lab_changed.connect(changed)
        self.wb.induction.updated.connect(changed)
