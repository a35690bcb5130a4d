"""Long-context route stability: one query's route as k distractors join its context.

A longer context is a larger contest. Inserting keys never changes the raw score of the key a
query retrieves, yet the weight on it falls, because the softmax shares one unit of weight among
every candidate. What the output does depends on what the inserted keys carry: an exact copy of
the fact (same key, same value) splits the weight but delivers the same payload; a later fact
with the same key and another value pulls the output towards its value; a key that only happens
to score high (a long key, or a noisy near-copy of the right one) delivers nothing useful.

:func:`distractor_sweep` computes the route for k = 0 .. K inserted rows at once (row i joins at
k = i + 1, so the sweep is nested); the builders below make the rows of each kind. Everything is
float64 and stable for any logits: each k has its own running maximum, like an online softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import softmax

Array = NDArray[np.float64]

__all__ = [
    "KINDS",
    "DistractorSweep",
    "distractor_sweep",
    "distractor_sweeps",
    "duplicated_facts",
    "noisy_copies",
    "repeated_rows",
    "superseded_facts",
    "sweep_reference_diff",
]

#: The four kinds of inserted distractors, in the order the lab lists them.
KINDS = ("noisy", "high-norm", "duplicate", "superseded")


def _matrix(x: ArrayLike, name: str) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a matrix, got shape {a.shape}")
    return a


def _count(count: int) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise ValueError(f"the number of distractors must be a whole number >= 0, got {count!r}")
    return int(count)


def repeated_rows(row: ArrayLike, count: int) -> Array:
    """``count`` copies of ``row`` (d,), shape (count, d)."""
    r = np.asarray(row, dtype=np.float64).reshape(-1)
    return np.tile(r, (_count(count), 1))


def noisy_copies(key: ArrayLike, count: int, *, noise: float, seed: int) -> Array:
    """``count`` copies of ``key`` (d,), each plus Gaussian noise of standard deviation
    ``noise · |key| / sqrt(d)`` per coordinate (so the noise vector's expected squared length is
    ``noise² |key|²``), shape (count, d).

    Drawn from ``numpy.random.default_rng(seed)``, row by row: the first k rows are the same for
    every count >= k, so a sweep over k inserts the same copies in the same order.
    """
    k = np.asarray(key, dtype=np.float64).reshape(-1)
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"the noise must be a finite number >= 0, got {noise!r}")
    n = _count(count)
    d = k.shape[0]
    sigma = float(noise) * float(np.linalg.norm(k)) / np.sqrt(d) if d else 0.0
    z = np.random.default_rng(int(seed)).standard_normal((n, d))
    return k[None, :] + sigma * z


def duplicated_facts(key: ArrayLike, value: ArrayLike, count: int) -> tuple[Array, Array]:
    """The fact (``key``, ``value``) repeated ``count`` times: keys (count, d_k), values
    (count, d_v)."""
    return repeated_rows(key, count), repeated_rows(value, count)


def superseded_facts(key: ArrayLike, new_value: ArrayLike, count: int) -> tuple[Array, Array]:
    """``count`` later facts that match the query exactly as well as the original (the same key)
    but carry ``new_value``: keys (count, d_k), values (count, d_v)."""
    return repeated_rows(key, count), repeated_rows(new_value, count)


@dataclass(frozen=True, eq=False)
class DistractorSweep:
    """One query's route with k = 0 .. K distractors inserted (K = ``k_max``).

    ``best`` is the original key that carries the most weight at k = 0 (-1 when the query may
    read no key). Per k, shape (K + 1,): ``best_weight`` the weight on that original key,
    ``distractor_weight`` the total on the inserted rows, ``shift`` = ||o_k − o_0||;
    ``outputs`` (K + 1, d_v). ``logits`` (n,) the original keys' logits (-inf where masked),
    ``extra_logits`` (K,) the inserted rows'. :meth:`weights_at` gives the whole route at one k.
    """

    best: int
    logits: Array
    extra_logits: Array
    best_weight: Array
    distractor_weight: Array
    outputs: Array
    shift: Array
    _max: Array
    _z: Array

    @property
    def k_max(self) -> int:
        return int(self.extra_logits.shape[0])

    def weights_at(self, k: int) -> Array:
        """The route at k distractors: weights (n + k,), the originals first (zeros when the
        query reads nothing at all)."""
        if not 0 <= k <= self.k_max:
            raise ValueError(f"k must lie between 0 and {self.k_max}, got {k}")
        logits = np.concatenate([self.logits, self.extra_logits[:k]])
        z, m = self._z[k], self._max[k]
        if z == 0.0:
            return np.zeros_like(logits)
        return np.exp(logits - m) / z


def distractor_sweep(
    q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    extra_K: ArrayLike,
    extra_V: ArrayLike,
    *,
    divisor: float = 1.0,
    allowed: ArrayLike | None = None,
) -> DistractorSweep:
    """The route of query ``q`` (d_k,) over keys ``K`` (n, d_k) with values ``V`` (n, d_v), plus
    the first k rows of ``extra_K`` (K, d_k) / ``extra_V`` (K, d_v), for every k = 0 .. K.

    Logits are ``q · k / divisor``; ``allowed`` (n,) bool marks the original keys the query may
    read (None: all); inserted rows are always readable. ValueError when a logit is not finite
    (the scores overflowed) or the shapes disagree.
    """
    return distractor_sweeps(q, K, V, [(extra_K, extra_V)], divisor=divisor, allowed=allowed)[0]


def distractor_sweeps(
    q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    extras: list[tuple[ArrayLike, ArrayLike]],
    *,
    divisor: float = 1.0,
    allowed: ArrayLike | None = None,
) -> tuple[DistractorSweep, ...]:
    """:func:`distractor_sweep` for each (``extra_K``, ``extra_V``) of ``extras`` on the same
    query, keys and values: what they share is computed once, and when every kind inserts the
    same number of rows the exponentials, sums and norms of all of them are one call each. Each
    sweep is the one :func:`distractor_sweep` gives, to the bit (the same operations on the
    same numbers: each kind's products stay their own calls)."""
    qa = np.asarray(q, dtype=np.float64).reshape(-1)
    Ka, Va = _matrix(K, "K"), _matrix(V, "V")
    n, d_k = Ka.shape
    if qa.shape[0] != d_k:
        raise ValueError(f"q, K and the distractor keys must share d_k = {d_k}")
    if Va.shape[0] != n:
        raise ValueError("each key needs one value, all of the same width")
    if not divisor > 0 or not np.isfinite(divisor):
        raise ValueError(f"the divisor must be a positive number, got {divisor!r}")
    ok = np.ones(n, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        raw = Ka @ qa / divisor
    rows, extra_logits = [], []
    for extra_K, extra_V in extras:
        Ea = _matrix(extra_K, "the distractor keys")
        Ev = _matrix(extra_V, "the distractor values")
        if Ea.shape[1] != d_k:
            raise ValueError(f"q, K and the distractor keys must share d_k = {d_k}")
        if Ev.shape[0] != Ea.shape[0] or Ev.shape[1] != Va.shape[1]:
            raise ValueError("each key needs one value, all of the same width")
        with np.errstate(over="ignore", invalid="ignore"):
            extra = Ea @ qa / divisor
        if not (np.all(np.isfinite(raw[ok])) and np.all(np.isfinite(extra))):
            raise ValueError("a logit q · k / divisor is not finite: the scores overflow float64")
        rows.append(Ev)
        extra_logits.append(extra)
    logits = np.where(ok, raw, -np.inf)
    first = np.max(logits, initial=-np.inf)
    best = int(np.argmax(logits)) if np.isfinite(first) else -1
    sizes = {e.shape[0] for e in extra_logits}
    if len(sizes) > 1:  # kinds of different lengths: one at a time
        return tuple(
            _sweeps(logits, first, best, Va, e[None], [ev])[0]
            for e, ev in zip(extra_logits, rows, strict=True)
        )
    k_max = sizes.pop() if sizes else 0
    extra = np.stack(extra_logits) if extra_logits else np.zeros((0, k_max))
    return _sweeps(logits, first, best, Va, extra, rows)


def _sweeps(
    logits: Array, first: float, best: int, Va: Array, extra: Array, values: list[Array]
) -> tuple[DistractorSweep, ...]:
    """The sweeps of ``extra`` (kinds, K) inserted logits with their ``values`` (K, d_v) each."""
    n_kinds, k_max = extra.shape
    # The maximum over the original keys and the first k inserted ones, for every k.
    m = np.maximum.accumulate(np.concatenate([np.full((n_kinds, 1), first), extra], axis=1), axis=1)
    live = np.isfinite(m)
    shift_by = np.where(live, m, 0.0)  # (kinds, K + 1)
    a = np.exp(logits[None, None, :] - shift_by[:, :, None])  # (kinds, K + 1, n)
    joined = np.tri(k_max + 1, k_max, -1, dtype=bool)  # row k holds inserted rows 0 .. k-1
    # rows not yet inserted may lie far above the running maximum: never exponentiated
    b = np.exp(np.where(joined, extra[:, None, :] - shift_by[:, :, None], -np.inf))
    b_sums = b.sum(axis=-1)
    z = a.sum(axis=-1) + b_sums
    safe = np.where(z > 0, z, 1.0)
    outputs = np.stack([
        (a[i] @ Va + b[i] @ values[i]) / safe[i][:, None] for i in range(n_kinds)
    ]) if n_kinds else np.zeros((0, k_max + 1, Va.shape[1]))  # fmt: skip
    shift = np.linalg.norm(outputs - outputs[:, :1], axis=-1)
    best_weight = a[:, :, best] / safe if best >= 0 else np.zeros((n_kinds, k_max + 1))
    return tuple(
        DistractorSweep(
            best=best,
            logits=logits,
            extra_logits=extra[i],
            best_weight=best_weight[i],
            distractor_weight=b_sums[i] / safe[i],
            outputs=outputs[i],
            shift=shift[i],
            _max=shift_by[i],
            _z=z[i],
        )
        for i in range(n_kinds)
    )


def sweep_reference_diff(
    s: DistractorSweep,
    q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    extra_K: ArrayLike,
    extra_V: ArrayLike,
    *,
    divisor: float = 1.0,
    allowed: ArrayLike | None = None,
) -> float:
    """The largest |difference|, over every k, of the sweep's weights and outputs from the
    reference: :func:`attnsim.engine.attention.softmax` over the original keys and the first
    k inserted rows, concatenated (the same arguments as :func:`distractor_sweep`)."""
    qa = np.asarray(q, dtype=np.float64).reshape(-1)
    keys = np.vstack([_matrix(K, "K"), _matrix(extra_K, "the distractor keys")])
    values = np.vstack([_matrix(V, "V"), _matrix(extra_V, "the distractor values")])
    n = np.asarray(K).shape[0]
    ok = np.ones(n, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    worst = 0.0
    for k in range(s.k_max + 1):
        logits = keys[: n + k] @ qa / divisor
        logits[:n][~ok] = -np.inf
        w = softmax(logits) if np.isfinite(logits).any() else np.zeros(n + k)
        o = w @ values[: n + k]
        worst = max(worst, float(np.max(np.abs(s.weights_at(k) - w))))
        worst = max(worst, float(np.max(np.abs(s.outputs[k] - o), initial=0.0)))
    return worst
