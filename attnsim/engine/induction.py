"""A small attention-only transformer, its manual backward pass, and the data that teaches it
to copy: the model of the induction-head lab.

No MLP, no LayerNorm, no biases. Parameter names and shapes are the ones TransformerLens uses,
so that readers who know that library recognise them::

    embed.W_E              (d_vocab, d_model)
    pos_embed.W_pos        (n_ctx, d_model)
    blocks.{l}.attn.W_Q    (n_heads, d_model, d_head)     also W_K, W_V
    blocks.{l}.attn.W_O    (n_heads, d_head, d_model)
    unembed.W_U            (d_model, d_vocab)

Forward (row vectors, as everywhere in attnsim)::

    resid = W_E[tokens] + W_pos[:n]
    for each layer, for each head h:
        q, k, v = resid @ W_Q[h], resid @ W_K[h], resid @ W_V[h]
        pattern = softmax(causal(q k^T / sqrt(d_head)))
        z = pattern @ v
    resid = resid + sum_h z @ W_O[h]
    logits = resid @ W_U

The loss is the mean natural-log cross-entropy of ``logits[:, :-1]`` predicting
``tokens[:, 1:]`` over batch and positions. The metrics, circuits and hand-built models that read
this model are in :mod:`attnsim.engine.induction_circuits`.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from .induction_step import one_head_loss_and_grads
from .training import Adam

Array = NDArray[np.floating]
Params = dict[str, Array]
AblationMode = Literal["zero", "mean"]

__all__ = [
    "Ablation",
    "Config",
    "InductionTrainer",
    "Trace",
    "forward",
    "init_params",
    "loss_and_grads",
    "one_blas_thread",
    "param_names",
    "repeated_sequences",
]

# Large enough for every lab preset and small enough that a typo cannot allocate gigabytes.
LIMITS = {
    "n_layers": (1, 4),
    "n_heads": (1, 16),
    "d_model": (1, 1024),
    "d_head": (1, 256),
    "d_vocab": (2, 4096),
    "n_ctx": (2, 2048),
}


@dataclass(frozen=True)
class Config:
    """The shape of an attention-only transformer. The defaults are the lab's model.

    One head per layer by default: with more, training spreads the induction mechanism over
    several layer-1 heads that back each other up, and ablating any one of them leaves most of
    the repeated-half loss in place (measured: two heads, each ablation gives back about a
    quarter of the gap), so no single head can be shown to be *the* induction head.
    """

    n_layers: int = 2
    n_heads: int = 1
    d_model: int = 64
    d_head: int = 16
    d_vocab: int = 32
    n_ctx: int = 33

    def __post_init__(self) -> None:
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"Config.{name} must be a whole number, got {value!r}")
            if not lo <= value <= hi:
                raise ValueError(f"Config.{name} must lie in [{lo}, {hi}], got {value}")


def one_blas_thread() -> threadpool_limits:
    """A context in which BLAS uses one thread: training steps of this model multiply small
    matrices, which several OpenBLAS threads slow down (on a busy 2-core machine, 4.8 ms per
    step with one thread against 92 ms with the default)."""
    return threadpool_limits(limits=1, user_api="blas")


def param_names(cfg: Config) -> list[str]:
    """Every parameter name of a model of this shape, in a fixed order."""
    names = ["embed.W_E", "pos_embed.W_pos"]
    for layer in range(cfg.n_layers):
        names += [f"blocks.{layer}.attn.W_{m}" for m in ("Q", "K", "V", "O")]
    return [*names, "unembed.W_U"]


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {
        "embed.W_E": (cfg.d_vocab, cfg.d_model),
        "pos_embed.W_pos": (cfg.n_ctx, cfg.d_model),
        "unembed.W_U": (cfg.d_model, cfg.d_vocab),
    }
    for layer in range(cfg.n_layers):
        for m in ("Q", "K", "V"):
            shapes[f"blocks.{layer}.attn.W_{m}"] = (cfg.n_heads, cfg.d_model, cfg.d_head)
        shapes[f"blocks.{layer}.attn.W_O"] = (cfg.n_heads, cfg.d_head, cfg.d_model)
    return {name: shapes[name] for name in param_names(cfg)}


def init_params(cfg: Config, seed: int, *, dtype: type = np.float32) -> Params:
    """Normal weights with TransformerLens's GPT-2 scale, ``0.8 / sqrt(d_model)``.

    Drawn in float64 from ``np.random.default_rng(seed)`` in :func:`param_names` order and then
    cast, so the float32 and float64 models of one seed start from the same point.
    """
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {np.dtype(dtype)}")
    rng = np.random.default_rng(seed)
    std = 0.8 / math.sqrt(cfg.d_model)
    return {
        name: (rng.standard_normal(shape) * std).astype(dtype)
        for name, shape in param_shapes(cfg).items()
    }


@functools.lru_cache(maxsize=32)
def _config_and_shapes(*sizes: int) -> tuple[Config, tuple[tuple[str, tuple[int, ...]], ...]]:
    # cached: every training step checks the same shapes (building them was 3 % of a step)
    cfg = Config(*sizes)
    return cfg, tuple(param_shapes(cfg).items())


def config_of(params: Mapping[str, Array]) -> Config:
    """The configuration a parameter dict was made for (read from its shapes)."""
    try:
        d_vocab, d_model = params["embed.W_E"].shape
        n_ctx = params["pos_embed.W_pos"].shape[0]
        n_layers = sum(1 for k in params if k.endswith(".attn.W_Q"))
        n_heads, _, d_head = params["blocks.0.attn.W_Q"].shape
    except (KeyError, ValueError) as exc:
        raise ValueError(f"not an attention-only model's parameters: {exc}") from None
    cfg, shapes = _config_and_shapes(n_layers, n_heads, d_model, d_head, d_vocab, n_ctx)
    for name, shape in shapes:
        got = params.get(name)
        if got is None or got.shape != shape:
            have = None if got is None else got.shape
            raise ValueError(f"parameter {name}: expected shape {shape}, got {have}")
    return cfg


@dataclass(frozen=True)
class Ablation:
    """Heads whose output is replaced: by zero, or by its mean over the batch at each position.

    ``heads`` holds (layer, head) pairs. Mean ablation keeps the head's average message and
    removes only what depends on the particular sequence.
    """

    heads: frozenset[tuple[int, int]] = frozenset()
    mode: AblationMode = "zero"

    def __post_init__(self) -> None:
        if self.mode not in ("zero", "mean"):
            raise ValueError(f"ablation mode must be 'zero' or 'mean', got {self.mode!r}")

    @classmethod
    def of(cls, heads: Iterable[tuple[int, int]], mode: AblationMode = "zero") -> Ablation:
        return cls(frozenset((int(layer), int(h)) for layer, h in heads), mode)


@dataclass(frozen=True)
class Trace:
    """Every intermediate of one forward pass (batch-first).

    ``patterns[l]`` is (batch, n_heads, n, n); ``q[l]``, ``k[l]``, ``v[l]``, ``z[l]`` are
    (batch, n_heads, n, d_head) with ``z`` after any ablation; ``resid[0]`` is the embedding
    and ``resid[l + 1]`` the stream after layer ``l``.
    """

    tokens: NDArray[np.int64]
    patterns: list[Array]
    q: list[Array]
    k: list[Array]
    v: list[Array]
    z: list[Array]
    resid: list[Array]
    logits: Array
    ablation: Ablation = field(default_factory=Ablation)


def _tokens(tokens: ArrayLike, cfg: Config) -> NDArray[np.int64]:
    t = np.asarray(tokens)
    if t.ndim == 1:
        t = t[None, :]
    if t.ndim != 2 or t.shape[1] < 2:
        raise ValueError(f"tokens must be (batch, n) with n >= 2, got shape {t.shape}")
    if t.dtype.kind not in "iu":  # signed or unsigned integers, cheaper than np.issubdtype
        raise ValueError(f"tokens must be integers, got dtype {t.dtype}")
    if t.shape[1] > cfg.n_ctx:
        raise ValueError(f"sequence length {t.shape[1]} exceeds n_ctx = {cfg.n_ctx}")
    if t.size and (t.min() < 0 or t.max() >= cfg.d_vocab):
        raise ValueError(f"token ids must lie in [0, {cfg.d_vocab}), got {t.min()}..{t.max()}")
    return t.astype(np.int64, copy=False)


_FUTURE: dict[int, NDArray[np.bool_]] = {}


def _future(n: int) -> NDArray[np.bool_]:
    # the mask is rebuilt for every layer of every step otherwise; n takes few values
    mask = _FUTURE.get(n)
    if mask is None:
        mask = _FUTURE[n] = np.triu(np.ones((n, n), dtype=bool), 1)
    return mask


def _softmax_causal(scores: Array) -> Array:
    s = np.where(_future(scores.shape[-1]), -np.inf, scores)
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s


def _heads_first(x: Array, n_heads: int) -> Array:
    """(b, n, h * e) -> (b, h, n, e)."""
    b, n, he = x.shape
    return x.reshape(b, n, n_heads, he // n_heads).transpose(0, 2, 1, 3)


def _heads_last(x: Array) -> Array:
    """(b, h, n, e) -> (b, n, h * e), the inverse of :func:`_heads_first`."""
    b, h, n, e = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, h * e)


def _stacked_in(w: Array) -> Array:
    """(h, d_model, e) -> (d_model, h * e): every head's projection in one matmul."""
    h, d, e = w.shape
    return w.transpose(1, 0, 2).reshape(d, h * e)


def forward(
    params: Mapping[str, Array], tokens: ArrayLike, *, ablate: Ablation | None = None
) -> Trace:
    """Run the model on ``tokens`` (batch, n) or (n,), keeping every intermediate."""
    return _forward(params, tokens, ablate, config_of(params))


def _forward(
    params: Mapping[str, Array], tokens: ArrayLike, ablate: Ablation | None, cfg: Config
) -> Trace:
    toks = _tokens(tokens, cfg)
    ablation = ablate or Ablation()
    for layer, head in ablation.heads:
        if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
            raise ValueError(f"ablated head L{layer}H{head} is not in the model")
    b, n = toks.shape
    scale = 1.0 / math.sqrt(cfg.d_head)
    resid = params["embed.W_E"][toks] + params["pos_embed.W_pos"][:n]
    # Products with a weight matrix run on (b n, d) views: NumPy's matmul would otherwise
    # loop over the batch, one small product per sequence.
    kept: dict[str, list[Array]] = {"patterns": [], "q": [], "k": [], "v": [], "z": []}
    streams = [resid]
    for layer in range(cfg.n_layers):
        p = f"blocks.{layer}.attn."
        # one (b n, d) @ (d, 3 h e) product instead of 3 h small ones: BLAS does the batching
        w_qkv = np.concatenate([_stacked_in(params[p + m]) for m in ("W_Q", "W_K", "W_V")], 1)
        qkv = (resid.reshape(b * n, -1) @ w_qkv).reshape(b, n, -1)
        q, k, v = (_heads_first(a, cfg.n_heads) for a in np.split(qkv, 3, axis=-1))
        pattern = _softmax_causal((q @ k.swapaxes(-1, -2)) * scale)
        z = _ablate(pattern @ v, layer, ablation)
        w_o = params[p + "W_O"].reshape(-1, cfg.d_model)
        resid = resid + (_heads_last(z).reshape(b * n, -1) @ w_o).reshape(b, n, -1)
        for name, value in zip(kept, (pattern, q, k, v, z), strict=True):
            kept[name].append(value)
        streams.append(resid)
    logits = (resid.reshape(b * n, -1) @ params["unembed.W_U"]).reshape(b, n, -1)
    return Trace(toks, resid=streams, logits=logits, ablation=ablation, **kept)


def _ablate(z: Array, layer: int, ablation: Ablation) -> Array:
    heads = [h for (l_, h) in ablation.heads if l_ == layer]
    if not heads:
        return z
    z = z.copy()
    if ablation.mode == "zero":
        z[:, heads] = 0.0
    else:
        z[:, heads] = z[:, heads].mean(axis=0, keepdims=True)
    return z


def _ablate_grad(dz: Array, layer: int, ablation: Ablation) -> Array:
    # the adjoint of _ablate: zeroing passes nothing back; a batch mean spreads its gradient
    heads = [h for (l_, h) in ablation.heads if l_ == layer]
    if not heads:
        return dz
    dz = dz.copy()
    if ablation.mode == "zero":
        dz[:, heads] = 0.0
    else:
        dz[:, heads] = dz[:, heads].mean(axis=0, keepdims=True)
    return dz


def _log_probs(trace: Trace) -> Array:
    """Log-softmax of the logits of every position but the last (they predict the next token)."""
    logits = trace.logits[:, :-1]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def per_token_loss(trace: Trace) -> Array:
    """Cross-entropy (nats) of predicting token i + 1 from position i, shape (batch, n - 1)."""
    return _token_loss(trace, _log_probs(trace))


def _token_loss(trace: Trace, logp: Array) -> Array:
    target = trace.tokens[:, 1:]
    return -np.take_along_axis(logp, target[..., None], axis=-1)[..., 0]


def loss_of(trace: Trace) -> float:
    """The training loss: mean of :func:`per_token_loss` over batch and positions."""
    return float(per_token_loss(trace).mean())


def loss_and_grads(
    params: Mapping[str, Array], tokens: ArrayLike, *, ablate: Ablation | None = None
) -> tuple[float, Params]:
    """The loss and its gradient for every parameter (same keys, shapes and dtype)."""
    cfg = config_of(params)  # checked once for both passes
    if cfg.n_heads == 1 and not (ablate and ablate.heads):
        # the lab's default shape: one fused step without a head axis (see induction_step)
        return one_head_loss_and_grads(params, _tokens(tokens, cfg), cfg.n_layers)
    trace = _forward(params, tokens, ablate, cfg)
    # one log-softmax of the logits serves the loss and (exponentiated) the backward pass
    logp = _log_probs(trace)
    return float(_token_loss(trace, logp).mean()), _backward(params, trace, np.exp(logp), cfg)


def backward(params: Mapping[str, Array], trace: Trace) -> Params:
    """Gradients of :func:`loss_of` by hand, reusing the forward pass's intermediates."""
    return _backward(params, trace, np.exp(_log_probs(trace)), config_of(params))


def _backward(params: Mapping[str, Array], trace: Trace, probs: Array, cfg: Config) -> Params:
    """:func:`backward` given the softmax of the logits of every position but the last
    (``probs``, a fresh array: it is changed in place) and the checked configuration."""
    toks = trace.tokens
    b, n = toks.shape
    scale = 1.0 / math.sqrt(cfg.d_head)
    grads: Params = {}

    logits = trace.logits
    dlogits = np.zeros_like(logits)
    rows, cols = np.indices(toks[:, 1:].shape)
    probs[rows, cols, toks[:, 1:]] -= 1.0
    dlogits[:, :-1] = probs / (b * (n - 1))

    final = trace.resid[-1]
    grads["unembed.W_U"] = final.reshape(-1, cfg.d_model).T @ dlogits.reshape(-1, cfg.d_vocab)
    dresid = (dlogits.reshape(-1, cfg.d_vocab) @ params["unembed.W_U"].T).reshape(b, n, -1)

    h, e, d = cfg.n_heads, cfg.d_head, cfg.d_model
    for layer in reversed(range(cfg.n_layers)):
        p = f"blocks.{layer}.attn."
        x = trace.resid[layer].reshape(b * n, d)
        q, k, v, z = trace.q[layer], trace.k[layer], trace.v[layer], trace.z[layer]
        pattern = trace.patterns[layer]
        # resid_out = resid_in + sum_h z_h W_O[h]: the stream's gradient passes straight through
        flat = dresid.reshape(b * n, d)
        grads[p + "W_O"] = (_heads_last(z).reshape(b * n, h * e).T @ flat).reshape(h, e, d)
        dz = _heads_first((flat @ params[p + "W_O"].reshape(h * e, d).T).reshape(b, n, -1), h)
        dz = _ablate_grad(dz, layer, trace.ablation)
        dpattern = dz @ v.swapaxes(-1, -2)
        dv = pattern.swapaxes(-1, -2) @ dz
        dscores = pattern * (dpattern - (dpattern * pattern).sum(axis=-1, keepdims=True))
        dscores *= scale
        dq = dscores @ k
        dk = dscores.swapaxes(-1, -2) @ q
        # Q, K and V side by side: one product for their weights' gradients, one for the stream's
        dqkv = np.concatenate([_heads_last(a).reshape(b * n, h * e) for a in (dq, dk, dv)], 1)
        w_qkv = np.concatenate([_stacked_in(params[p + m]) for m in ("W_Q", "W_K", "W_V")], 1)
        dw = (x.T @ dqkv).reshape(d, 3, h, e).transpose(1, 2, 0, 3)
        for i, name in enumerate(("W_Q", "W_K", "W_V")):
            grads[p + name] = dw[i]
        dresid = dresid + (dqkv @ w_qkv.T).reshape(b, n, d)

    # The embedding's gradient sums each position's stream gradient into its token's row: a
    # (d_vocab, b n) one-hot product, several times faster than np.add.at's scatter.
    flat_toks = toks.reshape(-1)
    one_hot = (np.arange(cfg.d_vocab)[:, None] == flat_toks[None, :]).astype(dresid.dtype)
    grads["embed.W_E"] = one_hot @ dresid.reshape(-1, cfg.d_model)
    dW_pos = np.zeros_like(params["pos_embed.W_pos"])
    dW_pos[:n] = dresid.sum(axis=0)
    grads["pos_embed.W_pos"] = dW_pos
    dtype = params["embed.W_E"].dtype
    return {name: grads[name].astype(dtype, copy=False) for name in param_names(cfg)}


def repeated_sequences(
    batch: int,
    half_len: int,
    d_vocab: int,
    rng: np.random.Generator,
    *,
    bos: int | None = None,
) -> NDArray[np.int64]:
    """Random tokens whose second half copies the first: (batch, 2 * half_len [+ 1]).

    With ``bos`` set, every sequence starts with that token and the halves are drawn from the
    other ``d_vocab - 1`` ids, so the BOS never appears inside a half.
    """
    if batch < 1 or half_len < 1:
        raise ValueError(f"batch and half_len must be at least 1, got {batch} and {half_len}")
    if bos is not None and not 0 <= bos < d_vocab:
        raise ValueError(f"bos must be a token id in [0, {d_vocab}), got {bos}")
    choices = d_vocab - (bos is not None)
    if choices < 1:
        raise ValueError(f"d_vocab = {d_vocab} leaves no token to draw")
    half = rng.integers(0, choices, size=(batch, half_len))
    if bos is not None:
        half = half + (half >= bos)
    seq = np.concatenate([half, half], axis=1)
    if bos is not None:
        seq = np.concatenate([np.full((batch, 1), bos), seq], axis=1)
    return seq.astype(np.int64)


class InductionTrainer:
    """Seeded training on fresh repeated sequences each step, with the lab's Adam.

    Each step draws its half length from ``min_half_len..half_len`` (all sequences of a batch
    share it). With one fixed length the copy always sits ``half_len`` positions back, and a
    single layer-0 head learns that offset from the positional embeddings alone: the repeated
    half is predicted with no previous-token head and no induction mechanism at all. Varying
    the distance leaves matching on content, the induction circuit, as the way to predict it.
    ``min_half_len=None`` means ``max(1, half_len // 2)``; set it to ``half_len`` for a fixed
    length.

    Two trainers built with the same arguments produce the same losses, bit for bit, on the
    same machine: the data stream has its own generator, separate from the initial weights.
    """

    def __init__(
        self,
        cfg: Config,
        *,
        seed: int = 0,
        lr: float = 3e-3,
        batch: int = 32,
        half_len: int = 16,
        bos: int | None = 0,
        dtype: type = np.float32,
        min_half_len: int | None = None,
    ) -> None:
        lo = max(1, half_len // 2) if min_half_len is None else min_half_len
        if not 1 <= lo <= half_len:
            raise ValueError(f"min_half_len must lie in [1, half_len = {half_len}], got {lo}")
        if 2 * half_len + (bos is not None) > cfg.n_ctx:
            raise ValueError(
                f"half_len {half_len} needs n_ctx >= {2 * half_len + (bos is not None)}, "
                f"the model has {cfg.n_ctx}"
            )
        self.cfg, self.seed, self.batch, self.half_len, self.bos = cfg, seed, batch, half_len, bos
        self.min_half_len = lo
        self.params = init_params(cfg, seed, dtype=dtype)
        self.opt = Adam(lr=lr)
        self.data_rng = np.random.default_rng([seed, 1])
        self.step_count = 0
        # One float a step (step i's loss at index i - 1): the lab may train for hours, and a
        # record object a step would grow by about 100 bytes a step instead of 8.
        self.losses = array("d")

    def next_batch(self) -> NDArray[np.int64]:
        half = int(self.data_rng.integers(self.min_half_len, self.half_len + 1))
        return repeated_sequences(self.batch, half, self.cfg.d_vocab, self.data_rng, bos=self.bos)

    def step(self) -> float:
        loss, grads = loss_and_grads(self.params, self.next_batch())
        self.opt.step(self.params, grads)
        self.step_count += 1
        self.losses.append(loss)
        return loss
