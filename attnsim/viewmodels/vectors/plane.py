"""A 2-D view of d-dimensional vectors: which plane, where the arrows go, how a drag edits.

The vector editor draws token vectors as arrows from the origin in a plane spanned by two
orthonormal directions ``B`` (d, 2): either two named axes, or the best plane of the data
(principal directions through the origin). Everything the panel draws or edits comes from
these functions, so tests check arrays rather than pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.arrows import arrow_heads
from attnsim.engine.geometry import best_subspace
from attnsim.engine.ticks import nice_ceil

Array = NDArray[np.float64]

SNAP_STEP = 0.05
# Up to this many vectors every one is an arrow with its name. Beyond it (long sequences) the
# receiving token and the FEATURED longest are labelled arrows and the rest are plain points:
# 2,048 names on top of each other say nothing and cost a second per redraw.
DETAIL_LIMIT = 64
FEATURED = 15
# Named arrows' tips at least this share of the longest arrow apart, in x or in y: about a
# name's width and height when the view is fitted to the arrows.
FEATURED_GAP = (0.25, 0.1)

__all__ = [
    "DETAIL_LIMIT",
    "FEATURED",
    "FEATURED_GAP",
    "SNAP_STEP",
    "Naming",
    "Plane",
    "affine_map",
    "arrow_geometry",
    "arrow_naming",
    "axis_plane",
    "direction_label",
    "featured_rows",
    "fitted_plane",
    "fraction_in_plane",
    "grid_lines",
    "label_positions",
    "moved_vector",
    "nice_step",
    "plane_share",
    "project",
    "snap",
    "squared_lengths",
    "stack_indices",
    "view_range",
]


@dataclass(frozen=True, eq=False)
class Plane:
    """Two orthonormal directions of R^d (``basis`` (d, 2)); ``axes`` names them if they are
    coordinate axes (the second is None when d = 1: the plane is then a line)."""

    basis: Array
    axes: tuple[int, int | None] | None = None

    @property
    def d(self) -> int:
        return int(self.basis.shape[0])

    def same_as(self, other: Plane | None) -> bool:
        return (
            other is not None
            and self.axes == other.axes
            and self.basis.shape == other.basis.shape
            and np.array_equal(self.basis, other.basis)
        )


def axis_plane(d: int, i: int, j: int | None) -> Plane:
    """The plane of coordinate axes i (horizontal) and j (vertical); j is None only if d = 1."""
    if d < 1:
        raise ValueError(f"d must be at least 1, got {d}")
    if not 0 <= i < d:
        raise ValueError(f"axis {i} does not exist (d = {d})")
    B = np.zeros((d, 2))
    B[i, 0] = 1.0
    if j is None:
        if d > 1:
            raise ValueError("choose a second axis when d > 1")
    else:
        if not 0 <= j < d:
            raise ValueError(f"axis {j} does not exist (d = {d})")
        if j == i:
            raise ValueError("the two axes of a plane must differ")
        B[j, 1] = 1.0
    B.flags.writeable = False
    return Plane(B, (i, j))


def fitted_plane(points: ArrayLike) -> tuple[Plane, Array]:
    """The best plane through the origin for arrows ``points`` (n, d), and the fraction of
    the total squared length each of its two directions explains (2,). For d = 1 the second
    direction is zero and explains nothing."""
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[1] < 1:
        raise ValueError(f"points must be an (n, d) matrix, got shape {P.shape}")
    d = P.shape[1]
    k = min(2, d)
    # The best plane and its shares do not depend on the scale; dividing by the largest entry
    # keeps squared lengths from underflowing (1e-200) or overflowing (1e200) to 0/0 or inf/inf.
    peak = float(np.max(np.abs(P))) if P.size else 0.0
    basis, explained = best_subspace(P / peak if peak > 0 else P, k)
    B = np.zeros((d, 2))
    B[:, :k] = basis
    ex = np.zeros(2)
    ex[:k] = explained
    B.flags.writeable = False
    return Plane(B, None), ex


def project(points: ArrayLike, plane: Plane) -> Array:
    """Plane coordinates (n, 2) of ``points`` (n, d): their arrow tips in the view."""
    P = np.asarray(points, dtype=float)
    if plane.axes is None:
        return P @ plane.basis
    # Two coordinate axes: their columns, exactly what the product with the 0/1 basis gives
    # (without its n x d x 2 multiplications: 8 ms at n = 4,096, d = 1,024).
    i, j = plane.axes
    out = np.zeros((*P.shape[:-1], 2))
    out[..., 0] = P[..., i]
    if j is not None:
        out[..., 1] = P[..., j]
    return out + 0.0  # -0.0 as the product writes it


def squared_lengths(points: ArrayLike) -> Array:
    """‖p‖² of each row of ``points`` (n, d) (n,)."""
    P = np.asarray(points, dtype=float)
    return np.einsum("ij,ij->i", P, P)


def plane_share(tips: ArrayLike, lengths: ArrayLike) -> float:
    """Share of the total squared length (``lengths``: each row's ‖p‖²) in the plane, from the
    rows' plane coordinates ``tips`` (n, 2) (0 if every point is 0)."""
    total = float(np.sum(lengths))
    if total == 0.0:
        return 0.0
    T = np.asarray(tips, dtype=float)
    return float(np.sum(squared_lengths(T))) / total


def fraction_in_plane(points: ArrayLike, plane: Plane) -> float:
    """Share of the total squared length ‖P‖² that lies in the plane (0 if every point is 0)."""
    P = np.asarray(points, dtype=float)
    return plane_share(project(P, plane), squared_lengths(P))


def moved_vector(x: ArrayLike, plane: Plane, p_new: ArrayLike) -> Array:
    """The vector (d,) whose plane coordinates are ``p_new`` (2,), changed only within the plane.

    On an axis plane the two shown coordinates are set exactly and the others are kept; on a
    fitted plane ``x + B (p_new - Bᵀx)``, so the part of x off the plane is kept.
    """
    v = np.asarray(x, dtype=float)
    p = np.asarray(p_new, dtype=float).reshape(2)
    if not np.isfinite(p).all():
        raise ValueError(f"plane coordinates must be finite, got {p.tolist()}")
    if plane.axes is not None:
        out = v.copy()
        i, j = plane.axes
        out[i] = p[0]
        if j is not None:
            out[j] = p[1]
        return out
    return v + plane.basis @ (p - v @ plane.basis)


def snap(p: ArrayLike, step: float = SNAP_STEP) -> Array:
    """Round plane coordinates to the nearest multiple of ``step`` (exact decimals for 0.05)."""
    arr = np.asarray(p, dtype=float)
    # round twice: k * 0.05 is not exactly representable, the second rounding hides the error.
    return np.round(np.round(arr / step) * step, 10) + 0.0


def arrow_geometry(
    tips: ArrayLike, head_length: float, head_width: float | None = None
) -> tuple[Array, Array]:
    """Shafts and heads of arrows from the origin to ``tips`` (n, 2), in view units.

    Returns
    -------
    shafts : (2n, 2), origin / shaft-end pairs (the shaft stops under the head so a thick pen
        does not poke through the point)
    heads : (n, 3, 2), triangle (tip, left barb, right barb); a zero arrow's triangle collapses
        onto the origin. Heads shrink to at most 40 % of a short arrow's length.
    """
    ends, heads = arrow_heads((0.0, 0.0), tips, head_length, head_width, shaft_inset=0.7)
    shafts = np.zeros((2 * ends.shape[0], 2))
    shafts[1::2] = ends
    return shafts, heads


def label_positions(tips: ArrayLike, offset: float) -> Array:
    """Where each arrow's name goes (n, 2): a little beyond its tip, along the arrow."""
    T = np.asarray(tips, dtype=float).reshape(-1, 2)
    norms = np.hypot(T[:, 0], T[:, 1])
    u = np.zeros_like(T)
    nz = norms > 0
    u[nz] = T[nz] / norms[nz, None]
    u[~nz] = (math.sqrt(0.5), math.sqrt(0.5))
    return T + offset * u


def view_range(
    points: ArrayLike,
    size_px: tuple[float, float],
    margin_px: tuple[float, float] = (60.0, 30.0),
    minimum: float = 0.5,
) -> Array:
    """[xmin, xmax, ymin, ymax] holding the origin and all ``points`` (n, 2) in a view of
    ``size_px`` (width, height) pixels, leaving ``margin_px`` pixels on each side (room for the
    arrows' names). Each side spans at least ``minimum`` view units."""
    P = np.asarray(points, dtype=float).reshape(-1, 2)
    P = np.vstack([P, np.zeros((1, 2))])
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = np.maximum(hi - lo, minimum)
    centre = (lo + hi) / 2
    size = np.asarray(size_px, dtype=float)
    margin = np.asarray(margin_px, dtype=float)
    inner = np.maximum(size - 2 * margin, 0.25 * size)
    inner = np.maximum(inner, 1.0)
    # The view shows span over `inner` pixels; the margins add margin * (span / inner) each side.
    half = span / 2 + margin * span / inner
    return np.array(
        [centre[0] - half[0], centre[0] + half[0], centre[1] - half[1], centre[1] + half[1]]
    )


def nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``raw`` (> 0)."""
    if not math.isfinite(raw) or raw <= 0:
        raise ValueError(f"a grid step must be positive and finite, got {raw}")
    return nice_ceil(raw)


def grid_lines(x_range: ArrayLike, y_range: ArrayLike, step: float) -> Array:
    """Segments (2m, 2) of a square grid of spacing ``step`` covering the view: vertical lines
    at the multiples of ``step`` in ``x_range`` = (lo, hi), then horizontal ones in y."""
    (x0, x1), (y0, y1) = np.asarray(x_range, float), np.asarray(y_range, float)
    xs = np.arange(math.ceil(x0 / step), math.floor(x1 / step) + 1) * step
    ys = np.arange(math.ceil(y0 / step), math.floor(y1 / step) + 1) * step
    out = np.empty((2 * (xs.size + ys.size), 2))
    out[0 : 2 * xs.size : 2] = np.column_stack([xs, np.full(xs.size, y0)])
    out[1 : 2 * xs.size : 2] = np.column_stack([xs, np.full(xs.size, y1)])
    h = 2 * xs.size
    out[h::2] = np.column_stack([np.full(ys.size, x0), ys])
    out[h + 1 :: 2] = np.column_stack([np.full(ys.size, x1), ys])
    return out


def stack_indices(tips: ArrayLike, tol: float = 1e-9) -> Array:
    """For each tip (n, 2), how many earlier tips end at the same point (n,): the panel stacks
    the names of coincident arrows instead of printing them over each other. O(n²) memory:
    meant for the labelled arrows (at most ``DETAIL_LIMIT`` + 1)."""
    T = np.asarray(tips, dtype=float).reshape(-1, 2)
    same = np.all(np.abs(T[:, None, :] - T[None, :, :]) <= tol, axis=2)
    return np.tril(same, -1).sum(axis=1).astype(float)


def featured_rows(
    tips: ArrayLike,
    highlight: int | None,
    count: int = FEATURED,
    pinned: tuple[int, ...] = (),
    min_gap: tuple[float, float] = (0.0, 0.0),
) -> Array:
    """Rows (ascending, int) drawn as labelled arrows besides ``highlight`` when there are too
    many to name them all: the ``count`` longest tips (n, 2) (ties: the earlier row), each
    apart from the tips already chosen and from ``highlight``'s by at least ``min_gap`` =
    (gx, gy) in x or in y (a name is wider than tall: so names do not pile up), and every row
    in ``pinned`` (e.g. the one being dragged). ``highlight`` itself is never included."""
    T = np.asarray(tips, dtype=float).reshape(-1, 2)
    n = T.shape[0]
    has_hi = highlight is not None and 0 <= highlight < n
    length = np.hypot(T[:, 0], T[:, 1])
    if has_hi:
        length[highlight] = -np.inf
    order = np.argsort(-length, kind="stable")
    chosen: list[int] = []
    taken = [T[highlight]] if has_hi else []
    # Only the longest few hundred are candidates: enough to fill `count` apart, and bounded.
    for k in order[: max(count, 0) * 20]:
        if len(chosen) >= count or (has_hi and k == highlight):
            break
        if taken:
            d = np.abs(np.asarray(taken) - T[k])
            if np.any((d[:, 0] < min_gap[0]) & (d[:, 1] < min_gap[1])):
                continue
        chosen.append(int(k))
        taken.append(T[k])
    chosen += [int(k) for k in pinned if 0 <= k < n and k != highlight]
    return np.array(sorted(set(chosen)), dtype=int)


@dataclass(frozen=True, eq=False)
class Naming:
    """Which arrows carry a name: ``others`` (ascending rows besides the highlight), ``named``
    (n,) bool including the highlight, ``stack`` (n,) how far each name is stacked below
    names at the same tip (0 for unnamed rows)."""

    others: NDArray[np.int_]
    named: NDArray[np.bool_]
    stack: Array


def arrow_naming(
    tips: ArrayLike,
    highlight: int | None,
    dragged: int | None = None,
    featured: ArrayLike | None = None,
) -> Naming:
    """Which of ``tips`` (n, 2) are named arrows. Up to ``DETAIL_LIMIT`` every one is; beyond
    it ``highlight``, the ``FEATURED`` longest (apart by ``FEATURED_GAP``) and ``dragged``.
    While a row is dragged, the rows ``featured`` before stay named (no names popping in and
    out under the mouse)."""
    T = np.asarray(tips, dtype=float).reshape(-1, 2)
    n = T.shape[0]
    if n <= DETAIL_LIMIT:
        others = np.array([k for k in range(n) if k != highlight], dtype=int)
        return Naming(others, np.ones(n, dtype=bool), stack_indices(T))
    before = np.zeros(0, dtype=int) if featured is None else np.asarray(featured, dtype=int)
    if dragged is not None and len(before):
        others = featured_rows(T, highlight, 0, (*before.tolist(), dragged))
    else:
        pinned = () if dragged is None else (dragged,)
        longest = float(np.max(np.hypot(T[:, 0], T[:, 1])))
        gap = (FEATURED_GAP[0] * longest, FEATURED_GAP[1] * longest)
        others = featured_rows(T, highlight, FEATURED, pinned, min_gap=gap)
    named = np.zeros(n, dtype=bool)
    named[others] = True
    if highlight is not None and 0 <= highlight < n:
        named[highlight] = True
    stack = np.zeros(n)
    stack[named] = stack_indices(T[named])
    return Naming(others, named, stack)


def affine_map(points: ArrayLike, origin: ArrayLike, ex: ArrayLike, ey: ArrayLike) -> Array:
    """``origin + x ex + y ey`` for each point (x, y) of ``points`` (n, 2): where view points
    land on screen when (0, 0), (1, 0), (0, 1) land at origin, origin + ex, origin + ey (n, 2)."""
    P = np.asarray(points, dtype=float).reshape(-1, 2)
    o, a, b = (np.asarray(v, dtype=float).reshape(2) for v in (origin, ex, ey))
    return o + P[:, :1] * a + P[:, 1:] * b


def direction_label(direction: ArrayLike, axes: tuple[str, ...], top: int = 2) -> str:
    """A short reading of a unit direction (d,) in named axes, e.g. '0.71 water + 0.58 bank'.

    Lists the ``top`` largest components; '…' marks that smaller ones were left out.
    """
    b = np.asarray(direction, dtype=float)
    if b.shape != (len(axes),):
        raise ValueError(f"direction has {b.size} entries but there are {len(axes)} axes")
    order = [int(i) for i in np.argsort(-np.abs(b), kind="stable") if b[i] != 0.0]
    if not order:
        return "0"
    text = ""
    for n, i in enumerate(order[:top]):
        c = float(b[i])
        if n == 0:
            text = f"{'−' if c < 0 else ''}{abs(c):.2f} {axes[i]}"
        else:
            text += f" {'−' if c < 0 else '+'} {abs(c):.2f} {axes[i]}"
    if len(order) > top:
        text += " …"
    return text
