"""What the induction-head lab shows: its settings, the attention patterns of every head on one
sample sequence, the per-head scores and losses (with the chosen heads ablated), the ablation
table, the circuits of one head and the composition scores; and the selected head as a
direct-mode scenario for the rest of the workbench.

Qt-free: everything is a frozen dataclass of arrays, computed with
:mod:`attnsim.engine.induction` and :mod:`attnsim.engine.induction_circuits`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.induction import (
    Ablation,
    Array,
    Config,
    InductionTrainer,
    Trace,
    config_of,
    forward,
    loss_of,
    repeated_sequences,
)
from attnsim.engine.induction_circuits import (
    SKIP_VOCAB,
    AblationRow,
    ablation_table,
    composition_baseline,
    composition_scores,
    half_losses,
    hand_built_induction,
    head_copying_score,
    head_scores,
    ov_circuit,
    qk_circuit,
    skip_trigram_example,
)
from attnsim.engine.numbers import fmt_number
from attnsim.engine.scenario import Scenario
from attnsim.engine.settings import LabSettings, Setting

PRESETS = ("train", "hand_built", "skip_trigram")
PRESET_TITLES = {
    "train": "Train a model",
    "hand_built": "Hand-built circuit",
    "skip_trigram": "Skip-trigram bug",
}
# 11 tokens besides the BOS for halves of 8: each half can hold distinct tokens, so "what came
# after this token last time" has one answer and the hand-built circuit is exact
HAND_BUILT_VOCAB, HAND_BUILT_HALF = 12, 8
BOS = 0
EVAL_BATCH = 64
EVAL_BUDGET = 4 * EVAL_BATCH  # in sequences of the default model (see eval_batch)
EVAL_MIN = 8
# Read from the engine so that tuning its defaults tunes the lab's.
_DEFAULT_CFG = Config()
_TRAINER_DEFAULTS = inspect.signature(InductionTrainer).parameters
DEFAULT_LR = float(_TRAINER_DEFAULTS["lr"].default)
DEFAULT_HALF = (_DEFAULT_CFG.n_ctx - 1) // 2
LIMITS = {
    "n_layers": (1, 3),
    "n_heads": (1, 8),
    "d_model": (4, 256),
    "d_vocab": (4, 512),
    "half_len": (2, 64),
    "seed": (0, 2**31 - 1),
}


@dataclass(frozen=True)
class InductionLabState:
    """The lab's settings (a lab state: undoable, not saved with the scenario).

    ``ablated`` lists the (layer, head) pairs whose output is removed when the lab measures and
    draws the model; training itself never ablates.
    """

    preset: str = "train"
    seed: int = 0
    lr: float = DEFAULT_LR
    n_layers: int = _DEFAULT_CFG.n_layers
    n_heads: int = _DEFAULT_CFG.n_heads
    d_model: int = _DEFAULT_CFG.d_model
    d_vocab: int = _DEFAULT_CFG.d_vocab
    half_len: int = DEFAULT_HALF
    ablated: tuple[tuple[int, int], ...] = ()
    ablation_mode: str = "zero"

    def __post_init__(self) -> None:
        SETTINGS.check(self)
        object.__setattr__(
            self, "ablated", tuple(sorted({(int(a), int(b)) for a, b in self.ablated}))
        )

    def config(self) -> Config:
        """The trained model's shape (d_head = d_model / n_heads, a BOS before two halves)."""
        return Config(
            self.n_layers, self.n_heads, self.d_model, self.d_model // self.n_heads,
            self.d_vocab, 2 * self.half_len + 1,
        )  # fmt: skip

    def training_key(self) -> tuple:
        """What the trained weights depend on (ablation and presets do not change them)."""
        return (self.seed, float(self.lr), self.config(), self.half_len)

    def with_head_toggled(self, layer: int, head: int) -> InductionLabState:
        heads = set(self.ablated) ^ {(layer, head)}
        return replace(self, ablated=tuple(sorted(heads)))


def _heads_divide(st: InductionLabState) -> str:
    if st.d_model % st.n_heads:
        return f"d_model {st.d_model} must be a multiple of the {st.n_heads} heads"
    return ""


_TIPS = {
    "seed": "Seed of the initial weights, the training data and the sample",
    "n_layers": "Attention layers (an induction head needs two)",
    "n_heads": "Heads per layer",
    "d_model": "Width of the residual stream (a multiple of the heads)",
    "d_vocab": "Vocabulary size (token 0 is the BOS)",
    "half_len": "Length of each half of a repeated sequence",
}
_LABELS = {"seed": "seed", "n_layers": "layers", "n_heads": "heads", "d_model": "d_model",
           "d_vocab": "vocab", "half_len": "half"}  # fmt: skip
# Checked whenever a state is made (the form edits several settings at once).
SETTINGS = LabSettings("Induction lab", InductionLabState, (
    Setting("preset", "preset", "choice", choices=PRESETS,
            names=tuple(PRESET_TITLES[p] for p in PRESETS)),
    *(Setting(name, _LABELS[name], lo=lo, hi=hi, tip=_TIPS[name])
      for name, (lo, hi) in LIMITS.items()),
    Setting("lr", "learning rate", "real", hi=1.0, open_lo=True, tip="Adam's learning rate"),
    Setting("ablation_mode", "ablation mode", "choice", choices=("zero", "mean")),
), rules=(_heads_divide,))  # fmt: skip


def token_label(token: int, vocab: tuple[str, ...] | None = None) -> str:
    if vocab is not None:
        return vocab[token]
    return "BOS" if token == BOS else str(token)


def distinct(labels: list[str]) -> tuple[str, ...]:
    """Labels made distinct the way scenarios write repeats: 'the', 'the 2', 'the 3'."""
    seen: dict[str, int] = {}
    out = []
    for s in labels:
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s} {seen[s]}")
    return tuple(out)


# ---- the model the lab looks at -------------------------------------------------------------
def preset_params(state: InductionLabState) -> dict[str, Array] | None:
    """The hand-made weights of a preset (None for "train": the session holds those).

    The same dict for every call (read-only), so results computed from it can be kept.
    """
    return _preset_params(state.preset)


@cache
def _preset_params(preset: str) -> dict[str, Array] | None:
    if preset == "hand_built":
        return hand_built_induction(HAND_BUILT_VOCAB, 2 * HAND_BUILT_HALF + 1)
    if preset == "skip_trigram":
        return skip_trigram_example().params
    return None


def half_len_of(state: InductionLabState) -> int | None:
    """The half length of the lab's repeated sequences (None: the skip-trigram has none)."""
    return {"train": state.half_len, "hand_built": HAND_BUILT_HALF}.get(state.preset)


def sample_tokens(state: InductionLabState) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """The one sequence whose patterns are drawn, and its token labels (fixed by the seed)."""
    if state.preset == "skip_trigram":
        ix = {w: i for i, w in enumerate(SKIP_VOCAB)}
        words = ("keep", "the", "door", "in")
        return np.array([ix[w] for w in words], dtype=np.int64), words
    vocab = HAND_BUILT_VOCAB if state.preset == "hand_built" else state.d_vocab
    half = half_len_of(state)
    assert half is not None
    rng = np.random.default_rng([state.seed, 3])
    # the drawn sequence repeats no token within a half when the vocabulary allows, so each
    # query has one "token after the earlier copy" and the induction stripe reads cleanly
    toks = _repeats(state, 1, half, vocab, rng, distinct=vocab - 1 >= half)[0]
    return toks, tuple(token_label(int(t)) for t in toks)


def _repeats(
    state: InductionLabState,
    batch: int,
    half: int,
    vocab: int,
    rng: np.random.Generator,
    *,
    distinct: bool = False,
) -> NDArray[np.int64]:
    if state.preset != "hand_built" and not distinct:
        return repeated_sequences(batch, half, vocab, rng, bos=BOS)
    # no token twice within a half (BOS excluded), as the hand-built circuit assumes
    others = np.array([t for t in range(vocab) if t != BOS])
    halves = np.stack([rng.permutation(others)[:half] for _ in range(batch)])
    bos = np.full((batch, 1), BOS)
    return np.concatenate([bos, halves, halves], axis=1).astype(np.int64)


def eval_tokens(state: InductionLabState) -> NDArray[np.int64]:
    """The fixed evaluation batch the curves and scores are measured on."""
    if state.preset == "skip_trigram":
        return sample_tokens(state)[0][None, :]
    vocab = HAND_BUILT_VOCAB if state.preset == "hand_built" else state.d_vocab
    half = half_len_of(state)
    assert half is not None
    batch = EVAL_BATCH if state.preset == "hand_built" else eval_batch(state)
    return _repeats(state, batch, half, vocab, np.random.default_rng([state.seed, 2]))


def _forward_flops(state: InductionLabState) -> int:
    """Multiply-adds of one sequence's forward pass, roughly: per layer the four projections
    (4 d_model^2 a token) and the scores and mixing (2 n_ctx d_model a token), then the
    unembedding (d_model d_vocab a token)."""
    n, d = 2 * state.half_len + 1, state.d_model
    return n * (state.n_layers * (4 * d * d + 2 * n * d) + d * state.d_vocab)


def eval_batch(state: InductionLabState) -> int:
    """How many sequences the curves and scores are measured on: ``EVAL_BATCH`` up to a cost
    of ``EVAL_BUDGET`` sequences of the default model, fewer for a larger model (never under
    ``EVAL_MIN``), so a settings change or a measurement stays a fraction of a second on the
    GUI thread at the largest sizes (64 sequences of a 3 x 8-head, d_model 256, vocabulary
    512, 129-token model cost over half a second a forward pass here; 8 cost 70 ms)."""
    per_sequence = _forward_flops(state)
    budget = EVAL_BUDGET * _forward_flops(InductionLabState())
    return int(min(EVAL_BATCH, max(EVAL_MIN, budget // per_sequence)))


# ---- what the lab draws ---------------------------------------------------------------------
@dataclass(frozen=True)
class LabView:
    """The model on the sample sequence and the evaluation batch, with ``ablated`` removed.

    ``patterns`` (n_layers, n_heads, n, n) on the sample; ``previous_token`` and ``induction``
    (n_layers, n_heads) on the batch (NaN without repeated halves); losses in nats.
    """

    labels: tuple[str, ...]
    patterns: Array
    previous_token: Array
    induction: Array
    ablated: tuple[tuple[int, int], ...]
    loss: float
    first_loss: float
    repeated_loss: float
    base_first_loss: float
    base_repeated_loss: float

    @property
    def n_layers(self) -> int:
        return int(self.patterns.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.patterns.shape[1])


def _sample_trace(
    params: Mapping[str, Array], state: InductionLabState, ablation: Ablation
) -> Trace:
    """The forward pass on the sample sequence; a mean ablation takes its mean over the
    evaluation batch with the sample as its first row (a mean over one sequence is itself)."""
    sample = sample_tokens(state)[0]
    if ablation.mode == "mean" and ablation.heads and state.preset != "skip_trigram":
        tr = forward(params, np.concatenate([sample[None], eval_tokens(state)]), ablate=ablation)
        return _first_row(tr)
    return forward(params, sample, ablate=ablation)


def _first_row(tr: Trace) -> Trace:
    def first(xs: list[Array]) -> list[Array]:
        return [x[:1] for x in xs]

    return replace(
        tr, tokens=tr.tokens[:1], patterns=first(tr.patterns), q=first(tr.q), k=first(tr.k),
        v=first(tr.v), z=first(tr.z), resid=first(tr.resid), logits=tr.logits[:1],
    )  # fmt: skip


def lab_view(params: Mapping[str, Array], state: InductionLabState) -> LabView:
    cfg = config_of(params)
    ablated = tuple(p for p in state.ablated if p[0] < cfg.n_layers and p[1] < cfg.n_heads)
    ablation = Ablation.of(ablated, state.ablation_mode)  # type: ignore[arg-type]
    labels = sample_tokens(state)[1]
    batch = eval_tokens(state)
    patterns = np.stack([p[0] for p in _sample_trace(params, state, ablation).patterns])
    tr = forward(params, batch, ablate=ablation)
    half = half_len_of(state)
    nan = np.full((cfg.n_layers, cfg.n_heads), np.nan)
    if half is None:
        loss = loss_of(tr)
        return LabView(labels, patterns, nan, nan, ablated, loss, loss, loss, loss, loss)
    scores = head_scores(tr, half)
    first, rep = half_losses(tr, half)
    base_first, base_rep = half_losses(forward(params, batch), half) if ablated else (first, rep)
    return LabView(
        labels, patterns, scores.previous_token, scores.induction, ablated, loss_of(tr),
        first, rep, base_first, base_rep,
    )  # fmt: skip


def best_induction(induction: np.ndarray) -> float:
    """The highest induction score of a head past the first layer (layers × heads): nothing
    before layer 0 can have written a previous token, so its heads cannot be induction heads."""
    return float((induction[1:] if len(induction) > 1 else induction).max())


# What a lesson can read from the lab (attnsim.lessons.labs names them for lesson files).
READINGS = ("induction_score", "previous_token_score", "repeated_loss", "first_loss",
            "heads_removed")  # fmt: skip


def readings(params: Mapping[str, Array], state: InductionLabState) -> dict[str, float]:
    """The lab's measured values on its evaluation batch, with the chosen heads removed: the
    highest induction score of a head past the first layer (nothing before layer 0 can write a
    previous token) and the highest previous-token score, as the Heads table shows them, the
    losses of the two halves, and how many heads are removed. The skip-trigram preset has no
    halves: its scores and half losses are NaN."""
    cfg = config_of(params)
    ablated = tuple(p for p in state.ablated if p[0] < cfg.n_layers and p[1] < cfg.n_heads)
    out = dict.fromkeys(READINGS, float("nan"))
    out["heads_removed"] = float(len(ablated))
    half = half_len_of(state)
    if half is None:
        return out
    tr = forward(params, eval_tokens(state), ablate=Ablation.of(ablated, state.ablation_mode))  # type: ignore[arg-type]
    scores = head_scores(tr, half)
    first, rep = half_losses(tr, half)
    out.update(
        induction_score=best_induction(scores.induction),
        previous_token_score=float(scores.previous_token.max()),
        repeated_loss=float(rep), first_loss=float(first),
    )  # fmt: skip
    return out


@dataclass(frozen=True)
class AblationTable:
    base_loss: float
    base_repeated: float
    rows: tuple[AblationRow, ...]

    def text(self) -> list[list[str]]:
        """Head, mode, loss, Δ loss, repeated-half loss, Δ repeated: as the table prints them."""
        return [
            [f"L{r.layer}H{r.head}", r.mode, fmt_number(r.loss, 3), fmt_number(r.delta, 3),
             fmt_number(r.repeated_loss, 3), fmt_number(r.repeated_delta, 3)]
            for r in self.rows
        ]  # fmt: skip


def ablation_view(params: Mapping[str, Array], state: InductionLabState) -> AblationTable | None:
    """Every head zero- and mean-ablated alone on the evaluation batch (None: no repeats)."""
    half = half_len_of(state)
    if half is None:
        return None
    base, base_rep, rows = ablation_table(params, eval_tokens(state), half)
    return AblationTable(base, base_rep, tuple(rows))


@dataclass(frozen=True)
class CircuitView:
    """The selected head's direct-path circuits over the vocabulary, and its copying score."""

    layer: int
    head: int
    vocab: tuple[str, ...]
    qk: Array
    ov: Array
    copying: float


def circuit_view(
    params: Mapping[str, Array], state: InductionLabState, layer: int, head: int
) -> CircuitView:
    cfg = config_of(params)
    vocab = (
        SKIP_VOCAB if state.preset == "skip_trigram"
        else tuple(token_label(t) for t in range(cfg.d_vocab))
    )  # fmt: skip
    ov = ov_circuit(params, layer, head)
    return CircuitView(
        layer,
        head,
        vocab,
        qk_circuit(params, layer, head),
        ov,
        head_copying_score(params, layer, head),
    )


@dataclass(frozen=True)
class CompositionView:
    """K-composition scores, rows layer-0 heads, columns layer-1 heads, and the score of random
    weights of the same shapes (None for a one-layer model)."""

    scores: Array | None
    baseline: float

    def stands_out(self) -> Array | None:
        """Ratio of each score to the random baseline."""
        if self.scores is None or self.baseline <= 0:
            return None
        return self.scores / self.baseline


def composition_view(params: Mapping[str, Array]) -> CompositionView:
    cfg = config_of(params)
    if cfg.n_layers < 2:
        return CompositionView(None, float("nan"))
    return CompositionView(composition_scores(params, "K"), composition_baseline(cfg, "K"))


# ---- send a head to the workbench -------------------------------------------------------------
def head_scenario(
    params: Mapping[str, Array], state: InductionLabState, layer: int, head: int
) -> Scenario:
    """The head on the sample sequence as a direct-mode scenario: its q, k and v rows, the
    causal mask, the same 1/sqrt(d_head) scale, so the workbench's heatmap shows its pattern."""
    cfg = config_of(params)
    if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
        raise ValueError(f"head L{layer}H{head} is not in the model")
    labels = sample_tokens(state)[1]
    # heads of an earlier, larger model may still be listed as ablated: only this model's count
    ablation = Ablation.of(
        [p for p in state.ablated if p[0] < layer and p[1] < cfg.n_heads],
        state.ablation_mode,  # type: ignore[arg-type]
    )
    tr = _sample_trace(params, state, ablation)
    names = distinct(list(labels))
    q, k, v = (np.asarray(m[layer][0, head], dtype=np.float64) for m in (tr.q, tr.k, tr.v))
    title = PRESET_TITLES[state.preset]
    return Scenario(
        name=f"induction-L{layer}H{head}",
        title=f"Induction lab: head L{layer}H{head}",
        description=f"{title}, seed {state.seed}: the head's queries, keys and values on the "
        "lab's sample sequence.",
        tokens=names,
        mode="direct",
        query_tokens=names,
        Q=q,
        K=k,
        V=v,
        mask="causal",
        receiving=len(names) - 1,
    )
