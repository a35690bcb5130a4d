"""Display arrays for the score and weight heatmaps: pure NumPy, no Qt.

A heatmap panel shows one or more *stages* of one head's trace as an ``(n_q, n_k)`` matrix:
rows are queries (the token that attends), columns are keys (the token attended to).

- ``scores``: the engine's ``logits`` = ``q·k / √d_k`` (divided by ``T`` when ``T != 1``),
- ``masked``: the engine's ``masked_logits``; forbidden cells hold ``-inf`` (or 0, the mistake),
- ``weights``: the softmax of each row,
- ``contributions``: ``‖w_ij v_j‖``, how much of key ``j``'s value reaches query ``i``.

Everything here returns arrays and frozen dataclasses (stages, texts, rectangles) so the tests
can check what is drawn without looking at pixels; the colours and pooled images of a large
matrix are :mod:`attnsim.viewmodels.heatmap_pixels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import HeadTrace
from attnsim.engine.head_trace import MaskedTable
from attnsim.engine.scenario import Scenario

Array = NDArray[np.floating]
BoolArray = NDArray[np.bool_]

Stage = Literal["scores", "masked", "weights", "contributions"]
STAGES: tuple[Stage, ...] = ("scores", "masked", "weights", "contributions")

# The views a panel offers: a name, a menu text and the stages it puts side by side.
VIEWS: dict[str, tuple[str, tuple[Stage, ...]]] = {
    "stages": ("Scores → masked → weights", ("scores", "masked", "weights")),
    "scores": ("Scores (logits)", ("scores",)),
    "masked": ("Masked logits", ("masked",)),
    "weights": ("Weights", ("weights",)),
    "contributions": ("Contributions ‖w·v‖", ("contributions",)),
    "weights-contributions": ("Weights vs contributions", ("weights", "contributions")),
}

__all__ = [
    "MAX_CELL_ASPECT",
    "STAGES",
    "VIEWS",
    "CanvasContent",
    "ControlsData",
    "ForbiddenSummary",
    "StageData",
    "TileLayout",
    "canvas_content",
    "cell_at",
    "cell_texts",
    "controls_data",
    "forbidden_summary",
    "format_value",
    "masked_cells",
    "score_limit",
    "score_title",
    "stage_data",
    "thumb_grid",
    "tile_layout",
]


# ---- what each stage shows --------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StageData:
    """One stage ready to draw.

    ``values`` (n_q, n_k) are the engine's numbers, not a copy; ``allowed`` (n_q, n_k) is the
    engine's mask for stages drawn after masking (None: nothing to hatch); ``lo``/``hi`` are the
    colour limits; ``kind`` is "signed" (diverging map centred at 0), "unit" (weights in
    [0, 1]) or "norm". ``table`` is what the canvas draws: ``values`` itself, or for the masked
    logits the engine's :class:`~attnsim.engine.head_trace.MaskedTable` (the logits and the
    mask), so a pooled image does not make the masked table (``values`` asks the engine for it).
    """

    stage: Stage
    table: Array | MaskedTable
    allowed: BoolArray | None
    kind: Literal["signed", "unit", "norm"]
    lo: float
    hi: float
    title: str
    legend: str

    @property
    def values(self) -> Array:
        t = self.table
        return t.full() if isinstance(t, MaskedTable) else t

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.table.shape[0]), int(self.table.shape[1]))

    @property
    def forbidden(self) -> BoolArray | None:
        """The hatched cells, shape (n_q, n_k), or None (a new array on every call)."""
        return None if self.allowed is None else ~self.allowed


def _num(x: float) -> str:
    """A parameter in a title: up to 3 significant digits, no trailing zeros."""
    return f"{x:.3g}".replace("-", "−")


def score_title(trace: HeadTrace) -> str:
    """What the score stage shows, precisely: the division actually applied to ``q·k``."""
    t = trace.temperature
    root = f"√{trace.d_k}"
    if trace.scale and t == 1.0:
        return f"Scores q·k/{root}"
    if trace.scale:
        return f"Logits q·k/({root}·T), T = {_num(t)}"
    if t == 1.0:
        return "Scores q·k (not scaled)"
    return f"Logits q·k/T (not scaled), T = {_num(t)}"


def score_limit(trace: HeadTrace) -> float:
    """Symmetric colour limit for signed stages: the largest finite ``|logit|`` (1 if none)."""
    lg = trace.logits
    if lg.size == 0:
        return 1.0
    lo, hi = trace.logit_range()
    if math.isfinite(hi) and math.isfinite(lo):
        top = max(abs(hi), abs(lo))
    else:  # overflowed logits: scale to the finite ones
        finite = lg[np.isfinite(lg)]
        top = float(np.abs(finite).max()) if finite.size else 0.0
    return top if top > 0 else 1.0


def masked_cells(trace: HeadTrace) -> BoolArray | None:
    """The engine's mask if it forbids any cell, else None (one pass over the mask)."""
    m = trace.mask
    return None if m.all() else m


_UNSET: object = object()


def stage_data(
    trace: HeadTrace,
    stage: Stage,
    *,
    limit: float | None = None,
    allowed: BoolArray | object | None = _UNSET,
) -> StageData:
    """The arrays one stage of ``trace`` draws.

    ``limit`` is a symmetric score limit shared by several stages; ``allowed`` the result of
    :func:`masked_cells`, when the caller has it already (it scans n_q x n_k cells).
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
    ok: BoolArray | None = masked_cells(trace) if allowed is _UNSET else allowed  # type: ignore[assignment]
    if stage in ("scores", "masked"):
        lim = score_limit(trace) if limit is None else float(limit)
        if stage == "scores":
            return StageData(
                stage=stage, table=trace.logits, allowed=None, kind="signed", lo=-lim, hi=lim,
                title=score_title(trace), legend="before the mask",
            )  # fmt: skip
        if ok is None:
            legend = "no key is forbidden"
        elif math.isinf(trace.mask_value):
            legend = "forbidden = −∞"
        else:
            legend = "forbidden = 0 (mistake)"
        table: Array | MaskedTable
        if ok is not None and np.isneginf(trace.mask_value):
            # -inf in every forbidden cell: pooling reads the logits over the allowed cells
            table = trace.masked_table()
        else:
            table = trace.masked_logits  # the logits themselves when nothing is masked
        return StageData(
            stage=stage, table=table, allowed=ok, kind="signed", lo=-lim, hi=lim,
            title="Masked logits", legend=legend,
        )  # fmt: skip
    if stage == "weights":
        return StageData(
            stage=stage, table=trace.weights, allowed=ok, kind="unit", lo=0.0, hi=1.0,
            title="Weights (row softmax)", legend="each row sums to 1",
        )  # fmt: skip
    norms = trace.contribution_norms
    top = float(norms.max()) if norms.size else 0.0
    return StageData(
        stage=stage, table=norms, allowed=ok, kind="norm", lo=0.0, hi=top if top > 0 else 1.0,
        title="Contributions ‖w·v‖", legend="size of what each key sends",
    )  # fmt: skip


# ---- what the canvas shows ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CanvasContent:
    """Everything the heatmap canvas draws, taken from the workbench in one place (the panel).

    A new receiving row or focused key is a :func:`dataclasses.replace` of this (the stages,
    and what the canvas drew from them, stay)."""

    trace: HeadTrace
    stages: tuple[StageData, ...]
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    receiving: int
    focused_key: int | None = None
    entropy: Array | None = None  # (n_q,) bits, drawn right of the weights
    entropy_max: Array | None = None  # (n_q,) each row's ceiling (trace.max_entropy)
    show_numbers: bool = True
    digits: int = 2

    @property
    def entropy_top(self) -> float:
        """The full width of the entropy bars: the largest row ceiling (at least 1 bit)."""
        if self.entropy_max is not None and np.size(self.entropy_max):
            top = float(np.max(self.entropy_max))
        else:
            top = math.log2(max(len(self.col_labels), 1))
        return max(top, 1.0)

    def same_numbers(
        self, trace: HeadTrace, stages: tuple[Stage, ...], numbers: bool,
        row_labels: tuple[str, ...], col_labels: tuple[str, ...],
    ) -> bool:  # fmt: skip
        """True when this content draws exactly these arrays (only the selection may differ)."""
        return (
            self.trace is trace
            and tuple(s.stage for s in self.stages) == stages
            and self.show_numbers == numbers
            and self.row_labels == row_labels
            and self.col_labels == col_labels
        )


def canvas_content(
    trace: HeadTrace,
    stages: tuple[Stage, ...],
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    receiving: int,
    focused_key: int | None = None,
    *,
    show_numbers: bool = True,
) -> CanvasContent:
    """The stages of ``trace`` a view shows, with one shared score limit and one scan of the
    mask; the entropy column (the trace's own cached arrays) when the weights are shown."""
    limit = score_limit(trace) if {"scores", "masked"} & set(stages) else None
    allowed = masked_cells(trace)
    data = tuple(stage_data(trace, s, limit=limit, allowed=allowed) for s in stages)
    entropy = trace.entropy if "weights" in stages else None
    return CanvasContent(
        trace=trace, stages=data, row_labels=row_labels, col_labels=col_labels,
        receiving=receiving, focused_key=focused_key, entropy=entropy,
        entropy_max=trace.max_entropy if entropy is not None else None,
        show_numbers=show_numbers,
    )  # fmt: skip


# ---- the controls -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ControlsData:
    """What the heatmap's controls show: the view and the scenario's attention settings."""

    view: str
    mask_kind: str
    mask_zero: bool  # the "mask with 0" mistake is on
    temperature: float
    scale: bool
    d_k: int


def controls_data(scenario: Scenario, view: str) -> ControlsData:
    return ControlsData(
        view=view, mask_kind=scenario.mask_kind, mask_zero=scenario.mask_value == 0.0,
        temperature=scenario.temperature, scale=scenario.scale, d_k=scenario.d_k,
    )  # fmt: skip


# ---- numbers as text ----------------------------------------------------------------------------
def format_value(x: float, digits: int = 2) -> str:
    """A cell's number: fixed decimals, a real minus sign, ``−∞`` for minus infinity."""
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    text = f"{x:.{digits}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]  # "-0.00" would suggest a sign the rounded number does not have
    return text.replace("-", "−")


def cell_texts(values: ArrayLike, digits: int = 2) -> list[list[str]]:
    """The text of every cell, row by row (for small matrices only: one string per cell)."""
    arr = np.asarray(values, dtype=float)
    return [[format_value(v, digits) for v in row] for row in arr.tolist()]


# ---- the "mask with 0" mistake ---------------------------------------------------------------
@dataclass(frozen=True)
class ForbiddenSummary:
    """How much weight forbidden keys receive (non-zero only when masking with 0)."""

    per_row: Array  # (n_q,) the engine's trace.forbidden_weight
    n_forbidden: int  # forbidden cells
    worst_row: int
    worst: float
    mean: float


def forbidden_summary(trace: HeadTrace) -> ForbiddenSummary:
    """Summarise ``trace.forbidden_weight``: the worst row and the mean over rows."""
    fw = trace.forbidden_weight
    worst = int(np.argmax(fw)) if fw.size else 0
    return ForbiddenSummary(
        per_row=fw,
        n_forbidden=int((~trace.mask).sum()),
        worst_row=worst,
        worst=float(fw[worst]) if fw.size else 0.0,
        mean=float(fw.mean()) if fw.size else 0.0,
    )


# ---- geometry -----------------------------------------------------------------------------------
Rect = tuple[float, float, float, float]  # x, y, width, height
# The panel's cells may be this many times wider than tall (or taller than wide) to fill its area.
MAX_CELL_ASPECT = 4.0


def cell_at(x: float, y: float, rect: Rect, n_q: int, n_k: int) -> tuple[int, int] | None:
    """The (query, key) cell under point (x, y) of a matrix drawn in ``rect``, or None."""
    rx, ry, rw, rh = rect
    if rw <= 0 or rh <= 0 or not (rx <= x < rx + rw and ry <= y < ry + rh):
        return None
    i = min(int((y - ry) / rh * n_q), n_q - 1)
    j = min(int((x - rx) / rw * n_k), n_k - 1)
    return i, j


@dataclass(frozen=True)
class TileLayout:
    """Where one stage goes: the matrix, its title, its colour bar and its entropy column."""

    matrix: Rect
    title: Rect
    col_labels: Rect
    bar: Rect
    entropy: Rect | None

    def cell_rect(self, i: int, j: int, n_q: int, n_k: int) -> Rect:
        x, y, w, h = self.matrix
        cw, ch = w / n_k, h / n_q
        return (x + j * cw, y + i * ch, cw, ch)


def tile_layout(
    width: float,
    height: float,
    n_q: int,
    n_k: int,
    n_tiles: int,
    *,
    row_label_w: float,
    col_label_h: float,
    title_h: float,
    bar_h: float,
    entropy_w: tuple[float, ...] | None = None,
    gap: float = 14.0,
    margin: float = 6.0,
    max_cell: float = 84.0,
    max_aspect: float = 1.0,
) -> tuple[list[TileLayout], Rect]:
    """Place ``n_tiles`` matrices side by side, centred in the area.

    Cell width and height are sized separately to fill the area, up to ``max_aspect`` : 1
    either way (1, the default: square cells; the panel's :data:`MAX_CELL_ASPECT` lets a wide,
    short dock get wide cells that can hold their numbers). Returns one :class:`TileLayout`
    per tile and the rectangle of the shared row labels (to the left of the first matrix).
    ``entropy_w[t]`` reserves a column right of tile ``t``.
    """
    ent = tuple(entropy_w) if entropy_w is not None else (0.0,) * n_tiles
    if len(ent) != n_tiles:
        raise ValueError(f"entropy_w needs {n_tiles} widths, got {len(ent)}")
    fixed_w = 2 * margin + row_label_w + (n_tiles - 1) * gap + sum(ent)
    avail_w = max(width - fixed_w, 1.0)
    avail_h = max(height - 2 * margin - title_h - col_label_h - bar_h, 1.0)
    cw = max(min(avail_w / (n_tiles * n_k), max_cell), 0.05)
    ch = max(min(avail_h / n_q, max_cell), 0.05)
    cw, ch = min(cw, ch * max_aspect), min(ch, cw * max_aspect)
    mw, mh = cw * n_k, ch * n_q
    used = fixed_w - 2 * margin + n_tiles * mw
    x = margin + max((width - 2 * margin - used) / 2, 0.0)
    # Centre vertically too: a small matrix in a tall dock should not hang from the top.
    top = margin + max((height - 2 * margin - title_h - col_label_h - mh - bar_h) / 2, 0.0)
    row_labels: Rect = (x, top + title_h + col_label_h, row_label_w, mh)
    x += row_label_w
    tiles = []
    for t in range(n_tiles):
        my = top + title_h + col_label_h
        tiles.append(
            TileLayout(
                matrix=(x, my, mw, mh),
                title=(x, top, mw + ent[t], title_h),
                col_labels=(x, top + title_h, mw, col_label_h),
                bar=(x, my + mh, mw, bar_h),
                entropy=(x + mw, my, ent[t], mh) if ent[t] > 0 else None,
            )
        )
        x += mw + ent[t] + gap
    return tiles, row_labels


def thumb_grid(
    n: int,
    width: float,
    *,
    max_size: float = 84.0,
    min_size: float = 36.0,
    gap: float = 10.0,
    label_w: float = 0.0,
) -> tuple[int, int, float, float]:
    """Columns, rows, square size and horizontal pitch of a grid of ``n`` thumbnails.

    Each thumbnail has a label up to ``label_w`` wide under it. When one row cannot hold them
    all, labels are cut back first and thumbnails then shrink toward ``min_size`` before the
    grid wraps onto more rows.
    """
    if n <= 0:
        return 0, 0, 0.0, 0.0
    size = max_size
    pitch = max(size, label_w) + gap
    cols = int((width + gap) // pitch)
    if cols < n:
        pitch = max((width + gap) / n, min_size + gap)
        size = min(max_size, pitch - gap)
        cols = int((width + gap) // pitch)
    cols = max(1, min(cols, n))
    return cols, -(-n // cols), size, pitch
