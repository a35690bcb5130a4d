"""The anatomy of one self-attention sublayer: every matrix, its shape, learned or computed.

:func:`block_matrices` lists the matrices of the current scenario in the order data flows
(X, then per head Wq/Wk/Wv, Q/K/V, S, A, H, then Concat, Wo, Δ and Y), each with its value,
whether it is a learned parameter or a computed activation, and how it is made.
:func:`counts_of` counts them, which must agree with :func:`multi_head_counts` (the closed-form
count of a standard block). :func:`visible_indices` chooses which rows and columns of a large
matrix fit on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.attention import multi_head_counts
from attnsim.engine.scenario import Scenario, ScenarioResult

Array = NDArray[np.float64]
Kind = Literal["learned", "computed", "given"]

__all__ = [
    "BlockMatrix",
    "block_matrices",
    "count_lines",
    "counts_of",
    "head_superscript",
    "multi_head_counts",
    "score_formula",
    "sublayer_shape",
    "visible_indices",
]

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def head_superscript(head: int) -> str:
    """'⁽¹⁾' for head index 0: heads are numbered from 1 on screen, as in the reference."""
    return f"⁽{str(head + 1).translate(_SUPERSCRIPT)}⁾"


@dataclass(frozen=True, eq=False)
class BlockMatrix:
    """One matrix of the block.

    ``value`` has shape (rows, cols). ``rows`` says what a row is: "tokens" (one row per
    token position, so the receiving token's row can be highlighted), "keys" (one row per
    key/value token, direct mode), "queries" (direct-mode queries), "features" (an input
    coordinate of a projection) or "heads" (Wo's rows, h * d_v of them, head by head).
    """

    key: str
    symbol: str
    head: int | None
    kind: Kind
    value: Array
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
            BlockMatrix("S", "S", None, "computed", tr.scores, "Q Kᵀ", "queries", q_labels,
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
            BlockMatrix(f"S{h}", "S", h, "computed", tr.scores, f"Q{s} K{s}ᵀ", "tokens", tokens,
                        tokens),
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
