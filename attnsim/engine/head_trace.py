"""One attention head's trace, :class:`HeadTrace`: every intermediate for display and tests,
keeping two (n_q, n_k) tables and making the others when asked. Built by
:func:`attnsim.engine.attention.direct_trace` and ``head_trace`` (and importable from there).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.floating]
BoolArray = NDArray[np.bool_]

__all__ = ["HeadTrace", "MaskedTable"]


def _frozen(a: Array) -> Array:
    """``a`` read-only: itself if it is already, else a read-only view (the caller's array stays
    writable for the caller). A trace's arrays are shared between panels and with each other."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True, eq=False)
class MaskedTable:
    """A table that is ``values`` where ``allowed`` and ``fill`` elsewhere, not made until asked
    (:meth:`HeadTrace.masked_table`): a reduction over the allowed cells reads ``values`` and
    the mask, where the table would be one more (n_q, n_k) array to make (32 MB at n = 2,048).
    ``full()`` returns the table itself (``np.asarray`` calls it)."""

    values: Array
    allowed: BoolArray
    fill: float
    full: Callable[[], Array]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.values.shape

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = np.asarray(self.full())
        return a if dtype is None else a.astype(dtype)


@dataclass(frozen=True, eq=False)
class HeadTrace:
    """Every intermediate of one attention head, for display and for tests.

    Shapes: ``Q, K`` (n_q, d_k) / (n_k, d_k); ``V`` (n_k, d_v); ``scores``, ``logits``,
    ``masked_logits``, ``weights``, ``mask`` (n_q, n_k); ``output`` (n_q, d_v);
    ``entropy`` (n_q,) in bits; ``contributions`` (n_q, n_k, d_v), computed on first access.
    ``X`` and the projections are None in direct mode. Every array is read-only.

    The trace keeps two (n_q, n_k) float64 tables, the logits and the weights (a 4,096-token head
    holds 134 MB per table). ``scores`` and ``masked_logits`` are made from them when asked,
    with exactly the numbers the forward pass had, and kept while anyone holds them (one array
    shared by every caller, freed when the last drops it).
    """

    Q: Array
    K: Array
    V: Array
    logits: Array
    weights: Array
    output: Array
    mask: NDArray[np.bool_]
    entropy: Array  # (n_q,) bits, computed with the weights (see _row_entropy)
    temperature: float
    scale: bool
    mask_value: float
    X: Array | None = None
    Wq: Array | None = None
    Wk: Array | None = None
    Wv: Array | None = None

    def _kept(self, name: str, make: Callable[[], tuple[Array, bool]]) -> Array:
        """The array ``make()`` builds, shared while anyone holds it (a weak reference), or
        for good when ``make`` says it was costly to make."""
        ref = self.__dict__.get(name)
        arr = ref() if ref is not None else None
        if arr is None:
            arr, costly = make()
            if arr is not self.logits:
                arr = _frozen(arr)
            self.__dict__[name] = (lambda a=arr: a) if costly else weakref.ref(arr)
        return arr

    @property
    def scores(self) -> Array:
        """``q · k`` for every query and key, before the scale and the temperature."""
        return self._kept("_scores", self._make_scores)

    def _undone_exactly(self, logits: Array) -> bool:
        """Whether ``logits * divisor`` gives back exactly the scores these logits came from:
        the divisor is a power of two (sqrt(d_k) = 32 at d_k = 1,024), so dividing only moved
        the exponent, and no logit is subnormal (where the division rounded). Decided for the
        cells asked for only: a row's test reads one row, not the whole table."""
        if math.frexp(self.divisor)[0] != 0.5:
            return False
        tiny = np.finfo(logits.dtype).tiny
        return not np.any((np.abs(logits) < tiny) & (logits != 0))

    def _make_scores(self) -> tuple[Array, bool]:
        if self.divisor == 1.0:
            return self.logits, False  # the logits are the scores divided by 1
        if self._undone_exactly(self.logits):
            return self.logits * self.divisor, False
        with np.errstate(over="ignore", invalid="ignore"):
            # as route_arrays computed them (the same numbers); a hover must not redo this
            return self.Q @ self.K.T, True

    def _held_scores(self) -> Array | None:
        ref = self.__dict__.get("_scores")
        return ref() if ref is not None else None

    def score(self, i: int, j: int) -> float:
        """``scores[i, j]`` without making the whole table (a hover reads one cell)."""
        held = self._held_scores()
        if held is not None:
            return float(held[i, j])
        cell = self.logits[i, j : j + 1]
        if self._undone_exactly(cell):
            return float(cell[0] * self.divisor)
        with np.errstate(over="ignore", invalid="ignore"):
            return float(self.Q[i] @ self.K[j])  # the table's cell, up to the last place

    def scores_row(self, i: int) -> Array:
        """``scores[i]`` (n_k,) without making the whole table."""
        held = self._held_scores()
        if held is not None:
            return held[i]
        row = self.logits[i]
        if self._undone_exactly(row):
            return row * self.divisor
        with np.errstate(over="ignore", invalid="ignore"):
            return self.K @ self.Q[i]  # the table's row, up to the last place

    def masked_logit(self, i: int, j: int) -> float:
        """``masked_logits[i, j]`` without making the whole table."""
        return float(self.logits[i, j] if self.mask[i, j] else self.mask_value)

    def masked_logits_row(self, i: int) -> Array:
        """``masked_logits[i]`` (n_k,) without making the whole table."""
        return np.where(self.mask[i], self.logits[i], self.mask_value)

    def contribution_norm(self, i: int, j: int) -> float:
        """``contribution_norms[i, j]`` without making the whole table (nor every value's
        norm: one row of them, made by the same call, so the same number)."""
        norms = self.__dict__.get("value_norms")
        if norms is not None:
            return float(self.weights[i, j] * norms[j])
        return float(self.weights[i, j] * np.linalg.norm(self.V[j : j + 1], axis=-1)[0])

    @property
    def masked_logits(self) -> Array:
        """The logits with every forbidden cell replaced by ``mask_value`` (what softmax saw)."""
        return self._kept("_masked", self._make_masked)

    def masked_table(self) -> MaskedTable:
        """``masked_logits`` described, not made: the logits, the mask and the mask value
        (``full()`` is ``masked_logits``)."""
        return MaskedTable(self.logits, self.mask, self.mask_value, lambda: self.masked_logits)

    def _make_masked(self) -> tuple[Array, bool]:
        if self._all_open:
            return self.logits, False
        return np.where(self.mask, self.logits, self.mask_value), False

    def logit_range(self) -> tuple[float, float]:
        """The least and the largest logit (nan, nan when there are none), read once per
        trace: two passes over a 4,096-token head take 15-20 ms, so a background trace reads
        them before the trace reaches the window (a plain attribute, not a cached_property,
        whose lock Python 3.11 shares between every trace)."""
        got = self.__dict__.get("_logit_range")
        if got is None:
            lg = self.logits
            got = (float(lg.min()), float(lg.max())) if lg.size else (math.nan, math.nan)
            self.__dict__["_logit_range"] = got
        return got

    @cached_property
    def _all_open(self) -> bool:
        return bool(self.mask.all())

    @property
    def d_k(self) -> int:
        return int(self.Q.shape[-1])

    @property
    def divisor(self) -> float:
        """What ``q · k`` is divided by to give a logit: ``sqrt(d_k)`` (if scaled) × temperature."""
        return (math.sqrt(self.d_k) if self.scale else 1.0) * self.temperature

    @cached_property
    def max_entropy(self) -> Array:
        """The largest entropy each row could have, in bits: log2 of the keys it can weigh.

        With ``mask_value`` = -inf that is the legal keys; with a finite mask value every key
        gets weight, so it is all of them. Shape (n_q,); computed once per trace (read-only).
        """
        n_k = self.mask.shape[-1]
        if np.isneginf(self.mask_value):
            # The mask's bytes summed as integers, in 16 bits when a row's count fits: four
            # times as fast as in 64 (0.3 ms against 1.4 at n = 2,048), the same counts.
            acc = np.uint16 if n_k < 2**16 else np.int64
            counts = np.add.reduce(self.mask.view(np.uint8), axis=-1, dtype=acc)
            counts = counts.astype(np.int64)
        else:
            counts = np.full(self.mask.shape[0], n_k)
        return _frozen(np.log2(np.maximum(counts, 1)))

    @cached_property
    def value_norms(self) -> Array:
        """``||v_j||`` for each key, shape (n_k,)."""
        return np.linalg.norm(self.V, axis=-1)

    @property
    def contribution_norms(self) -> Array:
        """``||w_ij v_j||`` = ``w_ij ||v_j||`` (weights are non-negative), shape (n_q, n_k);
        made when asked and shared while anyone holds it, like the scores. One cell is
        ``weights[i, j] * value_norms[j]``."""
        return self._kept("_norms", lambda: (self.weights * self.value_norms[None, :], False))

    @cached_property
    def contributions(self) -> Array:
        """``w_ij v_j``, shape (n_q, n_k, d_v); the rows over j sum to ``output``."""
        return self.weights[:, :, None] * self.V[None, :, :]

    @cached_property
    def forbidden_weight(self) -> Array:
        """Weight each row puts on forbidden keys (non-zero only with ``mask_value`` != -inf)."""
        return np.where(self.mask, 0.0, self.weights).sum(axis=-1)
