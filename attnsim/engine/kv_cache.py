"""Token-by-token generation with a key/value cache.

Under causal attention the keys and values of earlier tokens never change, so a decoder stores
them and, at each new token, appends one key and one value per key/value head and reads the
cache with the new query: one step costs O(n) (the read), not the O(n^2) of recomputing the
whole score matrix. Each step's output is the matching row of full causal attention
(:func:`attnsim.engine.variants.grouped_query_attention` with the same mask and bias); the
tests hold it to that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .attention import _as_float, _require_finite
from .variants import _count

Array = NDArray[np.floating]

__all__ = ["KVCache", "KVCacheRun", "KVCacheStep", "kv_cache_generate"]


def _read_only(a: Array) -> Array:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class KVCacheStep:
    """One generation step: the token at ``position`` was appended, then its query read the cache.

    ``key_positions`` (m,) are the positions of the cached entries this query may read (all of
    ``0 .. position`` without a window; the sinks and the last ``window`` tokens with one), and
    ``keys`` (g, m, d_k) / ``values`` (g, m, d_v) are those entries, read-only. ``query`` (h, d_k)
    is the new token's query, ``weights`` (h, m) its softmax over the entries and ``output``
    (h, d_v) the mixture of values.
    """

    position: int
    key_positions: NDArray[np.intp]
    keys: Array
    values: Array
    query: Array
    weights: Array
    output: Array

    @property
    def tokens(self) -> int:
        """Tokens appended so far, this one included."""
        return self.position + 1

    @property
    def resident(self) -> int:
        """Cached entries per key/value head that this step reads: what a cache that evicts
        tokens outside the window (and not sinks) would hold."""
        return int(self.key_positions.shape[0])

    @property
    def cache_bytes(self) -> int:
        """Bytes of the entries read: ``g * resident * (d_k + d_v) * itemsize``."""
        return int(self.keys.nbytes + self.values.nbytes)


class KVCache:
    """An append-only key/value cache of one attention layer, read by one query per step.

    Parameters
    ----------
    h, g : int
        Query heads and key/value heads (h a multiple of g; query head j reads key/value head
        ``j // (h / g)``, as in :func:`attnsim.engine.variants.grouped_query_attention`).
    d_k, d_v : int
        Widths of keys (and queries) and of values; ``d_v`` defaults to ``d_k``.
    window, sinks : optional
        The mask of :func:`attnsim.engine.variants.sliding_window_mask`: the query at position
        t reads keys ``j <= t`` with ``t - j < window`` or ``j < sinks``.
    alibi_slopes : (h,), optional
        Adds ``-slope * (t - j)`` to each logit (ALiBi).
    scale : bool
        Divide ``q · k`` by ``sqrt(d_k)``.
    dtype : the dtype of the stored keys and values and of the arithmetic.

    The buffers keep every token and grow by doubling; a row once written is never written
    again, so the read-only arrays held by earlier steps keep showing what those steps read.
    """

    def __init__(
        self,
        h: int,
        g: int,
        d_k: int,
        d_v: int | None = None,
        *,
        window: int | None = None,
        sinks: int = 0,
        alibi_slopes: ArrayLike | None = None,
        scale: bool = True,
        dtype: DTypeLike = np.float64,
        capacity: int = 64,
    ) -> None:
        self.h = _count(h, "h", minimum=1)
        self.g = _count(g, "g", minimum=1)
        if self.h % self.g:
            raise ValueError(f"g must divide h = {self.h}, got g={g!r}")
        self.d_k = _count(d_k, "d_k", minimum=1)
        self.d_v = _count(d_k if d_v is None else d_v, "d_v", minimum=1)
        self.window = None if window is None else _count(window, "window", minimum=1)
        self.sinks = _count(sinks, "sinks", minimum=0)
        self.dtype = np.dtype(dtype)
        if not np.issubdtype(self.dtype, np.floating):
            raise ValueError(f"dtype must be a floating type, got {self.dtype}")
        self.slopes: Array | None = None
        if alibi_slopes is not None:
            m = _as_float(alibi_slopes, "alibi_slopes")
            if m.shape != (self.h,):
                raise ValueError(f"alibi_slopes must have shape ({self.h},), got {m.shape}")
            _require_finite(m, "alibi_slopes")
            self.slopes = m.astype(self.dtype).reshape(self.g, self.h // self.g, 1)
        self.scale = bool(scale)
        self._divisor = math.sqrt(self.d_k) if self.scale else 1.0
        cap = _count(capacity, "capacity", minimum=1)
        self._k = np.empty((self.g, cap, self.d_k), self.dtype)
        self._v = np.empty((self.g, cap, self.d_v), self.dtype)
        self._length = 0

    @property
    def length(self) -> int:
        """Tokens appended so far."""
        return self._length

    @property
    def keys(self) -> Array:
        """Every cached key, (g, length, d_k), read-only."""
        return _read_only(self._k[:, : self._length])

    @property
    def values(self) -> Array:
        """Every cached value, (g, length, d_v), read-only."""
        return _read_only(self._v[:, : self._length])

    def _row(self, x: ArrayLike, name: str, heads: int, width: int) -> Array:
        a = np.asarray(x)
        # dtype.kind rather than np.issubdtype: this runs three times per generated token
        if a.dtype.kind not in "fiu":
            raise ValueError(f"{name} must be a numeric array, got dtype {a.dtype}")
        if a.shape != (heads, width) and not (heads == 1 and a.shape == (width,)):
            raise ValueError(f"{name} must have shape ({heads}, {width}), got {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{name} contains a non-finite value")
        return a.astype(self.dtype, copy=False).reshape(heads, width)

    def _grow(self) -> None:
        # New buffers, not a resize in place: earlier steps hold views of the old ones.
        cap = 2 * self._k.shape[1]
        k = np.empty((self.g, cap, self.d_k), self.dtype)
        v = np.empty((self.g, cap, self.d_v), self.dtype)
        k[:, : self._length] = self._k[:, : self._length]
        v[:, : self._length] = self._v[:, : self._length]
        self._k, self._v = k, v

    def _read_span(self, t: int) -> tuple[NDArray[np.intp], Array, Array]:
        lo = 0 if self.window is None else max(0, t - self.window + 1)
        s = min(self.sinks, lo)
        if s == 0:
            positions = np.arange(lo, t + 1)
            return positions, self._k[:, lo : t + 1], self._v[:, lo : t + 1]
        positions = np.concatenate([np.arange(s), np.arange(lo, t + 1)])
        keys = np.concatenate([self._k[:, :s], self._k[:, lo : t + 1]], axis=1)
        values = np.concatenate([self._v[:, :s], self._v[:, lo : t + 1]], axis=1)
        return positions, keys, values

    def step(self, q: ArrayLike, k: ArrayLike, v: ArrayLike) -> KVCacheStep:
        """Append the new token's key ``k`` (g, d_k) and value ``v`` (g, d_v), then read the
        cache with its query ``q`` (h, d_k). With h = g = 1 the head axis may be omitted."""
        return self._advance(
            self._row(q, "q", self.h, self.d_k),
            self._row(k, "k", self.g, self.d_k),
            self._row(v, "v", self.g, self.d_v),
        )

    def _advance(self, qa: Array, ka: Array, va: Array) -> KVCacheStep:
        """:meth:`step` on arrays already checked: (h, d_k), (g, d_k), (g, d_v), finite."""
        if self._length == self._k.shape[1]:
            self._grow()
        t = self._length
        self._k[:, t] = ka
        self._v[:, t] = va
        self._length = t + 1
        positions, keys, values = self._read_span(t)
        # the same order of operations as the full computation: scale q, then q k^T, then bias
        qg = (qa / self._divisor if self._divisor != 1.0 else qa).reshape(self.g, -1, self.d_k)
        logits = np.matmul(qg, np.swapaxes(keys, -1, -2))  # (g, h/g, m)
        if self.slopes is not None:
            logits -= self.slopes * (t - positions).astype(self.dtype)
        logits -= logits.max(axis=-1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=-1, keepdims=True)
        out = np.matmul(logits, values)  # (g, h/g, d_v)
        return KVCacheStep(
            position=t,
            key_positions=_read_only(positions),
            keys=_read_only(keys),
            values=_read_only(values),
            query=_read_only(qa.copy()),
            weights=_read_only(logits.reshape(self.h, -1)),
            output=_read_only(out.reshape(self.h, self.d_v)),
        )


@dataclass(frozen=True, eq=False)
class KVCacheRun:
    """Every step of :func:`kv_cache_generate`.

    ``output`` has the layout of the queries given: (n, d_v) for one head, (h, n, d_v) for a
    stack. ``steps[t]`` is the :class:`KVCacheStep` of token t.
    """

    output: Array
    steps: tuple[KVCacheStep, ...]

    @cached_property
    def weights(self) -> Array:
        """The steps' weights laid out as a full matrix, (h, n, n), zero where a step did not
        read: comparable with the weights of full causal attention."""
        n = len(self.steps)
        h = self.steps[0].weights.shape[0] if self.steps else 1
        full = np.zeros((h, n, n), dtype=self.output.dtype)
        for st in self.steps:
            full[:, st.position, st.key_positions] = st.weights
        return full

    @property
    def peak_cache_bytes(self) -> int:
        """The largest cache any step read (bytes), see :attr:`KVCacheStep.cache_bytes`."""
        return max((st.cache_bytes for st in self.steps), default=0)


def kv_cache_generate(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    window: int | None = None,
    sinks: int = 0,
    alibi_slopes: ArrayLike | None = None,
    scale: bool = True,
) -> KVCacheRun:
    """Causal self-attention computed one token at a time through a :class:`KVCache`.

    Parameters
    ----------
    q : (n, d_k) or (h, n, d_k)
        The query of each token (apply RoPE before, as a model does per token).
    k : (n, d_k) or (g, n, d_k)
    v : (n, d_v) or (g, n, d_v)
        2-D arrays are one head; 3-D ones stack h query heads over g key/value heads.
    window, sinks, alibi_slopes, scale : as in :class:`KVCache`.

    Returns
    -------
    KVCacheRun whose ``output`` equals, up to rounding, ``grouped_query_attention(q, k, v,
    mask=sliding_window_mask(n, window=window, sinks=sinks), bias=alibi_bias(slopes, n))``.
    """
    qa, ka, va = _as_float(q, "q"), _as_float(k, "k"), _as_float(v, "v")
    if not (qa.ndim == ka.ndim == va.ndim and qa.ndim in (2, 3)):
        raise ValueError(
            "q, k and v must all be (n, d) or all (heads, n, d), got shapes "
            f"{qa.shape}, {ka.shape}, {va.shape}"
        )
    single = qa.ndim == 2
    if single:
        qa, ka, va = qa[None], ka[None], va[None]
    n = qa.shape[1]
    if ka.shape[1] != n or va.shape[1] != n:
        raise ValueError(
            f"q, k and v must hold the same {n} tokens, got {ka.shape[1]} keys and "
            f"{va.shape[1]} values"
        )
    if qa.shape[2] != ka.shape[2]:
        raise ValueError(f"d_k of q ({qa.shape[2]}) and k ({ka.shape[2]}) differ")
    for name, arr in (("q", qa), ("k", ka), ("v", va)):
        _require_finite(arr, name)
    if qa.shape[0] % ka.shape[0] or va.shape[0] != ka.shape[0]:
        raise ValueError(
            f"the {qa.shape[0]} query heads must be a multiple of the {ka.shape[0]} key heads, "
            f"and v needs {ka.shape[0]} heads too (got {va.shape[0]})"
        )
    cache = KVCache(
        qa.shape[0],
        ka.shape[0],
        qa.shape[2],
        va.shape[2],
        window=window,
        sinks=sinks,
        alibi_slopes=alibi_slopes,
        scale=scale,
        dtype=np.result_type(qa, ka, va),
        capacity=max(n, 1),
    )
    dtype = cache.dtype
    qa, ka, va = (a.astype(dtype, copy=False) for a in (qa, ka, va))
    steps = tuple(cache._advance(qa[:, t], ka[:, t], va[:, t]) for t in range(n))
    if steps:
        out = np.stack([st.output for st in steps], axis=1)
    else:
        out = np.zeros((qa.shape[0], 0, va.shape[2]), dtype=cache.dtype)
    return KVCacheRun(output=out[0] if single else out, steps=steps)
