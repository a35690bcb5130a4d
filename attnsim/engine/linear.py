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

from collections.abc import Iterator
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
    "MemoryStates",
    "elu_plus_one",
    "linear_attention_recurrent",
    "linear_attention_sum",
    "linear_memory",
    "linear_vs_softmax",
    "memory_sizes",
    "memory_states",
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


SUM_ROWS = 256  # query rows of the explicit sum computed at a time


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
    fq, fk = _features(Qa, feature_map), _features(Ka, feature_map)
    n = Qa.shape[0]
    out = np.empty((n, Va.shape[1]), dtype=np.result_type(fq, fk, Va))
    den = np.empty(n, dtype=out.dtype)
    # SUM_ROWS queries at a time, each against the keys up to its last one: the (n, n) table of
    # phi(q_i) · phi(k_j) never exists whole (134 MB at 4,096 tokens).
    for a in range(0, n, SUM_ROWS):
        b = min(a + SUM_ROWS, n)
        scores = np.tril(fq[a:b] @ fk[:b].T, k=a)  # keep j <= i
        out[a:b] = scores @ Va[:b]
        den[a:b] = scores.sum(axis=1)
    if normalise:
        _check_denominators(den)
        out /= den[:, None]
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


# The memory states are computed a block of positions at a time, holding at most this many bytes
# of them at once (whatever n and d): at n = 4,096 and d = 1,024 all of them take 32 GiB.
STATE_BLOCK_BYTES = 16 * 2**20


def _state_blocks(fk: Array, V: Array) -> Iterator[tuple[int, Array]]:
    """``(a, states[a : a + m])`` for consecutive blocks of positions, where
    ``S_i = S_{i-1} + v_i phi(k_i)^T``: the same additions in the same order as a loop over
    the positions (so the same numbers, bit for bit), a block of at most
    :data:`STATE_BLOCK_BYTES` at a time. A block is reused for the next one: copy what is kept."""
    n, d_k = fk.shape
    d_v = V.shape[1]
    rows = max(1, STATE_BLOCK_BYTES // max(1, d_v * d_k * 8))
    S = np.zeros((d_v, d_k))
    for a in range(0, n, rows):
        block = V[a : a + rows, :, None] * fk[a : a + rows, None, :]
        block[0] = S + block[0]
        np.add.accumulate(block, axis=0, out=block)
        S = block[-1].copy()
        yield a, block


@dataclass(frozen=True, eq=False)
class LinearMemoryTrace:
    """Causal linear attention token by token.

    ``S`` (n, d_v, d_k): the memory after each token, ``S_i = S_{i-1} + v_i phi(k_i)^T``
    ((0, d_v, d_k) when made with ``keep_states=False``);
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
        d_v, d_k = self.numerators.shape[1], self.z.shape[1]
        return d_v * d_k + (d_k if self.normalised else 0)


def linear_memory(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    feature_map: str | None = None,
    normalise: bool = False,
    keep_states: bool = True,
) -> LinearMemoryTrace:
    """Causal linear attention as a running memory, one token at a time (see
    :class:`LinearMemoryTrace`); equal to :func:`linear_attention_sum` with the same options.

    Q (n, d_k), K (n, d_k), V (n, d_v). ``normalise`` needs every ``z_i · phi(q_i) > 0``
    (guaranteed by ``'elu+1'``); otherwise ValueError. ``keep_states=False`` keeps no S_i
    (n d_v d_k numbers; :class:`MemoryStates` reads any of them back); the other arrays are
    the same.
    """
    Qa, Ka, Va = _inputs(Q, K, V)
    fq, fk = _features(Qa, feature_map), _features(Ka, feature_map)
    n, d_k = fk.shape
    d_v = Va.shape[1]
    z = np.zeros(d_k)
    states = np.empty((n if keep_states else 0, d_v, d_k))
    zs = np.empty((n, d_k))
    num = np.empty((n, d_v))
    den = np.empty(n)
    for i in range(n):
        z = z + fk[i]
        zs[i] = z
        den[i] = z @ fq[i]
    for a, block in _state_blocks(fk, Va):
        for j, S in enumerate(block):
            num[a + j] = S @ fq[a + j]
        if keep_states:
            states[a : a + len(block)] = block
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


# The states MemoryStates keeps, at most: every one of them up to this size, else one in every
# ``stride`` positions (a step replays at most stride - 1 additions from the one before it).
# The states kept for stepping: 64 MiB (eight 1,024 x 1,024 states at 4,096 tokens, one in
# every 512 positions) keeps the whole app within its memory goal; a step replays at most
# stride - 1 additions in place.
KEPT_STATE_BYTES = 64 * 2**20


@dataclass(frozen=True, eq=False)
class MemoryStates:
    """Every memory state ``S_i`` of :func:`linear_memory` on demand, without holding them all.

    ``kept`` (m, d_v, d_k) the states at positions 0, ``stride``, 2 ``stride``, … (every
    position when they fit in :data:`KEPT_STATE_BYTES`); :meth:`state` replays the additions
    from the last kept state, so ``state(i)`` is ``linear_memory(...).S[i]`` bit for bit.
    ``abs_max`` is the largest finite |entry| of every state (0 when there is none).
    """

    stride: int
    kept: Array
    fk: Array
    V: Array
    abs_max: float

    @property
    def n(self) -> int:
        return int(self.fk.shape[0])

    def state(self, i: int) -> Array:
        """``S_i`` (d_v, d_k), 0-based; a new array."""
        if not 0 <= i < self.n:
            raise IndexError(f"position {i} is outside 0 .. {self.n - 1}")
        k = i // self.stride
        S = self.kept[k].copy()
        term = np.empty_like(S)
        for j in range(k * self.stride + 1, i + 1):
            np.multiply.outer(self.V[j], self.fk[j], out=term)
            S += term  # the same additions as S = S + v phi(k)^T, without a new array each
        return S


def memory_states(K: ArrayLike, V: ArrayLike, *, feature_map: str | None = None) -> MemoryStates:
    """The :class:`MemoryStates` of causal linear attention on K (n, d_k), V (n, d_v) with
    ``feature_map``: one pass over the positions, a block of them at a time."""
    Ka, Va = _matrix(K, "K"), _matrix(V, "V")
    if Va.shape[0] != Ka.shape[0]:
        raise ValueError(f"V has {Va.shape[0]} rows, K has {Ka.shape[0]}: one value per key")
    fk = _features(Ka, feature_map)
    n, d_k = fk.shape
    d_v = Va.shape[1]
    per_state = max(1, d_v * d_k * 8)
    stride = max(1, -(-n * per_state // KEPT_STATE_BYTES))
    kept = np.empty((-(-n // stride), d_v, d_k))
    top = 0.0
    for a, block in _state_blocks(fk, Va):
        first = -(-a // stride) * stride  # the first kept position in this block
        picks = np.arange(first, a + len(block), stride)
        kept[picks // stride] = block[picks - a]
        size = np.abs(block)
        biggest = float(size.max(initial=0.0))
        if not np.isfinite(biggest):
            biggest = float(size[np.isfinite(size)].max(initial=0.0))
        top = max(top, biggest)
    return MemoryStates(stride, kept, fk, Va, top)


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
    lin = linear_memory(Q, K, V, feature_map=feature_map, normalise=True, keep_states=False).output
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
