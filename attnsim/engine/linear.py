"""Causal linear attention: softmax-free attention as a sum and as a running memory.

It sits beside :mod:`attnsim.engine.attention` (not in geometry) because it is an attention
variant; the two forms are kept so a reader can see that the sum equals the recurrence.

Without softmax, ``y_i = sum_{j<=i} (phi(q_i) · phi(k_j)) v_j = S_i phi(q_i)`` with the memory
``S_i = S_{i-1} + v_i phi(k_i)^T``: a fixed-size matrix updated once per token, where softmax
attention must keep every key and value (``exp(q · k)`` does not factor into a function of q
times a function of k, so its sum cannot be folded into one matrix). The normalised form divides
by ``z_i · phi(q_i)`` with ``z_i = sum_{j<=i} phi(k_j)``, which needs a positive feature map
such as ``elu(x) + 1`` so that every weight is positive and the weights of a row sum to one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import attention, causal_mask

# one validation of input arrays for the whole engine
from .geometry import _matrix

Array = NDArray[np.floating]

__all__ = [
    "FEATURE_MAPS",
    "LinearMemoryTrace",
    "LinearVsSoftmax",
    "MemorySizes",
    "elu_plus_one",
    "linear_attention_recurrent",
    "linear_attention_sum",
    "linear_memory",
    "linear_vs_softmax",
    "memory_sizes",
]

# None: the raw vectors (phi = identity), as in the unnormalised rearrangement
FEATURE_MAPS = (None, "elu+1")


def elu_plus_one(x: ArrayLike) -> Array:
    """``elu(x) + 1``: ``x + 1`` for ``x > 0``, ``exp(x)`` otherwise. Positive everywhere,
    continuous with a continuous slope at 0; same shape as ``x``."""
    a = np.asarray(x, dtype=float)
    return np.where(a > 0, a + 1.0, np.exp(np.minimum(a, 0.0)))


def _features(M: Array, feature_map: str | None) -> Array:
    if feature_map is None:
        return M
    if feature_map == "elu+1":
        return elu_plus_one(M)
    raise ValueError(f"feature_map must be None or 'elu+1', got {feature_map!r}")


def _inputs(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[Array, Array, Array]:
    Qa, Ka, Va = _matrix(Q, "Q"), _matrix(K, "K"), _matrix(V, "V")
    if Qa.shape != Ka.shape:
        raise ValueError(
            f"Q {Qa.shape} and K {Ka.shape} must have the same shape (n, d_k) in causal "
            "self-attention"
        )
    if Va.shape[0] != Ka.shape[0]:
        raise ValueError(f"V has {Va.shape[0]} rows, K has {Ka.shape[0]}: one value per key")
    return Qa, Ka, Va


def _check_denominators(den: Array) -> None:
    bad = np.flatnonzero(~(den > 0))
    if bad.size:
        raise ValueError(
            f"the normaliser z_i · phi(q_i) is {den[bad[0]]:.3g} at position {bad[0]}, not "
            "positive: normalised linear attention needs a positive feature map ('elu+1')"
        )


def linear_attention_sum(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    feature_map: str | None = None,
    normalise: bool = False,
) -> Array:
    """Causal linear attention as an explicit sum: ``y_i = sum_{j<=i} (phi(q_i) · phi(k_j)) v_j``,
    divided by ``sum_{j<=i} phi(q_i) · phi(k_j)`` when ``normalise``.

    Q (n, d_k), K (n, d_k), V (n, d_v) -> (n, d_v). ``feature_map``: None (phi = identity) or
    ``'elu+1'``. A non-positive normaliser raises ValueError.
    """
    Qa, Ka, Va = _inputs(Q, K, V)
    scores = np.tril(_features(Qa, feature_map) @ _features(Ka, feature_map).T)
    out = scores @ Va
    if normalise:
        den = scores.sum(axis=1)
        _check_denominators(den)
        out = out / den[:, None]
    return out


def linear_attention_recurrent(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[Array, Array]:
    """The same as :func:`linear_attention_sum`, as a running memory read by each query.

    ``S_i = S_{i-1} + v_i k_i^T`` (d_v, d_k), ``y_i = S_i q_i``.
    Returns ``(Y (n, d_v), S (n, d_v, d_k))``, the outputs and every memory state.
    """
    Qa, Ka, Va = _matrix(Q, "Q"), _matrix(K, "K"), _matrix(V, "V")
    n = Qa.shape[0]
    S = np.zeros((Va.shape[1], Ka.shape[1]))
    Y = np.empty((n, Va.shape[1]))
    states = np.empty((n, Va.shape[1], Ka.shape[1]))
    for i in range(n):
        S = S + np.outer(Va[i], Ka[i])
        Y[i] = S @ Qa[i]
        states[i] = S
    return Y, states


@dataclass(frozen=True, eq=False)
class LinearMemoryTrace:
    """Causal linear attention token by token.

    ``S`` (n, d_v, d_k): the memory after each token, ``S_i = S_{i-1} + v_i phi(k_i)^T``;
    ``z`` (n, d_k): the normaliser ``z_i = z_{i-1} + phi(k_i)`` (kept even when unused);
    ``numerators`` (n, d_v) ``S_i phi(q_i)``; ``denominators`` (n,) ``z_i · phi(q_i)``;
    ``output`` (n, d_v): the numerators, divided by the denominators when ``normalised``.
    """

    feature_map: str | None
    normalised: bool
    S: Array
    z: Array
    numerators: Array
    denominators: Array
    output: Array

    @property
    def memory_numbers(self) -> int:
        """Numbers held between tokens: ``d_v * d_k`` for S, plus ``d_k`` for z if normalised."""
        _, d_v, d_k = self.S.shape
        return d_v * d_k + (d_k if self.normalised else 0)


def linear_memory(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    feature_map: str | None = None,
    normalise: bool = False,
) -> LinearMemoryTrace:
    """Causal linear attention as a running memory, one token at a time (see
    :class:`LinearMemoryTrace`); equal to :func:`linear_attention_sum` with the same options.

    Q (n, d_k), K (n, d_k), V (n, d_v). ``normalise`` needs every ``z_i · phi(q_i) > 0``
    (guaranteed by ``'elu+1'``); otherwise ValueError.
    """
    Qa, Ka, Va = _inputs(Q, K, V)
    fq, fk = _features(Qa, feature_map), _features(Ka, feature_map)
    n, d_k = fk.shape
    d_v = Va.shape[1]
    S = np.zeros((d_v, d_k))
    z = np.zeros(d_k)
    states = np.empty((n, d_v, d_k))
    zs = np.empty((n, d_k))
    num = np.empty((n, d_v))
    den = np.empty(n)
    for i in range(n):
        S = S + np.outer(Va[i], fk[i])
        z = z + fk[i]
        states[i], zs[i] = S, z
        num[i] = S @ fq[i]
        den[i] = z @ fq[i]
    if normalise:
        _check_denominators(den)
    return LinearMemoryTrace(
        feature_map=feature_map,
        normalised=bool(normalise),
        S=states,
        z=zs,
        numerators=num,
        denominators=den,
        output=num / den[:, None] if normalise else num.copy(),
    )


@dataclass(frozen=True, eq=False)
class LinearVsSoftmax:
    """Normalised causal linear attention beside causal softmax attention on the same inputs.

    ``linear``, ``softmax``, ``difference`` (= linear - softmax): (n, d_v);
    ``max_abs_difference`` (n,): the largest |difference| at each position.
    """

    feature_map: str
    linear: Array
    softmax: Array
    difference: Array
    max_abs_difference: Array


def linear_vs_softmax(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    feature_map: str = "elu+1",
    scale: bool = True,
    temperature: float = 1.0,
) -> LinearVsSoftmax:
    """Both causal attentions on Q (n, d_k), K (n, d_k), V (n, d_v): the linear one normalised
    with ``feature_map``, the softmax one as :func:`~attnsim.engine.attention.attention` with a
    causal mask (and ``scale`` and ``temperature``, which only the softmax has). They agree at
    position 0 (one key: both return v_0) and wherever every key so far is the same vector (both
    weigh the keys equally), and in general differ: ``phi(q) · phi(k)`` is not proportional to
    ``exp(q · k / sqrt(d_k))``."""
    if feature_map is None:
        raise ValueError("feature_map must be 'elu+1': the normalised form needs positive weights")
    lin = linear_memory(Q, K, V, feature_map=feature_map, normalise=True).output
    Qa, Ka, Va = _inputs(Q, K, V)
    soft, _ = attention(
        Qa, Ka, Va, mask=causal_mask(Qa.shape[0]), scale=scale, temperature=temperature
    )
    diff = lin - soft
    return LinearVsSoftmax(
        feature_map=feature_map,
        linear=lin,
        softmax=soft,
        difference=diff,
        max_abs_difference=np.abs(diff).max(axis=1) if diff.size else np.zeros(diff.shape[0]),
    )


@dataclass(frozen=True, eq=False)
class MemorySizes:
    """What causal decoding keeps between tokens, as the sequence grows.

    ``n`` (m,) sequence lengths; ``linear_numbers`` (m,) the memory S (d_v x d_k) plus z (d_k)
    when normalised, the same at every n; ``kv_cache_numbers`` (m,) ``n (d_k + d_v)``;
    ``crossover`` the smallest n at which the KV cache holds more numbers than the memory.
    """

    d_k: int
    d_v: int
    normalised: bool
    n: NDArray[np.int64]
    linear_numbers: NDArray[np.int64]
    kv_cache_numbers: NDArray[np.int64]
    crossover: int


def memory_sizes(n: ArrayLike, d_k: int, d_v: int, *, normalised: bool = True) -> MemorySizes:
    """Numbers held by a linear-attention memory vs a KV cache at each length in ``n`` (an int
    or a 1-D array of non-negative ints); see :class:`MemorySizes`. Multiply by the dtype's
    itemsize for bytes."""
    for name, val in (("d_k", d_k), ("d_v", d_v)):
        if isinstance(val, bool) or not isinstance(val, int | np.integer) or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    arr = np.atleast_1d(np.asarray(n))
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any():
        raise ValueError(f"n must be a non-negative integer or a 1-D array of them, got {n!r}")
    arr = arr.astype(np.int64)
    linear = d_v * d_k + (d_k if normalised else 0)
    per_token = d_k + d_v
    return MemorySizes(
        d_k=int(d_k),
        d_v=int(d_v),
        normalised=bool(normalised),
        n=arr,
        linear_numbers=np.full(arr.shape, linear, dtype=np.int64),
        kv_cache_numbers=arr * per_token,
        crossover=linear // per_token + 1,
    )
