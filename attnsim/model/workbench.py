"""The workbench: the one source of truth every panel reads from and edits through.

It holds the current :class:`Scenario`, the engine's results for it (computed lazily, once per
change), the selection (receiving query, focused head, focused key) and the undo stack. Panels
never set state themselves: they build an :class:`EditCommand` and push it here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections import OrderedDict
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
    same_value,
)
from .runner import Job, JobFn, Runner

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
# A scenario with at least this many attention cells (queries x keys x heads) is traced on a
# thread of its own after an edit: at n = 2,048 the trace takes 40-150 ms, longer than a
# frame, and the window must keep answering meanwhile (panels keep their picture and say they
# are computing; the edit's signals wait for the result). Smaller scenarios trace at once.
BACKGROUND_CELLS = 1 << 20

# At most this many derived results are kept (one per function), the least recently used first
# to go: a panel that passed a fresh lambda each time could not make the cache grow for good.
DERIVED_LIMIT = 64
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


def _reads(state: object, fields: tuple[str, ...]) -> object:
    """What a derived result read of a lab state: the state object, or just those fields."""
    return tuple(getattr(state, f) for f in fields) if fields else state


def _same_reads(a: object, b: object) -> bool:
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return a is not None and b is not None and same_state(a, b)  # two copies of the defaults


def _same_token(a: tuple, b: tuple) -> bool:
    """Whether two (scenario, head, (lab, fields), reads) tokens name the same state."""
    return a[0] is b[0] and a[1] == b[1] and a[2] == b[2] and _same_reads(a[3], b[3])


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
        # fn -> ((lab, fields), what it read of the lab, result); see derived()
        self._derived: OrderedDict[Callable[..., object], tuple[tuple, object, object]] = (
            OrderedDict()
        )
        self._derived_for: tuple[Scenario, int] | None = None
        self._soon: dict[Callable[..., object], tuple] = {}  # what derived_soon works on
        self._training: TrainingSession | None = None
        self._induction: InductionSession | None = None
        self.runner = Runner(self)
        # Traces of large scenarios, never queued behind a lab's long run on the runner.
        self.tracer = Runner(self)
        self._trace_job: Job | None = None
        self._held_what: set[str] = set()  # what changed while a trace was being computed
        self._held_selection = False
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

    def _push(self, command: EditCommand | LabCommand) -> None:
        # When Qt merges a command into the one before it (every mouse move of a drag), or drops
        # a drag that came back to its start, it deletes that C++ command, but PySide keeps the
        # Python side alive: left alone, each would hold its two scenarios for good (the GUI
        # monkey measured ~2 MB per 1,000 actions). Let go of what a deleted command holds.
        stack = self.undo_stack
        top = stack.command(stack.index() - 1) if stack.index() > 0 else None
        stack.push(command)
        for cmd in (command, top):
            if isinstance(cmd, EditCommand | LabCommand) and not shiboken6.isValid(cmd):
                cmd.release()

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
        self._trace_soon()
        self._clamp_selection()
        self._tell_changed(what)
        if (self._receiving, self._focused_key) != old_selection:
            self._tell_selection()

    # ---- traces of large scenarios in the background -------------------------------------------
    @property
    def computing(self) -> bool:
        """Whether the current scenario's trace is being computed in the background (the
        panels on screen still show the state before; :attr:`result` would compute it now)."""
        return self._trace_job is not None

    def trace_in_background(self) -> None:
        """Start computing the current scenario's trace in the background when it is large and
        not computed yet (the window does this as it opens, so it comes up at once)."""
        if self._result is None and self._trace_job is None:
            self._trace_soon()

    def finish_trace(self) -> None:
        """Have the current trace now: wait for the background one (or compute it here) and
        send the signals it held back. For what must draw the state as it is at once (an
        export, a test); the window itself waits for the trace without blocking."""
        job = self._trace_job
        if job is None:
            return
        self.result  # noqa: B018 - computed here when the background one is not in yet
        self.tracer.cancel("trace")
        self._trace_arrived(job, self._scenario, None)

    def _trace_soon(self) -> None:
        """Start tracing the current scenario in the background when it is large."""
        sc = self._scenario
        heads = len(sc.heads) if sc.mode == "tokens" else 1
        if sc.n_queries * sc.n_tokens * heads < BACKGROUND_CELLS:
            if self._trace_job is not None:  # a large state's trace that no longer matters
                self.tracer.cancel("trace")
                self._trace_arrived(self._trace_job, sc, None)
            return
        was = self._trace_job is not None
        job = self.tracer.submit(lambda _progress, _cancelled: compute(sc), key="trace")
        self._trace_job = job
        job.finished.connect(lambda result: self._trace_arrived(job, sc, result))
        job.failed.connect(lambda _text: self._trace_arrived(job, sc, None))
        if not was:
            self.computing_changed.emit(True)

    def _trace_arrived(self, job: Job, sc: Scenario, result: ScenarioResult | None) -> None:
        if job is not self._trace_job:
            return  # superseded by a newer edit's trace
        self._trace_job = None
        if result is not None and sc is self._scenario and self._result is None:
            self._result = result
        # (a failed trace leaves the result to be computed on demand, which raises as before)
        what, self._held_what = frozenset(self._held_what), set()
        selection, self._held_selection = self._held_selection, False
        self.computing_changed.emit(False)
        if what:
            self.changed.emit(what)
        if selection:
            self.selection_changed.emit()

    def _tell_changed(self, what: frozenset[str]) -> None:
        if self._trace_job is not None:
            self._held_what |= what
        else:
            self.changed.emit(what)

    def _tell_selection(self) -> None:
        if self._trace_job is not None:
            self._held_selection = True
        else:
            self.selection_changed.emit()

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
        self._trace_soon()
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
        self._drop_derived(kind, state)
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

    # ---- derived view-models, memoised per scenario and lab state ---------------------------
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
        :data:`DERIVED_LIMIT` of them.
        """
        cache = self._derived
        reads = None if lab is None else _reads(self.lab_state(lab), fields)
        if self.derived_ready(fn, lab=lab, fields=fields):
            cache.move_to_end(fn)
            return cache[fn][2]  # type: ignore[no-any-return]
        cache.pop(fn, None)  # the old result is let go before the new one is made
        value = fn(self)
        cache[fn] = ((lab, fields), reads, value)
        while len(cache) > DERIVED_LIMIT:
            cache.popitem(last=False)
        return value

    def derived_ready(
        self, fn: Callable[[Workbench], object], *, lab: type | None = None, fields: tuple = ()
    ) -> bool:
        """Whether :meth:`derived` with these arguments would return a kept result at once
        (a panel can then draw it now, and put off only work that is not done yet)."""
        held = self._derived_for
        if held is None or held[0] is not self._scenario or held[1] != self._focused_head:
            self._derived.clear()
            self._derived_for = (self._scenario, self._focused_head)
        entry = self._derived.get(fn)
        if entry is None or entry[0] != (lab, fields):
            return False
        return lab is None or _same_reads(entry[1], _reads(self.lab_state(lab), fields))

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
        if self.derived_ready(fn, lab=lab, fields=fields):
            return self.derived(fn, lab=lab, fields=fields)
        from .derived import StillState

        token = self._token_now(lab, fields)
        running = self._soon.get(fn)
        if running is not None and _same_token(running, token):
            return None
        self._soon[fn] = token
        still = StillState(self)

        def work(progress: Callable[[float], None], cancelled: Callable[[], bool]) -> object:
            still.cancelled = cancelled
            return fn(still)  # type: ignore[arg-type]

        job = self.runner.submit(work, key=("derived", fn))

        def arrived(value: object) -> None:
            if self._soon.get(fn) is token:
                del self._soon[fn]
            if not _same_token(token, self._token_now(lab, fields)):
                return  # made for a state that has changed since
            self.derived_ready(fn, lab=lab, fields=fields)  # lets go of results of old states
            self._derived[fn] = ((lab, fields), token[3], value)
            while len(self._derived) > DERIVED_LIMIT:
                self._derived.popitem(last=False)
            with contextlib.suppress(RuntimeError):  # the panel that asked is already gone
                then()

        def failed(text: str) -> None:
            if self._soon.get(fn) is token:
                del self._soon[fn]
            self.message.emit(f"Could not compute this view: {text}")

        job.finished.connect(arrived)
        job.failed.connect(failed)
        return None

    def derived_pending(self, fn: Callable[[Workbench], object]) -> bool:
        """Whether :meth:`derived_soon` is still working on ``fn``."""
        return fn in self._soon

    def _token_now(self, lab: type | None, fields: tuple[str, ...]) -> tuple:
        reads = None if lab is None else _reads(self.lab_state(lab), fields)
        return (self._scenario, self._focused_head, (lab, fields), reads)

    def derived_now(self) -> dict[Callable[..., object], object]:
        """The derived results kept for the state as it is now (a copy)."""
        return {fn: value for fn, ((lab, fields), _, value) in list(self._derived.items())
                if self.derived_ready(fn, lab=lab, fields=fields)}  # fmt: skip

    def lab_kinds(self) -> tuple[type, ...]:
        """The labs whose settings have been set (the others have their defaults)."""
        return tuple(self._labs)

    def _drop_derived(self, kind: type, state: object) -> None:
        """Let go of results made from another state of lab ``kind`` than ``state``."""
        stale = [
            fn
            for fn, ((lab, fields), reads, _) in self._derived.items()
            if lab is kind and not _same_reads(reads, _reads(state, fields))
        ]
        for fn in stale:
            del self._derived[fn]

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
        self.runner.shutdown()
        self.tracer.shutdown()

    def say(self, text: str) -> None:
        self.message.emit(text)

    def want_panels(self, panel_ids: tuple[str, ...]) -> None:
        """Ask the window to bring these panels to the front (a lesson's step does)."""
        if panel_ids:
            self.panels_wanted.emit(tuple(panel_ids))

    def want_control(self, panel_id: str, words: str) -> None:
        """Ask the window to point at the control of that panel labelled with ``words``."""
        self.control_wanted.emit(panel_id, words)
