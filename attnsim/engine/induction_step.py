"""The training step of a one-head-per-layer attention-only transformer: forward pass, loss and
manual backward pass fused into one function, for the induction lab's default model.

It computes what :func:`attnsim.engine.induction.loss_and_grads` defines (same loss, same
gradients to rounding) and is what that function runs when every layer has one head and no head
is ablated. The general path keeps a head axis, a :class:`~attnsim.engine.induction.Trace` and
fresh arrays; at this model's size (32 sequences of 33 tokens, widths 64 and 16) a step is a
few dozen small products, and most of its time went to everything around them. So here:

- no head axis: every weight product is one 2-D matmul on the (batch * n, width) stream;
- every array larger than a few kilobytes lives in a per-thread workspace that the next step
  reuses: allocated afresh, each was a new mapping whose first writes page-faulted (about 850
  page faults a step);
- every softmax runs down the columns of a (classes, rows) array: attention scores are kept as
  (key, batch, query) and logits as (vocabulary, batch * position). NumPy reduces along a row of
  32 or 33 numbers element by element, several times slower than it combines whole rows;
- ``1 / sqrt(d_head)`` is folded into ``W_Q`` (a 64 x 16 product instead of a pass over every
  score), and its gradient scaled back.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.floating]

__all__ = ["one_head_loss_and_grads"]


class _Workspace(threading.local):
    # per thread: the lab trains in a worker thread while the GUI may run its own steps
    def __init__(self) -> None:
        self.flat: dict[tuple[str, np.dtype], Array] = {}
        self.kept = 0  # bytes held in ``flat``
        self.mask: tuple[int, np.dtype, Array] | None = None


_WS = _Workspace()


# What one thread keeps between steps, all scratch arrays together: the lab's default model
# needs about 2 MB. A larger model's arrays are made afresh each step rather than kept: a
# thread would otherwise hold on to the largest model it ever trained (the GUI thread for the
# app's lifetime), and their products dwarf the page faults.
KEEP_BYTES = 8 << 20
# The causal mask of the last sequence length, kept when no larger than this.
KEEP_MASK_BYTES = 1 << 20


def _buf(name: str, shape: tuple[int, ...], dtype: np.dtype) -> Array:
    """A scratch array of this shape, the same memory at every step (sequence lengths vary
    from step to step, so one flat buffer per name serves them all)."""
    size = math.prod(shape)
    flat = _WS.flat.get((name, dtype))
    if flat is None or flat.size < size:
        old = 0 if flat is None else flat.nbytes
        flat = np.empty(size, dtype)
        if _WS.kept - old + flat.nbytes <= KEEP_BYTES:
            _WS.flat[name, dtype] = flat
            _WS.kept += flat.nbytes - old
    return flat[:size].reshape(shape)


def _future(n: int, dtype: np.dtype) -> Array:
    """(key j, 1, query i): 0 where query i may see key j (j <= i), -inf where it may not."""
    kept = _WS.mask
    if kept is not None and kept[0] == n and kept[1] == dtype:
        return kept[2]
    future = np.triu(np.ones((n, n), dtype=bool), 1).T[:, None, :]
    mask = np.where(future, -np.inf, 0.0).astype(dtype)
    if mask.nbytes <= KEEP_MASK_BYTES:
        _WS.mask = (n, dtype, mask)
    return mask


def _softmax_columns(s: Array, out: Array, top: Array, sums: Array, over: float = 1.0) -> None:
    """Softmax of every column of ``s`` (classes first), divided by ``over``, into ``out``
    (which may be ``s``), stable by each column's own maximum, which is left in ``top``; the
    column sums of the exponentials land in ``sums``.

    Probabilities below the smallest normal number are set to zero. As a model grows confident
    (the benchmark's repeated batch within a few hundred steps, long training runs later) more
    of them fall there, and every product a subnormal number enters takes a slow microcode path:
    the step took two thirds longer by step 1,200. The change is below 1.2e-38 (float32) per
    entry.
    """
    np.max(s, axis=0, out=top)
    np.subtract(s, top, out=out)
    np.exp(out, out=out)
    np.sum(out, axis=0, out=sums)
    out /= sums if over == 1.0 else sums * over
    # a product with the mask: np.copyto(..., where=) took eight times as long
    np.multiply(out, out >= np.finfo(out.dtype).tiny, out=out)


@functools.lru_cache(maxsize=8)
def _param_order(n_layers: int) -> tuple[str, ...]:
    names = ["embed.W_E", "pos_embed.W_pos"]
    for layer in range(n_layers):
        names += [f"blocks.{layer}.attn.W_{m}" for m in "QKVO"]
    return (*names, "unembed.W_U")


def one_head_loss_and_grads(
    params: Mapping[str, Array], toks: NDArray[np.int64], n_layers: int
) -> tuple[float, dict[str, Array]]:
    """Loss and gradients of every parameter (in parameter order) for a model whose layers
    have one head each, on checked tokens (batch, n)."""
    w_e, w_u = params["embed.W_E"], params["unembed.W_U"]
    dt = w_e.dtype
    b, n = toks.shape
    n_vocab, d = w_e.shape
    e = params["blocks.0.attn.W_Q"].shape[2]
    rows = b * n
    scale = 1.0 / math.sqrt(e)
    top, sums = _buf("top", (b, n), dt), _buf("sums", (b, n), dt)
    future = _future(n, dt)
    flat_toks = toks.reshape(-1)

    # forward, keeping what the backward pass reads; pattern[j, b, i]: query i's weight on key j
    x = np.take(w_e, flat_toks, axis=0, out=_buf("x0", (rows, d), dt))
    x.reshape(b, n, d)[...] += params["pos_embed.W_pos"][:n]
    xs, ws, qkvs, patterns, zs = [x], [], [], [], []
    for layer in range(n_layers):
        p = f"blocks.{layer}.attn."
        w = np.concatenate([params[p + "W_Q"][0] * scale, params[p + "W_K"][0]], axis=1)
        w = np.concatenate([w, params[p + "W_V"][0]], axis=1)
        qkv = np.matmul(x, w, out=_buf(f"qkv{layer}", (rows, 3 * e), dt))
        q, k, v = (qkv[:, i * e : (i + 1) * e].reshape(b, n, e) for i in range(3))
        s = _buf(f"pattern{layer}", (n, b, n), dt)
        np.matmul(k, q.transpose(0, 2, 1), out=s.transpose(1, 0, 2))
        s += future
        _softmax_columns(s, s, top, sums)
        z = np.matmul(s.transpose(1, 2, 0), v, out=_buf(f"z{layer}", (b, n, e), dt))
        z = z.reshape(rows, e)
        x_out = np.matmul(z, params[p + "W_O"][0], out=_buf(f"x{layer + 1}", (rows, d), dt))
        x_out += x
        x = x_out
        xs.append(x)
        ws.append(w)
        qkvs.append((q, k, v))
        patterns.append(s)
        zs.append(z)

    # loss: the mean over positions 0..n-2 of log-sum-exp minus the target's logit
    logits = np.matmul(w_u.T, x.T, out=_buf("logits", (n_vocab, rows), dt))
    # the gradient of the mean loss: softmax / count, less 1 / count at each target
    count = b * (n - 1)
    dlogits = _buf("dlogits", (n_vocab, rows), dt)
    top, sums = top.reshape(rows), sums.reshape(rows)
    _softmax_columns(logits, dlogits, top, sums, over=count)
    pos = (np.arange(b)[:, None] * n + np.arange(n - 1)).reshape(-1)
    target = toks[:, 1:].reshape(-1)
    # from the logits, not from the softmax: a tiny probability may underflow
    logp = logits[target, pos] - top[pos] - np.log(sums[pos])
    loss = -float(logp.mean())

    # backward
    dlogits[target, pos] -= 1.0 / count
    dlogits.reshape(n_vocab, b, n)[:, :, -1] = 0.0  # the last position predicts nothing
    grads: dict[str, Array] = {"unembed.W_U": (dlogits @ x).T}
    dx = np.matmul(dlogits.T, w_u.T, out=_buf("dx", (rows, d), dt))
    back = _buf("back", (rows, d), dt)
    for layer in reversed(range(n_layers)):
        p = f"blocks.{layer}.attn."
        q, k, v = qkvs[layer]
        s, w, z = patterns[layer], ws[layer], zs[layer]
        grads[p + "W_O"] = (z.T @ dx)[None]
        dz = np.matmul(dx, params[p + "W_O"][0].T, out=_buf("dz", (rows, e), dt))
        dz = dz.reshape(b, n, e)
        dqkv = _buf("dqkv", (rows, 3 * e), dt)
        dq, dk, dv = (dqkv[:, i * e : (i + 1) * e].reshape(b, n, e) for i in range(3))
        np.matmul(s.transpose(1, 0, 2), dz, out=dv)
        ds = _buf("ds", (n, b, n), dt)
        np.matmul(v, dz.transpose(0, 2, 1), out=ds.transpose(1, 0, 2))
        # softmax backward, down the columns: ds = s * (dpattern - sum_j dpattern * s)
        prod = np.multiply(ds, s, out=_buf("prod", (n, b, n), dt))
        ds -= np.sum(prod, axis=0, out=sums.reshape(b, n))
        ds *= s
        np.matmul(ds.transpose(1, 2, 0), k, out=dq)
        np.matmul(ds.transpose(1, 0, 2), q, out=dk)
        dw = xs[layer].T @ dqkv
        dw[:, :e] *= scale  # the scale folded into W_Q
        grads[p + "W_Q"] = dw[None, :, :e]
        grads[p + "W_K"] = dw[None, :, e : 2 * e]
        grads[p + "W_V"] = dw[None, :, 2 * e :]
        dx += np.matmul(dqkv, w.T, out=back)

    # the embedding's gradient sums each position's stream gradient into its token's row: a
    # one-hot product, several times faster than np.add.at's scatter
    one_hot = _buf("one_hot", (n_vocab, rows), dt)
    one_hot.fill(0.0)
    one_hot[flat_toks, np.arange(rows)] = 1.0
    grads["embed.W_E"] = one_hot @ dx
    d_pos = np.zeros_like(params["pos_embed.W_pos"])
    np.matmul(np.ones(b, dt), dx.reshape(b, n * d), out=d_pos[:n].reshape(n * d))  # batch sum
    grads["pos_embed.W_pos"] = d_pos
    return loss, {name: grads[name] for name in _param_order(n_layers)}
