"""The workbench: the one source of truth every panel reads from and edits through.

It holds the current :class:`Scenario`, the engine's results for it (computed lazily, once per
change), the selection (receiving query, focused head, focused key) and the undo stack. Panels
never set state themselves: they build an :class:`EditCommand` and push it here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtGui import QUndoStack

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario, ScenarioResult, compute

from .commands import (
    EditCommand,
    LabCommand,
    edits_document,
    in_document,
    same_state,
)
from .derived import DerivedResults
from .runner import Job, JobFn, Runner
from .tracing import BackgroundTrace

if TYPE_CHECKING:
    from .induction_session import InductionSession
    from .training_session import TrainingSession

# What a change touched, so panels can skip work they don't need.
STRUCTURE = "structure"  # tokens, shapes, mode: anything that changes table sizes or labels
VECTORS = "vectors"  # X or direct Q/K/V
MATRICES = "matrices"  # Wq, Wk, Wv, Wo
OPTIONS = "options"  # mask, temperature, scale
SCENARIO = "scenario"  # a different scenario was loaded
SELECTION = "selection"

_drag_ids = itertools.count(1)

S = TypeVar("S")
T = TypeVar("T")


@dataclass(frozen=True)
class LabChange:
    """One lab's settings changed (an edit, its undo or redo, or a new document resetting it)."""

    kind: type
    before: object
    after: object


@dataclass(frozen=True)
class LastEdit:
    """The undo step that made the current state, as far as a panel needs to know it.

    ``scenario_before`` is the scenario before it when it edited the scenario; ``labs_before``
    the lab state it changed, as it was before it. A compound step leaves both empty.
    """

    text: str
    scenario_before: Scenario | None = None
    labs_before: dict[type, object] = field(default_factory=dict)


def new_drag_id() -> int:
    """A fresh id for one drag; every command of that drag carries it so they merge."""
    return next(_drag_ids)


def describe_change(before: Scenario, after: Scenario) -> frozenset[str]:
    """Which aspects differ between two scenarios."""
    what = set()
    if before.mode != after.mode or before.tokens != after.tokens or before.d != after.d:
        what.add(STRUCTURE)
    if before.mode == "tokens" and after.mode == "tokens":
        if before.X is not after.X and not np.array_equal(before.X, after.X):  # type: ignore[arg-type]
            what.add(VECTORS)
        if len(before.heads) != len(after.heads):
            what.update({STRUCTURE, MATRICES})
        elif any(not a.equals(b) for a, b in zip(before.heads, after.heads, strict=True)):
            what.add(MATRICES)
        if (before.Wo is None) != (after.Wo is None) or (
            before.Wo is not None and not np.array_equal(before.Wo, after.Wo)  # type: ignore[arg-type]
        ):
            what.add(MATRICES)
    else:
        what.add(VECTORS)
    options_before = (before.mask_kind, before.temperature, before.scale, before.mask_value)
    options_after = (after.mask_kind, after.temperature, after.scale, after.mask_value)
    if options_before != options_after or (
        after.mask_kind == "custom" and not np.array_equal(before.mask, after.mask)
    ):
        what.add(OPTIONS)
    labels = ("axes", "qk_axes", "v_axes", "query_tokens")
    if any(getattr(before, f) != getattr(after, f) for f in labels) or not (
        _same_arrays(before.wq_presets, after.wq_presets)
        and _same_arrays(before.absent, after.absent)
    ):
        what.add(STRUCTURE)
    about = ("name", "title", "description")
    if any(getattr(before, f) != getattr(after, f) for f in about):
        what.add(SCENARIO)
    return frozenset(what)


def _same_arrays(a: object, b: object) -> bool:
    if a is b:
        return True
    assert isinstance(a, dict) and isinstance(b, dict)
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _frozen_arrays(state: S) -> S:
    """``state`` with read-only copies of its array fields, so no caller can edit it in place."""
    arrays = {
        f.name: getattr(state, f.name)
        for f in dataclasses.fields(state)  # type: ignore[arg-type]
        if isinstance(getattr(state, f.name), np.ndarray)
    }
    for name, value in arrays.items():
        value = value.copy()
        value.flags.writeable = False
        arrays[name] = value
    return dataclasses.replace(state, **arrays) if arrays else state  # type: ignore[type-var]


class Workbench(QObject):
    """Current scenario + derived results + selection + undo stack, with change signals.

    Signals
    -------
    changed(frozenset[str])
        After every edit, undo, redo or load: the aspects that changed (see module constants).
        Not emitted for a no-op.
    selection_changed()
        The receiving query, focused head or focused key changed.
    lab_changed(LabChange)
        A lab's typed settings changed (see :meth:`set_lab_state`), with before and after.
    message(str)
        A sentence for the status bar, e.g. what a drag really edited.
    panels_wanted(tuple[str, ...])
        Panel ids to bring to the front (a lesson's step asks for them; the window does it).
    control_wanted(str, str)
        A panel id and the words of one of its controls, to point at (a lesson's step).
    """

    changed = Signal(object)
    selection_changed = Signal()
    lab_changed = Signal(object)
    message = Signal(str)
    panels_wanted = Signal(tuple)
    # True while the trace of an edit is computed in the background, False once it is in.
    computing_changed = Signal(bool)
    control_wanted = Signal(str, str)

    def __init__(self, scenario: Scenario, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scenario = scenario
        self._result: ScenarioResult | None = None
        self._receiving = scenario.receiving
        self._focused_head = 0
        self._focused_key: int | None = None
        self.undo_stack = QUndoStack(self)
        self.path: Path | None = None
        # Where the app keeps the user's settings (the window sets it; None: keep nothing).
        self.home: Path | None = None
        self.documents_opened = 0  # how many times load() started a new document
        self._labs: dict[type, object] = {}
        self._derived = DerivedResults(self)
        self._training: TrainingSession | None = None
        self._induction: InductionSession | None = None
        self.runner = Runner(self)
        self._traces = BackgroundTrace(self)
        self._in_push = False
        self.undo_stack.indexChanged.connect(self._index_moved)
        app = QCoreApplication.instance()
        if app is not None:
            # A run still going at exit would hold the quit until it finished.
            app.aboutToQuit.connect(self.close)

    # ---- state --------------------------------------------------------------------------------
    @property
    def scenario(self) -> Scenario:
        return self._scenario

    @property
    def result(self) -> ScenarioResult:
        """The engine's results for the current scenario, computed at most once per change."""
        if self._result is None:
            self._result = compute(self._scenario)
        return self._result

    @property
    def result_if_made(self) -> ScenarioResult | None:
        """The results if they are made already, else None (without making them)."""
        return self._result

    @property
    def trace(self) -> HeadTrace:
        """The focused head's trace."""
        heads = self.result.heads
        return heads[min(self._focused_head, len(heads) - 1)]

    @property
    def receiving(self) -> int:
        return self._receiving

    @property
    def focused_head(self) -> int:
        return self._focused_head

    @property
    def focused_key(self) -> int | None:
        return self._focused_key

    def snapshot(self) -> Scenario:
        """The scenario as it would be saved (its ``receiving`` is always the selection)."""
        return self._scenario

    # ---- edits --------------------------------------------------------------------------------
    def push(self, command: EditCommand) -> None:
        """Run an edit through the undo stack (a no-op edit is dropped)."""
        if command.after.equals(command.before) and command.drag is None:
            return
        self._push(command)

    def _push(self, command: EditCommand | LabCommand, *, now: bool = False) -> None:
        # A large scenario's drag: a move made while the trace of the one before is computed
        # waits (only the latest), and goes in when that trace has been drawn (see .tracing).
        if not now and self._traces.defer(command):
            return
        # any other edit builds on the drag's latest move; a later move of that drag waits for
        # the trace of the move put in
        if self._traces.put_in_pending(command) and self._traces.defer(command):
            return
        # When Qt merges a command into the one before it (every mouse move of a drag), or drops
        # a drag that came back to its start, it deletes that C++ command, but PySide keeps the
        # Python side alive: left alone, each would hold its two scenarios for good (the GUI
        # monkey measured ~2 MB per 1,000 actions). Let go of what a deleted command holds.
        stack = self.undo_stack
        top = stack.command(stack.index() - 1) if stack.index() > 0 else None
        self._in_push = True
        try:
            stack.push(command)
        finally:
            self._in_push = False
        for cmd in (command, top):
            if isinstance(cmd, EditCommand | LabCommand) and not shiboken6.isValid(cmd):
                cmd.release()

    def _index_moved(self, _index: int) -> None:
        if not self._in_push:  # an undo, a redo or a new document: a waiting move is stale
            self._traces.drop_pending()

    def edit(self, after: Scenario, text: str, *, drag: int | None = None) -> None:
        """Shorthand: push an :class:`EditCommand` that replaces the scenario by ``after``.

        Build ``after`` from :attr:`scenario`: its ``receiving`` is the current selection, so
        token edits (add, remove, move) carry the selection along.
        """
        self.push(EditCommand(self, after, text, drag=drag))

    def replace_document(self, after: Scenario, text: str) -> None:
        """An undoable edit that makes ``after`` a new, untitled document (Save asks where)."""
        self.push(EditCommand(self, after, text, path=None))

    def _install(self, scenario: Scenario) -> None:
        """Called by commands only: make ``scenario`` current and tell the panels."""
        before = self._scenario
        if scenario is before:
            return
        what = describe_change(before, scenario)
        old_selection = (self._receiving, self._focused_key)
        if STRUCTURE in what:
            # Tokens moved: the edit (or the undone state) says where the receiving token is.
            self._receiving = min(scenario.receiving, scenario.n_queries - 1)
            fk = self._focused_key
            if fk is not None and (
                fk >= scenario.n_tokens or scenario.tokens[fk] != before.tokens[fk]
            ):
                self._focused_key = None
        elif scenario.receiving != self._receiving:
            # Selection is not undone with the data: keep the one on screen.
            scenario = scenario.replace(receiving=self._receiving)
        self._scenario = scenario
        if not what:
            return
        self._result = None
        self.runner.cancel_tagged(SCENARIO)
        self._traces.start()
        self._clamp_selection()
        self._tell_changed(what)
        if (self._receiving, self._focused_key) != old_selection:
            self._tell_selection()

    # ---- traces of large scenarios in the background (see .tracing) ---------------------------
    @property
    def computing(self) -> bool:
        """Whether the current scenario's trace is being computed in the background (the
        panels on screen still show the state before; :attr:`result` would compute it now)."""
        return self._traces.computing

    @property
    def trace_arriving(self) -> bool:
        """True while the signals a background trace held back are sent and no drag move waits
        for them: the panels on screen then redraw one a turn (all in one turn held the window
        110-140 ms at n = 4,096), see ``Panel.schedule_refresh``."""
        return self._traces.arriving

    @property
    def tracer(self) -> Runner:
        """The runner large scenarios are traced on (one thread, apart from :attr:`runner`)."""
        return self._traces.runner

    @property
    def traces(self) -> BackgroundTrace:
        return self._traces

    def trace_in_background(self) -> None:
        """Start computing the current scenario's trace in the background when it is large and
        not computed yet (the window does this as it opens, so it comes up at once)."""
        if self._result is None and not self._traces.computing:
            self._traces.start()

    def finish_trace(self) -> None:
        """Have the current trace now: wait for the background one (or compute it here) and
        send the signals it held back. For what must draw the state as it is at once (an
        export, a test); the window itself waits for the trace without blocking."""
        self._traces.finish()

    def _take_result(self, result: ScenarioResult) -> None:
        """The background trace of the current scenario arrived (called by .tracing only)."""
        if self._result is None:
            self._result = result

    def _tell_changed(self, what: frozenset[str]) -> None:
        self._traces.tell_changed(what)

    def _tell_selection(self) -> None:
        self._traces.tell_selection()

    def load(self, scenario: Scenario, path: Path | None = None) -> None:
        """Open a scenario as a new document: the undo history starts afresh."""
        self.undo_stack.clear()
        # lab sandboxes belong to the document they were made in (all but those outside it)
        labs = self._labs
        self._labs = {kind: state for kind, state in labs.items() if not in_document(kind)}
        for kind, before in labs.items():
            if kind not in self._labs:
                self.lab_changed.emit(LabChange(kind, before, kind()))
        self.runner.cancel_tagged(SCENARIO)
        self._scenario = scenario
        self._result = None
        self._derived.clear()  # even when the same scenario object is opened again
        self._receiving = scenario.receiving
        self._focused_head = 0
        self._focused_key = None
        self.path = path
        self.documents_opened += 1
        self.undo_stack.setClean()
        self._traces.start()
        self._tell_changed(frozenset({SCENARIO, STRUCTURE, VECTORS, MATRICES, OPTIONS}))
        self._tell_selection()

    def mark_saved(self, path: Path) -> None:
        self.path = path
        self.undo_stack.setClean()

    @property
    def dirty(self) -> bool:
        """Whether the document has changed since it was opened or saved: a step between the
        saved one and now edits it (edits of labs outside the document do not count)."""
        stack = self.undo_stack
        if stack.isClean():
            return False
        if stack.cleanIndex() < 0:  # the saved state is no longer on the stack
            return True
        lo, hi = sorted((stack.cleanIndex(), stack.index()))
        return any(edits_document(stack.command(i)) for i in range(lo, hi))

    # ---- selection ----------------------------------------------------------------------------
    def _clamp_selection(self) -> None:
        sc = self._scenario
        old = (self._receiving, self._focused_head, self._focused_key)
        if self._receiving >= sc.n_queries:
            self._receiving = sc.n_queries - 1
        heads = len(sc.heads) if sc.mode == "tokens" else 1
        self._focused_head = min(self._focused_head, heads - 1)
        if self._focused_key is not None and self._focused_key >= sc.n_tokens:
            self._focused_key = None
        if old != (self._receiving, self._focused_head, self._focused_key):
            self._tell_selection()

    def set_receiving(self, index: int) -> None:
        if not 0 <= index < self._scenario.n_queries:
            raise IndexError(f"no query {index}; there are {self._scenario.n_queries}")
        if index != self._receiving:
            self._receiving = index
            # Kept in the scenario too (without an undo step), so that edits built from it,
            # and a save, carry the selection. Results do not depend on it.
            self._scenario = self._scenario.replace(receiving=index)
            self._tell_selection()

    def set_focused_head(self, index: int) -> None:
        if not 0 <= index < len(self.result.heads):
            raise IndexError(f"no head {index}; there are {len(self.result.heads)}")
        if index != self._focused_head:
            self._focused_head = index
            self._tell_selection()

    def set_focused_key(self, index: int | None) -> None:
        if index is not None and not 0 <= index < self._scenario.n_tokens:
            raise IndexError(f"no key {index}; there are {self._scenario.n_tokens}")
        if index != self._focused_key:
            self._focused_key = index
            self._tell_selection()

    # ---- lab states: each lab's settings, one frozen dataclass per lab -----------------------
    def lab_state(self, kind: type[S]) -> S:
        """The lab's current settings; ``kind()`` (its defaults) until first edited."""
        state = self._labs.get(kind)
        return kind() if state is None else state  # type: ignore[return-value]

    def set_lab_state(self, state: object, text: str, *, drag: int | None = None) -> None:
        """Replace a lab's settings through the undo stack (a drag with one id merges)."""
        if not dataclasses.is_dataclass(state) or isinstance(state, type):
            raise TypeError(f"a lab state is a dataclass instance, not {type(state).__name__}")
        state = _frozen_arrays(state)
        if same_state(self.lab_state(type(state)), state):
            return
        self._push(LabCommand(self, state, text, drag=drag))

    def lab_states(self) -> dict[type, object]:
        """Every lab state of the document that differs from its defaults (what a recovery
        file keeps)."""
        return {kind: state for kind, state in self._labs.items()
                if in_document(kind) and not same_state(kind(), state)}  # fmt: skip

    def restore_lab_states(self, states: dict[type, object]) -> None:
        """Put back lab states a recovery file kept, as part of the document (no undo step)."""
        for kind, state in states.items():
            self._install_lab(kind, _frozen_arrays(state))

    def _install_lab(self, kind: type, state: object) -> None:
        before = self.lab_state(kind)
        self._labs[kind] = state
        self._derived.drop(kind, state)
        self.lab_changed.emit(LabChange(kind, before, state))

    @contextlib.contextmanager
    def compound(self, text: str) -> Iterator[None]:
        """Edits made inside become one undo step named ``text`` (nesting is allowed)."""
        self.undo_stack.beginMacro(text)
        try:
            yield
        finally:
            self.undo_stack.endMacro()

    def last_edit(self) -> LastEdit | None:
        """The undo step that made the current state (None at the start of the history)."""
        stack = self.undo_stack
        idx = stack.index()
        if idx == 0:
            return None
        cmd = stack.command(idx - 1)
        if isinstance(cmd, EditCommand):
            return LastEdit(cmd.text(), scenario_before=cmd.before)
        if isinstance(cmd, LabCommand):
            return LastEdit(cmd.text(), labs_before={cmd.kind: cmd.before})
        return LastEdit(cmd.text())

    # ---- derived view-models, memoised per scenario and lab state (see .derived) -----------
    def derived(
        self, fn: Callable[[Workbench], T], *, lab: type | None = None, fields: tuple[str, ...] = ()
    ) -> T:
        """``fn(workbench)`` for the current state, computed once and shared by every caller.

        The cache is keyed on ``fn`` (a module-level function, not a fresh lambda) and emptied
        whenever the scenario object changes (an edit, an undo, a load, a new receiving query)
        or the focused head does, so ``fn`` may read :attr:`scenario`, :attr:`result`,
        :attr:`receiving` and :attr:`trace`, but not the focused key. With ``lab`` it may also
        read that lab's state, and its result is kept only while that state stays (an edit,
        undo or redo of the lab recomputes it, and the edit lets go of the old result); with
        ``fields`` too, only while those fields keep their values (a sweep that ignores the
        marker is not redone when the marker moves). One result is kept per ``fn``, and at most
        :data:`.derived.DERIVED_LIMIT` of them.
        """
        return self._derived.get(fn, lab, fields)

    def derived_ready(
        self, fn: Callable[[Workbench], object], *, lab: type | None = None, fields: tuple = ()
    ) -> bool:
        """Whether :meth:`derived` with these arguments would return a kept result at once
        (a panel can then draw it now, and put off only work that is not done yet)."""
        return self._derived.ready(fn, lab, fields)

    def derived_soon(
        self,
        fn: Callable[[Workbench], T],
        *,
        lab: type | None = None,
        fields: tuple[str, ...] = (),
        then: Callable[[], object],
    ) -> T | None:
        """:meth:`derived`'s result when it is kept; otherwise None, and ``fn`` runs on the
        runner on a :class:`~.derived.StillState` of now. When it is done and the state is
        still this one, the result is kept (``derived`` then returns it at once) and ``then()``
        is called; a result for a state changed meanwhile is dropped. A newer call for ``fn``
        supersedes an older one still running; a call for the state already being worked on
        starts nothing. For work too slow for the window's thread (see :mod:`.derived`)."""
        return self._derived.soon(fn, lab, fields, then)

    def derived_pending(self, fn: Callable[[Workbench], object]) -> bool:
        """Whether :meth:`derived_soon` is still working on ``fn``."""
        return self._derived.pending(fn)

    def derived_now(self) -> dict[Callable[..., object], object]:
        """The derived results kept for the state as it is now (a copy)."""
        return self._derived.now()

    def lab_kinds(self) -> tuple[type, ...]:
        """The labs whose settings have been set (the others have their defaults)."""
        return tuple(self._labs)

    # ---- background work and training --------------------------------------------------------
    def run(
        self, fn: JobFn, *, key: object = None, per_scenario: bool = False, memo: object = None
    ) -> Job:
        """Run ``fn(progress, cancelled)`` on the workbench's runner (see :mod:`.runner`).

        With ``per_scenario`` the result belongs to the current scenario: the job is cancelled,
        and its result dropped, as soon as the scenario changes. With ``memo`` the result is
        kept for :meth:`Runner.recall`.
        """
        return self.runner.submit(fn, key=key, tag=SCENARIO if per_scenario else None, memo=memo)

    @property
    def training(self) -> TrainingSession:
        """The training stepper's session (its steps stay outside undo)."""
        if self._training is None:
            from .training_session import TrainingSession  # loaded when a panel first trains

            self._training = TrainingSession(parent=self)
        return self._training

    @property
    def induction(self) -> InductionSession:
        """The induction lab's training session (its steps stay outside undo), shared by the
        lab and the lessons; it follows the lab's settings."""
        if self._induction is None:
            from attnsim.viewmodels.induction_lab import InductionLabState

            from .induction_session import InductionSession  # loaded when first wanted

            session = self._induction = InductionSession(self.run, parent=self)
            session.configure(self.lab_state(InductionLabState))

            def follow(change: LabChange) -> None:
                if change.kind is InductionLabState:
                    if change.after.preset != "train":
                        session.pause()  # a preset's weights are fixed
                    session.configure(change.after)

            self.lab_changed.connect(follow)
            session.failed.connect(lambda why: self.say(f"Induction training: {why}"))
        return self._induction

    def close(self) -> None:
        """Stop background work and training: no thread or timer is left running."""
        if self._training is not None:
            self._training.pause()
        if self._induction is not None:
            self._induction.close()
        self._traces.drop_pending()
        self.runner.shutdown()
        self.tracer.shutdown()

    def __del__(self) -> None:
        # The undo stack's commands are Python objects that Qt owns. A workbench that is let go
        # (an animation export's private copy, a closed document's) sits in reference cycles,
        # and the collector frees those in no particular order: a command's Python side could go
        # first, and Qt, deleting the stack afterwards, would call into freed memory (a
        # segmentation fault at some later, unrelated moment). Finalizers run before the
        # collector frees anything, so the stack is emptied here while every command is whole.
        stack = self.__dict__.get("undo_stack")
        if stack is None or not shiboken6.isValid(stack):
            return
        stack.blockSignals(True)  # no undo/redo slot runs on a workbench that is going
        stack.clear()

    def say(self, text: str) -> None:
        self.message.emit(text)

    def want_panels(self, panel_ids: tuple[str, ...]) -> None:
        """Ask the window to bring these panels to the front (a lesson's step does)."""
        if panel_ids:
            self.panels_wanted.emit(tuple(panel_ids))

    def want_control(self, panel_id: str, words: str) -> None:
        """Ask the window to point at the control of that panel labelled with ``words``."""
        self.control_wanted.emit(panel_id, words)
