"""The anatomy of one self-attention sublayer: every matrix, its shape, learned or computed.

:func:`block_matrices` lists the matrices of the current scenario in the order data flows
(X, then per head Wq/Wk/Wv, Q/K/V, S, A, H, then Concat, Wo, Δ and Y), each with its value,
whether it is a learned parameter or a computed activation, and how it is made.
:func:`counts_of` counts them, which must agree with :func:`multi_head_counts` (the closed-form
count of a standard block). :func:`visible_indices` chooses which rows and columns of a large
matrix fit on screen. :func:`layout_diagram` and :func:`best_fit` place the focused head's
matrices in design units (the panel measures text with Qt and hands the widths in);
:class:`DiagramData` is what the panel hands its diagram.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.attention import HeadTrace, multi_head_counts
from attnsim.engine.scenario import Scenario, ScenarioResult

Array = NDArray[np.float64]
Kind = Literal["learned", "computed", "given"]

__all__ = [
    "CELL_H",
    "CELL_W",
    "TITLE_H",
    "Arrow",
    "BlockMatrix",
    "Diagram",
    "DiagramData",
    "MatrixBox",
    "best_fit",
    "block_caption",
    "block_matrices",
    "chip_labels",
    "count_lines",
    "counts_of",
    "data_flow",
    "diagram_groups",
    "head_superscript",
    "layout_diagram",
    "multi_head_counts",
    "score_formula",
    "sublayer_shape",
    "visible_indices",
]

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@functools.cache
def head_superscript(head: int) -> str:
    """'⁽¹⁾' for head index 0: heads are numbered from 1 on screen, as in the reference."""
    return f"⁽{str(head + 1).translate(_SUPERSCRIPT)}⁾"


@dataclass(frozen=True, eq=False)
class BlockMatrix:
    """One matrix of the block.

    ``value`` has shape (rows, cols) (the scores S are :class:`ScoreCells`). ``rows`` says
    what a row is: "tokens" (one row per token position, so the receiving token's row can be
    highlighted), "keys" (one row per key/value token, direct mode), "queries" (direct-mode
    queries), "features" (an input coordinate of a projection) or "heads" (Wo's rows, h * d_v
    of them, head by head).
    """

    key: str
    symbol: str
    head: int | None
    kind: Kind
    value: Array | ScoreCells
    formula: str
    rows: str
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.value.shape[0]), int(self.value.shape[1]))

    @property
    def title(self) -> str:
        """The symbol with its head as a superscript, e.g. 'Wq⁽²⁾'."""
        return self.symbol + ("" if self.head is None else head_superscript(self.head))


class ScoreCells:
    """A head's scores S as the diagram reads them: a few cells, and the shape. The trace keeps
    only its logits and weights; this makes one cell at a time rather than the (n, n) table
    (134 MB at 4,096 tokens). ``np.asarray`` gives the whole table."""

    def __init__(self, trace: HeadTrace) -> None:
        self._trace = trace
        self.shape = tuple(trace.logits.shape)
        self.size = int(trace.logits.size)
        self.ndim = 2

    def __getitem__(self, cell: tuple[int, int]) -> np.float64:
        r, c = cell
        return np.float64(self._trace.score(int(r), int(c)))

    def __array__(self, dtype=None, copy=None) -> Array:
        scores = self._trace.scores
        return scores if dtype is None else scores.astype(dtype)


def score_formula(sc: Scenario) -> str:
    """How the weights A follow from the scores S under the scenario's options (display text)."""
    divisors = []
    if sc.scale:
        divisors.append(f"√{sc.d_k}")
    if sc.temperature != 1.0:
        divisors.append(f"T={sc.temperature:.3g}")
    if not divisors:
        inner = "S"
    elif len(divisors) == 1:
        inner = f"S / {divisors[0]}"
    else:
        inner = f"S / ({divisors[0]} · {divisors[1]})"
    if sc.mask_kind != "none":
        inner += f", {sc.mask_kind} mask" + (" (0, not −∞)" if sc.mask_value == 0 else "")
    return f"softmax({inner})"


def block_matrices(sc: Scenario, result: ScenarioResult) -> list[BlockMatrix]:
    """Every matrix of the scenario's attention sublayer, in data-flow order.

    Token scenarios: X, then for each head Wq, Wk, Wv (learned), Q, K, V, S = Q Kᵀ, A, H = A V
    (computed), then, if the scenario has a block output, Concat, Wo (learned), Δ and Y.
    Direct scenarios: Q, K, V (given), then S, A, H. Values are the engine's arrays themselves.
    """
    tokens = tuple(sc.tokens)
    out: list[BlockMatrix] = []
    if sc.mode == "direct":
        tr = result.heads[0]
        q_labels = tuple(sc.query_labels)
        qk, va = tuple(sc.qk_axes), tuple(sc.v_axes)
        out += [
            BlockMatrix("Q", "Q", None, "given", tr.Q, "given", "queries", q_labels, qk),
            BlockMatrix("K", "K", None, "given", tr.K, "given", "keys", tokens, qk),
            BlockMatrix("V", "V", None, "given", tr.V, "given", "keys", tokens, va),
            BlockMatrix("S", "S", None, "computed", ScoreCells(tr), "Q Kᵀ", "queries", q_labels,
                        tokens),
            BlockMatrix("A", "A", None, "computed", tr.weights, score_formula(sc), "queries",
                        q_labels, tokens),
            BlockMatrix("H", "H", None, "computed", tr.output, "A V", "queries", q_labels, va),
        ]  # fmt: skip
        return out
    assert sc.X is not None
    axes, qk, va = tuple(sc.axes), tuple(sc.qk_axes), tuple(sc.v_axes)
    out.append(BlockMatrix("X", "X", None, "computed", sc.X, "embedding rows", "tokens", tokens,
                           axes))  # fmt: skip
    a_formula = score_formula(sc)
    for h, (head, tr) in enumerate(zip(sc.heads, result.heads, strict=True)):
        s = head_superscript(h)
        out += [
            BlockMatrix(f"Wq{h}", "Wq", h, "learned", head.Wq, "learned", "features", axes, qk),
            BlockMatrix(f"Wk{h}", "Wk", h, "learned", head.Wk, "learned", "features", axes, qk),
            BlockMatrix(f"Wv{h}", "Wv", h, "learned", head.Wv, "learned", "features", axes, va),
            BlockMatrix(f"Q{h}", "Q", h, "computed", tr.Q, f"X Wq{s}", "tokens", tokens, qk),
            BlockMatrix(f"K{h}", "K", h, "computed", tr.K, f"X Wk{s}", "tokens", tokens, qk),
            BlockMatrix(f"V{h}", "V", h, "computed", tr.V, f"X Wv{s}", "tokens", tokens, va),
            BlockMatrix(f"S{h}", "S", h, "computed", ScoreCells(tr), f"Q{s} K{s}ᵀ", "tokens",
                        tokens, tokens),
            BlockMatrix(f"A{h}", "A", h, "computed", tr.weights, a_formula, "tokens", tokens,
                        tokens),
            BlockMatrix(f"H{h}", "H", h, "computed", tr.output, f"A{s} V{s}", "tokens", tokens,
                        va),
        ]  # fmt: skip
    block = result.block
    if block is None:
        return out
    h_count = len(sc.heads)
    concat_cols = tuple(f"{a}{head_superscript(h)}" for h in range(h_count) for a in va)
    wo_formula = "learned" if sc.Wo is not None else "identity (no Wo given)"
    out += [
        BlockMatrix("concat", "Concat", None, "computed", block.concat,
                    "[H⁽¹⁾ … H⁽ʰ⁾]" if h_count > 1 else "H⁽¹⁾", "tokens", tokens, concat_cols),
        BlockMatrix("Wo", "Wo", None, "learned", block.Wo, wo_formula, "heads", concat_cols,
                    axes),
        BlockMatrix("delta", "Δ", None, "computed", block.delta, "Concat Wo", "tokens", tokens,
                    axes),
        BlockMatrix("Y", "Y", None, "computed", block.Y, "X + Δ", "tokens", tokens, axes),
    ]  # fmt: skip
    return out


def counts_of(matrices: list[BlockMatrix]) -> dict[str, int]:
    """Count what :func:`block_matrices` listed, with the keys of ``multi_head_counts``' totals.

    A query, key or value *vector* is one row of a computed Q, K or V matrix; parameters are
    the entries of the learned matrices (biases are not modelled).
    """
    learned = [m for m in matrices if m.kind == "learned"]
    qkv = [m for m in matrices if m.kind == "computed" and m.symbol in ("Q", "K", "V")]
    rows = {s: sum(m.shape[0] for m in qkv if m.symbol == s) for s in ("Q", "K", "V")}
    return {
        "qkv_projection_matrices": sum(m.symbol in ("Wq", "Wk", "Wv") for m in learned),
        "output_projections": sum(m.symbol == "Wo" for m in learned),
        "learned_matrices": len(learned),
        "computed_qkv_matrices": len(qkv),
        "queries": rows["Q"],
        "keys": rows["K"],
        "values": rows["V"],
        "computed_vectors": sum(rows.values()),
        "parameters": sum(m.value.size for m in learned),
    }


def visible_indices(n: int, limit: int, keep: int | None = None) -> list[int | None]:
    """Which of ``n`` rows (or columns) to draw when at most ``limit`` fit; None is an ellipsis.

    All indices when ``n <= limit``; otherwise the first ones, an ellipsis and the last one,
    with ``keep`` (e.g. the receiving token) always shown. Returns at most ``limit`` entries;
    ``limit`` must be at least 5.
    """
    if limit < 5:
        raise ValueError(f"limit must be at least 5, got {limit}")
    if keep is not None and not 0 <= keep < n:
        raise ValueError(f"keep = {keep} is not an index below n = {n}")
    if n <= limit:
        return list(range(n))
    last = n - 1
    if keep is None or keep < limit - 2 or keep == last:
        return [*range(limit - 2), None, last]
    if keep == last - 1:
        return [*range(limit - 3), None, keep, last]
    # The kept row sits in the hidden middle: first rows, …, keep, …, last.
    return [*range(limit - 4), None, keep, None, last]


def sublayer_shape(sc: Scenario) -> dict[str, int]:
    """n, h, d, d_k, d_v of a token scenario (the calculator's starting values)."""
    if sc.mode != "tokens":
        raise ValueError("a direct scenario has no projections, so no sublayer shape")
    return {"n": sc.n_tokens, "h": len(sc.heads), "d": sc.d, "d_k": sc.d_k, "d_v": sc.d_v}


def count_lines(totals: dict[str, int], h: int, blocks: int = 1) -> list[str]:
    """The totals of ``multi_head_counts`` as sentences (the caption and the calculator)."""
    n_blocks = "" if blocks == 1 else f" in {blocks} blocks"
    return [
        f"{totals['qkv_projection_matrices']} learned Q/K/V projection matrices"
        f" (3·{'N·' if blocks != 1 else ''}h) and {totals['output_projections']} output "
        f"projection{'s' if totals['output_projections'] != 1 else ''} Wo{n_blocks}",
        f"{totals['computed_qkv_matrices']} computed Q/K/V matrices",
        f"{totals['computed_vectors']} computed vectors: {totals['queries']} queries + "
        f"{totals['keys']} keys + {totals['values']} values",
        f"each token: {h} quer{'ies' if h != 1 else 'y'}, {h} key{'s' if h != 1 else ''}, "
        f"{h} value{'s' if h != 1 else ''} per block",
        f"{totals['parameters']:,} learned parameters in the projections (biases omitted)",
    ]


# ---- what the panel shows around the diagram -----------------------------------------------------
def chip_labels(sc: Scenario) -> list[str]:
    """One chip per head of a token scenario ("head 1⁽¹⁾ · name"); none for a direct one."""
    if sc.mode != "tokens":
        return []
    return [
        f"head {h + 1}{head_superscript(h)}" + (f" · {hd.name}" if hd.name else "")
        for h, hd in enumerate(sc.heads)
    ]


def block_caption(
    sc: Scenario, result: ScenarioResult, counts: dict[str, int]
) -> tuple[list[str], str]:
    """Count sentences for the scenario, and a note on what is missing (empty if nothing)."""
    if sc.mode == "direct":
        return (
            [
                f"This scenario gives Q ({sc.n_queries}×{sc.d_k}), K ({sc.n_tokens}×{sc.d_k}) "
                f"and V ({sc.n_tokens}×{sc.d_v}) directly; it computes S, A and H "
                "(1 each)."
            ],
            "Direct scenario: no projections. Nothing here is learned: there is no X, "
            "no Wq, Wk, Wv, no Wo and no residual Y.",
        )
    h = len(sc.heads)
    shape = f"n={sc.n_tokens}, h={h}, d={sc.d}, d_k={sc.d_k}, d_v={sc.d_v}"
    lines = [f"This block ({shape}): " + "; ".join(count_lines(counts, h))]
    note = ""
    if result.block is None:
        note = (
            f"No output projection: h·d_v = {h * sc.d_v} differs from d = {sc.d} and the "
            "scenario gives no Wo, so it stops at H (no Concat, Δ or Y)."
        )
    elif sc.Wo is None:
        note = "Wo is not given: the block uses the identity (h·d_v = d), counted as Wo."
    return lines, note


@dataclass(frozen=True, eq=False)
class DiagramData:
    """Everything the block diagram draws, apart from its own layout."""

    mats: tuple[BlockMatrix, ...] = ()
    focused: int = 0
    receiving: int = 0
    chip_labels: tuple[str, ...] = ()
    caption: tuple[str, ...] = ()
    note: str = ""
    receiving_label: str = ""

    @property
    def caption_lines(self) -> list[str]:
        """The note (shown in bold) first, then the count sentences."""
        return ([self.note] if self.note else []) + list(self.caption)

    def matrix(self, key: str) -> BlockMatrix:
        for m in self.mats:
            if m.key == key:
                return m
        raise KeyError(f"the diagram shows no matrix {key!r}")


# ---- the diagram layout: pure geometry in design units, so tests check numbers ----------------
# Design units: one unit is one pixel at scale 1 (the panel scales the painter to fit).
CELL_W = 38.0
CELL_H = 15.0
TITLE_H = 28.0
GAP = 12.0
CONNECTOR_W = 22.0
LINE_GAP = 14.0
MAX_CELLS = 8
MIN_SCALE = 0.8
MAX_SCALE = 1.25


@dataclass
class MatrixBox:
    """Where one matrix goes: outer box (x, y, w, h), its row-label column, shown rows/cols."""

    key: str
    x: float
    y: float
    w: float
    h: float
    label_w: float
    rows: list[int | None]
    cols: list[int | None]

    @property
    def grid_x(self) -> float:
        return self.x + self.label_w

    @property
    def grid_y(self) -> float:
        return self.y + TITLE_H

    def cell_rect(self, r: int, c: int) -> tuple[float, float, float, float]:
        """(x, y, w, h) of the shown row ``r``, column ``c`` (positions in rows / cols)."""
        return (self.grid_x + c * CELL_W, self.grid_y + r * CELL_H, CELL_W, CELL_H)


@dataclass(frozen=True)
class Arrow:
    """One data-flow edge as drawn: ``kind`` "next" (a → between neighbours on a line),
    "down" (an elbow from a box to one on the next line, through the gap between lines) or
    "stub" (a short arrow into ``dst`` labelled with its source, when a line would have to
    cross other boxes). ``points`` is the polyline in design units, head at the end."""

    src: str
    dst: str
    kind: str
    points: tuple[tuple[float, float], ...]
    label: str = ""


@dataclass
class Diagram:
    boxes: dict[str, MatrixBox] = field(default_factory=dict)
    connectors: list[tuple[float, float, str]] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    chips: list[tuple[int, float, float, float, float]] = field(default_factory=list)
    notes: list[tuple[float, float, float, str]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    caption_y: float = 0.0
    caption_w: float = 0.0


def diagram_groups(mats: list[BlockMatrix], focused: int) -> list[list[str]]:
    """The rows of the diagram as lists of matrix keys (only the focused head's own).

    Each projection sits just left of what it makes (Wq, Q, Wk, K, Wv, V), so every arrow
    between neighbours on a line is a real step of the computation."""
    keys = {m.key for m in mats}
    h = focused
    if "X" not in keys:  # direct scenario
        return [["Q", "K", "V"], ["S", "A", "H"]]
    groups = [["X"], [f"Wq{h}", f"Q{h}", f"Wk{h}", f"K{h}", f"Wv{h}", f"V{h}"]]
    if "concat" in keys:
        groups += [[f"S{h}", f"A{h}", f"H{h}", "concat"], ["Wo", "delta", "Y"]]
    else:
        groups.append([f"S{h}", f"A{h}", f"H{h}"])
    return groups


def data_flow(mats: list[BlockMatrix], focused: int) -> list[tuple[str, str]]:
    """The block's data flow for the focused head, as (from, to) matrix keys: X → Q via Wq,
    X → K via Wk, X → V via Wv; Q, K → scores → weights; weights, V → head output; heads →
    concat → (· Wo) → Δ → + X → Y. Only edges between matrices that exist are listed."""
    keys = {m.key for m in mats}
    h = "" if "X" not in keys else str(focused)
    q, k, v, s, a, o = (f"{n}{h}" for n in ("Q", "K", "V", "S", "A", "H"))
    edges = []
    if "X" in keys:
        edges += [("X", q), (f"Wq{h}", q), ("X", k), (f"Wk{h}", k), ("X", v), (f"Wv{h}", v)]
    edges += [(q, s), (k, s), (s, a), (a, o), (v, o)]
    edges += [(o, "concat"), ("concat", "delta"), ("Wo", "delta"), ("delta", "Y"), ("X", "Y")]
    return [(f, t) for f, t in edges if f in keys and t in keys]


def _route(dia: Diagram, edges: list[tuple[str, str]], titles: dict[str, str]) -> None:
    """Turn data-flow edges into drawn arrows (see :class:`Arrow`) for the placed boxes."""
    line_top: dict[int, float] = {}
    for key, box in dia.boxes.items():
        line = dia.lines[key]
        line_top[line] = min(line_top.get(line, box.y), box.y)
    order = {key: i for i, key in enumerate(dia.boxes)}
    # Elbows into one line share its gap: one lane per target, so lines never run together.
    lanes: dict[int, list[str]] = {}
    for src, dst in edges:
        if dia.lines[dst] == dia.lines[src] + 1:
            lanes.setdefault(dia.lines[dst], [])
            if dst not in lanes[dia.lines[dst]]:
                lanes[dia.lines[dst]].append(dst)
    for src, dst in edges:
        a, b = dia.boxes[src], dia.boxes[dst]
        la, lb = dia.lines[src], dia.lines[dst]
        mid_a = a.y + TITLE_H + min(len(a.rows), 1) * CELL_H / 2
        if la == lb and order[dst] == order[src] + 1:
            x0, x1 = a.x + a.w + 2, b.x - 2
            dia.connectors.append((x0 + (x1 - x0) / 2 - 2, mid_a, "→"))
            dia.arrows.append(Arrow(src, dst, "next", ((x0, mid_a), (x1, mid_a))))
        elif lb == la + 1:
            targets = lanes[lb]
            lane = line_top[lb] - LINE_GAP * (targets.index(dst) + 1) / (len(targets) + 1)
            sx = a.x + min(a.w, a.label_w + 14.0)
            tx = b.grid_x + min(b.w - b.label_w, 14.0 + 6.0 * targets.index(dst)) / 2
            pts = ((sx, a.y + a.h), (sx, lane), (tx, lane), (tx, b.y - 1))
            dia.arrows.append(Arrow(src, dst, "down", pts))
        else:
            tx = b.x + b.w - 10.0
            pts = ((tx, b.y - LINE_GAP + 4), (tx, b.y - 1))
            label = f"+ {titles[src]}" if dst == "Y" else f"from {titles[src]}"
            dia.arrows.append(Arrow(src, dst, "stub", pts, label))


def layout_diagram(
    mats: list[BlockMatrix],
    *,
    focused: int,
    receiving: int,
    max_width: float,
    text_width: Callable[[str, bool], float],
    chip_labels: list[str] | None = None,
    caption_height: float = 0.0,
) -> Diagram:
    """Place the focused head's matrices in rows, wrapping a row wider than ``max_width``.

    ``text_width(text, bold)`` measures a string in design units. Returns boxes keyed by
    matrix key, the connectors (x, y, text) between boxes, the head chips (head, x, y, w, h),
    notes (x, y, w, text) and the total size, caption included.
    """
    by_key = {m.key: m for m in mats}
    dia = Diagram()
    y = 0.0
    line = 0
    for g, group in enumerate(diagram_groups(mats, focused)):
        x, line_h, labelled = 0.0, 0.0, set()
        for idx, key in enumerate(group):
            m = by_key[key]
            keep = receiving if m.rows in ("tokens", "queries") else None
            rows = visible_indices(m.shape[0], MAX_CELLS, keep)
            cols = visible_indices(m.shape[1], MAX_CELLS)
            labels_w = 6.0 + max(
                (text_width(m.row_labels[r], False) for r in rows if r is not None), default=0.0
            )
            title_w = max(text_width(f"{m.title}  {m.shape[0]}×{m.shape[1]}", True),
                          text_width(m.formula, False))  # fmt: skip
            # Row labels once per kind of rows on a line: rows of one kind line up across it.
            label_w = labels_w if m.rows not in labelled else 0.0
            w = max(label_w + len(cols) * CELL_W, title_w)
            h = TITLE_H + len(rows) * CELL_H
            if idx and x + CONNECTOR_W + w > max_width:
                # Wrap: the rest of this row goes on a new line.
                y += line_h + LINE_GAP
                x, line_h, labelled = 0.0, 0.0, set()
                line += 1
                label_w = labels_w
                w = max(label_w + len(cols) * CELL_W, title_w)
            if idx and x > 0:
                x += CONNECTOR_W
            dia.boxes[key] = MatrixBox(key, x, y, w, h, label_w, rows, cols)
            dia.lines[key] = line
            labelled.add(m.rows)
            x += w + GAP
            line_h = max(line_h, h)
            dia.width = max(dia.width, x - GAP)
        if g == 0 and chip_labels:
            # Head chips beside X: which head the rows below show.
            cx = x + CONNECTOR_W
            note = (
                f"the same X feeds all {len(chip_labels)} heads; showing:"
                if len(chip_labels) > 1
                else "X feeds the block's only head:"
            )
            dia.notes.append((cx, y + 2, text_width(note, False), note))
            cy = y + 18.0
            for hd, text in enumerate(chip_labels):
                cw = text_width(text, True) + 16.0
                if cx + cw > max(max_width, dia.width) and cx > x + CONNECTOR_W:
                    cx, cy = x + CONNECTOR_W, cy + 22.0
                dia.chips.append((hd, cx, cy, cw, 18.0))
                cx += cw + 6.0
            dia.width = max(dia.width, max(c[1] + c[3] for c in dia.chips))
            dia.width = max(dia.width, dia.notes[-1][0] + dia.notes[-1][2])
            line_h = max(line_h, cy + 18.0 - y)
        y += line_h + LINE_GAP
        line += 1
    _route(dia, data_flow(mats, focused), {m.key: m.title for m in mats})
    dia.caption_y = y
    dia.caption_w = max(max_width, dia.width)
    dia.height = y + caption_height
    return dia


def best_fit(
    make: Callable[[float], Diagram], avail_w: float, avail_h: float
) -> tuple[float, Diagram]:
    """The scale (MIN_SCALE..MAX_SCALE) and layout that fill ``avail_w`` x ``avail_h`` best.

    ``make(max_width)`` lays the diagram out for a design width. Wider layouts are tried at
    smaller scales; the largest scale whose layout fits wins. If none fits the height, the
    layout at MIN_SCALE is returned (the panel then scrolls).
    """
    best: tuple[float, Diagram] | None = None
    for s in (MAX_SCALE, 1.15, 1.05, 1.0, 0.95, 0.9, 0.85, MIN_SCALE):
        dia = make(avail_w / s)
        scale = min(s, avail_w / max(dia.width, 1.0), avail_h / max(dia.height, 1.0))
        if best is None or scale > best[0] + 1e-9:
            best = (scale, dia)
    assert best is not None
    scale, dia = best
    if scale < MIN_SCALE:
        dia = make(avail_w / MIN_SCALE)
        scale = min(MIN_SCALE, avail_w / max(dia.width, 1.0))
    return scale, dia
