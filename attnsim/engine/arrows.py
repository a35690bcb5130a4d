"""The one arrow geometry every view draws with: a shaft and a triangular head from a tail and
a tip, in whatever units the caller paints in (screen pixels, or view units with the head size
converted from pixels). Qt-free, so it is tested as arrays."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["HEAD_FRACTION", "arrow_head", "arrow_heads"]

Array = NDArray[np.float64]

# A head never takes more than this share of its arrow, so a short arrow keeps a visible shaft.
HEAD_FRACTION = 0.4


def arrow_heads(
    tails: ArrayLike,
    tips: ArrayLike,
    head_len: ArrayLike,
    head_width: ArrayLike | None = None,
    *,
    shaft_inset: float = 1.0,
    max_fraction: float = HEAD_FRACTION,
) -> tuple[Array, Array]:
    """Shaft ends (m, 2) and head triangles (m, 3, 2) of arrows from ``tails`` to ``tips``.

    ``tails`` is (2,) (one origin for all) or (m, 2); ``head_len`` and ``head_width`` are
    scalars or (m,), by default the width is 0.55 of the length. A head is shortened to at most
    ``max_fraction`` of its arrow, keeping its proportions. The shaft stops ``shaft_inset``
    head lengths before the tip (1: at the head's base; less: under the head, so a thick pen
    does not poke through the point). A head's vertices are the tip and its two back corners;
    a zero-length arrow's head collapses onto its tip.
    """
    tip = np.asarray(tips, dtype=float).reshape(-1, 2)
    tail = np.broadcast_to(np.asarray(tails, dtype=float).reshape(-1, 2), tip.shape)
    d = tip - tail
    length = np.hypot(d[:, 0], d[:, 1])
    safe = np.where(length > 0, length, 1.0)
    u = d / safe[:, None]
    u[length == 0] = 0.0
    full_len = np.broadcast_to(np.asarray(head_len, dtype=float), length.shape)
    if head_width is None:
        full_width = 0.55 * full_len
    else:
        full_width = np.broadcast_to(np.asarray(head_width, dtype=float), length.shape)
    hl = np.minimum(full_len, max_fraction * length)
    scale = np.divide(hl, full_len, out=np.zeros_like(hl), where=full_len > 0)
    half = full_width * scale / 2
    base = tip - u * hl[:, None]
    normal = np.stack([-u[:, 1], u[:, 0]], axis=1)
    heads = np.stack([tip, base + normal * half[:, None], base - normal * half[:, None]], axis=1)
    shaft_end = tip - u * (shaft_inset * hl)[:, None]
    return shaft_end, heads


Point = tuple[float, float]


def arrow_head(
    tail: Point,
    tip: Point,
    head_len: float,
    head_width: float | None = None,
    *,
    shaft_inset: float = 1.0,
    max_fraction: float = HEAD_FRACTION,
) -> tuple[Point, tuple[Point, Point, Point]]:
    """One arrow's shaft end and head triangle, as :func:`arrow_heads` computes them, in plain
    floats: a painter drawing one arrow at a time pays no array set-up (with NumPy that set-up
    was most of an arrow's cost)."""
    tx, ty = float(tip[0]), float(tip[1])
    dx, dy = tx - float(tail[0]), ty - float(tail[1])
    length = math.hypot(dx, dy)
    ux, uy = (dx / length, dy / length) if length > 0 else (0.0, 0.0)
    full_len = float(head_len)
    full_width = 0.55 * full_len if head_width is None else float(head_width)
    hl = min(full_len, max_fraction * length)
    half = full_width * (hl / full_len if full_len > 0 else 0.0) / 2
    bx, by = tx - ux * hl, ty - uy * hl
    nx, ny = -uy * half, ux * half
    inset = shaft_inset * hl
    return (tx - ux * inset, ty - uy * inset), ((tx, ty), (bx + nx, by + ny), (bx - nx, by - ny))
