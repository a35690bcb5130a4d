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
Progress = Callable[[float], None]


@dataclass(frozen=True)
class Metric:
    """A number read off the stream after the last layer: ``of(resid)`` maps (B, n, d) to (B,).
    ``label`` says in words what it measures."""

    of: Callable[[Array], Array]
    label: str


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
    return Metric(of, f"logit of {names[0]!r} minus logit of {names[1]!r} at the last token")


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
    out = np.empty((layers, heads), np.float32)
    work = _work_done(layers)
    for layer in range(layers):
        for chunk in _chunks(heads, n):
            hs = np.asarray(chunk)
            clean_z = np.asarray(source.z[layer], dtype=np.float32)[hs]  # (b, n, d_head)

            def edit(at: int, z: Array, lay=layer, hs=hs, clean_z=clean_z) -> None:
                if at == lay:
                    z[np.arange(len(hs)), hs] = clean_z

            start = np.repeat(np.asarray(target.resid[layer])[None], len(hs), axis=0)
            out[layer, hs] = metric.of(run_from(model, start, layer, edit_z=edit))
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
    out = np.empty((layers, n), np.float32)
    work = _work_done(layers)
    for layer in range(layers):
        clean, base = np.asarray(source.resid[layer]), np.asarray(target.resid[layer])
        for chunk in _chunks(n, n):
            ps = np.asarray(chunk)
            start = np.repeat(base[None], len(ps), axis=0)
            start[np.arange(len(ps)), ps] = clean[ps]
            out[layer, ps] = metric.of(run_from(model, start, layer))
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
