"""The words of the 3-D view: its header, the tooltip of each item, what a press on an item
that cannot be dragged says, and how a drag describes its edit. Plain functions of the
scenario and the scene (no widgets), formatted with the kit's numbers."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from attnsim.engine import edits
from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario
from attnsim.viewmodels.space3d import CanvasData, Scene

from ..kit.numbers import fmt_fixed as fmt
from ..kit.numbers import fmt_vector


def fmt_vec(v: ArrayLike, digits: int = 2) -> str:
    return fmt_vector(np.asarray(v, dtype=float), digits, item=fmt)


def header_text(sc: Scenario, tr: HeadTrace, receiving: int, focused_head: int) -> str:
    """The line above the view: whose query, the softmax's divisor, and the head if several."""
    head = ""
    if sc.mode == "tokens" and len(sc.heads) > 1:
        head = f" · {sc.heads[focused_head].name or f'head {focused_head + 1}'}"
    divisor = fmt(tr.divisor, 3)
    return f"{sc.query_labels[receiving]}'s query · weights = softmax(q·k / {divisor}){head}"


def describe(data: CanvasData, k: int) -> str:
    """Tooltip text for item k: token, vector, score and weight (the engine's numbers)."""
    sc_, inp = data.scene, data.inp
    if inp is None:
        return ""
    kind, row = sc_.kind[k], int(sc_.row[k])
    i = inp.receiving
    qname = inp.query_labels[i]
    tokens_mode = data.tokens_mode
    if kind in ("query", "other_query"):
        q = inp.Q[row]
        lines = [
            f"{inp.query_labels[row]} — query" + (" (receiving)" if kind == "query" else ""),
            f"q = {fmt_vec(q, 3)}" + ("  (x @ Wq)" if tokens_mode else ""),
            f"‖q‖ = {fmt(float(np.linalg.norm(q)), 3)}",
        ]
        if kind == "other_query":
            lines.append("click to make it the receiving query")
        return "\n".join(lines)
    if kind == "key":
        k_ = inp.K[row]
        # Always the engine's weight: under a 0 mask a forbidden key still gets some.
        w = float(inp.weights[i, row])
        weight = f"{w:.4f}"
        if not inp.mask[i, row]:
            weight += (
                "  (forbidden, but masked with 0 instead of −∞: it leaks)"
                if w > 0
                else "  (forbidden by the mask)"
            )
        return "\n".join(
            [
                f"{inp.key_labels[row]} — key",
                f"k = {fmt_vec(k_, 3)}" + ("  (x @ Wk)" if tokens_mode else ""),
                f"score q·k = {fmt(float(inp.score_row[row]), 4)}  ({qname}'s query)",
                f"weight = {weight}",
            ]
        )
    if kind == "absent":
        k_ = inp.absent_K[row]
        return "\n".join(
            [
                f"{inp.absent_labels[row]} — absent from the sentence",
                f"k = x @ Wk = {fmt_vec(k_, 3)}",
                f"score q·k = {fmt(float(sc_.score[k]), 4)} if it were present "
                f"({qname}'s query); no weight",
            ]
        )
    v = inp.V[row]
    return "\n".join(
        [
            f"{inp.key_labels[row]} — value",
            f"v = {fmt_vec(v, 3)}",
            f"weight from {qname} = {inp.weights[i, row]:.4f}",
        ]
    )


def not_draggable(kind: str, label: str) -> str:
    """What a press on an absent key or a value says (they are shown, not edited here)."""
    if kind == "absent":
        return f"{label} is not in the sentence, so its key is only shown"
    return "values are shown for reference; edit them in the vectors panel"


def zero_input(sc: Scenario, kind: str, row: int) -> str | None:
    """Why a token's query or key cannot be dragged (its input vector is zero), or None."""
    if sc.mode != "tokens" or np.any(sc.X[row]):  # type: ignore[index]
        return None
    which = "query" if kind != "key" else "key"
    matrix = "Wq" if which == "query" else "Wk"
    return (
        f"{sc.tokens[row]}'s input vector x is zero, so its {which} is 0 for every "
        f"{matrix}: it cannot be dragged"
    )


def drag_texts(
    sc: Scenario, kind: str, row: int, head: int, direction_only: bool
) -> tuple[str, str]:
    """(status message, undo text) of a drag of query or key ``row`` in head ``head``."""
    label = (sc.query_labels if kind == "query" else sc.tokens)[row]
    if sc.mode == "direct":
        matrix = "Q" if kind == "query" else "K"
        part = "" if sc.d_k <= 3 else " (only the shown part; hidden coordinates kept)"
        message = f"Dragging {label}'s {kind} edits row {row} of {matrix} only{part}"
        text = f"Drag {label}'s {kind}"
    else:
        which = edits.placed_matrix(sc, kind)
        name = f" of {sc.heads[head].name or f'head {head + 1}'}" if len(sc.heads) > 1 else ""
        extra = " and the absent keys" if kind == "key" and sc.absent else ""
        message = (
            f"Dragging {label}'s {kind} edits {which}{name}: every {kind} moved with it"
            f"{extra} (the smallest change of {which} that puts this {kind} there)"
        )
        text = f"Drag {label}'s {kind} (edits {which})"
    if kind == "query" and direction_only:
        message += "; direction only, its length is kept"
    return message, text


def _vector_name(sc: Scenario, scene: Scene, k: int) -> str:
    kind, row = scene.kind[k], int(scene.row[k])
    if kind in ("query", "key"):
        return f"{(sc.query_labels if kind == 'query' else sc.tokens)[row]}'s {kind}"
    return scene.label[k]


def picked_text(sc: Scenario, scene: Scene, k: int, meant: list[int]) -> str:
    """What a press took: the vector that will move, and how to take another one there."""
    text = f"Picked {_vector_name(sc, scene, k)}: drag to move it"
    others = [j for j in meant if j != k]
    if others:
        text += (
            f"; press again at the same place to pick {_vector_name(sc, scene, others[0])} instead"
        )
    return text
