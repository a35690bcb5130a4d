"""The logit lens on SmolLM2: the residual stream after every layer read out as the model reads
its last one, through the final RMSNorm and the (tied) unembedding, to next-token
probabilities. After the last layer this is the model's own prediction; earlier layers show when
the eventual prediction appears.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .heads import Array
from .layers import final_logits, is_causal
from .threads import one_blas_thread

__all__ = ["Lens", "logit_lens"]


@dataclass(frozen=True)
class Lens:
    """Per layer l (the stream after layer l) and position i (predicting token i + 1):
    ``top_ids`` and ``top_probs`` (layers, n, k), most probable first; ``token_probs``
    (layers, n), the probability of the chosen token ``token_id`` (None when none was)."""

    top_ids: np.ndarray
    top_probs: Array
    token_id: int | None
    token_probs: Array | None


def logit_lens(model: Any, trace: Any, k: int = 5, token_id: int | None = None) -> Lens:
    """The logit lens of a SmolLM2 forward ``trace``: top ``k`` tokens and the probability of
    ``token_id`` at every layer and position."""
    if not is_causal(model):
        raise ValueError("the logit lens needs a model that predicts the next token")
    vocab = model.config.vocab
    if not 1 <= k <= vocab:
        raise ValueError(f"k must lie in [1, {vocab}], got {k}")
    if token_id is not None and not 0 <= token_id < vocab:
        raise ValueError(f"token_id must lie in [0, {vocab}), got {token_id}")
    resid = np.asarray(trace.resid)
    layers, n = resid.shape[0] - 1, resid.shape[1]
    top_ids = np.empty((layers, n, k), np.int64)
    top_probs = np.empty((layers, n, k), np.float32)
    chosen = None if token_id is None else np.empty((layers, n), np.float32)
    rows = np.arange(n)[:, None]
    with one_blas_thread():
        for layer in range(layers):
            logits = final_logits(model, resid[layer + 1])  # (n, vocab)
            logits -= logits.max(axis=-1, keepdims=True)
            np.exp(logits, out=logits)
            logits /= logits.sum(axis=-1, keepdims=True)
            part = np.argpartition(-logits, k - 1, axis=-1)[:, :k]
            order = np.argsort(-logits[rows, part], axis=-1, kind="stable")
            top_ids[layer] = part[rows, order]
            top_probs[layer] = logits[rows, top_ids[layer]]
            if chosen is not None:
                chosen[layer] = logits[:, token_id]
    return Lens(top_ids, top_probs, token_id, chosen)
