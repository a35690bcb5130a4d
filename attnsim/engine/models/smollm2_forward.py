"""SmolLM2's forward pass in NumPy, float32, laid out for BLAS.

The residual stream is kept feature-major, (d, n), and the attention's matrices (out, in) as
the GGUF stores them, so its products are ``W @ x`` with both operands contiguous. The
feed-forward runs token-major, ``h.T @ W`` with W (in, out) contiguous into (n, d_ff) buffers,
and the logits are ``h.T @ E`` with the embedding E (d, vocab) contiguous, into (n, vocab):
with the weights read from memory rather than cache (430 MB of them a forward), that ran the
feed-forward about 4 % and the logits about 8 % faster than ``W @ h`` with W (out, in) (one
OpenBLAS thread, n = 64, paired runs); one product of the gate and up matrices side by side
was no faster than two. Each
layer's q, k, v, z and weights are written straight into the trace's arrays, and the
element-wise steps work in place on float32 buffers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .heads import Array, Hook, LayerArrays, run_hook

__all__ = ["Arrays", "Sizes", "rope_tables", "run", "silu"]


@dataclass(frozen=True)
class Sizes:
    """The numbers of the architecture the loop needs (a subset of SmolConfig)."""

    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    rope_base: float
    eps: float


@dataclass(frozen=True)
class Arrays(LayerArrays):
    """What one forward computes: the layers' arrays, k and v expanded per query head, and
    the logits (n, vocab). The layers' arrays are transposed views of what the products
    computed."""

    logits: Array


def silu(x: Array, out: Array | None = None, scratch: Array | None = None) -> Array:
    """x * sigmoid(x) = x / (1 + exp(-x)) in float32, into ``out`` (a new array if None), with
    ``scratch`` (x's shape, not x itself) as its working buffer when given.

    For x below about -88, exp(-x) overflows to inf and x / inf is -0, the right limit; that
    overflow is expected, so it is not reported as a warning.
    """
    t = np.negative(x, out=scratch)
    with np.errstate(over="ignore"):
        np.exp(t, out=t)
    t += np.float32(1.0)
    return np.divide(x, t, out=t if out is None else out)


def rope_tables(n: int, d: int, base: float) -> tuple[Array, Array]:
    """The rotary tables for :func:`_rope`, each (2, d / 2, n): pair i of a head turns by
    position * base^(-2i/d); ``cos`` is that angle's cosine twice, ``sin`` its sine negated
    then as is.

    Computed in float64 and rounded once, as transformers computes its float32 tables.
    """
    inv = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.outer(inv, np.arange(n, dtype=np.float64))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    return np.stack([cos, cos]), np.stack([-sin, sin])


def _rms_norm(x: Array, w: Array, eps: float, out: Array) -> Array:
    """RMSNorm of each column of feature-major x (d, n), scaled by w (d,), into ``out``."""
    ms = np.einsum("ij,ij->j", x, x)
    ms /= np.float32(x.shape[0])
    ms += np.float32(eps)
    np.sqrt(ms, out=ms)
    np.divide(x, ms, out=out)
    out *= w[:, None]
    return out


def _rope(x: Array, cos: Array, sin: Array, out: Array, scratch: Array) -> Array:
    """Rotate-half RoPE of feature-major x (heads * d_head, n) into ``out`` (heads, d_head, n),
    with ``scratch`` (x's size) as its working buffer.

    Each head's first and second halves are the two coordinates of a rotated pair (the GGUF's
    interleaved order was undone at load): (a, b) -> (a cos - b sin, b cos + a sin).
    """
    x = x.reshape(-1, *cos.shape)
    pairs = out.reshape(x.shape)
    np.multiply(x, cos, out=pairs)
    # (b, a) times (-sin, sin): -b sin is rounded as b sin is, so this is a cos - b sin exactly
    pairs += np.multiply(x[:, ::-1], sin, out=scratch.reshape(x.shape))
    return out


def run(
    mats: Mapping[str, Array],
    cfg: Sizes,
    ids: NDArray[np.integer],
    mult: Array | None,
    mean: set[tuple[int, int]],
    hooks: Mapping[str, Hook],
) -> Arrays:
    """One forward over ``ids`` with every intermediate recorded (see SmolLM2.forward).

    ``mats``: "embed" (d, vocab) and "out_norm" (d,); per layer (stacked on the first axis)
    "attn_norm" and "ffn_norm" (d,) and the matrices "wq", "wk", "wv", "wo", each (out, in), and
    "w_gate", "w_up", "w_down", each (in, out). ``mult`` (layers, heads) multiplies each head's
    z; the heads in ``mean`` have their z replaced by its mean over the positions. Call inside
    one BLAS thread.

    q, k, v and z are computed and kept (layers, heads, d_head, n), the weights (layers, heads,
    key, query) and the residual stream (layers + 1, d, n), and returned as transposed views:
    what the products read and write, with no copy to the order of the trace.
    """
    n, nh, nkv, dh = len(ids), cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    layers, rep = cfg.n_layers, cfg.n_heads // cfg.n_kv_heads
    embed = mats["embed"]
    cos, sin = rope_tables(n, dh, cfg.rope_base)
    future = np.tri(n, k=-1, dtype=bool)  # [key, query]: the key comes later
    scale = np.float32(1.0 / np.sqrt(dh))  # 1/8: a power of two, so scaling rounds nothing
    q_all, k_all, v_all, z_all = (np.empty((layers, nh, dh, n), np.float32) for _ in range(4))
    pat = np.empty((layers, nh, n, n), np.float32)  # [layer, head, key, query]
    stream = np.empty((layers + 1, embed.shape[0], n), np.float32)

    def hooked(point: str, layer: int, arr: Array) -> None:
        run_hook(hooks, point, layer, arr)

    x = stream[0]
    x[...] = embed[:, ids]
    # Every product and element-wise step writes into these buffers, allocated once a forward:
    # new arrays of a few hundred kB in each layer came from memory the allocator had just
    # given back to the system, and their page faults cost about 10 ms a forward.
    d_ff = mats["w_gate"].shape[2]
    h, o = np.empty_like(x), np.empty_like(x)
    qp, rot = np.empty((nh * dh, n), np.float32), np.empty((nh * dh, n), np.float32)
    kp, vp = np.empty((nkv * dh, n), np.float32), np.empty((nkv * dh, n), np.float32)
    col = np.empty((nh, 1, n), np.float32)  # the softmax's max, then sum, over the keys
    gate, up, tmp = (np.empty((n, d_ff), np.float32) for _ in range(3))
    down = np.empty((n, x.shape[0]), np.float32)
    for layer in range(layers):
        _rms_norm(x, mats["attn_norm"][layer], cfg.eps, h)
        q, k, v, z = q_all[layer], k_all[layer], v_all[layer], z_all[layer]
        _rope(np.matmul(mats["wq"][layer], h, out=qp), cos, sin, q, rot)
        # k and v of key/value head g go to its query heads g * rep ... g * rep + rep - 1
        # (RoPE writes each group's first head, which the others copy)
        np.matmul(mats["wk"][layer], h, out=kp)
        kg = k.reshape(nkv, rep, dh, n)
        kg[:, 1:] = _rope(kp, cos, sin, kg[:, 0], rot[: nkv * dh])[:, None]
        np.matmul(mats["wv"][layer], h, out=vp)
        v.reshape(nkv, rep, dh, n)[...] = vp.reshape(nkv, 1, dh, n)
        hooked("q", layer, q.transpose(0, 2, 1))
        hooked("k", layer, k.transpose(0, 2, 1))
        hooked("v", layer, v.transpose(0, 2, 1))
        # The scores, then in place the weights, (heads, key, query): the softmax's max and sum
        # over the keys then run across contiguous rows, three times faster than along them.
        a = pat[layer]
        np.matmul(k.transpose(0, 2, 1), q, out=a)
        a *= scale
        np.copyto(a, np.float32(-np.inf), where=future)
        hooked("scores", layer, a.transpose(0, 2, 1))
        a -= np.max(a, axis=1, keepdims=True, out=col)
        np.exp(a, out=a)
        a /= np.sum(a, axis=1, keepdims=True, out=col)
        hooked("weights", layer, a.transpose(0, 2, 1))
        np.matmul(v, a, out=z)  # z^T = v^T a^T
        if mult is not None:
            z *= mult[layer][:, None, None]
        for ml, mh in mean:
            if ml == layer:
                z[mh] = z[mh].mean(axis=-1, keepdims=True)
        hooked("z", layer, z.transpose(0, 2, 1))
        nxt = stream[layer + 1]
        np.add(x, np.matmul(mats["wo"][layer], z.reshape(nh * dh, n), out=o), out=nxt)
        x = nxt
        _rms_norm(x, mats["ffn_norm"][layer], cfg.eps, h)
        # token-major, (n, d_ff), with the matrices (in, out): see the module's docstring
        np.matmul(h.T, mats["w_gate"][layer], out=gate)
        silu(gate, out=gate, scratch=tmp)
        gate *= np.matmul(h.T, mats["w_up"][layer], out=up)
        x += np.matmul(gate, mats["w_down"][layer], out=down).T
    logits = np.matmul(_rms_norm(x, mats["out_norm"], cfg.eps, h).T, embed)
    return Arrays(
        *(a.transpose(0, 1, 3, 2) for a in (pat, q_all, k_all, v_all, z_all)),
        stream.transpose(0, 2, 1),
        logits,
    )
