"""What the scaling lab shows, computed without Qt.

The entropy-vs-d_k experiment in small steps (so a caller can show progress and stop early) with
exactly the numbers of :func:`attnsim.engine.experiments.entropy_vs_dk`, the softmax Jacobian of
one attention row, and how its size shrinks as the row saturates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import HeadTrace, entropy_bits, softmax
from attnsim.engine.experiments import entropy_vs_dk_steps
from attnsim.engine.jacobian import softmax_jacobian

Array = NDArray[np.float64]

__all__ = [
    "FACTORS",
    "MAX_JACOBIAN_KEYS",
    "ExperimentShown",
    "JacobianData",
    "SaturationCurve",
    "entropy_vs_dk_steps",
    "jacobian_data",
    "jacobian_sizes",
    "log2_range",
    "row_jacobian",
    "saturation_curve",
    "softmax_keys",
]

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


@dataclass(frozen=True, eq=False)
class SaturationCurve:
    """One row's softmax-derivative sizes as its logits are multiplied by each factor (m,)."""

    factor: Array  # (m,)
    frobenius: Array  # (m,), Frobenius norm of the Jacobian
    max_abs: Array  # (m,), its largest absolute entry
    max_weight: Array  # (m,)
    entropy: Array  # (m,), bits


def saturation_curve(logits: ArrayLike, temperature: float, factors: ArrayLike) -> SaturationCurve:
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
        scaled = c[:, None] * z[None, :]
        if np.isposinf(top) or not np.isfinite(scaled.max(axis=1)).all():
            # softmax(c z) = softmax(c (z - max z)): shifting first keeps every product <= 0, so
            # a large logit times a large factor cannot overflow to +inf (it may go to -inf:
            # weight 0). A row holding +inf: only its +inf keys compete (the engine's rule).
            shifted = np.where(np.isposinf(z), 0.0, -np.inf) if np.isposinf(top) else z - top
            scaled = c[:, None] * shifted[None, :]
        # Otherwise the very products the engine's softmax(c z) takes: the same weights, to
        # the last bit (shifting first rounds differently).
        W = softmax(scaled)
    frob, max_abs = _sizes(W, temperature)
    return SaturationCurve(
        factor=c,
        frobenius=frob,
        max_abs=max_abs,
        max_weight=W.max(axis=1),
        entropy=entropy_bits(W),
    )


# ---- what the Jacobian side shows ----------------------------------------------------------------
# The saturation curve: logits multiplied by 2^-2 ... 2^4.
FACTORS = np.exp2(np.linspace(-2.0, 4.0, 121))


@dataclass(frozen=True, eq=False)
class JacobianData:
    """The softmax Jacobian of one attention row and its saturation curve, ready to show.

    ``keys`` (k,) take part in the row's softmax; ``matrix`` is J (k, k) when ``drawn`` (k up
    to :data:`MAX_JACOBIAN_KEYS`), else empty; ``labels`` the drawn keys' tokens. The sizes come
    from closed forms (O(k)) whatever k is. ``unscaled_at`` is log2 of the factor that dropping
    the 1/sqrt(d_k) divisor would multiply the logits by (None when the divisor is off)."""

    query: str  # the row's query label
    keys: NDArray[np.intp]
    matrix: Array
    labels: tuple[str, ...]
    drawn: bool
    frobenius: float
    max_abs: float
    temperature: float
    forbidden: int  # forbidden keys that take part (mask value 0 holds their logits at 0)
    top_weight: float
    curve: SaturationCurve
    unscaled_at: float | None


def jacobian_data(
    trace: HeadTrace, receiving: int, tokens: Sequence[str], query: str = ""
) -> JacobianData:
    """The Jacobian side for row ``receiving`` (labelled ``query``) of a head trace whose keys
    are ``tokens``."""
    i = receiving
    temp = trace.temperature
    keys = softmax_keys(trace.mask[i], trace.mask_value)
    frob, biggest = jacobian_sizes(trace.weights[i][keys], temp)
    drawn = keys.size <= MAX_JACOBIAN_KEYS
    if drawn:
        J = row_jacobian(trace.masked_logits_row(i), trace.weights[i], temp, keys)[1]
    else:
        J = np.zeros((0, 0))
    logits = np.asarray(trace.masked_logits_row(i), dtype=float)[keys]
    return JacobianData(
        query=query,
        keys=keys,
        matrix=J,
        labels=tuple(tokens[k] for k in keys) if drawn else (),
        drawn=drawn,
        frobenius=frob,
        max_abs=biggest,
        temperature=temp,
        forbidden=int(np.count_nonzero(~trace.mask[i][keys])),
        top_weight=float(trace.weights[i].max()),
        curve=saturation_curve(logits, temp, FACTORS),
        unscaled_at=math.log2(math.sqrt(trace.d_k)) if trace.scale else None,
    )


# ---- what the experiment side shows --------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ExperimentShown:
    """The entropy experiment as shown: its settings, and its result (the engine's
    ``entropy_vs_dk`` dict), the error it failed with, or how far a run has got."""

    n_keys: int
    trials: int
    seed: int
    rng: str
    dks: tuple[int, ...]
    result: dict | None = None
    error: str | None = None
    fraction: float = 0.0

    @property
    def max_bits(self) -> float:
        """The entropy of a uniform row over the keys: the plot's ceiling."""
        return math.log2(self.n_keys)

    @property
    def x(self) -> Array:
        """Where each d_k sits on the log2 axis."""
        return np.log2(np.array(self.dks, dtype=float))


def log2_range(*arrays: ArrayLike) -> tuple[int, int]:
    """Whole powers of two that bracket every (positive) value: ``(floor log2 min, ceil log2
    max)``."""
    lo = min(float(np.min(a)) for a in arrays)
    hi = max(float(np.max(a)) for a in arrays)
    return math.floor(math.log2(lo)), math.ceil(math.log2(hi))
