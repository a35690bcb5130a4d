"""The induction probe of SmolLM2, once for every front end (the Real model panel and
``attnsim model probe``).

``batch`` sequences of ``half`` random ordinary tokens, each followed by its own repeat, drawn
from ``numpy.random.default_rng(seed)``: every head's previous-token and induction score
(:func:`~attnsim.engine.models.smollm2.probe_scores`) averaged over the sequences, and the
repeated half's mean loss with no head zeroed, with the ``top`` heads of highest induction
score zeroed, and with as many other heads drawn at random (from the same generator, after the
sequences) zeroed. With the defaults (seed 0, 4 sequences of 20 tokens) the top heads are
L18H6 0.883, L17H4 0.738, L17H3 0.700 and L17H5 0.657, and the losses 3.657 nats, 8.463 with
those four zeroed and 3.750 with four random heads zeroed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .smollm2 import probe_scores, repeated_random_ids

__all__ = ["PROBE_BATCH", "PROBE_HALF", "PROBE_SEED", "PROBE_TOP", "InductionProbe",
           "ProbeAblation", "induction_probe", "repeated_loss"]  # fmt: skip

PROBE_SEED, PROBE_HALF, PROBE_BATCH, PROBE_TOP = 0, 20, 4, 4
Head = tuple[int, int]


@dataclass(frozen=True)
class ProbeAblation:
    """One row of the ablation table: ``kind`` is "none", "top" (the heads of highest
    induction score) or "random"; ``repeated_loss`` the repeated half's mean loss in nats."""

    kind: str
    heads: tuple[Head, ...]
    repeated_loss: float


@dataclass(frozen=True)
class InductionProbe:
    """The probe's settings and results: scores (layers, heads) averaged over the sequences
    and the ablation rows none, top, random (in that order)."""

    seed: int
    half: int
    batch: int
    previous_token: NDArray[np.float32]
    induction: NDArray[np.float32]
    ablations: tuple[ProbeAblation, ...]

    def top(self, k: int) -> list[tuple[int, int, float]]:
        """The ``k`` heads of highest induction score as (layer, head, score), highest first."""
        order = np.argsort(self.induction, axis=None)[::-1][:k]
        heads = self.induction.shape[1]
        return [(int(i // heads), int(i % heads), float(self.induction.flat[i])) for i in order]

    @property
    def base_loss(self) -> float:
        return self.ablations[0].repeated_loss


def repeated_loss(trace: Any, half: int) -> float:
    """Mean loss of tokens 2..half of the repeated half (the induction lab's definition: the
    first token of a half is left out, nothing in the sequence predicts it)."""
    return float(trace.token_losses()[half : 2 * half - 1].mean())


def induction_probe(
    model: Any,
    *,
    seed: int = PROBE_SEED,
    half: int = PROBE_HALF,
    batch: int = PROBE_BATCH,
    top: int = PROBE_TOP,
    progress: Callable[[float], None] | None = None,
) -> InductionProbe:
    """Run the probe on a loaded :class:`~attnsim.engine.models.smollm2.SmolLM2`.

    ``progress(fraction)`` is called after every layer of the ``3 * batch`` forward passes; an
    exception it raises (a cancel) ends the probe. Raises ValueError for a bad setting.
    """
    cfg = model.config
    n_heads = cfg.n_layers * cfg.n_heads
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number 0 or more, got {seed!r}")
    if not 2 <= half <= 256:
        raise ValueError(f"half must lie in [2, 256] tokens, got {half}")
    if not 1 <= batch <= 64:
        raise ValueError(f"batch must lie in [1, 64] sequences, got {batch}")
    if not 1 <= top <= n_heads // 2:
        raise ValueError(f"top must lie in [1, {n_heads // 2}] heads, got {top}")
    rng = np.random.default_rng(seed)
    seqs = [repeated_random_ids(half, rng) for _ in range(batch)]
    passes, done = 3 * batch, [0]

    def watch(layer: int, arr: Any) -> None:
        if progress is not None:
            progress(min(1.0, (done[0] * cfg.n_layers + layer + 1) / (passes * cfg.n_layers)))

    def forward(ids: NDArray[np.int64], mask: Any) -> Any:
        trace = model.forward(ids, head_mask=mask, hooks={"q": watch})
        done[0] += 1
        return trace

    scores, losses = [], []
    for ids in seqs:  # one trace at a time: each holds megabytes of logits
        trace = forward(ids, None)
        scores.append(probe_scores(trace.weights, half))
        losses.append(repeated_loss(trace, half))
    prev, induct = np.mean(scores, axis=0)
    order = [divmod(int(i), cfg.n_heads) for i in np.argsort(induct, axis=None)[::-1]]
    best, others = order[:top], order[top:]
    rand = [others[int(i)] for i in sorted(rng.choice(len(others), top, replace=False))]
    rows = [ProbeAblation("none", (), float(np.mean(losses)))]
    for kind, heads in (("top", best), ("random", rand)):
        mask = dict.fromkeys(heads, "zero")
        loss = float(np.mean([repeated_loss(forward(ids, mask), half) for ids in seqs]))
        rows.append(ProbeAblation(kind, tuple(heads), loss))
    return InductionProbe(seed, half, batch, prev, induct, tuple(rows))
