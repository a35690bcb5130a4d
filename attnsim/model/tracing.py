"""Traces of large scenarios, computed off the window's thread (the workbench's ``tracer``).

A scenario of at least :data:`BACKGROUND_CELLS` attention cells (queries x keys x heads) takes
longer than a frame to trace (at n = 2,048: 40-150 ms). After an edit, undo, redo or load of
such a scenario the edit is in at once (the scenario, the undo stack), and the trace is computed
on a thread of its own; the workbench's ``changed`` and ``selection_changed`` wait for it and
come once, with everything that changed meanwhile, bracketed by ``computing_changed``.

A drag at that size shows the latest state whose trace is done, and drops the moves it had no
time for: while a move's trace is computed, the next moves are not put in; only the latest of
them waits (:meth:`BackgroundTrace.defer`). When the trace arrives, the panels draw it, and then
that latest move goes in and is traced in its turn. So the panels follow the mouse at the pace
of one trace, never showing a state older than the one before the latest, instead of waiting
for the mouse to rest (each move used to supersede the trace before it). The waiting move's
trace starts as soon as the one before it arrives, on the tracer's thread while the panels
draw on theirs (:meth:`BackgroundTrace._trace_ahead`), so a drag's pace is the slower of the
two rather than their sum. Another edit made while a move waits puts the move in first and is
rebuilt on top of it (:meth:`BackgroundTrace.put_in_pending`), so it does not undo the move;
a later move of the same drag, made after the trace arrived but before the waiting move went
in, puts that move in and waits for its trace in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from attnsim.engine.scenario import Scenario, ScenarioError, ScenarioResult, compute, merge_edits

from .commands import EditCommand
from .runner import Job, Runner

if TYPE_CHECKING:
    from .workbench import Workbench

# A scenario with at least this many attention cells (queries x keys x heads) is traced on a
# thread of its own after an edit: at n = 2,048 the trace takes 40-150 ms, longer than a
# frame, and the window must keep answering meanwhile (panels keep their picture and say they
# are computing; the edit's signals wait for the result). Smaller scenarios trace at once.
BACKGROUND_CELLS = 1 << 20


def _traced(sc: Scenario) -> ScenarioResult:
    """``sc`` traced, with what every heatmap reads of each head first (its logits' range)
    read here too, off the window's thread."""
    result = compute(sc)
    for head in result.heads:
        head.logit_range()
    return result


def cells(sc: Scenario) -> int:
    """How many attention cells a trace of ``sc`` fills (queries x keys x heads)."""
    heads = len(sc.heads) if sc.mode == "tokens" else 1
    return sc.n_queries * sc.n_tokens * heads


class BackgroundTrace:
    """The workbench's large-scenario traces, the signals they hold back, and a drag's latest
    move waiting for the trace before it."""

    def __init__(self, wb: Workbench) -> None:
        self._wb = wb
        # one thread of its own: a trace never waits behind a lab's long run on wb.runner
        self.runner = Runner(wb)
        self.job: Job | None = None
        self._held_what: set[str] = set()  # what changed while a trace was being computed
        self._held_selection = False
        self._pending: EditCommand | None = None  # a drag's latest move, not yet put in
        self._timer_set = False
        self.moves_dropped = 0  # drag moves replaced by a later one before they went in
        # the waiting move's scenario, traced ahead while the panels draw: (scenario, job, result)
        self._ahead: tuple[Scenario, Job, ScenarioResult | None] | None = None
        self.arriving = False  # see Workbench.trace_arriving

    @property
    def computing(self) -> bool:
        return self.job is not None

    @property
    def pending(self) -> EditCommand | None:
        """The drag move waiting for the current trace (None when there is none)."""
        return self._pending

    # ---- starting and ending a trace ---------------------------------------------------------
    def start(self) -> None:
        """Trace the current scenario in the background when it is large."""
        wb = self._wb
        sc = wb.scenario
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] is not sc:
            ahead[1].cancel()  # traced ahead for a move that did not go in as it was
            ahead = None
        if cells(sc) < BACKGROUND_CELLS:
            if self.job is not None:  # a large state's trace that no longer matters
                self.runner.cancel("trace")
                self._arrived(self.job, sc, None)
            return
        if ahead is not None and ahead[2] is not None:  # traced ahead, and in already
            if self.job is None:
                wb._take_result(ahead[2])
            else:
                self.runner.cancel("trace")
                self._arrived(self.job, sc, ahead[2])
            return
        was = self.job is not None
        # traced ahead and still on its way: wait for that one (a failed one is tried again)
        job = ahead[1] if ahead is not None and not ahead[1].done else self._submit(sc)
        self.job = job
        if not was:
            wb.computing_changed.emit(True)

    def _submit(self, sc: Scenario) -> Job:
        job = self.runner.submit(lambda _progress, _cancelled: _traced(sc), key="trace")
        job.finished.connect(lambda result: self._done(job, sc, result))
        job.failed.connect(lambda _text: self._done(job, sc, None))
        return job

    def _done(self, job: Job, sc: Scenario, result: ScenarioResult | None) -> None:
        ahead = self._ahead
        if ahead is not None and ahead[1] is job and job is not self.job:
            self._ahead = (sc, job, result)  # kept for when the waiting move goes in
        else:
            self._arrived(job, sc, result)

    def _trace_ahead(self) -> None:
        """Start tracing the waiting move's scenario now, before it goes in."""
        pending = self._pending
        if pending is None or cells(pending.after) < BACKGROUND_CELLS:
            return
        ahead = self._ahead
        if ahead is None or ahead[0] is not pending.after:
            self._ahead = (pending.after, self._submit(pending.after), None)

    def finish(self) -> None:
        """Have the current scenario's trace now (computed here unless the background one is
        in), and send the signals it held back. A drag move still waiting stays waiting: it is
        not part of the scenario yet."""
        job = self.job
        if job is None:
            return
        self._wb.result  # noqa: B018 - computed here when the background one is not in yet
        self.runner.cancel("trace")
        self._arrived(job, self._wb.scenario, None)

    def _arrived(self, job: Job, sc: Scenario, result: ScenarioResult | None) -> None:
        if job is not self.job:
            return  # superseded by a newer edit's trace
        self.job = None
        wb = self._wb
        if result is not None and sc is wb.scenario:
            wb._take_result(result)
        # (a failed trace leaves the result to be computed on demand, which raises as before)
        what, self._held_what = frozenset(self._held_what), set()
        selection, self._held_selection = self._held_selection, False
        # No drag move waiting: the panels on screen may draw this state one a turn (a move
        # waiting goes in after their redraws of this turn, so then they all draw in this one).
        self.arriving = self._pending is None
        try:
            wb.computing_changed.emit(False)
            if what:
                wb.changed.emit(what)
            if selection:
                wb.selection_changed.emit()
        finally:
            self.arriving = False
        if self._pending is not None and not self._timer_set:
            # After the panels' refreshes, which this turn of the event loop has queued: they
            # draw this state first, then the drag's latest move goes in.
            self._timer_set = True
            self._trace_ahead()
            QTimer.singleShot(0, wb, self._put_in_pending)

    # ---- signals held while a trace is computed ----------------------------------------------
    def tell_changed(self, what: frozenset[str]) -> None:
        if self.job is not None:
            self._held_what |= what
        else:
            self._wb.changed.emit(what)

    def tell_selection(self) -> None:
        if self.job is not None:
            self._held_selection = True
        else:
            self._wb.selection_changed.emit()

    # ---- a drag's moves at the pace of the traces ----------------------------------------------
    def defer(self, command: object) -> bool:
        """Keep a drag's move for later when a trace is being computed (True: kept; it goes in
        when that trace has been drawn, unless a later move of the drag replaces it first)."""
        if self.job is None or not isinstance(command, EditCommand) or command.drag is None:
            return False
        pending = self._pending
        if pending is not None:
            if pending.drag != command.drag:
                return False  # another drag: the caller puts the waiting move in first
            self.moves_dropped += 1
        self._pending = command
        return True

    def put_in_pending(self, then: object = None) -> bool:
        """Put the waiting drag move in now, before ``then`` (another edit, made from the
        scenario without the move) goes in; ``then`` is rebuilt on top of the move, so that
        it does not put the dragged vector back where it was. True when ``then`` is a later
        move of the same drag (it replaces the move's vector as it stands)."""
        command, self._pending = self._pending, None
        if command is None:
            return False
        # (read before the push: merged into the drag's step, the move lets go of its states)
        made_from = command.before
        self._wb._push(command, now=True)
        if isinstance(then, EditCommand) and then.drag is not None and then.drag == command.drag:
            # A later move of the same drag: it moves the same vector from the same state, so
            # it replaces this one's row as it stands (at n = 4,096, d = 1,024 a three-way
            # merge of X held the window for 200 ms).
            return True
        if isinstance(then, EditCommand) and then.before is made_from:
            now = self._wb.scenario
            try:
                then.after = merge_edits(then.before, now, then.after)
            except ScenarioError:
                pass  # the two edits do not go together: the later one wins, as it was made
            else:
                then.before = now
        return False

    def drop_pending(self) -> None:
        """Forget the waiting move (an undo, a redo or a new document came first)."""
        self._pending = None
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None

    def _put_in_pending(self) -> None:
        self._timer_set = False
        if self.job is None:
            self.put_in_pending()
