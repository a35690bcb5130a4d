"""What each key adds to a query's output through a head: ``|alpha_ij * v_j W_O^h|``.

A head's output at query i, after its slice of the output projection, is
``sum_j alpha_ij (v_j W_O^h)``: key j's part is the vector ``alpha_ij v_j W_O^h`` and its length
``alpha_ij |v_j W_O^h|`` (alpha is never negative). A heatmap of the weights alpha shows the
mixing coefficients; this shows how much each key actually moves the query's output. Per
layer, the heads' vectors of one (query, key) pair are summed before the length is taken. For
SmolLM2 each query head uses its key/value head's v (the trace's v is already expanded per query
head); MiniLM's output bias belongs to no key and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .heads import Array
from .layers import is_causal

__all__ = [
    "MAPS",
    "Contributions",
    "contribution_top",
    "contributions",
    "output_projection",
    "value_norms",
]

# What a head's map shows: its weights alpha_ij, or what each key adds to the query's output,
# |alpha_ij v_j W_O^h| (the weights mix; the values and W_O decide what is carried). The keys
# are the settings' values; the words are for a box that offers them.
MAPS = {"weights": "weights", "contributions": "contributions"}

_FLOATS = 1 << 22  # floats of the per-layer (rows, n, d_model) block summed over the heads


def output_projection(model: Any, layer: int) -> Array:
    """Layer ``layer``'s output projection as (heads * d_head, d_model): rows
    ``h * d_head ... (h + 1) * d_head - 1`` are head h's slice W_O^h."""
    if is_causal(model):
        return np.asarray(model.weights["wo"][layer], dtype=np.float32)
    w = model.params[f"encoder.layer.{layer}.attention.output.dense.weight"]
    return np.asarray(w, dtype=np.float32).T


@dataclass(frozen=True)
class Contributions:
    """``per_head`` (layers, heads, n, n): ``[l, h, i, j] = |alpha_ij v_j W_O^h|`` of head h;
    ``per_layer`` (layers, n, n): the length of the heads' summed vectors of each pair;
    ``value_norms`` (layers, heads, n): ``|v_j W_O^h|``, what a weight of 1 would carry."""

    per_head: Array
    per_layer: Array
    value_norms: Array


def value_norms(model: Any, trace: Any) -> Array:
    """``|v_j W_O^h|`` of every layer, head and key, (layers, heads, n): a head's contribution
    map is its weights times these, column by column (``weights[l, h] * norms[l, h][None]``),
    so a window keeps these few numbers rather than a second set of maps."""
    v = np.asarray(trace.v, dtype=np.float32)
    norms = np.empty(v.shape[:3], np.float32)
    for layer in range(v.shape[0]):
        norms[layer] = np.linalg.norm(_after_output(model, v[layer], layer), axis=-1)
    return norms


def _after_output(model: Any, v: Array, layer: int) -> Array:
    """(heads, n, d_model): each key's value ``v`` (heads, n, d_head) of ``layer`` after its
    head's slice of the output projection, ``v_j W_O^h``."""
    heads, _, dh = v.shape
    return v @ output_projection(model, layer).reshape(heads, dh, -1)


def contribution_top(weights: Array, norms: Array) -> float:
    """The largest contribution of any head to any (query, key) pair: the top of a colour scale
    shared by every head's map (one layer at a time, never every map at once)."""
    top = 0.0
    for layer in range(weights.shape[0]):
        top = max(top, float(np.nanmax(weights[layer] * norms[layer][:, None, :])))
    return top


def contributions(model: Any, trace: Any) -> Contributions:
    """The contribution maps of every head and layer of one forward ``trace`` of ``model``."""
    weights = np.asarray(trace.weights, dtype=np.float32)
    v = np.asarray(trace.v, dtype=np.float32)
    layers, heads, n, _ = v.shape
    per_head = np.empty((layers, heads, n, n), np.float32)
    per_layer = np.empty((layers, n, n), np.float32)
    norms = np.empty((layers, heads, n), np.float32)
    rows = max(1, _FLOATS // max(1, n * model.config.d_model))
    for layer in range(layers):
        vo = _after_output(model, v[layer], layer)  # (heads, n, d_model)
        norms[layer] = np.linalg.norm(vo, axis=-1)
        per_head[layer] = weights[layer] * norms[layer][:, None, :]
        by_key = vo.transpose(1, 0, 2)  # (key, heads, d_model)
        for lo in range(0, n, rows):
            # for each key j: (queries, heads) @ (heads, d_model), the heads' summed vectors
            w = weights[layer, :, lo : lo + rows].transpose(2, 1, 0)  # (key, queries, heads)
            block = np.matmul(w, by_key)  # (key, queries, d_model)
            per_layer[layer, lo : lo + rows] = np.linalg.norm(block, axis=-1).T
    return Contributions(per_head, per_layer, norms)
