"""Head scores on the user's own text (no repeated random sequence needed).

The induction-style score asks of every token that occurred earlier in the text: how much of
its attention goes to the token that followed that earlier occurrence ("… Harry Potter …
Harry" → "Potter")? It is the probe's induction score (:func:`attnsim.engine.models.probe_scores`)
read off whatever repeats the text happens to have. Pure NumPy; the Real model panel, the
command line and later scores share it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["InductionTargets", "TextInduction", "induction_targets", "text_induction"]


@dataclass(frozen=True)
class InductionTargets:
    """Where an induction head would look in one text of n tokens.

    ``queries`` (r,): the positions i whose token occurred before with a token after it that
    lies before i; ``targets`` (n, n) bool: ``targets[i, j]`` when j - 1 is an earlier
    occurrence of token i (j <= i - 1, so the token after it is already seen). Rows of
    ``queries`` have at least one target; every other row has none.
    """

    queries: NDArray[np.int64]
    targets: NDArray[np.bool_]

    @property
    def count(self) -> int:
        """How many positions have something to copy (0: nothing in the text repeats)."""
        return int(self.queries.size)


def induction_targets(ids: ArrayLike, skip: ArrayLike = ()) -> InductionTargets:
    """The induction targets of a token-id sequence; ids in ``skip`` (special tokens such as
    [CLS], [SEP] or a BOS) never count as a repeat."""
    t = np.asarray(ids, dtype=np.int64).reshape(-1)
    n = t.size
    same = t[:, None] == t[None, :]  # same[i, p]: token i occurred at p
    if len(np.atleast_1d(skip)):
        same &= ~np.isin(t, np.asarray(skip, dtype=np.int64))[:, None]
    earlier = np.tril(same, -1)  # p < i
    targets = np.zeros((n, n), dtype=bool)
    # the token after the earlier occurrence p is p + 1, and it must lie before i
    targets[:, 1:] = earlier[:, :-1]
    targets &= np.tril(np.ones((n, n), dtype=bool), -1)
    queries = np.flatnonzero(targets.any(axis=1)).astype(np.int64)
    return InductionTargets(queries, targets)


@dataclass(frozen=True)
class TextInduction:
    """The induction-style score of every head on one text: ``score`` has the weights' leading
    shape (e.g. (layers, heads)); ``count`` is how many query positions it averages over. With
    ``count == 0`` (no token of the text repeats) the score is undefined: ``score`` is then all
    zeros, never NaN, and ``defined`` is False, so a caller says so instead of ranking."""

    score: NDArray[np.float32]
    count: int

    @property
    def defined(self) -> bool:
        return self.count > 0


def text_induction(weights: ArrayLike, ids: ArrayLike, skip: ArrayLike = ()) -> TextInduction:
    """Mean, over the positions i whose token occurred earlier, of the attention from i to the
    tokens that followed its earlier occurrences (summed when it occurred more than once).

    ``weights`` (..., n, n): one head's weights (n, n) or a stack, e.g. (layers, heads, n, n),
    each row a query's weights over the keys; ``ids`` (n,) the token ids; ``skip`` ids that never
    count as a repeat. In [0, 1] for rows that sum to one.
    """
    w = np.asarray(weights)
    t = np.asarray(ids).reshape(-1)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (..., n, n), got shape {w.shape}")
    if w.shape[-1] != t.size:
        raise ValueError(f"weights are over {w.shape[-1]} tokens but {t.size} ids were given")
    found = induction_targets(t, skip)
    lead = w.shape[:-2]
    if not found.count:
        return TextInduction(np.zeros(lead, dtype=np.float32), 0)
    # Every row's weight on its targets by one contraction over the weights as they are (no copy
    # of a (30, 9, 512, 512) stack), then the mean over the rows that have targets.
    dtype = np.float64 if w.dtype == np.float64 else np.float32
    per_row = np.einsum("...ij,ij->...i", w, found.targets.astype(dtype))
    return TextInduction(per_row[..., found.queries].mean(axis=-1).astype(np.float32), found.count)
