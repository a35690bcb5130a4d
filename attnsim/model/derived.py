"""Derived results made in the background: what :meth:`Workbench.derived_soon` runs.

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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario, ScenarioResult

if TYPE_CHECKING:
    from .workbench import Workbench


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
