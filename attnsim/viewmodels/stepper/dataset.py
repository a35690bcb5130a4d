"""The stepper's dataset editor and the way back to the workbench.

:func:`parse_dataset` reads the editor's text ("the river bank = water", one sentence per
line); :func:`trained_scenario` turns trained parameters into a token scenario.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnsim.engine.scenario import Head, Scenario
from attnsim.engine.training import Dataset, ModelSpec, Params

__all__ = [
    "MAX_CLASSES",
    "MAX_SENTENCES",
    "MAX_TOKENS",
    "MAX_VOCAB",
    "DatasetError",
    "dataset_text",
    "parse_dataset",
    "spec_with_dataset",
    "trained_scenario",
]

# The dataset editor keeps datasets small enough to read on screen.
MAX_SENTENCES = 40
MAX_TOKENS = 12
MAX_VOCAB = 48
MAX_CLASSES = 8


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
