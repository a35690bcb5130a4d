"""Derived results: the workbench's memo of view-models (:class:`DerivedResults`, behind
:meth:`Workbench.derived`), and those made in the background (:meth:`Workbench.derived_soon`).

A view-model that takes seconds at large n (the precision lab's sixteen heads at n = 2,048, say)
must not hold the window up. ``derived_soon`` hands it to the workbench's runner with a
:class:`StillState`: the state as it was when the work started (the scenario, its results, the
receiving query, the focused head, the labs' settings), which the work reads instead of the live
workbench, so an edit made meanwhile cannot mix two states into one result. When the work is
done and the state is still the one it started from, the result is kept exactly as
:meth:`Workbench.derived` keeps its own, and the panel is told; a result for a state that has
since changed is dropped (the panel has asked again for the new one by then).
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario, ScenarioResult

from .commands import same_state, same_value

if TYPE_CHECKING:
    from .workbench import Workbench


# At most this many derived results are kept (one per function), the least recently used first
# to go: a panel that passed a fresh lambda each time could not make the cache grow for good.
DERIVED_LIMIT = 64


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


class DerivedResults:
    """The workbench's memo of derived view-models (:meth:`Workbench.derived` and its kin):
    one result per function, for the scenario, focused head and lab state it was made from."""

    def __init__(self, wb: Workbench) -> None:
        self._wb = wb
        # fn -> ((lab, fields), what it read of the lab, result)
        self._kept: OrderedDict[Callable[..., object], tuple[tuple, object, object]] = OrderedDict()
        self._made_for: tuple[Scenario, int] | None = None
        self._soon: dict[Callable[..., object], tuple] = {}  # what soon() works on

    def __contains__(self, fn: object) -> bool:
        return fn in self._kept

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        self._kept.clear()

    def get(self, fn: Callable[[Any], Any], lab: type | None, fields: tuple[str, ...]) -> Any:
        kept = self._kept
        reads = None if lab is None else _reads(self._wb.lab_state(lab), fields)
        if self.ready(fn, lab, fields):
            kept.move_to_end(fn)
            return kept[fn][2]
        kept.pop(fn, None)  # the old result is let go before the new one is made
        value = fn(self._wb)
        self._keep(fn, (lab, fields), reads, value)
        return value

    def _keep(self, fn: Callable[..., object], how: tuple, reads: object, value: object) -> None:
        self._kept[fn] = (how, reads, value)
        while len(self._kept) > DERIVED_LIMIT:
            self._kept.popitem(last=False)

    def ready(self, fn: Callable[..., object], lab: type | None, fields: tuple) -> bool:
        wb = self._wb
        held = self._made_for
        if held is None or held[0] is not wb.scenario or held[1] != wb.focused_head:
            self._kept.clear()
            self._made_for = (wb.scenario, wb.focused_head)
        entry = self._kept.get(fn)
        if entry is None or entry[0] != (lab, fields):
            return False
        return lab is None or _same_reads(entry[1], _reads(wb.lab_state(lab), fields))

    def soon(
        self,
        fn: Callable[[Any], Any],
        lab: type | None,
        fields: tuple[str, ...],
        then: Callable[[], object],
    ) -> Any:
        if self.ready(fn, lab, fields):
            return self.get(fn, lab, fields)
        wb = self._wb
        token = self._token_now(lab, fields)
        running = self._soon.get(fn)
        if running is not None and _same_token(running, token):
            return None
        self._soon[fn] = token
        still = StillState(wb)

        def work(progress: Callable[[float], None], cancelled: Callable[[], bool]) -> object:
            still.cancelled = cancelled
            return fn(still)

        job = wb.runner.submit(work, key=("derived", fn))

        def arrived(value: object) -> None:
            if self._soon.get(fn) is token:
                del self._soon[fn]
            if not _same_token(token, self._token_now(lab, fields)):
                return  # made for a state that has changed since
            self.ready(fn, lab, fields)  # lets go of results of old states
            self._keep(fn, (lab, fields), token[3], value)
            with contextlib.suppress(RuntimeError):  # the panel that asked is already gone
                then()

        def failed(text: str) -> None:
            if self._soon.get(fn) is token:
                del self._soon[fn]
            wb.message.emit(f"Could not compute this view: {text}")

        job.finished.connect(arrived)
        job.failed.connect(failed)
        return None

    def pending(self, fn: Callable[..., object]) -> bool:
        return fn in self._soon

    def _token_now(self, lab: type | None, fields: tuple[str, ...]) -> tuple:
        wb = self._wb
        reads = None if lab is None else _reads(wb.lab_state(lab), fields)
        return (wb.scenario, wb.focused_head, (lab, fields), reads)

    def now(self) -> dict[Callable[..., object], object]:
        return {fn: value for fn, ((lab, fields), _, value) in list(self._kept.items())
                if self.ready(fn, lab, fields)}  # fmt: skip

    def drop(self, kind: type, state: object) -> None:
        """Let go of results made from another state of lab ``kind`` than ``state``."""
        stale = [
            fn
            for fn, ((lab, fields), reads, _) in self._kept.items()
            if lab is kind and not _same_reads(reads, _reads(state, fields))
        ]
        for fn in stale:
            del self._kept[fn]


class StillState:
    """The parts of a workbench a derived function reads, fixed at one moment.

    It offers what :meth:`Workbench.derived` allows a function to read (``scenario``,
    ``result``, ``receiving``, ``focused_head``, ``trace``, ``lab_state``) and ``derived`` for
    the functions it builds on, computed once here (or taken from the workbench when the
    workbench held them for this very state when the work started).
    """

    def __init__(self, wb: Workbench, cancelled: Callable[[], bool] | None = None) -> None:
        self.scenario: Scenario = wb.scenario
        self.result: ScenarioResult = wb.result  # made here, on the window's thread
        self.receiving: int = wb.receiving
        self.focused_head: int = wb.focused_head
        self.trace: HeadTrace = wb.trace
        self._labs = {kind: wb.lab_state(kind) for kind in wb.lab_kinds()}
        self._memo: dict[Callable[..., object], object] = wb.derived_now()
        self.cancelled = cancelled or (lambda: False)

    def lab_state(self, kind: type) -> Any:
        state = self._labs.get(kind)
        return kind() if state is None else state

    def derived(
        self, fn: Callable[[Any], Any], *, lab: type | None = None, fields: tuple[str, ...] = ()
    ) -> Any:
        if fn not in self._memo:
            self._memo[fn] = fn(self)
        return self._memo[fn]

    def derived_ready(self, fn: Callable[[Any], object], **_: object) -> bool:
        return fn in self._memo
