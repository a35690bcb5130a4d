"""Attention flow by rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in
Transformers"): how much of a token's final representation traces back to each input token.

Each layer's weights are averaged over its heads, and the residual connection is added as the
identity: ``A_l = 0.5 * mean_h(W_l) + 0.5 * I`` with every row renormalised to sum to 1. The
rollout after layer l is the product ``A_l A_{l-1} ... A_0``; its row i is token i's share of
each input token. Under SmolLM2's causal mask a token can only trace back to itself and earlier
tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .heads import Array

__all__ = ["Flow", "attention_flow", "rollout"]


def rollout(weights: Any) -> Array:
    """The rollout after each layer, (layers, n, n), from weights (layers, heads, n, n)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2] or w.shape[-1] == 0:
        raise ValueError(f"weights must be (layers, heads, n, n), got shape {w.shape}")
    n = w.shape[-1]
    eye = np.eye(n)
    out = np.empty((w.shape[0], n, n), np.float64)
    total = eye
    for layer in range(w.shape[0]):
        a = 0.5 * w[layer].mean(axis=0) + 0.5 * eye
        a /= a.sum(axis=-1, keepdims=True)
        total = a @ total
        out[layer] = total
    return out.astype(np.float32)


@dataclass(frozen=True)
class Flow:
    """From one token (``position``): ``rollout`` (n,), its share of each input token after the
    last layer; ``per_layer`` (layers, n), the same after each layer; ``last_weights`` (n,), the
    last layer's raw weights of that token averaged over the heads, to set beside it."""

    position: int
    rollout: Array
    per_layer: Array
    last_weights: Array


def attention_flow(trace: Any, position: int) -> Flow:
    """The rollout of token ``position`` of a forward ``trace`` (either model)."""
    weights = np.asarray(trace.weights)
    n = weights.shape[-1]
    if not 0 <= position < n:
        raise ValueError(f"position must lie in [0, {n}), got {position}")
    roll = rollout(weights)
    last = weights[-1, :, position].mean(axis=0).astype(np.float32)
    return Flow(int(position), roll[-1, position], roll[:, position], last)
