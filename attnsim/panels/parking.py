"""Panels out of sight hear nothing of the edits, and catch up when they are shown.

A panel hidden behind a dock tab with a redraw pending has nothing to do until it is shown,
yet every panel hears every edit (each move of a drag): twenty such panels cost a drag a
slot call each per move. So a panel that goes out of sight with a redraw pending leaves the
workbench's signals (it is "parked") and one listener per workbench (the lot) notes what
changed meanwhile, whatever the number of panels parked. Shown again (or flushed), the panel
takes the workbench's signals back and hears what it missed at once: the union of the
changed aspects (as the workbench itself sums them while a large trace is computed), whether
the selection changed, whether a lab's settings did.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import shiboken6

if TYPE_CHECKING:
    from attnsim.model.workbench import Workbench

    from .base import Panel


class Missed:
    """What the panels parked at one moment missed since (shared by all of them)."""

    __slots__ = ("everything", "lab", "panels", "selection", "what")

    def __init__(self) -> None:
        self.what: set[str] = set()
        self.everything = False  # an edit said no aspect: everything (see Workbench.changed)
        self.selection = False
        self.lab = False
        self.panels: weakref.WeakSet[Panel] = weakref.WeakSet()

    @property
    def empty(self) -> bool:
        return not (self.what or self.everything or self.selection or self.lab)


class Lot:
    """The listener of one workbench for its parked panels."""

    def __init__(self, wb: Workbench) -> None:
        self._wb = wb
        self._open: list[Missed] = []  # one per moment panels were parked, with panels in it
        self._listening = False

    @staticmethod
    def of(wb: Workbench) -> Lot:
        lot = getattr(wb, "_parking_lot", None)
        if lot is None:
            lot = Lot(wb)
            wb._parking_lot = lot  # type: ignore[attr-defined]
        return lot

    @property
    def parked(self) -> int:
        """How many panels are parked (tests)."""
        return sum(len(m.panels) for m in self._open)

    def park(self, panel: Panel) -> Missed:
        # panels parked since the last change share its record; the records of panels
        # deleted while parked go
        self._open = [m for m in self._open if any(shiboken6.isValid(p) for p in m.panels)]
        if self._open and self._open[-1].empty:
            missed = self._open[-1]
        else:
            missed = Missed()
            self._open.append(missed)
        missed.panels.add(panel)
        self._listen(True)
        return missed

    def unpark(self, panel: Panel, missed: Missed) -> None:
        missed.panels.discard(panel)
        if not missed.panels and missed in self._open:
            self._open.remove(missed)
        self._listen(bool(self._open))

    def _listen(self, on: bool) -> None:
        if on == self._listening:
            return
        self._listening = on
        wb = self._wb
        _wire(
            ((wb.changed, self._changed), (wb.selection_changed, self._selection),
             (wb.lab_changed, self._lab)),
            on,
        )  # fmt: skip

    def _changed(self, what: frozenset[str]) -> None:
        for m in self._open:
            if what:
                m.what |= what
            else:
                m.everything = True

    def _selection(self) -> None:
        for m in self._open:
            m.selection = True

    def _lab(self, _change: object) -> None:
        for m in self._open:
            m.lab = True


def hear(panel: Panel, on: bool) -> None:
    """Connect (or disconnect) the panel's slots for the workbench's signals."""
    wb = panel.wb
    _wire(
        ((wb.changed, panel._changed), (wb.selection_changed, panel._on_selection),
         (wb.lab_changed, panel._edit_went_through), (wb.computing_changed, panel._on_computing)),
        on,
    )  # fmt: skip


def _wire(pairs, on: bool) -> None:
    """Connect (or disconnect) each (signal, slot)."""
    for signal, slot in pairs:
        if on:
            signal.connect(slot)
        else:
            signal.disconnect(slot)


def park(panel: Panel) -> None:
    """The panel is out of sight with a redraw pending: it leaves the workbench's signals."""
    if panel._missed is None:
        hear(panel, False)
        panel._missed = Lot.of(panel.wb).park(panel)


def unpark(panel: Panel) -> None:
    """Hear the workbench again, and at once what it said while the panel was parked."""
    missed, panel._missed = panel._missed, None
    if missed is None:
        return
    Lot.of(panel.wb).unpark(panel, missed)
    hear(panel, True)
    if missed.what:
        panel._changed(frozenset(missed.what))
    if missed.everything:
        panel._changed(frozenset())
    if missed.selection:
        panel._on_selection()
    if missed.lab:
        panel._edit_went_through()
