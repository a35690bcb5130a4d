"""Data behind the training stepper: one sentence's pass from lookup to update, as arrays.

Pure NumPy on top of :mod:`attnsim.engine.training`: a :class:`StepSnapshot` freezes one
forward pass, its gradients and the optimizer's update (previewed on copies, so the live
parameters do not change until the update is applied); :func:`stage_arrows` gives the 2-D
arrows the stepper draws at each stage; :func:`parse_dataset` reads the dataset editor's text
("the river bank = water", one sentence per line); :func:`trained_scenario` turns trained
parameters into a token scenario for the workbench.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.geometry import best_subspace
from attnsim.engine.scenario import Head, Scenario
from attnsim.engine.ticks import nice_ceil, nice_floor
from attnsim.engine.training import (
    PARAM_NAMES,
    Dataset,
    ForwardTrace,
    ModelSpec,
    Params,
    Trainer,
    backward,
    forward,
)

Array = NDArray[np.float64]

STAGES = (
    "Sentence",
    "Lookup",
    "Q / K / V",
    "Mixture",
    "Prediction",
    "Loss",
    "Gradients",
    "Update",
)
N_STAGES = len(STAGES)

# The dataset editor keeps datasets small enough to read on screen.
MAX_SENTENCES = 40
MAX_TOKENS = 12
MAX_VOCAB = 48
MAX_CLASSES = 8

__all__ = [
    "MAX_SENTENCES",
    "MAX_TOKENS",
    "N_STAGES",
    "STAGES",
    "Arrow",
    "DatasetError",
    "StepSnapshot",
    "absent_words",
    "dataset_text",
    "make_snapshot",
    "parse_dataset",
    "plane_basis",
    "spec_with_dataset",
    "stage_arrows",
    "trained_scenario",
]


def _frozen_params(params: Params) -> Params:
    out = {}
    for k in PARAM_NAMES:
        a = np.array(params[k], dtype=np.float64, copy=True)
        a.flags.writeable = False
        out[k] = a
    return out


@dataclass(frozen=True, eq=False)
class StepSnapshot:
    """One sentence followed from lookup to the update.

    ``params`` are the parameters the forward pass used (read-only copies), ``trace`` the
    forward pass, ``grads`` the gradient of every parameter group (same shapes as ``params``),
    ``new_params`` the parameters after the optimizer's step. ``applied`` says whether that step
    has been taken on the live parameters (False: it is a preview computed on copies).
    """

    example: int
    tokens: tuple[str, ...]
    label: int
    vocab: tuple[str, ...]
    classes: tuple[str, ...]
    params: Params
    trace: ForwardTrace
    grads: Params
    new_params: Params
    applied: bool
    optimizer: str
    lr: float
    step: int

    @property
    def loss(self) -> float:
        assert self.trace.loss is not None
        return self.trace.loss

    @property
    def d(self) -> int:
        return int(self.params["emb"].shape[1])

    @property
    def delta(self) -> Params:
        """``new_params - params`` for every group."""
        return {k: self.new_params[k] - self.params[k] for k in PARAM_NAMES}

    def absent(self) -> list[str]:
        return absent_words(self.vocab, self.tokens)

    def with_applied(self, new_params: Params) -> StepSnapshot:
        return StepSnapshot(
            self.example, self.tokens, self.label, self.vocab, self.classes, self.params,
            self.trace, self.grads, _frozen_params(new_params), True, self.optimizer, self.lr,
            self.step,
        )  # fmt: skip


def absent_words(vocab: Sequence[str], tokens: Sequence[str]) -> list[str]:
    """Vocabulary words that do not occur in ``tokens`` (their embedding gradient is zero)."""
    used = set(tokens)
    return [w for w in vocab if w not in used]


def make_snapshot(trainer: Trainer, example: int | None = None) -> StepSnapshot:
    """Forward pass, gradients and a preview of the optimizer's step for one example.

    The preview runs a deep copy of the optimizer on copies of the parameters, so neither the
    trainer's parameters nor its optimizer state change; applying the update later with
    ``trainer.apply_update()`` on the same example gives the same numbers bit for bit.
    """
    ex = trainer.example if example is None else int(example)
    ds = trainer.dataset
    tokens, label = ds.sentences[ex]
    tr = forward(trainer.params, ds.encode(tokens), label)
    grads = backward(trainer.params, tr)
    preview = {k: v.copy() for k, v in trainer.params.items()}
    copy.deepcopy(trainer.optimizer).step(preview, {k: g.copy() for k, g in grads.items()})
    for g in grads.values():
        g.flags.writeable = False
    assert trainer.lr is not None
    return StepSnapshot(
        ex, tuple(tokens), int(label), ds.vocab, ds.classes, _frozen_params(trainer.params),
        tr, grads, _frozen_params(preview), False, trainer.spec.optimizer, float(trainer.lr),
        trainer.steps,
    )  # fmt: skip


# ---- the dataset editor ------------------------------------------------------------------------
class DatasetError(ValueError):
    """A dataset text that cannot be used; ``line`` is 1-based (None: the text as a whole)."""

    def __init__(self, line: int | None, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


def parse_dataset(text: str, name: str = "custom") -> Dataset:
    """Read "the river bank = water" lines into a :class:`Dataset`.

    Blank lines and lines starting with ``#`` are skipped. Classes are numbered in order of
    first use; the vocabulary is every word, in order of first use. Raises
    :class:`DatasetError` naming the first bad line.
    """
    rows: list[tuple[tuple[str, ...], str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise DatasetError(number, f"{line!r} has no '=' between the sentence and its label")
        if line.count("=") > 1:
            raise DatasetError(number, f"{line!r} has more than one '='")
        left, right = (part.strip() for part in line.split("="))
        tokens = tuple(left.split())
        if not tokens:
            raise DatasetError(number, "the sentence before '=' is empty")
        if not right:
            raise DatasetError(number, "the label after '=' is empty")
        if len(right.split()) > 1:
            raise DatasetError(number, f"the label {right!r} must be one word")
        if len(tokens) > MAX_TOKENS:
            raise DatasetError(
                number, f"the sentence has {len(tokens)} words (at most {MAX_TOKENS})"
            )
        rows.append((tokens, right))
        if len(rows) > MAX_SENTENCES:
            raise DatasetError(number, f"too many sentences (at most {MAX_SENTENCES})")
    if not rows:
        raise DatasetError(None, "there are no sentences: write one per line, e.g. "
                                 "'the river bank = water'")  # fmt: skip
    classes: list[str] = []
    for _, label in rows:
        if label not in classes:
            classes.append(label)
    if len(classes) < 2:
        raise DatasetError(None, f"every sentence has the label {classes[0]!r}; "
                                 "a classifier needs at least two labels")  # fmt: skip
    if len(classes) > MAX_CLASSES:
        raise DatasetError(None, f"{len(classes)} labels is too many (at most {MAX_CLASSES})")
    vocab: list[str] = []
    for tokens, _ in rows:
        for t in tokens:
            if t not in vocab:
                vocab.append(t)
        if len(vocab) > MAX_VOCAB:
            raise DatasetError(None, f"more than {MAX_VOCAB} different words")
    return Dataset.from_sentences(
        name, classes, [(tokens, classes.index(label)) for tokens, label in rows]
    )


def dataset_text(ds: Dataset) -> str:
    """The editor's text for a dataset: one "words = label" line per sentence."""
    return "\n".join(f"{' '.join(t)} = {ds.classes[lbl]}" for t, lbl in ds.sentences)


def spec_with_dataset(spec: ModelSpec, ds: Dataset, lr: float | None = None) -> ModelSpec:
    """``spec``'s architecture and optimizer, trained on another dataset."""
    return ModelSpec(
        f"{spec.name}+{ds.name}" if ds.name != spec.dataset.name else spec.name,
        ds,
        spec.d,
        spec.optimizer,
        spec.lr if lr is None else float(lr),
        seed=spec.seed,
        zero_bias=spec.zero_bias,
        description=f"{spec.description}; dataset {ds.name!r} ({len(ds.sentences)} sentences)",
    )


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


# ---- to the workbench --------------------------------------------------------------------------
def trained_scenario(
    params: Params, dataset: Dataset, tokens: Sequence[str], model: str, step: int
) -> Scenario:
    """A token scenario for the trained head on ``tokens``.

    X = ``emb`` rows of the tokens (n, d), one head with the trained Wq, Wk, Wv, axes e1..ed;
    the vocabulary words absent from the sentence become ``absent`` vectors; the receiving token
    is the last one (the position the classifier reads). The scenario's weights equal the
    forward pass's attention weights (scaled dot product, temperature 1, no mask).
    """
    ids = dataset.encode(tokens)
    emb = np.asarray(params["emb"], dtype=np.float64)
    d = emb.shape[1]
    axes = tuple(f"e{i + 1}" for i in range(d))
    absent = {w: emb[i] for i, w in enumerate(dataset.vocab) if w not in set(tokens)}
    sentence = " ".join(tokens)
    return Scenario(
        name=f"trained-{model}",
        title=f"Trained head ({model}, {step} updates): {sentence}",
        description=(
            f"Embeddings and projections learned by the training stepper ({model}, after {step} "
            f"updates on the {dataset.name!r} dataset). The coordinates e1..e{d} have no "
            "hand-assigned meaning."
        ),
        source="attnsim training stepper",
        tokens=tuple(tokens),
        axes=axes,
        qk_axes=axes,
        v_axes=axes,
        X=emb[ids],
        heads=(Head(params["Wq"], params["Wk"], params["Wv"], name="trained head"),),
        absent=absent,
        receiving=len(tokens) - 1,
    )
