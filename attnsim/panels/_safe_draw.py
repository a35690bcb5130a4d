"""Guards between the numbers a panel draws and Qt's painters.

Qt paints with fixed-point rasterizers and pyqtgraph turns a view range into tick lists: a
coordinate of 1e160, an infinity, or a tick spacing far smaller than the range (a million tick
labels) hangs or crashes the process (SIGSEGV inside the paint event), which loses the user's
unsaved work. The engine keeps every scenario entry within ``MAX_ABS_VALUE``, but derived
quantities (Q = X Wq, scores) reach far beyond it, so every drawing path passes its geometry
through these helpers first:

- :func:`tick_step` — a grid / tick spacing that never gives more than ``MAX_TICKS`` lines;
- :class:`BoundedTickAxis` — a pyqtgraph axis that refuses a tick spacing which would;
- :func:`safe_range` — a finite, non-empty view range within ``VIEW_LIMIT``;
- :func:`clip_segments` / :func:`clip_points` — geometry cut to a box around the view, with
  non-finite points dropped, so nothing reaches a painter more than a few views off screen.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.ticks import nice_ceil

Array = NDArray[np.float64]

MAX_TICKS = 200  # per axis and per level: a readable axis has a dozen
VIEW_LIMIT = 1e15  # |coordinate| of a view edge; beyond, float spans lose all precision
VIEW_MARGIN = 20.0  # geometry is clipped to the view widened by this many spans each side

__all__ = [
    "MAX_TICKS",
    "VIEW_LIMIT",
    "VIEW_MARGIN",
    "BoundedTickAxis",
    "clip_points",
    "clip_segments",
    "extended_box",
    "safe_range",
    "tick_step",
]


def tick_step(lo: float, hi: float, length_px: float, min_px: float) -> float | None:
    """The spacing of grid lines / ticks for a view from ``lo`` to ``hi`` drawn over
    ``length_px`` pixels: a 1-2-5 step at least ``min_px`` pixels apart and giving at most
    ``MAX_TICKS`` lines. None when the range or the length is not finite and positive."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0 and math.isfinite(length_px) and length_px > 0):
        return None
    raw = max(span * min_px / length_px, span / MAX_TICKS)
    if not (math.isfinite(raw) and raw > 0):
        return None
    step = nice_ceil(raw)
    return step if math.isfinite(step) and step > 0 else None


def safe_range(lo: float, hi: float, minimum: float = 1e-9) -> tuple[float, float]:
    """``(lo, hi)`` made drawable: finite, ordered, within ±``VIEW_LIMIT``, and spanning at
    least ``minimum`` (and enough that the float spacing at the edges stays below a pixel)."""
    lo = float(lo) if math.isfinite(lo) else -VIEW_LIMIT
    hi = float(hi) if math.isfinite(hi) else VIEW_LIMIT
    lo, hi = sorted((min(max(lo, -VIEW_LIMIT), VIEW_LIMIT), min(max(hi, -VIEW_LIMIT), VIEW_LIMIT)))
    need = max(minimum, 1e-6 * max(abs(lo), abs(hi)))
    if hi - lo < need:
        mid = (lo + hi) / 2
        lo, hi = mid - need / 2, mid + need / 2
    return lo, hi


def extended_box(view: ArrayLike, margin: float = VIEW_MARGIN) -> Array:
    """The view ``[x0, x1, y0, y1]`` widened by ``margin`` spans on each side: geometry
    clipped to it looks the same on screen and stays a few thousand pixels at most."""
    x0, x1, y0, y1 = (float(v) for v in np.asarray(view, dtype=float).reshape(4))
    x0, x1 = safe_range(x0, x1)
    y0, y1 = safe_range(y0, y1)
    wx, wy = (x1 - x0) * margin, (y1 - y0) * margin
    return np.array([x0 - wx, x1 + wx, y0 - wy, y1 + wy])


def clip_points(points: ArrayLike, box: ArrayLike) -> tuple[Array, NDArray[np.bool_]]:
    """Points (n, 2) clamped into ``box`` = [x0, x1, y0, y1]; also which were finite (n,).

    Non-finite points come back as the box's centre: callers hide them with the mask."""
    P = np.array(points, dtype=float).reshape(-1, 2)
    x0, x1, y0, y1 = (float(v) for v in np.asarray(box, dtype=float).reshape(4))
    ok = np.isfinite(P).all(axis=1)
    P[~ok] = ((x0 + x1) / 2, (y0 + y1) / 2)
    P[:, 0] = np.clip(P[:, 0], x0, x1)
    P[:, 1] = np.clip(P[:, 1], y0, y1)
    return P, ok


def clip_segments(segments: ArrayLike, box: ArrayLike) -> Array:
    """Line segments (m, 2, 2) cut to ``box`` = [x0, x1, y0, y1] (Liang–Barsky): the parts
    inside, on the same line; segments wholly outside or with a non-finite end are dropped.

    The cut is measured from the end nearer the box, so a segment with one end inside (an arrow
    from the origin) is cut exactly even when the other end is at 1e300; the two ends may come
    back swapped."""
    S = np.array(segments, dtype=float).reshape(-1, 2, 2)
    x0, x1, y0, y1 = (float(v) for v in np.asarray(box, dtype=float).reshape(4))
    keep = np.isfinite(S).all(axis=(1, 2))
    S = S[keep]
    if not len(S):
        return np.zeros((0, 2, 2))
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    with np.errstate(over="ignore"):
        far = np.abs(S - centre).max(axis=2)
    swap = far[:, 0] > far[:, 1]
    S[swap] = S[swap, ::-1]
    a, b = S[:, 0], S[:, 1]
    with np.errstate(over="ignore", invalid="ignore"):
        d = b - a
        t0, t1 = np.zeros(len(S)), np.ones(len(S))
        ok = np.isfinite(d).all(axis=1)
        for p, q in (
            (-d[:, 0], a[:, 0] - x0),
            (d[:, 0], x1 - a[:, 0]),
            (-d[:, 1], a[:, 1] - y0),
            (d[:, 1], y1 - a[:, 1]),
        ):
            parallel = p == 0
            ok &= ~(parallel & (q < 0))
            r = np.divide(q, p, out=np.zeros_like(q), where=~parallel)
            t0 = np.where(~parallel & (p < 0), np.maximum(t0, r), t0)
            t1 = np.where(~parallel & (p > 0), np.minimum(t1, r), t1)
        ok &= t0 <= t1
        out = np.stack([a + t0[:, None] * d, a + t1[:, None] * d], axis=1)
    ok &= np.isfinite(out).all(axis=(1, 2))
    return out[ok]


class BoundedTickAxis(pg.AxisItem):
    """A pyqtgraph axis that never draws more than ``MAX_TICKS`` ticks per level.

    A fixed spacing (``setTickSpacing``) is kept only while it suits the range; when the range
    grows past it (a far-away vector, before the owner sets a new spacing) the axis falls back
    to a 1-2-5 spacing of its own instead of generating millions of labels, and a range that
    is not finite shows no ticks.
    """

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # pyqtgraph's name
        span = maxVal - minVal
        if not (math.isfinite(span) and span > 0 and math.isfinite(size) and size > 0):
            return []
        levels = [
            (spacing, offset)
            for spacing, offset in super().tickSpacing(minVal, maxVal, size)
            if math.isfinite(spacing) and spacing > 0 and span / spacing <= MAX_TICKS
        ]
        if levels:
            return levels
        step = tick_step(minVal, maxVal, size, 60.0)
        return [] if step is None else [(step, 0.0)]
