"""The arrows the stepper draws at each stage, projected to a plane.

:func:`stage_arrows` gives the 2-D arrows of a stage; :func:`plane_basis` chooses the plane
(the first two coordinates, or the best plane through the vectors shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.geometry import best_subspace
from attnsim.engine.ticks import nice_ceil, nice_floor

from .snapshot import N_STAGES, StepSnapshot

Array = NDArray[np.float64]

__all__ = ["Arrow", "arrow_extent", "nice_extent", "plane_basis", "stage_arrows"]


# ---- arrows in a plane ------------------------------------------------------------------------
@dataclass(frozen=True)
class Arrow:
    """One arrow of a stage's plane, already projected: ``tail`` and ``head`` are (2,)."""

    label: str
    role: str  # "x", "absent", "q", "k", "v", "mix", "class", "old", "new", "step"
    tail: tuple[float, float]
    head: tuple[float, float]


def plane_basis(d: int, mode: str = "first", points: Array | None = None) -> tuple[Array, str]:
    """A (d, 2) basis for drawing d-coordinate vectors in a plane, and its description.

    ``mode`` "first": the first two coordinates (e1, e2; exact when d = 2). "pca": the best
    plane through the origin for ``points`` (m, d), from :func:`geometry.best_subspace`.
    """
    if d == 1:
        return np.array([[1.0, 0.0]]), "e1 (one coordinate)"
    if d == 2 or mode == "first" or points is None or len(points) == 0:
        return np.eye(d)[:, :2].copy(), "e1, e2" if d == 2 else f"first two of {d} coordinates"
    if mode != "pca":
        raise ValueError(f"unknown plane mode {mode!r}; choose 'first' or 'pca'")
    basis, explained = best_subspace(points, 2)
    return basis, f"PCA plane of the vectors shown ({100 * float(explained.sum()):.0f}% of length²)"


def _arrows(labels: Sequence[str], role: str, heads: Array, tails: Array | None = None) -> list:
    out = []
    for i, lab in enumerate(labels):
        t = (0.0, 0.0) if tails is None else (float(tails[i, 0]), float(tails[i, 1]))
        out.append(Arrow(lab, role, t, (float(heads[i, 0]), float(heads[i, 1]))))
    return out


def stage_arrows(snap: StepSnapshot, stage: int, mode: str = "first") -> tuple[list[Arrow], str]:
    """The arrows drawn at ``stage`` (1..8), projected to 2-D, and the plane's description.

    1-2: embedding rows (absent words as role "absent"); 3: queries, keys and values; 4: values
    and the mixture at the read position; 5-6: the mixture and each class's classifier column;
    7: embedding rows with the step the gradient asks for (-lr * grad, from each tip; magnified
    by a stated factor when it would be too short to see); 8: old and new embedding rows.
    """
    if not 1 <= stage <= N_STAGES:
        raise ValueError(f"stage must be 1..{N_STAGES}, got {stage}")
    p, tr = snap.params, snap.trace
    tokens = snap.tokens
    pos = tr.position
    absent = set(snap.absent())
    vocab = snap.vocab
    if stage in (1, 2):
        raw = p["emb"]
    elif stage == 3:
        raw = np.vstack([tr.Q, tr.K, tr.V])
    elif stage == 4:
        raw = np.vstack([tr.V, tr.mixture[None]])
    elif stage in (5, 6):
        raw = np.vstack([tr.mixture[None], p["cls_W"].T])
    elif stage == 7:
        raw = np.vstack([p["emb"], p["emb"] - snap.lr * snap.grads["emb"]])
    else:
        raw = np.vstack([p["emb"], snap.new_params["emb"]])
    basis, desc = plane_basis(snap.d, mode, raw)

    def proj(a: Array) -> Array:
        return np.atleast_2d(a) @ basis

    arrows: list[Arrow] = []
    if stage in (1, 2):
        for i, w in enumerate(vocab):
            arrows += _arrows([w], "absent" if w in absent else "x", proj(p["emb"][i]))
    elif stage == 3:
        arrows += _arrows([f"v {t}" for t in tokens], "v", proj(tr.V))
        arrows += _arrows([f"k {t}" for t in tokens], "k", proj(tr.K))
        arrows += _arrows([f"q {t}" for t in tokens], "q", proj(tr.Q))
    elif stage == 4:
        w = tr.weights[pos]
        arrows += _arrows([f"v {t} ({w[j]:.2f})" for j, t in enumerate(tokens)], "v", proj(tr.V))
        arrows += _arrows([f"mixture at {tokens[pos]}"], "mix", proj(tr.mixture))
    elif stage in (5, 6):
        W = p["cls_W"]
        arrows += _arrows([f"w {c}" for c in snap.classes], "class", proj(W.T))
        arrows += _arrows([f"mixture at {tokens[pos]}"], "mix", proj(tr.mixture))
    elif stage == 7:
        old = proj(p["emb"])
        step = proj(-snap.lr * snap.grads["emb"])
        # A step is often far shorter than the vectors; magnify it (1, 2, 5 x 10^k) until the
        # longest is about a quarter of the longest embedding, and say so.
        longest_step = float(np.max(np.linalg.norm(step, axis=1)))
        longest_vec = float(np.max(np.linalg.norm(old, axis=1)))
        k = 1.0
        if 0 < longest_step < 0.1 * longest_vec:
            k = nice_floor(0.25 * longest_vec / longest_step)
            desc += f"; steps drawn ×{k:g}"
        new = old + k * step
        for i, word in enumerate(vocab):
            if word in absent:
                arrows += _arrows([f"{word} (absent)"], "absent", old[i : i + 1])
            else:
                arrows += _arrows([word], "x", old[i : i + 1])
                arrows += _arrows([""], "step", new[i : i + 1], old[i : i + 1])
    else:
        old, new = proj(p["emb"]), proj(snap.new_params["emb"])
        for i, word in enumerate(vocab):
            arrows += _arrows([""], "old", old[i : i + 1])
            arrows += _arrows([word], "new" if word not in absent else "absent", new[i : i + 1])
    return arrows, desc


def arrow_extent(arrows: Sequence[Arrow]) -> float:
    """Largest absolute coordinate of any tail or head (0 if there are none)."""
    m = 0.0
    for a in arrows:
        m = max(m, abs(a.tail[0]), abs(a.tail[1]), abs(a.head[0]), abs(a.head[1]))
    return m


def nice_extent(m: float) -> float:
    """The next of 0.5, 1, 2, 5, 10, ... (times powers of ten) at or above ``m``."""
    if not np.isfinite(m) or m <= 0:
        return 1.0
    return nice_ceil(float(m))
