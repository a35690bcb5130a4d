"""Both models' layers one at a time, on a batch of residual streams: the forward from layer L.

:func:`run_from` takes the residual stream entering layer ``start`` (``trace.resid[start]``, one
sequence (n, d) or a batch (B, n, d)) and runs layers ``start`` ... ``stop - 1``, returning the
stream entering layer ``stop`` (``trace.resid[stop]``), so an intervention at layer L does not
recompute layers 0 ... L - 1. ``edit_z(layer, z)`` may change the heads' outputs z, (B, heads,
n, d_head), in place before the output projection: activation patching's hook.

The batch is row-major, (B, n, d); the matrices are read (in, out) (``SmolLM2.weights``, views of
the cache's (out, in) arrays, so BLAS reads them transposed without a copy; MiniLM's ``.T``).
Nothing here records the intermediates: :meth:`SmolLM2.forward` and :meth:`MiniLM.forward` do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .heads import Array
from .minilm import MiniLM, gelu
from .smollm2 import SmolLM2
from .smollm2_forward import rope_tables, silu
from .threads import one_blas_thread

__all__ = ["EditZ", "final_logits", "is_causal", "n_layers", "run_from"]

# f(layer, z) edits z (B, heads, n, d_head) in place
EditZ = Callable[[int, Array], None]


def is_causal(model: Any) -> bool:
    """True for SmolLM2 (a decoder: each query sees the keys up to itself), False for MiniLM."""
    if isinstance(model, SmolLM2):
        return True
    if isinstance(model, MiniLM):
        return False
    raise ValueError(f"model must be SmolLM2 or MiniLM, got {type(model).__name__}")


def n_layers(model: Any) -> int:
    """How many layers ``model`` has."""
    is_causal(model)
    return int(model.config.n_layers)


def _softmax_rows(s: Array) -> Array:
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s


# ---- SmolLM2 ------------------------------------------------------------------------------------
def _rms(x: Array, w: Array, eps: float) -> Array:
    ms = np.einsum("...i,...i->...", x, x)[..., None] / np.float32(x.shape[-1])
    return (x / np.sqrt(ms + np.float32(eps))) * w


def _rope_rows(x: Array, cos: Array, sin: Array) -> Array:
    """Rotate-half RoPE of x (B, heads, n, d_head) with tables (n, 2, d_head / 2)."""
    pairs = x.reshape(*x.shape[:-1], 2, -1)
    out = pairs * cos + pairs[..., ::-1, :] * sin
    return out.reshape(x.shape)


class _SmolTables:
    """The rotary tables and the causal mask of n positions, and the keys and values of the
    positions known in advance (``known``: a trace and how many of its first positions)."""

    def __init__(self, model: SmolLM2, n: int, known: tuple[Any, int] | None):
        cfg = model.config
        cos, sin = rope_tables(n, cfg.d_head, cfg.rope_base)  # (2, d/2, n)
        self.n = n
        self.cos = np.ascontiguousarray(cos.transpose(2, 0, 1))
        self.sin = np.ascontiguousarray(sin.transpose(2, 0, 1))
        self.future = np.triu(np.ones((n, n), dtype=bool), 1)  # [query, key]: key comes later
        self.known = known
        self.rep = cfg.n_heads // cfg.n_kv_heads

    def known_kv(self, layer: int) -> tuple[Array, Array] | None:
        """(k, v) of the known positions at ``layer``, (kv heads, offset, d_head) each."""
        if self.known is None or self.known[1] == 0:
            return None
        trace, off = self.known
        return (
            np.asarray(trace.k[layer, :: self.rep, :off]),
            np.asarray(trace.v[layer, :: self.rep, :off]),
        )


def _smol_layer(
    model: SmolLM2, x: Array, layer: int, tab: _SmolTables, edit_z, last_only: bool = False
) -> Array:
    """One layer on the streams x (B, m, d) of the last m of n positions (the others known);
    only the last position's output when ``last_only``."""
    cfg, w = model.config, model.weights
    b, m, d = x.shape
    nh, nkv, dh, rep = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, tab.rep
    mq = 1 if last_only else m  # the queries computed: the last mq positions
    h = _rms(x, w["attn_norm"][layer], cfg.eps)
    hq = h[:, m - mq :].reshape(b * mq, d)
    h = h.reshape(b * m, d)
    q = (hq @ w["wq"][layer]).reshape(b, mq, nh, dh).transpose(0, 2, 1, 3)
    k = (h @ w["wk"][layer]).reshape(b, m, nkv, dh).transpose(0, 2, 1, 3)
    v = (h @ w["wv"][layer]).reshape(b, m, nkv, dh).transpose(0, 2, 1, 3)
    n = tab.n
    q = _rope_rows(q, tab.cos[n - mq :], tab.sin[n - mq :])
    k = _rope_rows(k, tab.cos[n - m :], tab.sin[n - m :])
    known = tab.known_kv(layer)
    if known is not None:
        k = np.concatenate([np.broadcast_to(known[0], (b, *known[0].shape)), k], axis=2)
        v = np.concatenate([np.broadcast_to(known[1], (b, *known[1].shape)), v], axis=2)
    # query heads g * rep ... g * rep + rep - 1 read key/value head g: stack them as rows
    qg = q.reshape(b, nkv, rep * mq, dh)
    s = (qg @ k.transpose(0, 1, 3, 2)).reshape(b, nh, mq, n)
    s *= np.float32(1.0 / math.sqrt(dh))
    np.copyto(s, np.float32(-np.inf), where=tab.future[n - mq :])
    a = _softmax_rows(s)
    z = (a.reshape(b, nkv, rep * mq, n) @ v).reshape(b, nh, mq, dh)
    if edit_z is not None:
        edit_z(layer, z)
    attn = z.transpose(0, 2, 1, 3).reshape(b * mq, nh * dh) @ w["wo"][layer]
    x = x[:, m - mq :] + attn.reshape(b, mq, d)
    h = _rms(x, w["ffn_norm"][layer], cfg.eps).reshape(b * mq, d)
    gate = silu(h @ w["w_gate"][layer])
    gate *= h @ w["w_up"][layer]
    return x + (gate @ w["w_down"][layer]).reshape(b, mq, d)


def final_logits(model: SmolLM2, resid: Array, ids: Any = None) -> Array:
    """SmolLM2's logits from the stream after its last layer (..., d): the final RMSNorm, then
    the (tied) unembedding; only the columns of the token ``ids`` when given."""
    cfg = model.config
    h = _rms(np.asarray(resid, dtype=np.float32), model.weights["out_norm"], cfg.eps)
    embed = model.weights["embed"]
    rows = embed if ids is None else embed[np.asarray(ids, dtype=np.int64)]
    return h @ rows.T


# ---- MiniLM -------------------------------------------------------------------------------------
def _layer_norm(x: Array, w: Array, b: Array, eps: float) -> Array:
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return (xc / np.sqrt(var + np.float32(eps))) * w + b


def _mini_layer(model: MiniLM, x: Array, layer: int, edit_z) -> Array:
    cfg, p = model.config, model.params
    b, n, d = x.shape
    nh, dh, eps = cfg.n_heads, cfg.d_head, cfg.eps
    pre = f"encoder.layer.{layer}."

    def linear(inp: Array, name: str) -> Array:
        return inp @ p[pre + name + ".weight"].T + p[pre + name + ".bias"]

    flat = x.reshape(b * n, d)
    q, k, v = (
        linear(flat, f"attention.self.{m}").reshape(b, n, nh, dh).transpose(0, 2, 1, 3)
        for m in ("query", "key", "value")
    )
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(dh))
    z = _softmax_rows(s) @ v
    if edit_z is not None:
        edit_z(layer, z)
    attn = linear(z.transpose(0, 2, 1, 3).reshape(b * n, d), "attention.output.dense")
    ln = "attention.output.LayerNorm"
    x1 = _layer_norm(flat + attn, p[pre + ln + ".weight"], p[pre + ln + ".bias"], eps)
    out = linear(gelu(linear(x1, "intermediate.dense")), "output.dense")
    x2 = _layer_norm(x1 + out, p[pre + "output.LayerNorm.weight"],
                     p[pre + "output.LayerNorm.bias"], eps)  # fmt: skip
    return x2.reshape(b, n, d)


# ---- both ---------------------------------------------------------------------------------------
def run_from(
    model: Any,
    resid: Any,
    start: int,
    stop: int | None = None,
    *,
    edit_z: EditZ | None = None,
    known: tuple[Any, int] | None = None,
    last_only: bool = False,
) -> Array:
    """The residual stream entering layer ``stop`` (default: after the last layer) from the
    stream ``resid`` entering layer ``start``: (n, d) or a batch (B, n, d), float32, returned
    in the same shape. ``run_from(m, t.resid[l], l, s)`` equals ``t.resid[s]`` of the full
    forward ``t`` (to float32 rounding).

    SmolLM2 only (its causal mask makes them exact): ``known = (trace, offset)`` says that the
    first ``offset`` positions of every stream are those of ``trace`` at every layer, so
    ``resid`` holds only the positions from ``offset`` on (as does the result) and the known
    positions' keys and values are read from the trace; ``last_only`` computes only the last
    position in the last layer (the result then has one position). ``edit_z(layer, z)`` sees
    the z of the positions computed. Raises ValueError on a bad layer range or shape.
    """
    layers = n_layers(model)
    stop = layers if stop is None else int(stop)
    if not 0 <= int(start) <= stop <= layers:
        raise ValueError(f"layers must satisfy 0 <= start <= stop <= {layers}, got {start}, {stop}")
    x = np.asarray(resid, dtype=np.float32)
    d = model.config.d_model
    if x.ndim not in (2, 3) or x.shape[-1] != d or x.shape[-2] == 0:
        raise ValueError(f"resid must be (n, {d}) or (batch, n, {d}), got shape {x.shape}")
    causal = is_causal(model)
    if not causal and (known is not None or last_only):
        raise ValueError("known positions and last_only need a causal model (SmolLM2)")
    single = x.ndim == 2
    x = x[None] if single else x
    with one_blas_thread():
        if causal:
            off = 0 if known is None else int(known[1])
            tab = _SmolTables(model, x.shape[1] + off, known)
            for layer in range(int(start), stop):
                x = _smol_layer(model, x, layer, tab, edit_z, last_only and layer == layers - 1)
        else:
            for layer in range(int(start), stop):
                x = _mini_layer(model, x, layer, edit_z)
    return (x[0] if single else x).astype(np.float32, copy=False)
