"""The share of the vectors' squared length the best plane would hold: the "(refit: …)" of the
best plane's caption, made off the window's thread for a large matrix.

It is an SVD of the whole edited matrix: a few milliseconds at 2,048 tokens of width 64, but
1.8 s at 4,096 tokens of width 1,024, where every edit held the window that long. From
:data:`LARGE_VALUES` numbers on it is a derived result made on the workbench's runner; the
caption says it is computing meanwhile and the panel redraws when it arrives. A figure asks
for it at once (``now``).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import numpy as np

from attnsim.engine import edits
from attnsim.model.workbench import Workbench
from attnsim.viewmodels.vectors import Target, fitted_plane

# matrix entries (rows x width) at and above which the best share is computed in the background
LARGE_VALUES = 1 << 20


def _share_of(kind: str) -> Callable[[Workbench], float]:
    def best_share(wb: Workbench) -> float:
        sc = wb.scenario
        M = np.asarray(getattr(sc, edits.vector_field(sc, kind)))  # type: ignore[arg-type]
        return float(fitted_plane(M)[1].sum())

    best_share.__qualname__ = best_share.__name__ = f"best_share_{kind}"
    return best_share


# one function per edited kind: the workbench keeps a derived result per function
BEST_SHARE = {kind: _share_of(kind) for kind in ("x", "q", "k", "v")}


class BestShares:
    """The best plane's share for the panel's refresh: at once for a small matrix (or ``now``),
    else from the runner (NaN until it arrives; ``arrived`` is then called)."""

    def __init__(self, wb: Workbench, arrived: Callable[[], None]) -> None:
        self._wb = wb
        # weakly: the panel owns this object (see space3d.frames)
        self._arrived = weakref.WeakMethod(arrived)  # type: ignore[arg-type]
        self.now = False  # True: made here (a figure), not on the runner

    def get(self, t: Target, best: bool, wait: bool = False) -> float | None:
        """The share for target ``t`` (None when the plane is not the best one). ``wait``: a
        drag is under way, ask for it only after (each move would start an SVD of its own)."""
        if not best:
            return None
        fn, wb = BEST_SHARE[t.kind], self._wb
        if self.now or t.matrix.size < LARGE_VALUES or wb.derived_ready(fn):
            return wb.derived(fn)
        share = None if wait else wb.derived_soon(fn, then=self._then)
        return math.nan if share is None else share

    def _then(self) -> None:
        arrived = self._arrived()
        if arrived is not None:
            arrived()
