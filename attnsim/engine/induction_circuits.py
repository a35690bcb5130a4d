"""What the induction-head lab measures in a model of :mod:`attnsim.engine.induction`.

Every score is defined in its docstring and computed from the forward pass or the weights; a
name such as "induction head" is given to a head only through these numbers. Hand-built models
(no training) show the mechanisms before any training does.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .induction import (
    Ablation,
    AblationMode,
    Array,
    Config,
    InductionTrainer,
    Params,
    Trace,
    config_of,
    forward,
    loss_of,
    one_blas_thread,
    param_shapes,
    per_token_loss,
    repeated_sequences,
)

__all__ = [
    "AblationRow",
    "Criterion",
    "Emergence",
    "HeadScores",
    "ablation_table",
    "composition_baseline",
    "composition_scores",
    "copying_score",
    "evaluation_batch",
    "half_losses",
    "hand_built_induction",
    "head_copying_score",
    "head_scores",
    "induction_criterion",
    "ov_circuit",
    "qk_circuit",
    "skip_trigram_example",
    "train_until",
]


def _repeat_layout(trace: Trace, half_len: int) -> tuple[int, int]:
    """(offset, half_len) of a batch made by ``repeated_sequences``: offset 1 with a BOS."""
    n = trace.tokens.shape[1]
    offset = n - 2 * half_len
    if offset not in (0, 1):
        raise ValueError(f"a sequence of {n} tokens is not two halves of {half_len} (+ a BOS)")
    return offset, half_len


@dataclass(frozen=True)
class HeadScores:
    """Per-head scores, each (n_layers, n_heads)."""

    previous_token: Array
    induction: Array


def head_scores(trace: Trace, half_len: int) -> HeadScores:
    """Previous-token and induction scores of every head on repeated sequences.

    For each position i of the repeated (second) half:

    - previous-token score: the attention from i to i - 1, averaged over those positions and
      the batch;
    - induction score: the attention from i to the position just after the previous occurrence
      of its token, i - half_len + 1, averaged the same way.

    Both lie in [0, 1]; a head that does the job perfectly scores 1.
    """
    offset, h = _repeat_layout(trace, half_len)
    rows = np.arange(offset + h, offset + 2 * h)
    prev = np.stack([p[..., rows, rows - 1].mean(axis=(0, 2)) for p in trace.patterns])
    induct = np.stack([p[..., rows, rows - h + 1].mean(axis=(0, 2)) for p in trace.patterns])
    return HeadScores(prev, induct)


def half_losses(trace: Trace, half_len: int) -> tuple[float, float]:
    """Mean loss on the first half and on the repeated half.

    First half: predicting tokens 2..half_len of the first half (its first token is a guess
    with or without a BOS). Repeated half: predicting tokens 2..half_len of the second half,
    each of which a copying model can read off the first half. The first token of each half is
    left out of both: nothing in the sequence predicts it.
    """
    offset, h = _repeat_layout(trace, half_len)
    losses = per_token_loss(trace)  # column j predicts token j + 1
    first = losses[:, offset : offset + h - 1]
    second = losses[:, offset + h : offset + 2 * h - 1]
    return float(first.mean()), float(second.mean())


@dataclass(frozen=True)
class AblationRow:
    layer: int
    head: int
    mode: AblationMode
    loss: float
    repeated_loss: float
    delta: float  # loss - baseline loss
    repeated_delta: float


def ablation_table(
    params: Mapping[str, Array], tokens: NDArray[np.int64], half_len: int
) -> tuple[float, float, list[AblationRow]]:
    """Baseline loss, baseline repeated-half loss, and one row per (head, mode) ablation."""
    cfg = config_of(params)
    base = forward(params, tokens)
    base_loss, (_, base_rep) = loss_of(base), half_losses(base, half_len)
    rows = []
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            for mode in ("zero", "mean"):
                tr = forward(params, tokens, ablate=Ablation.of([(layer, head)], mode))
                loss, rep = loss_of(tr), half_losses(tr, half_len)[1]
                rows.append(
                    AblationRow(layer, head, mode, loss, rep, loss - base_loss, rep - base_rep)
                )
    return base_loss, base_rep, rows


def _attn(params: Mapping[str, Array], layer: int, head: int, name: str) -> Array:
    return np.asarray(params[f"blocks.{layer}.attn.W_{name}"][head], dtype=np.float64)


def qk_circuit(params: Mapping[str, Array], layer: int, head: int) -> Array:
    """``W_E W_Q W_K^T W_E^T`` (d_vocab, d_vocab): the score a query token gives a key token
    through the direct path of the embeddings (positions and earlier layers left out)."""
    we = np.asarray(params["embed.W_E"], dtype=np.float64)
    return (we @ _attn(params, layer, head, "Q")) @ (we @ _attn(params, layer, head, "K")).T


def ov_circuit(params: Mapping[str, Array], layer: int, head: int) -> Array:
    """``W_E W_V W_O W_U`` (d_vocab, d_vocab): row s is what attending to token s adds to each
    output logit through the direct path."""
    we = np.asarray(params["embed.W_E"], dtype=np.float64)
    wu = np.asarray(params["unembed.W_U"], dtype=np.float64)
    return ((we @ _attn(params, layer, head, "V")) @ _attn(params, layer, head, "O")) @ wu


def copying_score(circuit: Array) -> float:
    """Elhage et al.'s copying score ``sum(eigenvalues) / sum(|eigenvalues|)`` in [-1, 1].

    Near 1: the circuit raises the logit of the token it attends to (copying); near -1 it
    suppresses it. The numerator is the trace, so only the denominator depends on LAPACK, and
    it is a sum of magnitudes, which does not depend on how eigenvectors were signed.
    """
    m = np.asarray(circuit, dtype=np.float64)
    total = float(np.abs(np.linalg.eigvals(m)).sum())
    return float(np.trace(m)) / total if total > 0 else 0.0


def head_copying_score(params: Mapping[str, Array], layer: int, head: int) -> float:
    """:func:`copying_score` of the head's OV circuit without forming it: the circuit is
    ``(W_E W_V)(W_O W_U)``, and ``A B`` has the eigenvalues of ``B A`` (d_head x d_head) plus
    zeros, so the trace and the sum of magnitudes are those of the small matrix (a d_vocab of
    512 would otherwise cost an eigen-solve of 512 x 512 at each redraw)."""
    we = np.asarray(params["embed.W_E"], dtype=np.float64)
    wu = np.asarray(params["unembed.W_U"], dtype=np.float64)
    left = we @ _attn(params, layer, head, "V")
    right = _attn(params, layer, head, "O") @ wu
    return copying_score(right @ left)


def _qk(params: Mapping[str, Array], layer: int, head: int) -> Array:
    return _attn(params, layer, head, "Q") @ _attn(params, layer, head, "K").T


def _ov(params: Mapping[str, Array], layer: int, head: int) -> Array:
    return _attn(params, layer, head, "V") @ _attn(params, layer, head, "O")


def _ratio(left: Array, right: Array) -> float:
    denom = np.linalg.norm(left) * np.linalg.norm(right)
    return float(np.linalg.norm(left @ right) / denom) if denom > 0 else 0.0


COMPOSITIONS = ("Q", "K", "V")


def composition_scores(
    params: Mapping[str, Array], kind: str, earlier: int = 0, later: int = 1
) -> Array:
    """Composition scores (n_heads of ``earlier``, n_heads of ``later``), Elhage et al. (2021).

    With ``OV = W_V W_O`` and ``QK = W_Q W_K^T`` (d_model, d_model, row-vector convention), the
    score of an earlier head e and a later head l is ``||A B||_F / (||A||_F ||B||_F)`` with
    (A, B) = (OV_e, QK_l) for Q-composition (the later head's queries read e's output),
    (OV_e, QK_l^T) for K-composition (its keys do) and (OV_e, OV_l) for V-composition.
    """
    if kind not in COMPOSITIONS:
        raise ValueError(f"composition kind must be one of {COMPOSITIONS}, got {kind!r}")
    cfg = config_of(params)
    if not 0 <= earlier < later < cfg.n_layers:
        raise ValueError(f"need 0 <= earlier < later < {cfg.n_layers}, got {earlier}, {later}")
    out = np.zeros((cfg.n_heads, cfg.n_heads))
    for e in range(cfg.n_heads):
        left = _ov(params, earlier, e)
        for h in range(cfg.n_heads):
            right = {"Q": _qk, "K": lambda *a: _qk(*a).T, "V": _ov}[kind](params, later, h)
            out[e, h] = _ratio(left, right)
    return out


def composition_baseline(cfg: Config, kind: str, *, samples: int = 64, seed: int = 0) -> float:
    """Mean composition score of random Gaussian weights of the model's shapes.

    Random matrices compose weakly, and how weakly depends on d_model and d_head: a trained
    score means something only against this number. It depends on nothing else, so it is
    computed once per (d_model, d_head, kind, samples, seed).
    """
    if kind not in COMPOSITIONS:
        raise ValueError(f"composition kind must be one of {COMPOSITIONS}, got {kind!r}")
    return _baseline(cfg.d_model, cfg.d_head, kind, samples, seed)


@functools.lru_cache(maxsize=64)
def _baseline(d_model: int, d_head: int, kind: str, samples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(samples):
        w = {m: rng.standard_normal((d_model, d_head)) for m in ("Q", "K", "V", "V2")}
        w_o = rng.standard_normal((d_head, d_model))
        left = (w["V"], w_o)
        right = {
            "Q": (w["Q"], w["K"].T),
            "K": (w["K"], w["Q"].T),
            "V": (w["V2"], rng.standard_normal((d_head, d_model))),
        }[kind]
        scores.append(_factored_ratio(left, right))
    return float(np.mean(scores))


def _factored_ratio(left: tuple[Array, Array], right: tuple[Array, Array]) -> float:
    """``_ratio(a1 @ b1, a2 @ b2)`` for rank-d_head factors (a: d x r, b: r x d), from r x r
    Gram matrices: ``||a1 M b2||_F^2 = tr(M^T (a1^T a1) M (b2 b2^T))`` with ``M = b1 a2``, so
    no d x d product is formed (the baseline draws 64 samples of each shape)."""
    (a1, b1), (a2, b2) = left, right
    g_a1, g_b1 = a1.T @ a1, b1 @ b1.T
    g_a2, g_b2 = a2.T @ a2, b2 @ b2.T
    m = b1 @ a2
    left_sq = float(np.sum(g_a1 * g_b1))  # tr(A B) = sum(A * B^T); the Grams are symmetric
    right_sq = float(np.sum(g_a2 * g_b2))
    prod_sq = float(np.sum((m.T @ g_a1 @ m) * g_b2))
    denom = math.sqrt(left_sq * right_sq)
    return math.sqrt(max(prod_sq, 0.0)) / denom if denom > 0 else 0.0


# -- hand-built models ---------------------------------------------------------------------


def hand_built_induction(d_vocab: int = 8, n_ctx: int = 17, strength: float = 12.0) -> Params:
    """A two-layer, one-head model built by hand that continues ``A B ... A`` with ``B``.

    The residual stream has four blocks of dimensions: the current token (one-hot, d_vocab),
    the position (one-hot, n_ctx), the previous token (written by layer 0), and the
    prediction (written by layer 1 and read by the unembedding).

    - Layer 0, previous-token head: the query of position i matches the key of position
      i - 1 (positions only), and copies that position's token into the previous-token block.
    - Layer 1, induction head: the query (the current token) matches keys whose previous-token
      block holds the same token, i.e. the position just after an earlier occurrence, and
      copies the token found there into the prediction block.

    ``strength`` sets how sharp the attention and the prediction are. Position 0 has no
    previous token, so layer 0 makes it read its own: start sequences with a BOS token that
    does not occur again (as ``repeated_sequences(..., bos=...)`` does) and every later token
    is continued correctly.
    """
    v, c = d_vocab, n_ctx
    tok, pos, prev, pred = 0, v, v + c, 2 * v + c
    d_model, d_head = 3 * v + c, max(v, c)
    cfg = Config(2, 1, d_model, d_head, v, c)
    p = {k: np.zeros(s) for k, s in param_shapes(cfg).items()}
    s = math.sqrt(strength * math.sqrt(d_head))  # q.k / sqrt(d_head) = strength on a match
    p["embed.W_E"][:, tok : tok + v] = np.eye(v)
    p["pos_embed.W_pos"][:, pos : pos + c] = np.eye(c)
    # layer 0: position i asks for position i - 1 and copies its token
    p["blocks.0.attn.W_Q"][0, pos + 1 : pos + c, : c - 1] = s * np.eye(c - 1)
    p["blocks.0.attn.W_K"][0, pos : pos + c - 1, : c - 1] = s * np.eye(c - 1)
    p["blocks.0.attn.W_V"][0, tok : tok + v, :v] = np.eye(v)
    p["blocks.0.attn.W_O"][0, :v, prev : prev + v] = np.eye(v)
    # layer 1: the current token asks for a key whose previous token is the same
    p["blocks.1.attn.W_Q"][0, tok : tok + v, :v] = s * np.eye(v)
    p["blocks.1.attn.W_K"][0, prev : prev + v, :v] = s * np.eye(v)
    p["blocks.1.attn.W_V"][0, tok : tok + v, :v] = np.eye(v)
    p["blocks.1.attn.W_O"][0, :v, pred : pred + v] = np.eye(v)
    p["unembed.W_U"][pred : pred + v, :] = strength * np.eye(v)
    return p


@dataclass(frozen=True)
class SkipTrigramExample:
    """A one-layer, one-head model with two skip-trigrams and the bug they bring.

    The head is meant to do ``keep ... in -> mind`` and ``keep ... at -> bay``. Its QK circuit
    lets the queries ``in`` and ``at`` both attend to ``keep``; its OV circuit decides what
    attending to ``keep`` says, and that cannot depend on the query. So both queries receive
    the same message (raise ``mind`` and ``bay``), and ``keep ... in bay`` and
    ``keep ... at mind`` become as likely as the intended completions.
    """

    vocab: tuple[str, ...]
    params: Params
    prompts: tuple[tuple[str, ...], ...]
    logits: Array  # (len(prompts), d_vocab): the last position's logits for each prompt


SKIP_VOCAB = ("keep", "in", "at", "mind", "bay", "the", "door", "open")


def skip_trigram_example(strength: float = 6.0) -> SkipTrigramExample:
    """Build the skip-trigram model by hand and run it on ``keep the door in`` / ``... at``."""
    vocab = SKIP_VOCAB
    ix = {w: i for i, w in enumerate(vocab)}
    v, c = len(vocab), 8
    # the token block and the output block are apart, so the only path to the logits is the head
    d_model, d_head = 2 * v, v
    cfg = Config(1, 1, d_model, d_head, v, c)
    p = {k: np.zeros(s) for k, s in param_shapes(cfg).items()}
    s = math.sqrt(strength * math.sqrt(d_head))
    p["embed.W_E"][:, :v] = np.eye(v)
    for query in ("in", "at"):
        p["blocks.0.attn.W_Q"][0, ix[query], ix["keep"]] = s
    p["blocks.0.attn.W_K"][0, ix["keep"], ix["keep"]] = s
    p["blocks.0.attn.W_V"][0, ix["keep"], 0] = 1.0
    for target in ("mind", "bay"):
        p["blocks.0.attn.W_O"][0, 0, v + ix[target]] = 1.0
    p["unembed.W_U"][v:] = strength * np.eye(v)
    prompts = (("keep", "the", "door", "in"), ("keep", "the", "door", "at"))
    tokens = np.array([[ix[w] for w in prompt] for prompt in prompts])
    logits = forward(p, tokens).logits[:, -1]
    return SkipTrigramExample(vocab, p, prompts, logits)


# -- the induction criterion ---------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """Whether a model has formed an induction head, by the lab's measured criterion.

    The candidate is a head of layer 1 or later (layer 0 has nothing to compose with) with
    induction score >= ``min_score``; of those, the one whose zero-ablation raises the
    repeated-half loss most. ``met`` needs, on top, a repeated-half loss below ``max_ratio``
    times the first-half loss, and that ablation to give back at least ``min_share`` of the gap
    between the two: ``ablation_share = (ablated - repeated) / (first - repeated)``. With no
    head above ``min_score`` the candidate is the highest-scoring later-layer head, reported
    but not met. ``layer`` and ``head`` are -1 for a one-layer model.
    """

    met: bool
    layer: int
    head: int
    induction: float
    first_loss: float
    repeated_loss: float
    ablated_repeated_loss: float
    ablation_share: float


def induction_criterion(
    params: Mapping[str, Array],
    tokens: NDArray[np.int64],
    half_len: int,
    *,
    min_score: float = 0.5,
    max_ratio: float = 0.3,
    min_share: float = 0.5,
) -> Criterion:
    """Evaluate :class:`Criterion` on a batch of repeated sequences of ``half_len``."""
    cfg = config_of(params)
    base = forward(params, tokens)
    first, repeated = half_losses(base, half_len)
    scores = head_scores(base, half_len).induction
    later = [(layer, h) for layer in range(1, cfg.n_layers) for h in range(cfg.n_heads)]
    if not later:
        return Criterion(False, -1, -1, 0.0, first, repeated, repeated, 0.0)
    strong = [lh for lh in later if scores[lh] >= min_score]
    ablated = {
        lh: half_losses(forward(params, tokens, ablate=Ablation.of([lh])), half_len)[1]
        for lh in (strong or [max(later, key=lambda lh: scores[lh])])
    }
    layer, head = max(ablated, key=lambda lh: ablated[lh])
    gap = first - repeated
    share = (ablated[layer, head] - repeated) / gap if gap > 0 else 0.0
    met = bool(strong) and repeated < max_ratio * first and share >= min_share
    return Criterion(
        met, layer, head, float(scores[layer, head]), first, repeated, ablated[layer, head], share
    )


def evaluation_batch(trainer: InductionTrainer, batch: int = 64) -> NDArray[np.int64]:
    """Held-out sequences at the trainer's full ``half_len``, the same for every call.

    Drawn from a generator of their own, so checking a model never moves its data stream.
    """
    rng = np.random.default_rng([trainer.seed, 2])
    return repeated_sequences(batch, trainer.half_len, trainer.cfg.d_vocab, rng, bos=trainer.bos)


@dataclass(frozen=True)
class Emergence:
    """How :func:`train_until` ended."""

    step: int | None  # the first checked step at which the criterion held; None: never
    seconds: float  # wall time of the training and the checks, until then or until the end
    criterion: Criterion  # at that step, or after the last one


def train_until(
    trainer: InductionTrainer,
    max_steps: int,
    *,
    check_every: int = 50,
    tokens: NDArray[np.int64] | None = None,
) -> Emergence:
    """Train until :func:`induction_criterion` holds, checking every ``check_every`` steps.

    Stops at the first check that passes or after ``max_steps`` more steps. The time includes
    the checks, as a user waiting for the head would.
    """
    if max_steps < 0 or check_every < 1:
        raise ValueError(
            f"need max_steps >= 0 and check_every >= 1, got {max_steps} and {check_every}"
        )
    toks = evaluation_batch(trainer) if tokens is None else tokens
    start, done = time.perf_counter(), 0
    while True:
        crit = induction_criterion(trainer.params, toks, trainer.half_len)
        if crit.met or done >= max_steps:
            step = trainer.step_count if crit.met else None
            return Emergence(step, time.perf_counter() - start, crit)
        with one_blas_thread():
            for _ in range(min(check_every, max_steps - done)):
                trainer.step()
        done += min(check_every, max_steps - done)
