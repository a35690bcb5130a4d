"""Arithmetic behind the dot-product explorer: readouts, constrained drags, the q-k plane.

Pure NumPy. Every number the explorer shows comes from :mod:`attnsim.engine.geometry` (dot,
cosine, projection, angle, scaled dot) or :func:`attnsim.engine.attention.softmax`; this module
only adds the 2-D bookkeeping around them: holding an angle or a length while a tip moves,
an orthonormal basis of the plane two vectors span, and the shapes a view draws.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine import geometry
from attnsim.engine.attention import softmax

Array = NDArray[np.floating]

HOLD_MODES = ("free", "lengths", "angle")
MAX_SCORES = 10

__all__ = [
    "HOLD_MODES",
    "MAX_SCORES",
    "PairReadout",
    "angle_arc",
    "constrain_drag",
    "from_plane",
    "in_plane",
    "pair_readout",
    "parse_scores",
    "plane_basis",
    "shadow_geometry",
    "signed_angle",
    "softmax_strip",
    "to_plane",
    "unit",
    "view_bounds",
    "with_angle",
    "with_length",
]


@dataclass(frozen=True)
class PairReadout:
    """What the explorer prints for a pair (a, b). ``None`` marks an undefined quantity.

    ``projection_vector`` has the vectors' shape (d,); everything else is a float.
    """

    length_a: float
    length_b: float
    dot: float
    scaled_dot: float
    d_k: int
    cosine: float | None
    angle_deg: float | None
    projection: float | None
    projection_vector: Array | None


def pair_readout(a: ArrayLike, b: ArrayLike, d_k: int) -> PairReadout:
    """Lengths, dot, cosine, angle, shadow of a on b and ``a·b/sqrt(d_k)`` for (d,) vectors.

    A zero vector has no direction, so cosine and angle become ``None`` (and the shadow when b
    is zero); they are never NaN.
    """
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    # Products of norms, not the norms: they are what geometry divides by, and a product of
    # two tiny norms can underflow to zero.
    both = na * nb > 0.0
    b_ok = nb * nb > 0.0
    return PairReadout(
        length_a=na,
        length_b=nb,
        dot=geometry.dot(va, vb),
        scaled_dot=geometry.scaled_dot(va, vb, d_k),
        d_k=int(d_k),
        cosine=geometry.cosine(va, vb) if both else None,
        angle_deg=geometry.angle(va, vb, degrees=True) if both else None,
        projection=geometry.projection(va, vb) if b_ok else None,
        projection_vector=geometry.projection_vector(va, vb) if b_ok else None,
    )


# ---- 2-D moves ------------------------------------------------------------------------------


def unit(v: ArrayLike, fallback: ArrayLike | None = None) -> Array:
    """``v / ||v||``; a zero vector gives ``fallback`` (or the first axis) instead."""
    arr = np.asarray(v, dtype=float)
    big = float(np.max(np.abs(arr))) if arr.size else 0.0
    if big > 0.0:
        arr = arr / big  # first bring the largest entry to 1: tiny vectors keep their precision
        return arr / float(np.linalg.norm(arr))
    if fallback is not None:
        return unit(fallback)
    out = np.zeros_like(arr)
    if out.size:
        out[0] = 1.0
    return out


def _rotate(v: Array, degrees: float) -> Array:
    t = math.radians(degrees)
    c, s = math.cos(t), math.sin(t)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def signed_angle(a: ArrayLike, b: ArrayLike) -> float | None:
    """Angle in degrees, in (-180, 180], that turns b's direction onto a's (2-D vectors).

    ``None`` when either vector is zero. Its magnitude equals :func:`geometry.angle`.
    """
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not float(np.linalg.norm(va)) * float(np.linalg.norm(vb)) > 0.0:
        return None
    size = geometry.angle(va, vb, degrees=True)
    cross = vb[0] * va[1] - vb[1] * va[0]
    return -size if cross < 0 else size


def with_length(v: ArrayLike, length: float, fallback_dir: ArrayLike | None = None) -> Array:
    """v rescaled to ``length`` (>= 0) with its direction kept; shape (2,) or (d,)."""
    if not (math.isfinite(length) and length >= 0):
        raise ValueError(f"a length must be a finite number >= 0, got {length!r}")
    return length * unit(v, fallback_dir)


def with_angle(a: ArrayLike, b: ArrayLike, degrees: float, b_dir: ArrayLike | None = None) -> Array:
    """a turned so that it makes the signed angle ``degrees`` with b; its length is kept.

    2-D vectors, shape (2,). ``b_dir`` stands in for b's direction when b is zero.
    """
    base = unit(b, b_dir if b_dir is not None else np.array([1.0, 0.0]))
    return float(np.linalg.norm(np.asarray(a, dtype=float))) * _rotate(base, degrees)


def constrain_drag(
    mode: str, start: ArrayLike, target: ArrayLike, fallback_dir: ArrayLike | None = None
) -> Array:
    """Where a dragged tip goes when the mouse is at ``target`` (shape (2,)).

    ``"free"``: at the mouse. ``"lengths"``: on the circle of radius ``||start||``, towards the
    mouse (the angle changes, the length is held). ``"angle"``: on the ray through ``start``, at
    the mouse's foot on that ray, never behind the origin (the length changes, the direction
    and hence every angle are held). ``fallback_dir`` is the direction of a zero ``start``.
    """
    s, t = np.asarray(start, dtype=float), np.asarray(target, dtype=float)
    if mode == "free":
        return t.copy()
    if mode == "lengths":
        if not np.any(t):
            return s.copy()
        return float(np.linalg.norm(s)) * unit(t)
    if mode == "angle":
        u = unit(s, fallback_dir)
        return max(0.0, float(t @ u)) * u
    raise ValueError(f"unknown hold mode {mode!r}; choose one of {', '.join(HOLD_MODES)}")


# ---- the plane spanned by two vectors -------------------------------------------------------


def plane_basis(
    q: ArrayLike, k: ArrayLike, previous: ArrayLike | None = None, tol: float = 1e-9
) -> Array:
    """Orthonormal basis of span{q, k} by Gram–Schmidt, as columns of shape (d, 2).

    ``e1`` points along k (along q if k is zero; along the first axis if both are zero);
    ``e2`` is q's part perpendicular to k, normalized. When q and k are parallel (or zero) the
    plane is not determined and ``e2`` is any unit vector perpendicular to ``e1``: the axis
    least aligned with ``e1``, orthonormalized. In 1-D there is no second direction and ``e2``
    is zero. If ``previous`` (d, 2) spans the same plane, ``e2``'s sign follows it so that a
    vector does not flip sides between redraws.
    """
    vq, vk = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    if vq.shape != vk.shape or vq.ndim != 1:
        raise ValueError(f"q and k must be vectors of one length, got {vq.shape} and {vk.shape}")
    d = vq.shape[0]
    scale = max(float(np.linalg.norm(vq)), float(np.linalg.norm(vk)), 1.0)
    e1 = unit(vk, vq if np.any(vq) else None)
    basis = np.zeros((d, 2))
    basis[:, 0] = e1
    if d == 1:
        return basis
    rest = vq - (vq @ e1) * e1
    if float(np.linalg.norm(rest)) <= tol * scale:
        # q adds no direction. Keep the previous plane if it contains e1 (no jump while q
        # passes through k's line); otherwise use the axis least aligned with e1.
        axis = np.zeros(d)
        axis[int(np.argmin(np.abs(e1)))] = 1.0
        candidates = [axis]
        if previous is not None:
            prev = np.asarray(previous, dtype=float)
            if prev.shape == basis.shape and in_plane(e1, prev):
                candidates = [prev[:, 1], prev[:, 0], axis]
        for c in candidates:
            rest = c - (c @ e1) * e1
            if float(np.linalg.norm(rest)) > 1e-6:
                break
    # A second Gram-Schmidt pass: when q is nearly parallel to k, one pass leaves a residue
    # that is visibly not perpendicular to e1 (cancellation); the second removes it.
    rest = rest - (rest @ e1) * e1
    basis[:, 1] = rest / float(np.linalg.norm(rest))
    if previous is not None:
        prev = np.asarray(previous, dtype=float)
        same_plane = prev.shape == basis.shape and all(in_plane(prev[:, c], basis) for c in (0, 1))
        if same_plane and float(basis[:, 1] @ prev[:, 1]) < 0:
            basis[:, 1] *= -1.0
    return basis


def in_plane(v: ArrayLike, basis: ArrayLike, tol: float = 1e-9) -> bool:
    """Whether ``v`` (d,) lies in the span of the columns of ``basis`` (d, 2)."""
    vv, B = np.asarray(v, dtype=float), np.asarray(basis, dtype=float)
    rest = vv - B @ (B.T @ vv)
    return float(np.linalg.norm(rest)) <= tol * max(float(np.linalg.norm(vv)), 1.0)


def to_plane(v: ArrayLike, basis: ArrayLike) -> Array:
    """Coordinates (2,) of ``v`` (d,) in the basis (d, 2)."""
    return np.asarray(basis, dtype=float).T @ np.asarray(v, dtype=float)


def from_plane(xy: ArrayLike, basis: ArrayLike, old: ArrayLike) -> Array:
    """``old`` (d,) with its in-plane part replaced by the point ``xy`` (2,) of the plane.

    The part of ``old`` outside the plane (zero for a vector that spans it) is kept, so a drag
    in the plane edits only what the plane shows.
    """
    B = np.asarray(basis, dtype=float)
    vo = np.asarray(old, dtype=float)
    return vo - B @ (B.T @ vo) + B @ np.asarray(xy, dtype=float)


# ---- shapes to draw -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ShadowGeometry:
    """The segments of the shadow picture, each (2, 2): two points of the plane."""

    line: Array
    shadow: Array
    drop: Array


def shadow_geometry(a: ArrayLike, b: ArrayLike, reach: float) -> ShadowGeometry:
    """Segments of the shadow picture for 2-D a and b, each of shape (2, 2) (two points).

    ``line``: b's line through the origin, ``reach`` long each way; ``shadow``: origin to the
    projection of a on that line; ``drop``: a's tip to the projection (perpendicular to b).
    With b zero there is no line: every segment collapses to a point at the origin or at a.
    """
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    origin = np.zeros(2)
    nb = float(np.linalg.norm(vb))
    if not nb * nb > 0.0:
        return ShadowGeometry(
            line=np.array([origin, origin]),
            shadow=np.array([origin, origin]),
            drop=np.array([va, va]),
        )
    u = unit(vb)
    foot = geometry.projection_vector(va, vb)
    return ShadowGeometry(
        line=np.array([-reach * u, reach * u]),
        shadow=np.array([origin, foot]),
        drop=np.array([va, foot]),
    )


def angle_arc(a: ArrayLike, b: ArrayLike, radius: float, n: int = 33) -> Array:
    """Points (n, 2) of the arc from b's direction to a's, the short way round.

    Empty (0, 2) when either vector is zero.
    """
    turn = signed_angle(a, b)
    if turn is None:
        return np.zeros((0, 2))
    start = math.atan2(float(np.asarray(b)[1]), float(np.asarray(b)[0]))
    t = start + np.radians(turn) * np.linspace(0.0, 1.0, n)
    return radius * np.column_stack([np.cos(t), np.sin(t)])


def view_bounds(points: ArrayLike, margin: float = 0.18, floor: float = 1.0) -> Array:
    """A box ``[x0, x1, y0, y1]`` showing the origin and every point of ``points`` (m, 2).

    Each side gets ``margin`` times the larger span; the smaller span is at least 40% of the
    larger so a flat picture keeps some room, and the larger is at least ``floor``.
    """
    P = np.vstack([np.zeros((1, 2)), np.asarray(points, dtype=float).reshape(-1, 2)])
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = hi - lo
    big = max(float(span.max()), floor)
    for axis in (0, 1):
        want = max(span[axis], 0.4 * big) if span[axis] < big else big
        grow = (want - span[axis]) / 2.0
        lo[axis] -= grow
        hi[axis] += grow
    pad = margin * big
    return np.array([lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad])


# ---- the softmax strip ----------------------------------------------------------------------

_SPLIT = re.compile(r"[,;\s]+")


def parse_scores(text: str) -> Array:
    """Scores (n,) from text like ``"4, 2, 0"``; a ValueError names what is wrong."""
    parts = [p for p in _SPLIT.split(text.strip().strip("[]()")) if p]
    if len(parts) < 2:
        raise ValueError(f"type at least two scores separated by commas, got {text!r}")
    if len(parts) > MAX_SCORES:
        raise ValueError(f"at most {MAX_SCORES} scores fit in the strip, got {len(parts)}")
    values = []
    for p in parts:
        try:
            x = float(p.replace("−", "-"))
        except ValueError:
            raise ValueError(f"{p!r} is not a number") from None
        if not math.isfinite(x):
            raise ValueError(f"{p!r} is not a finite number")
        values.append(x)
    return np.array(values)


def softmax_strip(
    scores: ArrayLike, temperature: float = 1.0, *, scale: bool = False, d_k: int = 1
) -> tuple[Array, Array, float]:
    """Logits and weights of one score row: ``softmax(s / (sqrt(d_k) * T))``.

    Returns ``(logits (n,), weights (n,), divisor)``; ``sqrt(d_k)`` only when ``scale``.
    """
    s = np.asarray(scores, dtype=float)
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be positive and finite, got {temperature!r}")
    if int(d_k) != d_k or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    divisor = (math.sqrt(d_k) if scale else 1.0) * temperature
    logits = s / divisor
    return logits, softmax(logits), divisor
