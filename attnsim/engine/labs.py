"""Pure computations behind the scaling lab and the query-map null-space lab.

Scaling lab: the entropy-vs-d_k experiment in small steps (so a caller can show progress and
stop early) with exactly the numbers of :func:`attnsim.engine.experiments.entropy_vs_dk`, the
softmax Jacobian of one attention row, and how its size shrinks as the row saturates.

Null-space lab: a linear query map ``q = M x`` (M of shape (m, n), column-vector notation; the
row-vector code's ``Wq`` is ``M.T``), its row and null spaces, an input moved along them, and
the attention that the resulting query pays to fixed keys.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import direct_trace, entropy_bits, softmax
from .experiments import entropy_vs_dk_steps
from .geometry import canonical_sign, null_space, row_space, softmax_jacobian

Array = NDArray[np.float64]

__all__ = [
    "DEFAULT_E",
    "DEFAULT_KEYS",
    "DEFAULT_M",
    "MAX_JACOBIAN_KEYS",
    "closest_param_on_line",
    "entropy_vs_dk_steps",
    "jacobian_sizes",
    "query_map_spaces",
    "query_probe",
    "readable_direction",
    "row_jacobian",
    "saturation_curve",
    "softmax_keys",
    "subspace_scene",
]

# The 3-D -> 2-D example of the reference text: M reads x1 + x3 and x2 + x3.
DEFAULT_M = ((1.0, 0.0, 1.0), (0.0, 1.0, 1.0))
DEFAULT_E = (1.0, 2.0, 3.0)
DEFAULT_KEYS = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0))


# ---- scaling lab -------------------------------------------------------------------------------
# Above this many keys a row's Jacobian is described by its sizes only: the full (k, k) matrix
# would be unreadable on screen and, at thousands of keys, slow and large to build.
MAX_JACOBIAN_KEYS = 32


def softmax_keys(mask: ArrayLike, mask_value: float) -> NDArray[np.intp]:
    """The keys that take part in one row's softmax, shape (k,), from the row's mask (n_k,).

    With mask value -inf these are the legal keys (a forbidden key's weight is exactly 0
    whatever the scores); with mask value 0 every key takes part, a forbidden one with its
    logit held at 0. The same count as :attr:`attnsim.engine.attention.HeadTrace.max_entropy`.
    """
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 1:
        raise ValueError(f"mask must be one row of true/false values, got shape {m.shape}")
    return np.flatnonzero(m) if np.isneginf(mask_value) else np.arange(m.size)


def row_jacobian(
    masked_logits: ArrayLike,
    weights: ArrayLike,
    temperature: float,
    keys: ArrayLike | None = None,
) -> tuple[NDArray[np.intp], Array]:
    """The softmax Jacobian of one attention row, over the keys that take part in its softmax.

    ``masked_logits`` and ``weights`` have shape (n_k,); ``keys`` (k,) are the keys to keep
    (:func:`softmax_keys` of the trace's mask row); by default those whose masked logit is not
    -inf. Returns ``(keys (k,), J (k, k))`` with ``J = (1/T) w_i (delta_ij - w_j)``, the
    derivative of the row's weights with respect to its scaled scores (the logits before the
    temperature divides them). Builds a (k, k) array: for long rows use
    :func:`jacobian_sizes`.
    """
    w = np.asarray(weights, dtype=float)
    if keys is None:
        idx = np.flatnonzero(~np.isneginf(np.asarray(masked_logits, dtype=float)))
    else:
        idx = np.asarray(keys, dtype=np.intp)
    return idx, softmax_jacobian(w[idx], temperature)


def _sizes(W: Array, temperature: float) -> tuple[Array, Array]:
    """Frobenius norm and largest |entry| of ``(1/T)(diag(w) - w w^T)`` for each row of W (p, m).

    Closed forms, O(p m), no (m, m) array: ``||J||_F^2 T^2 = sum w^2 - 2 sum w^3 + (sum w^2)^2``
    and ``max|J| T = max(max_i w_i (1 - w_i), w_(1) w_(2))`` (the two largest weights). The
    sums are taken as ``sum_i w_i^2 (1 - w_i)^2 + sum_i w_i^2 sum_{j != i} w_j^2`` with the
    largest weight's ``1 - w`` and ``sum_{j != i} w_j^2`` summed over the other keys, so a
    saturated row (w near 1) keeps its tiny sizes instead of cancelling them to rounding noise.
    """
    p, m = W.shape
    rows = np.arange(p)
    top = np.argmax(W, axis=1)
    w_top = W[rows, top]
    others = W.copy()
    others[rows, top] = 0.0
    W2 = W * W
    rest2 = np.sum(others * others, axis=1)  # sum of the other keys' squared weights
    one_minus = 1.0 - W
    one_minus[rows, top] = np.sum(others, axis=1)
    diag = W * one_minus  # J's diagonal (times T), all >= 0
    off2 = (rest2 + w_top * w_top)[:, None] - W2
    off2[rows, top] = rest2
    frob = np.sqrt(np.sum(diag * diag, axis=1) + np.sum(W2 * off2, axis=1)) / temperature
    second = others.max(axis=1) if m > 1 else np.zeros(p)
    max_abs = np.maximum(diag.max(axis=1), w_top * second) / temperature
    return frob, max_abs


def _check_temperature(temperature: float) -> None:
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be positive and finite, got {temperature!r}")


def jacobian_sizes(weights: ArrayLike, temperature: float) -> tuple[float, float]:
    """``(||J||_F, max |J|)`` of the softmax Jacobian at ``weights`` (k,), in O(k).

    The same numbers as ``softmax_jacobian(weights, temperature)``'s norm and largest absolute
    entry, without building the (k, k) matrix.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or not np.isfinite(w).all():
        raise ValueError("weights must be a non-empty 1-D array of finite numbers")
    _check_temperature(temperature)
    frob, max_abs = _sizes(w[None, :], temperature)
    return float(frob[0]), float(max_abs[0])


def saturation_curve(logits: ArrayLike, temperature: float, factors: ArrayLike) -> dict[str, Array]:
    """How small the softmax derivatives get when one row's logits are multiplied by a factor.

    ``logits`` (k,) are the row's logits (temperature already applied): no NaN, not all -inf;
    a -inf key gets no weight at any factor, +inf keys share the whole weight. ``factors`` (m,)
    positive. Multiplying the logits by c is what a c-times larger score spread (or a c-times
    lower temperature) does. For each factor: ``weights = softmax(c * logits)`` (m, k), the
    Jacobian ``(1/T)(diag(w) - w w^T)``'s Frobenius norm and largest absolute entry (m,), the
    largest weight and the entropy in bits (m,). O(m k) time and memory: the Jacobians are
    never built (see :func:`_sizes`).
    """
    z = np.asarray(logits, dtype=float)
    c = np.asarray(factors, dtype=float)
    if z.ndim != 1 or z.size == 0 or np.isnan(z).any() or np.isneginf(z).all():
        raise ValueError("logits must be a non-empty 1-D array without NaN and not all -inf")
    if c.ndim != 1 or not (np.isfinite(c).all() and (c > 0).all()):
        raise ValueError("factors must be a 1-D array of positive finite numbers")
    _check_temperature(temperature)
    top = z.max()
    with np.errstate(over="ignore"):
        # softmax(c z) = softmax(c (z - max z)): shifting first keeps every product <= 0, so a
        # large logit times a large factor cannot overflow to +inf (it may go to -inf: weight 0).
        # A row holding +inf: only its +inf keys compete (the engine softmax's rule).
        shifted = np.where(np.isposinf(z), 0.0, -np.inf) if np.isposinf(top) else z - top
        W = softmax(c[:, None] * shifted[None, :])
    frob, max_abs = _sizes(W, temperature)
    return {
        "factor": c,
        "frobenius": frob,
        "max_abs": max_abs,
        "max_weight": W.max(axis=1),
        "entropy": entropy_bits(W),
    }


# ---- null-space lab ----------------------------------------------------------------------------
def readable_direction(v: ArrayLike) -> Array:
    """``v`` (n,) rescaled so its largest absolute entry is +1 (the first such entry, if tied).

    An orthonormal basis vector like (1, 1, -1)/sqrt(3) reads as (1, 1, -1).
    """
    a = canonical_sign(np.asarray(v, dtype=float))
    peak = float(np.max(np.abs(a))) if a.size else 0.0
    if peak == 0:
        raise ValueError("the zero vector has no direction")
    return a / peak


def _check_map(M: ArrayLike) -> Array:
    A = np.asarray(M, dtype=float)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"M must be a non-empty 2-D matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("M contains a non-finite value")
    return A


def query_map_spaces(M: ArrayLike) -> dict[str, object]:
    """Row space and null space of the query map ``q = M x``, M of shape (m, n).

    Returns ``rank``, ``row_basis`` (n, rank) and ``null_basis`` (n, n - rank) with orthonormal
    columns, and ``null_dir`` / ``row_dir`` (n,): the first basis vector of each, rescaled by
    :func:`readable_direction`, or None when that space is only the origin. Moving the input
    along ``null_dir`` leaves the query unchanged; along ``row_dir`` it changes it by
    ``M @ row_dir`` per unit.
    """
    A = _check_map(M)
    R, N = row_space(A), null_space(A)
    return {
        "rank": int(R.shape[1]),
        "row_basis": R,
        "null_basis": N,
        "row_dir": readable_direction(R[:, 0]) if R.shape[1] else None,
        "null_dir": readable_direction(N[:, 0]) if N.shape[1] else None,
    }


def query_probe(
    M: ArrayLike,
    e: ArrayLike,
    t: float = 0.0,
    s: float = 0.0,
    keys: ArrayLike = DEFAULT_KEYS,
    *,
    scale: bool = True,
) -> dict[str, object]:
    """The input ``x = e + t * null_dir + s * row_dir`` and what the query map makes of it.

    ``M`` (m, n), ``e`` (n,), ``keys`` (k, m). Returns ``x`` (n,), ``query = M x`` (m,),
    ``base_query = M e`` (m,), ``x_row`` / ``x_null`` (n,), the parts of x in the row space
    (what the query sees) and in the null space (what it cannot see), and the attention of the
    query over the keys through :func:`attnsim.engine.attention.direct_trace` (values = keys):
    ``scores`` (k,) raw q . k, ``logits`` (k,) and ``weights`` (k,), plus ``spaces`` from
    :func:`query_map_spaces`.
    """
    A = _check_map(M)
    ev = np.asarray(e, dtype=float)
    K = np.asarray(keys, dtype=float)
    if ev.shape != (A.shape[1],) or not np.isfinite(ev).all():
        raise ValueError(f"e must be {A.shape[1]} finite numbers, got shape {ev.shape}")
    if K.ndim != 2 or K.shape[1] != A.shape[0]:
        raise ValueError(f"keys must have {A.shape[0]} columns, got shape {K.shape}")
    if not (math.isfinite(t) and math.isfinite(s)):
        raise ValueError("t and s must be finite")
    spaces = query_map_spaces(A)
    x = ev.copy()
    if spaces["null_dir"] is not None:
        x = x + t * spaces["null_dir"]  # type: ignore[operator]
    if spaces["row_dir"] is not None:
        x = x + s * spaces["row_dir"]  # type: ignore[operator]
    R: Array = spaces["row_basis"]  # type: ignore[assignment]
    x_row = R @ (R.T @ x)
    q = A @ x
    tr = direct_trace(q[None, :], K, K, scale=scale)
    return {
        "x": x,
        "query": q,
        "base_query": A @ ev,
        "x_row": x_row,
        "x_null": x - x_row,
        "scores": tr.scores[0],
        "logits": tr.logits[0],
        "weights": tr.weights[0],
        "spaces": spaces,
    }


def subspace_scene(M: ArrayLike, e: ArrayLike, x: ArrayLike, extent: float) -> dict[str, Array]:
    """3-D geometry to draw for a map from R^3: every entry an array of world points.

    ``M`` (m, 3), ``e`` and ``x`` (3,), ``extent`` the half-size of the drawn patches and lines.
    Returns ``row_patch`` (4, 3) corners of the row-space plane (rank 2) or (2, 3) ends of the
    row-space line (rank 1) or (0, 3); ``null_line`` (2, 3) ends of the null-space line through
    the origin (null space of dimension 1), a (4, 3) patch (dimension 2) or (0, 3);
    ``level_line``: the inputs with the same query as ``e`` (e + the null space): (2, 3) ends of
    a line, (4, 3) corners of a plane patch, or (0, 3); ``x_row`` (3,), the foot of x in the
    row space.
    """
    A = _check_map(M)
    if A.shape[1] != 3:
        raise ValueError(f"the 3-D view needs a map from R^3, got M of shape {A.shape}")
    R, N = row_space(A), null_space(A)
    ev, xv = np.asarray(e, dtype=float), np.asarray(x, dtype=float)

    def patch(B: Array, centre: Array) -> Array:
        if B.shape[1] >= 3:
            return np.zeros((0, 3))
        if B.shape[1] == 2:
            u, v = B[:, 0] * extent, B[:, 1] * extent
            return np.array([centre + u + v, centre - u + v, centre - u - v, centre + u - v])
        if B.shape[1] == 1:
            u = B[:, 0] * extent
            return np.array([centre - u, centre + u])
        return np.zeros((0, 3))

    origin = np.zeros(3)
    level = patch(N, ev)
    return {
        "row_patch": patch(R, origin),
        "null_line": patch(N, origin),
        "level_line": level,
        "x_row": R @ (R.T @ xv),
    }


def closest_param_on_line(
    point: ArrayLike, direction: ArrayLike, ray_a: ArrayLike, ray_b: ArrayLike
) -> float:
    """Parameter t of the point ``point + t * direction`` nearest to the ray through a and b.

    All arguments have shape (3,). Used to drag a point along a 3-D line with the mouse: the
    ray is the set of world points under the cursor. A line parallel to the ray gives t = 0.
    """
    p, d = np.asarray(point, float), np.asarray(direction, float)
    a = np.asarray(ray_a, float)
    r = np.asarray(ray_b, float) - a
    # Minimise |p + t d - (a + u r)|^2 over t and u (two linear equations).
    dd, rr, dr = float(d @ d), float(r @ r), float(d @ r)
    w = p - a
    den = dd * rr - dr * dr
    if dd == 0 or rr == 0 or abs(den) <= 1e-12 * dd * rr:
        return 0.0
    return (dr * float(r @ w) - rr * float(d @ w)) / den
