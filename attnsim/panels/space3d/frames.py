"""The 3-D view's frame (its axes and scale) for a wide matching space, made off the window's
thread.

The best 3-D subspace of every query and key takes a QR of a (n_q + n_k) x d_k matrix: 7-20 ms
at 2,048 tokens of width 64, but seconds at 4,096 tokens of width 1,024, where each edit held
the window that long. From :data:`LARGE_VALUES` numbers on, the frame is made on the
workbench's runner; the view keeps its picture and says it is computing meanwhile, and draws
the new state when the frame arrives. A figure asks for it at once (``now``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from attnsim.model.workbench import Workbench
from attnsim.viewmodels.space3d import Frame, SceneInput, ViewOptions, make_frame

# (queries + keys) x d_k at and above which the best subspace is computed in the background
LARGE_VALUES = 1 << 20


def slow_frame(inp: SceneInput, options: ViewOptions) -> bool:
    """Whether making the frame of ``inp`` would take longer than a frame of the window."""
    rows = inp.Q.shape[0] + inp.K.shape[0]
    return options.subspace and inp.d_k > 3 and rows * inp.d_k >= LARGE_VALUES


class FrameKey:
    """What a frame was made from: the head's trace (its Q, K, V and mask), the view options,
    the extra points and the absent tokens; the same objects, not equal copies."""

    def __init__(self, trace: object, options: ViewOptions, points: object, absent: object):
        self._trace = weakref.ref(trace)
        self._parts = (options, points, absent)

    def same(self, other: FrameKey | None) -> bool:
        if other is None:
            return False
        mine = self._trace()
        return (
            mine is not None
            and mine is other._trace()
            and all(a is b for a, b in zip(self._parts, other._parts, strict=True))
        )


class FramesSoon:
    """The last frame made, and the one being made on the runner."""

    def __init__(self, wb: Workbench, arrived: Callable[[], None]) -> None:
        self._wb = wb
        # weakly: the panel owns this object, and a cycle through it would leave the panel's
        # widgets to the cyclic collector, which may free them in the middle of a later paint
        self._arrived = weakref.WeakMethod(arrived)  # type: ignore[arg-type]
        self._kept: tuple[FrameKey, Frame] | None = None
        self._making: FrameKey | None = None

    @property
    def making(self) -> bool:
        return self._making is not None

    def frame(
        self, inp: SceneInput, options: ViewOptions, key: FrameKey, *, now: bool = False
    ) -> Frame | None:
        """The frame for ``key``: kept, made here (``now``), or None while the runner makes it."""
        if self._kept is not None and key.same(self._kept[0]):
            return self._kept[1]
        if now:
            self._kept = (key, make_frame(inp, options))
            return self._kept[1]
        if key.same(self._making):
            return None  # on its way
        self._making = key
        job = self._wb.run(
            lambda _progress, _cancelled: make_frame(inp, options),
            key=("space3d frame", id(self)),
            per_scenario=True,
        )

        def done(frame: Frame) -> None:
            if self._making is key:
                self._making = None
            self._kept = (key, frame)
            arrived = self._arrived()
            if arrived is not None:
                arrived()

        def failed(text: str) -> None:
            if self._making is key:
                self._making = None
            self._wb.say(f"Could not compute the 3-D view's axes: {text}")

        job.finished.connect(done)
        job.failed.connect(failed)
        return None
