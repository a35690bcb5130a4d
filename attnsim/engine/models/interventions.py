"""Activation patching on SmolLM2 and MiniLM: copy one activation from a clean run into a
corrupted run and measure how much of the clean-corrupted gap of a metric comes back.

Two kinds of patch, each from the clean run into the corrupted one (texts of equal token
length): (a) one head's output z at every position, for every (layer, head); (b) the residual
stream entering a layer at one position, for every (layer, position). Each patched run starts at
the patched layer from the corrupted run's residual stream (:func:`layers.run_from`), and the
runs of one layer go through together as a batch.

The metrics: for SmolLM2, the logit difference of two next tokens at the last position
(:func:`logit_difference`, e.g. logit(" Mary") - logit(" John")); for MiniLM, the cosine of one
token's final hidden state to its clean value (:func:`hidden_cosine`). The fraction restored by
a patch is (patched - corrupted) / (clean - corrupted): 0 changes nothing, 1 restores the clean
value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .heads import Array
from .layers import final_logits, is_causal, n_layers, run_from

__all__ = [
    "MAX_ROWS",
    "Metric",
    "Patching",
    "activation_patching",
    "hidden_cosine",
    "logit_difference",
    "patch_heads",
    "patch_resid",
    "single_token",
]

# rows (runs x tokens) of one batch: bounds a batch's memory (SmolLM2's feed-forward holds two
# (rows, 1536) float32 arrays: 50 MB at 4096 rows)
MAX_ROWS = 4096
# SmolLM2's residual patching batches the runs of about this many rows (runs x positions) from
# the first position of their group: fewer rows per batch cost more in overheads than they save
_GROUP_ROWS = 256
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Metric:
    """A number read off the stream after the last layer: ``of(resid)`` maps (B, n, d) to (B,).
    ``label`` says in words what it measures; ``last_only``: it reads only the last position."""

    of: Callable[[Array], Array]
    label: str
    last_only: bool = False


def single_token(model: Any, text: str) -> int:
    """The id of ``text`` when SmolLM2 reads it as one token (" Mary" with its space); raises
    ValueError naming the pieces otherwise."""
    ids = model.encode(text)
    if len(ids) != 1:
        pieces = model.pieces(ids)
        raise ValueError(
            f"the next token {text!r} must be one token for the model, but it reads as "
            f"{len(ids)}: {pieces!r}"
        )
    return int(ids[0])


def logit_difference(model: Any, good: int, bad: int) -> Metric:
    """SmolLM2's logit of token ``good`` minus that of token ``bad`` at the last position."""
    if not is_causal(model):
        raise ValueError("the logit difference needs a model that predicts the next token")
    ids = np.array([good, bad], dtype=np.int64)

    def of(resid: Array) -> Array:
        lg = final_logits(model, resid[:, -1], ids)
        return (lg[:, 0] - lg[:, 1]).astype(np.float32)

    names = model.pieces(ids)
    label = f"logit of {names[0]!r} minus logit of {names[1]!r} at the last token"
    return Metric(of, label, last_only=True)


def hidden_cosine(clean_resid: Array, position: int) -> Metric:
    """The cosine of token ``position``'s final hidden state to its value in the clean run
    (``clean_resid``, (n, d): the clean trace's ``resid[-1]``)."""
    ref = np.asarray(clean_resid, dtype=np.float32)[position]
    ref = ref / max(float(np.linalg.norm(ref)), 1e-12)

    def of(resid: Array) -> Array:
        h = resid[:, position]
        size = np.maximum(np.linalg.norm(h, axis=-1), np.float32(1e-12))
        return ((h @ ref) / size).astype(np.float32)

    return Metric(of, f"cosine of token {position}'s final hidden state to its clean value")


def _chunks(total: int, n: int) -> list[range]:
    per = max(1, MAX_ROWS // max(n, 1))
    return [range(lo, min(lo + per, total)) for lo in range(0, total, per)]


def _shared_prefix(model: Any, source: Any, target: Any) -> int:
    """How many first tokens the two runs share (SmolLM2; 0 for MiniLM, whose every position
    sees every token), at most n - 1."""
    if not is_causal(model):
        return 0
    a, b = np.asarray(source.ids), np.asarray(target.ids)
    differ = np.flatnonzero(a != b)
    return int(min(differ[0] if differ.size else len(a), len(a) - 1))


def _run(model: Any, start: Array, layer: int, edit, target: Any, off: int, metric: Metric):
    """The patched runs from ``layer``: the known positions (before ``off``) read from the
    corrupted ``target`` run, only the last position in the last layer when the metric reads
    only that one."""
    if not is_causal(model):
        return run_from(model, start, layer, edit_z=edit)
    return run_from(
        model, start, layer, edit_z=edit, known=(target, off), last_only=metric.last_only
    )


def _work_done(layers: int) -> Array:
    """The share of a patching's work done after each layer's batch: a run patched at layer l
    runs layers - l layers."""
    return np.cumsum(np.arange(layers, 0, -1)) / (layers * (layers + 1) / 2)


def _check_pair(source: Any, target: Any) -> None:
    if source.resid.shape != target.resid.shape:
        raise ValueError(
            f"the clean and corrupted texts must have the same number of tokens, got "
            f"{source.resid.shape[1]} and {target.resid.shape[1]}"
        )


def patch_heads(
    model: Any, source: Any, target: Any, metric: Metric, progress: Progress | None = None
) -> Array:
    """The metric after patching each head's output z (every position) from the ``source``
    trace into the ``target`` trace, (layers, heads). ``progress(fraction)`` is called after
    each batch (raise from it to stop)."""
    _check_pair(source, target)
    layers, heads = n_layers(model), model.config.n_heads
    n = source.resid.shape[1]
    off = _shared_prefix(model, source, target)
    out = np.empty((layers, heads), np.float32)
    work = _work_done(layers)
    for layer in range(layers):
        for chunk in _chunks(heads, n - off):
            hs = np.asarray(chunk)
            clean_z = np.asarray(source.z[layer], dtype=np.float32)[hs]  # (b, n, d_head)

            def edit(at: int, z: Array, lay=layer, hs=hs, clean_z=clean_z) -> None:
                if at == lay:  # z holds the last positions computed
                    z[np.arange(len(hs)), hs] = clean_z[:, n - z.shape[2] :]

            start = np.repeat(np.asarray(target.resid[layer])[None, off:], len(hs), axis=0)
            out[layer, hs] = metric.of(_run(model, start, layer, edit, target, off, metric))
        if progress is not None:
            progress(float(work[layer]))
    return out


def patch_resid(
    model: Any, source: Any, target: Any, metric: Metric, progress: Progress | None = None
) -> Array:
    """The metric after patching the residual stream entering each layer at each position from
    ``source`` into ``target``, (layers, n)."""
    _check_pair(source, target)
    layers = n_layers(model)
    n = source.resid.shape[1]
    causal = is_causal(model)
    out = np.empty((layers, n), np.float32)
    work = _work_done(layers)
    # SmolLM2: a run patched at position p repeats the corrupted run before p, so it starts
    # at p; the positions go in groups, each started at its first position
    group = max(1, -(-_GROUP_ROWS // n)) if causal else n
    for layer in range(layers):
        clean, base = np.asarray(source.resid[layer]), np.asarray(target.resid[layer])
        # a position whose stream is the same in both runs: its patch changes nothing
        same = (clean == base).all(axis=-1)
        out[layer, same] = metric.of(np.asarray(target.resid[-1])[None])[0]
        todo = np.flatnonzero(~same)
        for lo in range(0, len(todo), group):
            ps_all = todo[lo : lo + group]
            off = int(ps_all[0]) if causal else 0
            for chunk in _chunks(len(ps_all), n - off):
                ps = ps_all[np.asarray(chunk)]
                start = np.repeat(base[None, off:], len(ps), axis=0)
                start[np.arange(len(ps)), ps - off] = clean[ps]
                out[layer, ps] = metric.of(_run(model, start, layer, None, target, off, metric))
        if progress is not None:
            progress(float(work[layer]))
    return out


@dataclass(frozen=True)
class Patching:
    """The metric on the clean and the corrupted run, and after each patch: ``heads``
    (layers, heads) and ``resid`` (layers, n), or None when not asked for."""

    clean: float
    corrupted: float
    heads: Array | None
    resid: Array | None
    label: str

    @property
    def gap(self) -> float:
        return self.clean - self.corrupted

    def restored(self, values: Array) -> Array:
        """The fraction of the clean-corrupted gap that ``values`` (metrics) restore."""
        return ((np.asarray(values) - self.corrupted) / self.gap).astype(np.float32)


def activation_patching(
    model: Any,
    clean: Any,
    corrupted: Any,
    metric: Metric,
    *,
    heads: bool = True,
    resid: bool = True,
    progress: Progress | None = None,
) -> Patching:
    """Patch every head and/or every (layer, position) from the ``clean`` trace into the
    ``corrupted`` one. Raises ValueError when the token lengths differ or when the metric is
    the same on both runs (nothing to restore)."""
    _check_pair(clean, corrupted)
    m_clean = float(metric.of(np.asarray(clean.resid[-1])[None])[0])
    m_corr = float(metric.of(np.asarray(corrupted.resid[-1])[None])[0])
    if not abs(m_clean - m_corr) > 1e-6 * max(1.0, abs(m_clean)):
        raise ValueError(
            f"the clean and corrupted texts give the same {metric.label} ({m_clean:.4g}): "
            "there is no gap for a patch to restore"
        )
    share = 0.5 if heads and resid else 1.0

    def part(offset: float) -> Progress | None:
        if progress is None:
            return None
        return lambda f: progress(offset + share * f)

    h = patch_heads(model, clean, corrupted, metric, part(0.0)) if heads else None
    later = part(share if heads else 0.0)
    r = patch_resid(model, clean, corrupted, metric, later) if resid else None
    return Patching(m_clean, m_corr, h, r, metric.label)
