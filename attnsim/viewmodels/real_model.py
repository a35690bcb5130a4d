"""What the "Real model" panel shows: a pretrained model (all-MiniLM-L6-v2 or SmolLM2-135M) run
in NumPy on the user's text, every layer's and head's attention weights, per-head metrics, the
next-token predictions (SmolLM2) with heads ablated, the repeated-random-token probe, and one
head on the text as a direct-mode scenario for the rest of the workbench.

Qt-free: the settings are a frozen dataclass (a lab state, undoable), the results frozen
dataclasses of arrays computed with :mod:`attnsim.engine.models`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.models import (
    MODEL_FILES,
    PROBE_TOP,
    InductionProbe,
    ModelFilesMissing,
    head_metrics,
    hidden_change,
    induction_probe,
    model_file,
    next_token_change,
)

# the one copy of each model (the panel and the command line read these names from here)
from attnsim.engine.models.contributions import MAPS, contribution_top, value_norms
from attnsim.engine.models.loaded import LOAD_SHARE as LOAD_SHARE
from attnsim.engine.models.loaded import encode, load_then
from attnsim.engine.models.loaded import is_loaded as is_loaded
from attnsim.engine.models.loaded import loaded as loaded
from attnsim.engine.models.scores import text_induction
from attnsim.engine.scenario import Scenario

MODELS = ("minilm", "smollm2")
MODEL_TITLES = {
    "minilm": "all-MiniLM-L6-v2 (BERT, 6 × 12)",
    "smollm2": "SmolLM2-135M (causal, 30 × 9)",
}
METRICS = ("previous_token", "first_token", "induction", "entropy")
METRIC_TITLES = {"previous_token": "previous-token", "first_token": "sink", "entropy": "entropy",
                 "induction": "induction"}  # fmt: skip
# zero: the head's output z is 0; mean: z at every position is its mean over the text's positions
ABLATIONS = ("zero", "mean")
ABLATION_TITLES = {"zero": "zero ablation", "mean": "mean ablation"}
MAX_TOKENS = 512  # the limit; MiniLM's position table also ends there
DEFAULT_TEXT = "The cat sat on the mat. The dog sat on the rug, and the cat watched the dog."
TOP_K = 10

Progress = Callable[[float], None]
Cancelled = Callable[[], bool]


class RunCancelledError(Exception):
    """Raised inside a forward pass when the user pressed Cancel (the runner drops it)."""


@dataclass(frozen=True)
class RealModelState:
    """The panel's settings (a lab state: undoable, but not part of the scenario document:
    opening another scenario keeps them, and changing them does not mark it modified)."""

    IN_DOCUMENT: ClassVar[bool] = False
    model: str = "minilm"
    text: str = DEFAULT_TEXT
    selected: tuple[int, int] = (0, 0)
    ablated: tuple[tuple[int, int], ...] = ()
    metric: str = "previous_token"
    ablation: str = "zero"
    maps: str = "weights"  # or "contributions" (MAPS): what the heads' maps show

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.ablation not in ABLATIONS:
            raise ValueError(f"ablation must be one of {ABLATIONS}, got {self.ablation!r}")
        if self.maps not in MAPS:
            raise ValueError(f"maps must be one of {tuple(MAPS)}, got {self.maps!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("the text is empty: type a few words")
        layers, heads = shape_of(self.model)
        layer, head = (int(i) for i in self.selected)
        if not (0 <= layer < layers and 0 <= head < heads):
            layer, head = 0, 0  # a head of the other model: start at the first
        object.__setattr__(self, "selected", (layer, head))
        kept = {(int(a), int(b)) for a, b in self.ablated if a < layers and b < heads}
        object.__setattr__(self, "ablated", tuple(sorted(kept)))

    def with_head_toggled(self, layer: int, head: int) -> RealModelState:
        return replace(self, ablated=tuple(sorted(set(self.ablated) ^ {(layer, head)})))

    def run_key(self) -> tuple:
        """What a run depends on: (model, text, ablated heads, ablation mode); the mode counts
        only when a head is ablated (nothing ablated is one run whatever the mode)."""
        return (self.model, self.text, self.ablated, self.ablation if self.ablated else "")


def shape_of(model: str) -> tuple[int, int]:
    """(layers, heads) of a model, known without loading it."""
    return (6, 12) if model == "minilm" else (30, 9)


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


# ---- the grid's layout ---------------------------------------------------------------------------
@dataclass(frozen=True)
class GridLayout:
    """Where the layer x head grid puts each head's map: square cells of ``side`` pixels.

    Either layers run down and heads across (``heads_across``) or the other way round, and the
    rows may be cut into ``blocks`` placed side by side; whichever gives the largest cells in
    the area. ``cells`` maps (layer, head) to (x, y, side); ``row_labels`` and ``col_labels``
    are (text, x, y) of each row's label (right-aligned to x) and each column's (centred on x).
    """

    heads_across: bool
    blocks: int
    side: float
    pad: float
    cells: dict[tuple[int, int], tuple[float, float, float]]
    row_labels: tuple[tuple[str, float, float], ...]
    col_labels: tuple[tuple[str, float, float], ...]
    width: float
    height: float


def grid_layout(
    layers: int,
    heads: int,
    width: float,
    height: float,
    *,
    label_w: float = 24.0,
    label_h: float = 14.0,
    band: float = 4.0,
    gap: float = 10.0,
    max_side: float = 160.0,
) -> GridLayout:
    """The grid of ``layers`` x ``heads`` maps laid out to fill ``width`` x ``height`` pixels.

    Each cell is a square map with a ``band`` (the metric's colour) left of it; each block of
    rows has ``label_w`` for its row labels on the left and ``label_h`` for its column labels on
    top; blocks are ``gap`` apart. SmolLM2's 30 x 9 in a wide dock becomes three blocks of ten
    layers; MiniLM's 6 x 12 in a tall one turns, heads down. Cells never go below 2 px.
    """
    best: tuple[float, bool, int, float] | None = None
    for heads_across in (True, False):
        rows, cols = (layers, heads) if heads_across else (heads, layers)
        for blocks in range(1, rows + 1):
            per_block = -(-rows // blocks)
            if blocks > 1 and -(-rows // (blocks - 1)) == per_block:
                continue  # as many rows per block as with one block fewer
            for pad in (4.0, 2.0):
                across = (width - (blocks - 1) * gap - blocks * label_w) / (blocks * cols)
                side = min(across - band - pad, (height - label_h) / per_block - pad, max_side)
                if pad == 2.0 or side >= 24.0:
                    break
            # a larger map wins; at (nearly) equal size, layers down and fewer blocks
            if best is None or side > best[0] + 0.5:
                best = (side, heads_across, blocks, pad)
    assert best is not None
    side, heads_across, blocks, pad = best
    side = max(2.0, float(np.floor(side)))
    rows, cols = (layers, heads) if heads_across else (heads, layers)
    per_block = -(-rows // blocks)
    pitch_x, pitch_y = side + band + pad, side + pad
    block_w = label_w + cols * pitch_x
    cells: dict[tuple[int, int], tuple[float, float, float]] = {}
    row_labels, col_labels = [], []
    row_name, col_name = ("L", "H") if heads_across else ("H", "L")
    for b in range(blocks):
        x0 = b * (block_w + gap) + label_w
        for c in range(cols):
            col_labels.append((f"{col_name}{c}", x0 + c * pitch_x + band + side / 2, 0.0))
        for r in range(b * per_block, min(rows, (b + 1) * per_block)):
            y = label_h + (r - b * per_block) * pitch_y
            row_labels.append((f"{row_name}{r}", x0 - 2, y + side / 2))
            for c in range(cols):
                key = (r, c) if heads_across else (c, r)
                cells[key] = (x0 + c * pitch_x + band, y, side)
    return GridLayout(
        heads_across, blocks, side, pad, cells, tuple(row_labels), tuple(col_labels),
        blocks * block_w + (blocks - 1) * gap, label_h + per_block * pitch_y,
    )  # fmt: skip


# ---- the models --------------------------------------------------------------------------------
def missing_files(model: str) -> str:
    """Why the model cannot run ("" when its files are installed); names the install command."""
    try:
        for name in MODEL_FILES[model]:
            model_file(model, name)
    except ModelFilesMissing as exc:
        return str(exc)
    return ""


def tokenize(model: str, text: str) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """The text's token ids and pieces; raises ValueError naming the count past 512 tokens."""
    ids, pieces = encode(model, text)
    if len(ids) > MAX_TOKENS:
        raise ValueError(f"the text is {len(ids)} tokens; the panel runs at most {MAX_TOKENS}")
    if len(ids) < 2:
        raise ValueError("the text is one token: type at least two")
    return ids, pieces


def distinct(pieces: tuple[str, ...]) -> tuple[str, ...]:
    """Readable, distinct token names for labels and scenarios: spaces shown as '·', repeats
    numbered the way scenarios write them ('the', 'the 2')."""
    seen: dict[str, int] = {}
    out = []
    for p in pieces:
        s = p.replace(" ", "·").replace("\n", "↵").replace("\t", "→").strip() or "∅"
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s} {seen[s]}")
    return tuple(out)


# ---- one run -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunResult:
    """One run of ``key`` = (model, text, ablated): the weights and q/k/v of the ablated run
    (the unablated one when nothing is ablated), metrics of those weights, and for SmolLM2 the
    top next tokens after the last one; ``loss_delta`` (SmolLM2: change of the text's mean
    next-token loss) or ``cosine`` (MiniLM: sentence embedding against the unablated run)."""

    key: tuple
    ids: NDArray[np.int64]
    pieces: tuple[str, ...]
    labels: tuple[str, ...]
    trace: Any
    metrics: dict[str, NDArray[np.float32]]
    top: tuple[tuple[str, float], ...]
    base_top: tuple[tuple[str, float], ...]
    loss: float
    loss_delta: float
    cosine: float
    seconds: float
    # positions whose token occurred earlier in the text: what the induction score averages
    # over (0: nothing repeats, and the score, all zeros, means nothing)
    repeats: int = 0
    # |v_j W_O^h| of each layer, head and key (layers, heads, n), and the largest contribution
    # of any head: a head's contribution map is weights[l, h] * value_norms[l, h][None]
    value_norms: NDArray[np.float32] | None = None
    contribution_top: float = 1.0

    def head_map(self, layer: int, head: int, maps: str = "weights") -> NDArray[np.float32]:
        """Head (layer, head)'s map (queries x keys): its weights, or each key's contribution
        |alpha_ij v_j W_O^h| to each query's output."""
        w = self.weights[layer, head]
        if maps != "contributions" or self.value_norms is None:
            return w
        return w * self.value_norms[layer, head][None, :]

    @property
    def model(self) -> str:
        return self.key[0]

    @property
    def ablated(self) -> tuple[tuple[int, int], ...]:
        return self.key[2]

    @property
    def ablation(self) -> str:
        """The ablation mode of the ablated heads ("" when none is ablated)."""
        return self.key[3]

    @property
    def weights(self) -> NDArray[np.float32]:
        return self.trace.weights

    @property
    def causal(self) -> bool:
        return self.model == "smollm2"


def _top(model: Any, trace: Any) -> tuple[tuple[str, float], ...]:
    lp = trace.log_probs()[-1]
    best = np.argsort(lp)[::-1][:TOP_K]
    return tuple((model.pieces(np.array([i]))[0], float(np.exp(lp[i]))) for i in best)


def run(
    state: RealModelState,
    progress: Progress,
    cancelled: Cancelled,
    base: RunResult | None = None,
) -> RunResult:
    """Run the model on the state's text in the background, reporting progress by layer.

    ``base``: the last unablated run of the same model and text, reused so an ablation toggle
    costs one forward pass. Raises RunCancelledError when ``cancelled()`` turns true.
    """
    start = time.perf_counter()
    model, progress = load_then(state.model, progress)
    ids, pieces = tokenize(state.model, state.text)
    layers = shape_of(state.model)[0]
    passes = 1 + (base is None and bool(state.ablated))
    done = [0]

    def watch(layer: int, arr: Any) -> None:
        if cancelled():
            raise RunCancelledError
        progress(min(1.0, (done[0] * layers + layer + 1) / (passes * layers)))
        return None

    def forward(mask: Any) -> Any:
        tr = model.forward(ids, head_mask=mask, hooks={"q": watch})  # on one BLAS thread
        done[0] += 1
        return tr

    plain = base.trace if base is not None else forward(None)
    mask = dict.fromkeys(state.ablated, state.ablation) or None
    trace = forward(mask) if mask else plain
    m = head_metrics(trace.weights)
    induct = text_induction(trace.weights, ids)
    metrics = {k: getattr(m, k) for k in METRICS if k != "induction"}
    metrics["induction"] = induct.score
    loss = delta = cosine = math.nan
    top = base_top = ()
    if state.model == "smollm2":
        top, base_top = _top(model, trace), _top(model, plain)
        loss = float(trace.token_losses().mean())
        delta = next_token_change(plain, trace).loss_delta
    else:
        cosine = hidden_change(plain, trace).embedding_cosine
    norms = value_norms(model, trace)
    return RunResult(
        state.run_key(), ids, pieces, distinct(pieces), trace, metrics, top, base_top, loss,
        delta, cosine, time.perf_counter() - start, induct.count, norms,
        contribution_top(trace.weights, norms) or 1.0,
    )  # fmt: skip


def unablated(result: RunResult) -> RunResult | None:
    """The result as the base of a later ablation run (None: it was itself ablated)."""
    return result if not result.ablated else None


def metric_note(result: RunResult, metric: str) -> str:
    """What the reader must know about a metric on this text ("" when nothing): the induction
    score is undefined when no token repeats, and rests on few positions when few do."""
    if metric != "induction":
        return ""
    if result.repeats == 0:
        return ("No token repeats in this text, so no head can copy what followed an earlier "
                "occurrence: the induction score is undefined (shown as 0). Repeat a phrase to "
                "see one.")  # fmt: skip
    where = "position" if result.repeats == 1 else "positions"
    return (f"Induction score: the mean weight from a repeated token to the token after its "
            f"earlier occurrence, over the {result.repeats} {where} whose token occurred "
            "before.")  # fmt: skip


def ranking(result: RunResult, metric: str) -> list[tuple[int, int, float]]:
    """Every head as (layer, head, value), highest first (lowest first for entropy: the
    sharpest heads lead; layer by layer for an undefined induction score)."""
    vals = result.metrics[metric]
    order = np.argsort(vals, axis=None, kind="stable")
    if metric == "induction" and not result.repeats:
        order = np.arange(vals.size)  # undefined (all 0): in the model's order, not reversed
    elif metric != "entropy":
        order = order[::-1]
    heads = vals.shape[1]
    return [(int(i // heads), int(i % heads), float(vals.flat[i])) for i in order]


# ---- the induction probe ------------------------------------------------------------------------
ProbeResult = InductionProbe  # the engine's probe, which `attnsim model probe` prints too
PROBE_KINDS = {"none": "none", "top": f"top {PROBE_TOP} induction heads",
               "random": f"{PROBE_TOP} random heads"}  # fmt: skip


def probe(progress: Progress, cancelled: Cancelled) -> ProbeResult:
    """The induction probe with its defaults (seed, length and batch of the command line's),
    in the background; raises RunCancelledError when ``cancelled()`` turns true."""
    model, progress = load_then("smollm2", progress)

    def step(fraction: float) -> None:
        if cancelled():
            raise RunCancelledError
        progress(fraction)

    return induction_probe(model, progress=step)


def probe_settings(result: ProbeResult) -> str:
    """The probe's experiment in words: how many sequences of how many tokens, which seed."""
    return (f"{result.batch} sequences of {result.half} random tokens, each followed by its "
            f"repeat (random seed {result.seed})")  # fmt: skip


# ---- a head in the workbench ---------------------------------------------------------------------
def head_scenario(result: RunResult, layer: int, head: int) -> Scenario:
    """The head on this text as a direct-mode scenario: its q (after RoPE for SmolLM2), k and
    v rows, the causal mask for SmolLM2, the token names, the model's 1/sqrt(d_head) scale."""
    tr = result.trace
    layers, heads = tr.weights.shape[:2]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise ValueError(f"head {head_name(layer, head)} is not in the model")
    q, k, v = (np.asarray(m[layer, head], dtype=np.float64) for m in (tr.q, tr.k, tr.v))
    title = MODEL_TITLES[result.model].split(" (")[0]
    names = result.labels
    return Scenario(
        name=f"{result.model}-L{layer}H{head}",
        title=f"{title}: head {head_name(layer, head)}",
        description=f"{title}, layer {layer}, head {head}: its queries, keys and values on "
        f"the text “{result.key[1][:80]}”.",
        tokens=names,
        mode="direct",
        query_tokens=names,
        Q=q,
        K=k,
        V=v,
        mask="causal" if result.causal else "none",
        receiving=len(names) - 1,
    )
