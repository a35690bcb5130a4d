"""What the training stepper shows at each stage: captions, blocks of numbers and arrows.

:func:`build_stage` turns a :class:`StepSnapshot` and a stage number into a
:class:`StageContent` (plain data: the texts and the arrays they were formatted from, so tests
compare them with the engine). Each stage has its own small builder in ``_BUILDERS``. Numbers
become text through the ``fmt`` the caller passes (the panel passes the kit's cell format).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from attnsim.engine.training import PARAM_NAMES

from .plane import Arrow, stage_arrows
from .snapshot import N_STAGES, STAGES, StepSnapshot

__all__ = ["PARAM_TITLES", "Block", "CellFormat", "StageContent", "build_stage"]

CellFormat = Callable[[float], str]

PARAM_TITLES = {
    "emb": "emb",
    "Wq": "Wq",
    "Wk": "Wk",
    "Wv": "Wv",
    "cls_W": "cls_W",
    "cls_b": "cls_b",
}

LEGENDS = {
    1: "embedding rows (grey: words not in the sentence)",
    2: "embedding rows (grey: words not in the sentence)",
    3: "queries (vermillion), keys (blue), values (green)",
    4: "values (green) and the mixture (purple)",
    5: "mixture (purple) and each class's column of cls_W (orange)",
    6: "mixture (purple) and each class's column of cls_W (orange)",
    7: "embedding rows and the step −lr·∂L/∂emb (red)",
    8: "embedding rows: old (light grey) and new (black)",
}


@dataclass(frozen=True, eq=False)
class Block:
    """A labelled matrix of numbers: ``values`` (r, c) and the texts shown for them.

    ``texts`` stays empty until :meth:`formatted` fills it (unless a builder gave its own);
    ``integer`` blocks show whole numbers whatever the format.
    """

    title: str
    row_labels: list[str]
    col_labels: list[str]
    values: np.ndarray
    texts: list[list[str]] = field(default_factory=list)
    row_state: list[str] = field(default_factory=list)  # "", "used", "absent", "read"
    row_notes: list[str] = field(default_factory=list)
    key: str = ""  # a stable name for tests, e.g. "X", "grad:emb", "new:Wq"
    break_before: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        v = np.atleast_2d(np.asarray(self.values, dtype=np.float64))
        object.__setattr__(self, "values", v)
        if not self.row_state:
            object.__setattr__(self, "row_state", [""] * v.shape[0])
        if not self.row_notes:
            object.__setattr__(self, "row_notes", [""] * v.shape[0])

    def formatted(self, fmt: CellFormat) -> Block:
        """This block with its texts: ``fmt`` of each value (whole numbers if ``integer``)."""
        if self.texts:
            return self
        f = (lambda x: str(int(x))) if self.integer else fmt
        return replace(self, texts=[[f(x) for x in row] for row in self.values.tolist()])


@dataclass(frozen=True, eq=False)
class StageContent:
    """Everything one stage shows."""

    stage: int
    title: str
    lines: list[str]
    blocks: list[Block]
    arrows: list[Arrow]
    plane: str
    legend: str

    def block(self, key: str) -> Block:
        for b in self.blocks:
            if b.key == key:
                return b
        raise KeyError(f"stage {self.stage} shows no block {key!r}")


@dataclass(frozen=True)
class _Pass:
    """The names every stage's builder uses, worked out once from the snapshot."""

    snap: StepSnapshot
    tokens: list[str]
    reader: str
    target: str
    opt: str
    read_rows: list[str]
    absent: list[str]

    @classmethod
    def of(cls, snap: StepSnapshot) -> _Pass:
        pos = snap.trace.position
        tokens = list(snap.tokens)
        return cls(
            snap,
            tokens,
            tokens[pos],
            snap.classes[snap.label],
            f"{'SGD' if snap.optimizer == 'sgd' else 'Adam'}, lr {snap.lr:g}",
            ["read" if i == pos else "" for i in range(len(tokens))],
            snap.absent(),
        )

    @property
    def axes(self) -> list[str]:
        return _axes(self.snap.d)

    def target_block(self) -> Block:
        onehot = np.eye(len(self.snap.classes))[self.snap.label][None]
        return Block("target", ["one-hot"], list(self.snap.classes), onehot, key="target",
                     integer=True)  # fmt: skip


Stage = tuple[list[str], list[Block]]


def _axes(d: int) -> list[str]:
    return [f"e{i + 1}" for i in range(d)]


def _param_blocks(
    snap: StepSnapshot, values: dict[str, np.ndarray], prefix: str, label: str, *,
    absent_zero: bool = False, break_each: bool = False,
) -> list[Block]:  # fmt: skip
    d = snap.d
    absent = set(snap.absent())
    out = []
    for name in PARAM_NAMES:
        v = values[name]
        row_state: list[str] = []
        row_notes: list[str] = []
        if name == "emb":
            rows = list(snap.vocab)
            cols = _axes(d)
            row_state = ["absent" if w in absent else "used" for w in snap.vocab]
            row_notes = [
                f"0 (absent: {w})" if absent_zero and w in absent and not np.any(v[i]) else ""
                for i, w in enumerate(snap.vocab)
            ]
        elif name == "cls_W":
            rows, cols = _axes(v.shape[0]), list(snap.classes)
        elif name == "cls_b":
            rows, cols = [""], list(snap.classes)
        else:
            rows, cols = _axes(v.shape[0]), _axes(v.shape[1])
        title = f"{label}{PARAM_TITLES[name]}"
        out.append(Block(title, rows, cols, v, key=f"{prefix}:{name}", row_state=row_state,
                         row_notes=row_notes, break_before=break_each))  # fmt: skip
    return out


def _sentence(c: _Pass) -> Stage:
    snap, tr = c.snap, c.snap.trace
    lines = [
        f"Target: {c.target} (class {snap.label}). The classifier reads only the mixture at "
        f"“{c.reader}” (position {tr.position + 1}); the target is used by the loss, not by "
        "attention.",
        f"Completed updates: {snap.step}. {c.opt}. The parameters start from seeded random "
        "numbers; nothing was trained beforehand.",
    ]
    ids = Block("token ids", ["id"], c.tokens, tr.ids[None], key="ids", integer=True)
    return lines, [ids, c.target_block()]


def _lookup(c: _Pass) -> Stage:
    snap, tr = c.snap, c.snap.trace
    absent = c.absent
    lines = [
        "Lookup copies one row of the embedding table per token: X = emb[ids]. Used rows "
        "are highlighted" + (f"; {', '.join(absent)} not in this sentence." if absent else "."),
    ]
    ids = tr.ids.tolist()
    used = ["used" if i in ids else "absent" for i in range(len(snap.vocab))]
    emb = Block(f"emb ({len(snap.vocab)}×{snap.d}, stored)", list(snap.vocab), c.axes,
                snap.params["emb"], key="emb", row_state=used)  # fmt: skip
    x = Block(f"X = emb[ids] ({len(c.tokens)}×{snap.d})", c.tokens, c.axes, tr.X, key="X",
              row_state=c.read_rows)  # fmt: skip
    return lines, [emb, x]


def _qkv(c: _Pass) -> Stage:
    snap, tr = c.snap, c.snap.trace
    lines = [
        "First the stored projections Wq, Wk, Wv (parameters); then the queries, keys "
        "and values computed from them: Q = X Wq, K = X Wk, V = X Wv.",
    ]
    blocks = [Block(name, c.axes, c.axes, snap.params[name], key=name,
                    break_before=name == "Wq" and snap.d > 2)
              for name in ("Wq", "Wk", "Wv")]  # fmt: skip
    for i, (name, M) in enumerate((("Q", tr.Q), ("K", tr.K), ("V", tr.V))):
        blocks.append(Block(f"{name} = X W{name.lower()}", c.tokens, c.axes, M, key=name,
                            break_before=i == 0))  # fmt: skip
    return lines, blocks


def _mixture(c: _Pass) -> Stage:
    tr, tokens, reader = c.snap.trace, c.tokens, c.reader
    w = tr.weights[tr.position]
    lines = [
        f"Weights A = softmax(Q Kᵀ / √{c.snap.d}) row by row. “{reader}” mixes the values: "
        + ", ".join(f"{t} {w[j]:.3f}" for j, t in enumerate(tokens))
        + f". Mixture h = Σ A[{reader}, j] vⱼ.",
    ]
    return lines, [
        Block("scores Q Kᵀ", tokens, tokens, tr.scores, key="scores", row_state=c.read_rows),
        Block("weights A", tokens, tokens, tr.weights, key="weights", row_state=c.read_rows),
        Block("V", tokens, c.axes, tr.V, key="V", break_before=True),
        Block(f"mixture h at {reader}", ["h"], c.axes, tr.mixture[None], key="mixture",
              row_state=["read"]),
    ]  # fmt: skip


def _prediction(c: _Pass) -> Stage:
    snap, tr = c.snap, c.snap.trace
    classes = list(snap.classes)
    k = int(np.argmax(tr.class_logits))
    lines = [
        f"Logits z = h cls_W + cls_b; probabilities softmax(z). Prediction: "
        f"{snap.classes[k]} (p = {tr.probs[k]:.3f}); target {c.target}.",
    ]
    return lines, [
        Block("cls_W", c.axes, classes, snap.params["cls_W"], key="cls_W"),
        Block("cls_b", [""], classes, snap.params["cls_b"][None], key="cls_b"),
        Block("mixture h", ["h"], c.axes, tr.mixture[None], key="mixture", break_before=True),
        Block("logits z", ["z"], classes, tr.class_logits[None], key="logits"),
        Block("probabilities", ["p"], classes, tr.probs[None], key="probs"),
    ]


def _loss(c: _Pass) -> Stage:
    snap, tr = c.snap, c.snap.trace
    pt = float(tr.probs[snap.label])
    lines = [
        f"Cross-entropy loss = −log p({c.target}) = −log {pt:.4f} = {snap.loss:.4f}. "
        "It is small when the target gets most of the probability.",
    ]
    return lines, [
        Block("probabilities", ["p"], list(snap.classes), tr.probs[None], key="probs"),
        c.target_block(),
        Block("loss", ["L"], ["value"], np.array([[snap.loss]]), key="loss",
              texts=[[f"{snap.loss:.4f}"]]),
    ]  # fmt: skip


def _gradients(c: _Pass) -> Stage:
    absent = c.absent
    lines = [
        "Gradients ∂L/∂θ of every parameter group. The parameters have not changed yet."
        + (
            f" The embedding rows of {', '.join(absent)} get exactly 0: "
            "those words are absent from this sentence."
            if absent
            else ""
        ),
    ]
    return lines, _param_blocks(c.snap, dict(c.snap.grads), "grad", "∂L/∂", absent_zero=True)


def _update(c: _Pass) -> Stage:
    snap = c.snap
    if snap.applied:
        line = (f"Update applied (step {snap.step + 1}, {c.opt}): the new parameters are live. "
                "Next sentence continues with them.")  # fmt: skip
    else:
        line = (f"Preview of the update ({c.opt}); the parameters have not changed yet. "
                "Apply update takes this step.")  # fmt: skip
    rule = "new = old − lr · ∂L/∂θ" if snap.optimizer == "sgd" else "Adam: new = old − step"
    olds = _param_blocks(snap, dict(snap.params), "old", "old ", break_each=True)
    news = _param_blocks(snap, dict(snap.new_params), "new", "new ")
    deltas = _param_blocks(snap, snap.delta, "delta", "Δ ", absent_zero=True)
    blocks = [b for group in zip(olds, news, deltas, strict=True) for b in group]
    return [f"{line} {rule}; Δ = new − old."], blocks


_BUILDERS: dict[int, Callable[[_Pass], Stage]] = {
    1: _sentence,
    2: _lookup,
    3: _qkv,
    4: _mixture,
    5: _prediction,
    6: _loss,
    7: _gradients,
    8: _update,
}


def build_stage(
    snap: StepSnapshot, stage: int, plane_mode: str = "first", *, fmt: CellFormat
) -> StageContent:
    """The blocks, captions and arrows of ``stage`` (1..8) for ``snap``; ``fmt`` writes a
    number as the text of its cell."""
    if not 1 <= stage <= N_STAGES:
        raise ValueError(f"stage must be 1..{N_STAGES}, got {stage}")
    c = _Pass.of(snap)
    lines, blocks = _BUILDERS[stage](c)
    if snap.applied and stage < N_STAGES:
        lines.append(
            f"These are the numbers of the pass that led to update {snap.step + 1}, already "
            "applied; Next sentence continues with the new parameters."
        )
    arrows, plane = stage_arrows(snap, stage, plane_mode)
    legend = LEGENDS[stage]
    if stage == 7 and snap.optimizer != "sgd":
        legend = "embedding rows and −lr·∂L/∂emb (red; Adam's real step differs)"
    title = f"{stage}. {STAGES[stage - 1]} — “{' '.join(c.tokens)}” → {c.target}"
    return StageContent(
        stage, title, lines, [b.formatted(fmt) for b in blocks], arrows, plane, legend
    )
