"""What the Real model panel's second part will run (issue 27): two texts side by side,
activation patching, the logit lens and attention rollout, as background jobs with progress
and Cancel, and the preset pairs.

Qt-free. Each ``*_job`` takes the workbench runner's ``progress(fraction)`` and
``cancelled()`` and returns a frozen result of engine arrays; it raises ValueError with a
sentence for the user on a bad input and :class:`JobCancelledError` on Cancel (the runner drops
a cancelled job's outcome). A view-model imports no other, so the models are loaded here, once
per process (SmolLM2's weights are memory-mapped: a second copy shares the same pages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from attnsim.engine.models.compare import Comparison, compare_traces, find_token
from attnsim.engine.models.contributions import MAPS, contributions
from attnsim.engine.models.flow import Flow, attention_flow
from attnsim.engine.models.interventions import (
    Patching,
    activation_patching,
    hidden_cosine,
    logit_difference,
    single_token,
)
from attnsim.engine.models.lens import Lens, logit_lens
from attnsim.engine.models.loaded import encode, load_then

__all__ = [
    "MAPS",
    "PAIRS",
    "SIDES",
    "CompareResult",
    "FlowResult",
    "JobCancelledError",
    "LensResult",
    "Pair",
    "PairState",
    "PatchResult",
    "both_maps",
    "compare_job",
    "flow_job",
    "lens_job",
    "next_tokens",
    "patch_job",
    "side_maps",
]


Progress = Callable[[float], None]
Cancelled = Callable[[], bool]
MAX_TOKENS = 512  # the Real model panel's limit


class JobCancelledError(Exception):
    """Raised inside a job when the user pressed Cancel."""


def tokenize(model_name: str, model: Any, text: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """The text's token ids and pieces; ValueError past 512 tokens or on an empty text."""
    if not text.strip():
        raise ValueError("the text is empty: type a text for the model to read")
    ids, pieces = encode(model_name, text)
    if len(ids) > MAX_TOKENS:
        raise ValueError(f"the text is {len(ids)} tokens; the panel runs at most {MAX_TOKENS}")
    return ids, pieces


@dataclass(frozen=True)
class Pair:
    """A preset pair of texts: ``a`` (clean) and ``b`` (corrupted or the other sense), the
    ``token`` compared, and for patching SmolLM2 the two next tokens of the logit difference."""

    title: str
    a: str
    b: str
    token: str
    next_tokens: tuple[str, str] | None = None


PAIRS = {
    "bank": Pair("'bank' by a river and a bank raising rates",
                 "We sat on the bank of the river and watched the water flow.",
                 "The bank raised its interest rates again this year.", "bank"),
    "names": Pair("names swapped (who gets the drink?)",
                  "When Mary and John went to the store, John gave a drink to",
                  "When John and Mary went to the store, Mary gave a drink to", "to",
                  (" Mary", " John")),
    "repeat": Pair("a repeated sequence against one whose first half differs",
                   "The purple elephant danced with seven tiny robots. The purple elephant "
                   "danced with seven",
                   "The green giraffe sang to nine large clocks. The purple elephant danced "
                   "with seven", "seven", (" tiny", " large")),
}  # fmt: skip


SIDES = {"a": "text A", "b": "text B", "diff": "A − B"}


@dataclass(frozen=True)
class PairState:
    """The Real model panel's two texts (a lab state, undoable, outside the document): the
    preset they came from ("" when typed), texts A and B, the token compared, and which side
    the head grid shows."""

    IN_DOCUMENT: ClassVar[bool] = False
    preset: str = "bank"
    a: str = PAIRS["bank"].a
    b: str = PAIRS["bank"].b
    token: str = PAIRS["bank"].token
    side: str = "diff"
    maps: str = "weights"  # or "contributions": |alpha_ij v_j W_O^h| of each key
    good: str = ""  # patching SmolLM2: the metric is logit(good) - logit(bad) at the end
    bad: str = ""

    def __post_init__(self) -> None:
        if self.preset not in ("", *PAIRS):
            raise ValueError(f"preset must be one of {tuple(PAIRS)}, got {self.preset!r}")
        if self.maps not in MAPS:
            raise ValueError(f"maps must be one of {tuple(MAPS)}, got {self.maps!r}")
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {tuple(SIDES)}, got {self.side!r}")
        for name, text in (("text A", self.a), ("text B", self.b)):
            if not text.strip():
                raise ValueError(f"{name} is empty: type a sentence")
        if not self.token.strip():
            raise ValueError("the token is empty: give a word of both texts, e.g. bank")

    @staticmethod
    def of_preset(key: str, side: str = "diff") -> PairState:
        pair = PAIRS[key]
        good, bad = pair.next_tokens or ("", "")
        return PairState(key, pair.a, pair.b, pair.token, side, "weights", good, bad)

    def run_key(self) -> tuple[str, str, str]:
        return (self.a, self.b, self.token)


def next_tokens(state: PairState) -> tuple[str, str] | None:
    """The patching metric's two next tokens, or None when not both are given."""
    return (state.good, state.bad) if state.good and state.bad else None


def both_maps(result: CompareResult, maps: str = "weights") -> tuple[np.ndarray, np.ndarray]:
    """The chosen token's weights (or contributions) on the aligned keys, in A and in B."""
    if maps == "contributions":
        return result.contribution_a, result.contribution_b
    if maps == "weights":
        return result.comparison.attention_a, result.comparison.attention_b
    raise ValueError(f"maps must be one of {tuple(MAPS)}, got {maps!r}")


def side_maps(result: CompareResult, side: str, maps: str = "weights") -> np.ndarray:
    """(layers, heads, columns): the chosen token's attention (its weights, or what each key
    contributes through the head) in A, in B, or A − B, over the keys of both texts aligned
    by piece."""
    a, b = both_maps(result, maps)
    if side == "a":
        return a
    if side == "b":
        return b
    if side == "diff":
        return a - b
    raise ValueError(f"side must be one of {tuple(SIDES)}, got {side!r}")


def _step(progress: Progress, cancelled: Cancelled) -> Progress:
    def step(fraction: float) -> None:
        if cancelled():
            raise JobCancelledError
        progress(fraction)

    return step


def _trace(model_name: str, model: Any, text: str) -> tuple[Any, tuple[str, ...]]:
    ids, pieces = tokenize(model_name, model, text)
    return model.forward(ids), pieces


def _position(pieces: tuple[str, ...], token: str, which: str) -> int:
    try:
        return find_token(list(pieces), token)
    except ValueError as exc:
        raise ValueError(f"in {which}, {exc}") from None


@dataclass(frozen=True)
class CompareResult:
    model: str
    pieces_a: tuple[str, ...]
    pieces_b: tuple[str, ...]
    comparison: Comparison
    contribution_a: np.ndarray  # (layers, heads, columns): |alpha v W_O| of each aligned key
    contribution_b: np.ndarray


def _row_aligned(per_head: np.ndarray, row: int, cols: list[int | None]) -> np.ndarray:
    out = np.zeros((*per_head.shape[:2], len(cols)), np.float32)
    for c, pos in enumerate(cols):
        if pos is not None:
            out[:, :, c] = per_head[:, :, row, pos]
    return out


def compare_job(
    model_name: str, a: str, b: str, token: str, progress: Progress, cancelled: Cancelled
) -> CompareResult:
    """Texts A and B run together; the chosen token's streams and attention compared."""
    model, progress = load_then(model_name, progress)
    step = _step(progress, cancelled)
    ta, pa = _trace(model_name, model, a)
    _position(pa, token, "text A")
    step(0.5)
    tb, pb = _trace(model_name, model, b)
    _position(pb, token, "text B")
    step(0.8)
    c = compare_traces(ta, list(pa), tb, list(pb), token)
    ca = _row_aligned(contributions(model, ta).per_head, c.position_a, [k[1] for k in c.columns])
    cb = _row_aligned(contributions(model, tb).per_head, c.position_b, [k[2] for k in c.columns])
    step(1.0)
    return CompareResult(model_name, pa, pb, c, ca, cb)


@dataclass(frozen=True)
class PatchResult:
    """The patching, and its maps as fractions of the gap restored: ``heads`` (layers, heads)
    and ``resid`` (layers, positions)."""

    model: str
    pieces: tuple[str, ...]
    patching: Patching
    heads: np.ndarray
    resid: np.ndarray


def patch_job(
    model_name: str,
    clean: str,
    corrupted: str,
    progress: Progress,
    cancelled: Cancelled,
    *,
    next_tokens: tuple[str, str] | None = None,
    token: str | None = None,
) -> PatchResult:
    """Patch every head and every (layer, position) from the clean into the corrupted text:
    SmolLM2 by the logit difference of ``next_tokens``, MiniLM by ``token``'s final hidden
    state's cosine to its clean value."""
    model, progress = load_then(model_name, progress)
    step = _step(progress, cancelled)
    tc, pieces = _trace(model_name, model, clean)
    tk, pk = _trace(model_name, model, corrupted)
    if len(pieces) != len(pk):
        raise ValueError(
            f"the clean text is {len(pieces)} tokens and the corrupted one {len(pk)}: "
            "patching needs texts of the same length in tokens"
        )
    if model_name == "smollm2":
        if next_tokens is None:
            raise ValueError("choose the two next tokens whose logit difference is measured")
        metric = logit_difference(model, *(single_token(model, t) for t in next_tokens))
    else:
        if token is None:
            raise ValueError("choose the token whose final hidden state is compared")
        metric = hidden_cosine(tc.resid[-1], _position(pieces, token, "the clean text"))
    step(0.02)
    r = activation_patching(model, tc, tk, metric, progress=lambda f: step(0.02 + 0.98 * f))
    return PatchResult(model_name, pieces, r, r.restored(r.heads), r.restored(r.resid))


@dataclass(frozen=True)
class LensResult:
    pieces: tuple[str, ...]
    lens: Lens
    top_pieces: tuple[tuple[str, ...], ...]  # (layers, positions): the top token of each
    token_piece: str = ""  # the token whose probability ``lens.token_probs`` follows


def lens_job(
    text: str, token: str | None, progress: Progress, cancelled: Cancelled, k: int = 5
) -> LensResult:
    """SmolLM2's logit lens of ``text``, following ``token`` (default: the model's own
    prediction at the last position)."""
    model, progress = load_then("smollm2", progress)
    step = _step(progress, cancelled)
    trace, pieces = _trace("smollm2", model, text)
    tid = int(np.argmax(trace.logits[-1])) if token is None else single_token(model, token)
    step(0.3)
    lens = logit_lens(model, trace, k, tid)
    step(1.0)
    tops = tuple(tuple(model.pieces(layer[:, 0])) for layer in lens.top_ids)
    return LensResult(pieces, lens, tops, model.pieces([tid])[0])


@dataclass(frozen=True)
class FlowResult:
    model: str
    pieces: tuple[str, ...]
    flow: Flow


def flow_job(
    model_name: str, text: str, token: str, progress: Progress, cancelled: Cancelled
) -> FlowResult:
    """The rollout of ``token`` over the input tokens, beside the last layer's weights."""
    model, progress = load_then(model_name, progress)
    step = _step(progress, cancelled)
    trace, pieces = _trace(model_name, model, text)
    step(0.8)
    flow = attention_flow(trace, _position(pieces, token, "the text"))
    step(1.0)
    return FlowResult(model_name, pieces, flow)
