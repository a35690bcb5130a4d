"""A one-head sense classifier with a hand-written backward pass, SGD and Adam.

The model (row-vector convention, as everywhere in attnsim)::

    X = emb[ids]                       (n, d)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv   (n, d_k), (n, d_k), (n, d_v)
    A = softmax(Q K^T / sqrt(d_k))     (n, n), optionally causal
    H = A @ V                          (n, d_v)
    logits = H[position] @ cls_W + cls_b

Parameters are a dict of float64 arrays: ``emb`` (vocab, d), ``Wq``, ``Wk``, ``Wv`` (d, d),
``cls_W`` (d, classes) and ``cls_b`` (classes,).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import causal_mask, entropy_bits, softmax
from .optimizers import SGD, Adam, make_optimizer

Array = NDArray[np.float64]
Params = dict[str, Array]

PARAM_NAMES = ("emb", "Wq", "Wk", "Wv", "cls_W", "cls_b")

__all__ = [
    "BIASED",
    "MODELS",
    "PARAM_NAMES",
    "SENSE",
    "SENSE_PAIR",
    "SGD",
    "Adam",
    "Dataset",
    "ForwardTrace",
    "ModelSpec",
    "Trainer",
    "backward",
    "count_parameters",
    "forward",
    "init_params",
    "loss_and_grads",
    "make_optimizer",
    "predict",
]


@dataclass(frozen=True)
class Dataset:
    """Labelled sentences over a fixed vocabulary."""

    name: str
    vocab: tuple[str, ...]
    classes: tuple[str, ...]
    sentences: tuple[tuple[tuple[str, ...], int], ...]

    def __post_init__(self) -> None:
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError(f"dataset {self.name!r}: the vocabulary has a repeated word")
        if len(self.classes) < 2:
            raise ValueError(f"dataset {self.name!r}: needs at least two classes")
        if not self.sentences:
            raise ValueError(f"dataset {self.name!r}: has no sentences")
        for i, (tokens, label) in enumerate(self.sentences):
            if not tokens:
                raise ValueError(f"dataset {self.name!r}: sentence {i + 1} is empty")
            unknown = [t for t in tokens if t not in self.vocab]
            if unknown:
                raise ValueError(
                    f"dataset {self.name!r}: sentence {i + 1} uses {unknown[0]!r}, "
                    "which is not in the vocabulary"
                )
            if not 0 <= label < len(self.classes):
                raise ValueError(
                    f"dataset {self.name!r}: sentence {i + 1} has label {label}, "
                    f"but there are {len(self.classes)} classes"
                )

    @classmethod
    def from_sentences(
        cls, name: str, classes: Sequence[str], sentences: Sequence[tuple[Sequence[str], int]]
    ) -> Dataset:
        """Build a dataset whose vocabulary is every word used, in order of first use."""
        vocab: list[str] = []
        for tokens, _ in sentences:
            for t in tokens:
                if t not in vocab:
                    vocab.append(t)
        return cls(
            name,
            tuple(vocab),
            tuple(classes),
            tuple((tuple(t), int(lbl)) for t, lbl in sentences),
        )

    def encode(self, tokens: Sequence[str]) -> NDArray[np.intp]:
        index = {w: i for i, w in enumerate(self.vocab)}
        try:
            return np.array([index[t] for t in tokens], dtype=np.intp)
        except KeyError as exc:
            raise ValueError(f"{exc.args[0]!r} is not in the vocabulary of {self.name!r}") from None

    def clue_words(self) -> frozenset[str]:
        """Words that occur in sentences of exactly one class: the words that decide the label."""
        classes_of: dict[str, set[int]] = {}
        for tokens, label in self.sentences:
            for t in tokens:
                classes_of.setdefault(t, set()).add(label)
        return frozenset(w for w, c in classes_of.items() if len(c) == 1)

    def clue_position(self, tokens: Sequence[str]) -> int | None:
        clues = self.clue_words()
        for i, t in enumerate(tokens):
            if t in clues:
                return i
        return None


SENSE = Dataset(
    "sense",
    ("the", "river", "money", "bank"),
    ("water", "finance"),
    (
        (("the", "river", "bank"), 0),
        (("the", "money", "bank"), 1),
        (("river", "bank"), 0),
        (("money", "bank"), 1),
    ),
)
SENSE_PAIR = Dataset("sense-pair", SENSE.vocab, SENSE.classes, SENSE.sentences[:2])
BIASED = Dataset.from_sentences(
    "biased",
    ("water", "finance"),
    [
        (("the", "river", "bank"), 0),
        (("the", "money", "bank"), 1),
        (("the", "vault", "bank"), 0),
        (("the", "salmon", "bank"), 1),
        (("the", "lawyer", "bank"), 0),
        (("the", "attorney", "bank"), 1),
    ],
)


def init_params(
    vocab_size: int,
    d: int,
    n_classes: int,
    *,
    seed: int | None = 0,
    zero_bias: bool = True,
) -> Params:
    """Seeded initial parameters, distributed as PyTorch's defaults.

    ``emb`` ~ N(0, 1); ``Wq``, ``Wk``, ``Wv``, ``cls_W`` ~ U(-1/sqrt(d), 1/sqrt(d)) (as
    ``nn.Linear``); ``cls_b`` is zero, or U(-1/sqrt(d), 1/sqrt(d)) when ``zero_bias`` is False.
    """
    for name, v in (("vocab_size", vocab_size), ("d", d), ("n_classes", n_classes)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    rng = np.random.default_rng(seed)
    bound = 1.0 / math.sqrt(d)
    params: Params = {
        "emb": rng.standard_normal((vocab_size, d)),
        "Wq": rng.uniform(-bound, bound, (d, d)),
        "Wk": rng.uniform(-bound, bound, (d, d)),
        "Wv": rng.uniform(-bound, bound, (d, d)),
        "cls_W": rng.uniform(-bound, bound, (d, n_classes)),
        "cls_b": np.zeros(n_classes) if zero_bias else rng.uniform(-bound, bound, n_classes),
    }
    return params


def count_parameters(params: Params) -> int:
    """Number of learned scalars in ``params``."""
    return int(sum(np.asarray(v).size for v in params.values()))


def _check_params(params: Params) -> None:
    missing = [k for k in PARAM_NAMES if k not in params]
    if missing:
        raise ValueError(f"parameters are missing {', '.join(missing)}")
    emb, Wq, Wk, Wv = params["emb"], params["Wq"], params["Wk"], params["Wv"]
    d = emb.shape[1]
    if Wq.shape[0] != d or Wk.shape[0] != d or Wv.shape[0] != d or Wq.shape != Wk.shape:
        raise ValueError(
            f"projection shapes do not fit emb width {d}: Wq {Wq.shape}, Wk {Wk.shape}, "
            f"Wv {Wv.shape}"
        )
    if params["cls_W"].shape[0] != Wv.shape[1]:
        raise ValueError(
            f"cls_W must have {Wv.shape[1]} rows (the value width), got {params['cls_W'].shape}"
        )
    if params["cls_b"].shape != (params["cls_W"].shape[1],):
        raise ValueError(f"cls_b must have shape ({params['cls_W'].shape[1]},)")


@dataclass(frozen=True, eq=False)
class ForwardTrace:
    """Every stage of one forward pass.

    Shapes: ``ids`` (n,); ``X`` (n, d); ``Q``, ``K`` (n, d_k); ``V`` (n, d_v); ``scores`` (raw
    ``Q K^T``), ``logits`` (scaled, masked with -inf), ``weights`` (n, n); ``H`` (n, d_v);
    ``mixture`` (d_v,) = ``H[position]``; ``class_logits``, ``probs`` (classes,).
    """

    ids: NDArray[np.intp]
    X: Array
    Q: Array
    K: Array
    V: Array
    scores: Array
    logits: Array
    weights: Array
    H: Array
    position: int
    mixture: Array
    class_logits: Array
    probs: Array
    label: int | None
    loss: float | None
    causal: bool

    @property
    def entropy(self) -> Array:
        return entropy_bits(self.weights)


def forward(
    params: Params,
    ids: ArrayLike,
    label: int | None = None,
    *,
    causal: bool = False,
    position: int = -1,
) -> ForwardTrace:
    """Run the classifier on one sentence of token ids (n,); the loss needs ``label``."""
    _check_params(params)
    idx = np.asarray(ids, dtype=np.intp)
    vocab = params["emb"].shape[0]
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"ids must be a non-empty 1-D sequence, got shape {idx.shape}")
    if idx.min() < 0 or idx.max() >= vocab:
        raise ValueError(f"token ids must lie in [0, {vocab}), got {idx.tolist()}")
    n = idx.size
    if not -n <= position < n:
        raise ValueError(f"position {position} is outside a sentence of {n} tokens")
    pos = position % n
    X = params["emb"][idx]
    Q, K, V = X @ params["Wq"], X @ params["Wk"], X @ params["Wv"]
    scores = Q @ K.T
    logits = scores / math.sqrt(Q.shape[1])
    if causal:
        logits = np.where(causal_mask(n), logits, -np.inf)
    A = softmax(logits)
    H = A @ V
    h = H[pos]
    z = h @ params["cls_W"] + params["cls_b"]
    p = softmax(z)
    loss = None
    if label is not None:
        n_classes = z.shape[0]
        if not 0 <= label < n_classes:
            raise ValueError(f"label {label} is outside [0, {n_classes})")
        top = float(z.max())
        loss = float(top + math.log(float(np.exp(z - top).sum())) - z[label])
    return ForwardTrace(idx, X, Q, K, V, scores, logits, A, H, pos, h, z, p, label, loss, causal)


def backward(params: Params, tr: ForwardTrace) -> Params:
    """Gradients of the cross-entropy loss of ``tr`` for every parameter (same keys, shapes).

    Rows of ``emb`` for words absent from the sentence are exactly zero.
    """
    if tr.label is None:
        raise ValueError("backward needs a forward trace computed with a label")
    dz = tr.probs.copy()
    dz[tr.label] -= 1.0
    grads: Params = {"cls_W": np.outer(tr.mixture, dz), "cls_b": dz}
    dH = np.zeros_like(tr.H)
    dH[tr.position] = params["cls_W"] @ dz
    A = tr.weights
    dA = dH @ tr.V.T
    dV = A.T @ dH
    # Softmax backward row by row; masked entries have A = 0, so they get no gradient.
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    dS /= math.sqrt(tr.Q.shape[1])
    dQ = dS @ tr.K
    dK = dS.T @ tr.Q
    grads["Wq"] = tr.X.T @ dQ
    grads["Wk"] = tr.X.T @ dK
    grads["Wv"] = tr.X.T @ dV
    dX = dQ @ params["Wq"].T + dK @ params["Wk"].T + dV @ params["Wv"].T
    demb = np.zeros_like(params["emb"])
    np.add.at(demb, tr.ids, dX)
    grads["emb"] = demb
    return {k: grads[k] for k in PARAM_NAMES}


def loss_and_grads(
    params: Params, ids: ArrayLike, label: int, *, causal: bool = False, position: int = -1
) -> tuple[float, Params]:
    """Cross-entropy loss of one labelled sentence and the gradient of every parameter."""
    tr = forward(params, ids, label, causal=causal, position=position)
    assert tr.loss is not None
    return tr.loss, backward(params, tr)


def predict(params: Params, ids: ArrayLike, *, causal: bool = False) -> int:
    return int(np.argmax(forward(params, ids, causal=causal).class_logits))


@dataclass(frozen=True)
class ModelSpec:
    """A named training setup: dataset, width, optimizer and schedule."""

    name: str
    dataset: Dataset
    d: int
    optimizer: str
    lr: float
    seed: int = 0
    zero_bias: bool = True
    description: str = ""


MODELS: dict[str, ModelSpec] = {
    "sense-2d": ModelSpec(
        "sense-2d",
        SENSE_PAIR,
        2,
        "sgd",
        0.3,
        seed=0,
        description="two coordinates, SGD (lr 0.3), alternating the river and money sentences",
    ),
    "sense-8d": ModelSpec(
        "sense-8d",
        SENSE,
        8,
        "adam",
        0.05,
        seed=0,
        zero_bias=False,
        description="eight coordinates, Adam (lr 0.05), the four bank sentences",
    ),
    "biased": ModelSpec(
        "biased",
        BIASED,
        8,
        "adam",
        0.05,
        seed=0,
        zero_bias=False,
        description="arbitrary labels for six context words, Adam (lr 0.05)",
    ),
}


@dataclass
class StepRecord:
    step: int
    sentence: int
    loss: float
    clue_attention: float | None


@dataclass
class Trainer:
    """A training run one example at a time, as the stepper shows it.

    Examples are visited in order, cycling; each :meth:`apply_update` is one optimizer step on
    the current example and then moves to the next one.
    """

    spec: ModelSpec
    lr: float | None = None
    seed: int | None = None
    params: Params = field(init=False)
    initial: Params = field(init=False)
    optimizer: SGD | Adam = field(init=False)
    example: int = field(init=False, default=0)
    steps: int = field(init=False, default=0)
    history: list[StepRecord] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if self.lr is None:
            self.lr = self.spec.lr
        if self.seed is None:
            self.seed = self.spec.seed
        ds = self.spec.dataset
        self.initial = init_params(
            len(ds.vocab),
            self.spec.d,
            len(ds.classes),
            seed=self.seed,
            zero_bias=self.spec.zero_bias,
        )
        self.reset()

    def reset(self) -> None:
        """Back to the same initial parameters, a fresh optimizer, the first example."""
        self.params = {k: v.copy() for k, v in self.initial.items()}
        assert self.lr is not None
        self.optimizer = make_optimizer(self.spec.optimizer, self.lr)
        self.example = 0
        self.steps = 0
        self.history = []

    def set_lr(self, lr: float) -> None:
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"learning rate must be positive and finite, got {lr!r}")
        self.optimizer.lr = float(lr)
        self.lr = float(lr)

    @property
    def dataset(self) -> Dataset:
        return self.spec.dataset

    def current(self) -> tuple[tuple[str, ...], int]:
        return self.dataset.sentences[self.example]

    def trace(self, example: int | None = None) -> ForwardTrace:
        tokens, label = self.dataset.sentences[self.example if example is None else example]
        return forward(self.params, self.dataset.encode(tokens), label)

    def gradients(self) -> Params:
        return backward(self.params, self.trace())

    def clue_attention(self, tr: ForwardTrace, tokens: Sequence[str]) -> float | None:
        pos = self.dataset.clue_position(tokens)
        return None if pos is None else float(tr.weights[tr.position, pos])

    def apply_update(self) -> StepRecord:
        """One optimizer step on the current example; then move on to the next example."""
        tokens, _ = self.current()
        tr = self.trace()
        grads = backward(self.params, tr)
        self.optimizer.step(self.params, grads)
        assert tr.loss is not None
        rec = StepRecord(self.steps + 1, self.example, tr.loss, self.clue_attention(tr, tokens))
        self.history.append(rec)
        self.steps += 1
        self.example = (self.example + 1) % len(self.dataset.sentences)
        return rec

    def next_sentence(self) -> None:
        self.example = (self.example + 1) % len(self.dataset.sentences)

    def train(self, steps: int) -> list[StepRecord]:
        return [self.apply_update() for _ in range(int(steps))]

    def train_epochs(self, epochs: int) -> list[StepRecord]:
        return self.train(epochs * len(self.dataset.sentences))

    def evaluate(self) -> list[dict[str, object]]:
        """For every sentence: prediction, probabilities, loss and the readout's attention row."""
        rows = []
        for tokens, label in self.dataset.sentences:
            tr = forward(self.params, self.dataset.encode(tokens), label)
            rows.append(
                {
                    "tokens": list(tokens),
                    "label": self.dataset.classes[label],
                    "prediction": self.dataset.classes[int(np.argmax(tr.class_logits))],
                    "correct": int(np.argmax(tr.class_logits)) == label,
                    "probs": tr.probs.tolist(),
                    "loss": tr.loss,
                    "attention": [
                        [t, w]
                        for t, w in zip(tokens, tr.weights[tr.position].tolist(), strict=True)
                    ],
                }
            )
        return rows

    def mean_loss(self) -> float:
        return float(np.mean([r["loss"] for r in self.evaluate()]))  # type: ignore[misc]
