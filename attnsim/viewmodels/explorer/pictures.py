"""What each part of the dot-product explorer shows, as frozen dataclasses; its lab state.

Built from :mod:`.maths` (the explorer's 2-D arithmetic) and the engine's trace. Numbers reach
the sub-views as :class:`Number` (a value and how many digits) so that the panels' one family
of number formats writes them; captions and notes are made here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario
from attnsim.engine.ticks import nice_ceil

from .maths import (
    Array,
    ShadowGeometry,
    angle_arc,
    constrain_drag,
    pair_readout,
    plane_basis,
    shadow_geometry,
    signed_angle,
    softmax_strip,
    unit,
    view_bounds,
    with_angle,
    with_length,
)

A_DEFAULT = 10.0 * np.array([math.cos(math.radians(20.0)), math.sin(math.radians(20.0))])
B_DEFAULT = np.array([1.0, 0.0])
SCORES_DEFAULT = np.array([4.0, 2.0, 0.0])
LENGTH_TICKS = 400  # length sliders: 0 .. LENGTH_TICKS map to 0 .. the slider's reach
ANGLE_TICKS = 2  # angle slider ticks per degree
FREE_REACH = 20.0  # the free vectors' length sliders reach this far
READOUT_KEYS = (
    "len_a",
    "len_b",
    "angle",
    "dot",
    "projection",
    "projection_vector",
    "cosine",
    "scaled",
    "logit",
    "weight",
)
SLIDER_KEYS = ("len_a", "len_b", "angle")

__all__ = [
    "ANGLE_TICKS",
    "A_DEFAULT",
    "B_DEFAULT",
    "FREE_REACH",
    "LENGTH_TICKS",
    "READOUT_KEYS",
    "SCORES_DEFAULT",
    "SLIDER_KEYS",
    "ExplorerState",
    "Number",
    "PairChoice",
    "PlanePicture",
    "ReadoutRow",
    "Readouts",
    "SliderRow",
    "StripPicture",
    "Text",
    "TipDrag",
    "default_pair",
    "follow_basis",
    "free_readouts",
    "guide_lines",
    "hint_text",
    "length_reach",
    "linked_readouts",
    "needs_refit",
    "pair_choice",
    "plane_picture",
    "slider_edit",
    "slider_view",
    "strip_picture",
]


@dataclass(frozen=True)
class ExplorerState:
    """The explorer's sandbox (not saved with the scenario): the free vectors a and b in plane
    coordinates and the softmax strip's scores and settings."""

    a: tuple[float, ...] = tuple(float(x) for x in A_DEFAULT)
    b: tuple[float, ...] = tuple(float(x) for x in B_DEFAULT)
    scores: tuple[float, ...] = tuple(float(x) for x in SCORES_DEFAULT)
    temperature: float = 1.0
    scale: bool = True
    d_k: int = 4


# ---- what the sub-views show ----------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    """A number to show: ``None`` is undefined. ``style`` "fixed" (``digits`` decimals),
    "degrees" (the same with a degree sign) or "significant" (``digits`` significant digits)."""

    value: float | None
    digits: int = 2
    style: str = "fixed"


Text = tuple[str | Number, ...]  # words and numbers, joined when shown


@dataclass(frozen=True)
class ReadoutRow:
    """One row of numbers: ``key`` (one of READOUT_KEYS), its name, value and note."""

    key: str
    name: str
    value: Text
    note: Text = ()


@dataclass(frozen=True)
class Readouts:
    """The readout block: a title (rich text) and the rows shown, in READOUT_KEYS order.
    A key without a row is hidden."""

    title: str
    rows: tuple[ReadoutRow, ...]

    def row(self, key: str) -> ReadoutRow | None:
        return next((r for r in self.rows if r.key == key), None)


def free_readouts(a: ArrayLike, b: ArrayLike, d_k: int) -> Readouts:
    """The free vectors' numbers: lengths, angle, dot, shadow (scalar and vector), cosine and
    ``a·b / sqrt(d_k)``."""
    r = pair_readout(a, b, d_k)
    pv = r.projection_vector
    shadow: Text = (Number(None),) if pv is None else ("(", Number(pv[0]), ", ", Number(pv[1]), ")")
    rows = (
        ReadoutRow("len_a", "‖a‖", (Number(r.length_a),)),
        ReadoutRow("len_b", "‖b‖", (Number(r.length_b),)),
        ReadoutRow("angle", "angle θ", (Number(r.angle_deg, 2, "degrees"),)),
        ReadoutRow("dot", "a · b", (Number(r.dot),), ("= ‖a‖ ‖b‖ cos θ",)),
        ReadoutRow("projection", "shadow of a on b", (Number(r.projection),), ("= a·b / ‖b‖",)),
        ReadoutRow("projection_vector", "shadow vector", shadow, ("on b's line",)),
        ReadoutRow("cosine", "cos θ", (Number(r.cosine, 3),), ("= a·b / (‖a‖ ‖b‖)",)),
        ReadoutRow("scaled", "a·b / √d_k", (Number(r.scaled_dot),), (f"d_k = {int(d_k)}",)),
    )
    return Readouts("<b>a</b>, <b>b</b>: free vectors", rows)


def linked_readouts(sc: Scenario, tr: HeadTrace, head: int, i: int, j: int) -> Readouts:
    """The numbers of query ``i`` and key ``j`` of the focused head's trace: the heatmap cell.

    The divisor and the logit are the trace's (no formula copied here), so they agree with the
    heatmap at any temperature, scaled or not, masked or not.
    """
    r = pair_readout(tr.Q[i], tr.K[j], tr.d_k)
    name = sc.heads[head].name if sc.mode == "tokens" else "direct"
    title = f"<b>{sc.query_labels[i]}</b> → <b>{sc.tokens[j]}</b>, head “{name}”, d_k = {tr.d_k}"
    t = Number(tr.temperature, 4, "significant")
    divisor: Text = (f"= √{tr.d_k} × T, T = ", t) if tr.scale else ("= T = ", t, " (scaling off)")
    logit_note: Text = ("= q·k / divisor",)
    if not bool(tr.mask[i, j]):
        fill = "−∞" if math.isinf(tr.mask_value) else Number(tr.mask_value, 3)
        logit_note += (", masked → ", fill)
    rows = (
        ReadoutRow("len_a", "‖q‖", (Number(r.length_a, 3),)),
        ReadoutRow("len_b", "‖k‖", (Number(r.length_b, 3),)),
        ReadoutRow("angle", "angle θ", (Number(r.angle_deg, 2, "degrees"),)),
        ReadoutRow("dot", "q · k", (Number(tr.score(i, j), 3),), ("raw score",)),
        ReadoutRow("projection", "shadow of q on k", (Number(r.projection, 3),), ("= q·k / ‖k‖",)),
        ReadoutRow("cosine", "cos θ", (Number(r.cosine, 3),)),
        ReadoutRow("scaled", "divisor", (Number(tr.divisor, 4, "significant"),), divisor),
        ReadoutRow("logit", "logit", (Number(float(tr.logits[i, j]), 3),), logit_note),
        ReadoutRow(
            "weight",
            "weight",
            (Number(float(tr.weights[i, j]), 4),),
            (f"softmax over {sc.n_tokens} keys",),
        ),
    )
    return Readouts(title, rows)


def default_pair(weights: ArrayLike, receiving: int, focused_key: int | None) -> tuple[int, int]:
    """The (query, key) pair linked mode shows: the receiving query and the focused key, or
    the key that query weights most. ``weights`` (n_q, n_k)."""
    if focused_key is not None:
        return receiving, focused_key
    return receiving, int(np.argmax(np.asarray(weights)[receiving]))


def follow_basis(
    q: ArrayLike, k: ArrayLike, previous: ArrayLike | None, same_pair: bool, held: bool
) -> Array:
    """The plane basis (d, 2) to draw q and k in, given the one drawn last (``previous``).

    While a tip or a slider is ``held`` the pair's basis stays as it was, so the plane does
    not turn under the mouse; otherwise it is rebuilt, keeping the previous orientation when
    the pair is the same (``same_pair``) so a vector does not flip sides between redraws.
    """
    if held and same_pair and previous is not None:
        return np.asarray(previous, dtype=float)
    return plane_basis(q, k, previous if same_pair else None)


@dataclass(frozen=True)
class PairChoice:
    """What the query and key pickers list, and which pair they show."""

    queries: tuple[str, ...]
    keys: tuple[str, ...]
    query: int
    key: int


def pair_choice(sc: Scenario, i: int, j: int) -> PairChoice:
    return PairChoice(tuple(sc.query_labels), tuple(sc.tokens), i, j)


# ---- the plane's picture --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PlanePicture:
    """Everything the plane draws, in plane coordinates.

    ``a``, ``b`` (2,) and their ``names``; ``anchors`` place each tip's label past the tip and
    off its arrow's line (:func:`tip_anchor`); ``box`` ``[x0, x1, y0, y1]`` is the range to
    show and ``refit`` whether the view must move to it; ``guides`` (m, 2) each, the circle or
    ray a held drag moves along (empty when free); ``arc`` (n, 2) marks the angle, with its
    label at ``angle_at`` (None when undefined); ``projection`` is the shadow's signed length
    at ``foot`` (None when undefined).
    """

    a: Array
    b: Array
    names: tuple[str, str]
    anchors: tuple[tuple[float, float], tuple[float, float]]
    box: Array
    refit: bool
    shadow: ShadowGeometry
    guides: tuple[Array, Array]
    arc: Array
    angle_at: Array | None
    projection: float | None
    foot: Array
    draggable: bool
    linked: bool


def needs_refit(want: ArrayLike, have: ArrayLike | None) -> bool:
    """Refit the view when the picture ``want`` leaves the shown box ``have`` (both
    ``[x0, x1, y0, y1]``) or shrinks to under half of it."""
    if have is None:
        return True
    w, h = np.asarray(want, dtype=float), np.asarray(have, dtype=float)
    outside = w[0] < h[0] or w[1] > h[1] or w[2] < h[2] or w[3] > h[3]
    span_want = max(w[1] - w[0], w[3] - w[2])
    span_have = max(h[1] - h[0], h[3] - h[2])
    return bool(outside or span_want < 0.5 * span_have)


def guide_lines(
    hold: str, vectors: tuple[Array, Array], directions: tuple[Array, Array], reach: float
) -> tuple[Array, Array]:
    """The path each tip is held to: its circle (hold lengths), its ray ``reach`` long (hold
    angle), or nothing (free, or a zero vector on a circle). Points (m, 2) each."""
    out = []
    for v, u in zip(vectors, directions, strict=True):
        if hold == "lengths" and np.any(v):
            t = np.linspace(0.0, 2.0 * math.pi, 121)
            n = float(np.linalg.norm(v))
            out.append(np.column_stack([n * np.cos(t), n * np.sin(t)]))
        elif hold == "angle":
            out.append(np.array([[0.0, 0.0], [reach * float(u[0]), reach * float(u[1])]]))
        else:
            out.append(np.zeros((0, 2)))
    return out[0], out[1]


def tip_anchor(u: Array, other: Array) -> tuple[float, float]:
    """Where a tip's label hangs (a text anchor: (0, 0) its top left at the tip): past the tip
    along the arrow ``u`` and to the side away from the ``other`` arrow, so that it touches
    neither the arrow's head nor its line carried on past the tip."""
    ux, uy = float(u[0]), float(u[1])
    if ux == 0.0 and uy == 0.0:
        return (0.5, 0.5)
    nx, ny = -uy, ux
    if nx * float(other[0]) + ny * float(other[1]) > 0:
        nx, ny = -nx, -ny
    dx, dy = ux + nx, uy + ny
    m = max(abs(dx), abs(dy))
    return (0.5 - 0.6 * dx / m, 0.5 + 0.6 * dy / m)


def plane_picture(
    a: ArrayLike,
    b: ArrayLike,
    *,
    names: tuple[str, str] = ("a", "b"),
    directions: tuple[ArrayLike, ArrayLike] | None = None,
    hold: str = "free",
    shown: ArrayLike | None = None,
    may_refit: bool = True,
    draggable: bool = True,
    linked: bool = False,
) -> PlanePicture:
    """The picture of 2-D ``a`` and ``b``: shadow, angle arc, guides, labels and view box.

    ``directions`` are the tips' last known directions (for a zero vector's label and ray;
    default: the vectors' own); ``shown`` the box the view shows now (None: none yet). The
    view refits (see :func:`needs_refit`) only when ``may_refit`` (not while a tip is held).
    """
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if directions is None:
        directions = (unit(va), unit(vb))
    ua, ub = (np.asarray(u, dtype=float) for u in directions)
    r = pair_readout(va, vb, 1)
    foot = r.projection_vector if r.projection_vector is not None else np.zeros(2)
    want = view_bounds(np.array([va, vb, foot]))
    refit = may_refit and needs_refit(want, shown)
    box = want if refit or shown is None else np.asarray(shown, dtype=float)
    size = max(float(box[1] - box[0]), float(box[3] - box[2]))
    reach = 3.0 * size
    radius = float(np.clip(0.3 * min(r.length_a, r.length_b), 0.1 * size, 0.18 * size))
    arc = angle_arc(va, vb, radius)
    anchors = (tip_anchor(ua, ub), tip_anchor(ub, ua))
    return PlanePicture(
        a=va,
        b=vb,
        names=names,
        anchors=(anchors[0], anchors[1]),
        box=box,
        refit=refit,
        shadow=shadow_geometry(va, vb, reach),
        guides=guide_lines(hold, (va, vb), (ua, ub), reach),
        arc=arc,
        angle_at=arc[len(arc) // 2] * 1.3 if len(arc) else None,
        projection=r.projection,
        foot=foot,
        draggable=draggable,
        linked=linked,
    )


@dataclass(frozen=True, eq=False)
class TipDrag:
    """A tip being dragged: which (``name``), where it started (2,), how far from the tip the
    press was (``offset`` (2,): the tip keeps that distance from the pointer), and the ``drag``
    id its edits merge under."""

    name: str
    start: Array
    offset: Array
    drag: int

    @classmethod
    def grab(cls, name: str, tip: ArrayLike, at: ArrayLike, drag: int) -> TipDrag:
        start = np.array(tip, dtype=float)
        return cls(name, start, np.asarray(at, dtype=float) - start, drag)

    def to(self, at: ArrayLike, hold: str, fallback_dir: ArrayLike | None = None) -> Array:
        """Where the tip goes with the pointer at ``at`` (2,), under the hold mode."""
        target = np.asarray(at, dtype=float) - self.offset
        return constrain_drag(hold, self.start, target, fallback_dir)


def hint_text(mode: str, hold: str, draggable: bool) -> str:
    """The line under the plane: what a drag does in this mode, or why nothing can be dragged."""
    how = {
        "free": "the tip follows the mouse",
        "lengths": "lengths held: a tip moves on its circle, only the angle changes",
        "angle": "angle held: a tip moves along its ray, only its length changes",
    }[hold]
    if mode == "free":
        return f"Drag the tips of a and b ({how}). Every edit can be undone."
    if draggable:
        return (
            f"Dragging q or k edits this scenario's vectors ({how}); only their part in "
            "this plane changes. Undo restores them."
        )
    return (
        "q = x·Wq and k = x·Wk are computed from the sentence, so they cannot be dragged "
        "here: move x in the vectors panel or edit Wq / Wk, and this view follows."
    )


# ---- the length and angle sliders -----------------------------------------------------------


@dataclass(frozen=True)
class SliderRow:
    """One slider: its ``key`` (SLIDER_KEYS), name, handle position (None: leave it where it
    is, the angle being undefined), whether it can be moved, and the value shown beside it."""

    key: str
    name: str
    tick: int | None
    enabled: bool
    shown: Text


def length_reach(a: ArrayLike, b: ArrayLike, linked: bool) -> float:
    """How long a length slider reaches: fixed for the free vectors, room to double the
    longer of q and k (a 1-2-5 number) for a scenario pair."""
    if not linked:
        return FREE_REACH
    la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return nice_ceil(2.0 * max(la, lb, 0.5))


def slider_view(
    a: ArrayLike,
    b: ArrayLike,
    *,
    names: tuple[str, str] = ("a", "b"),
    hold: str = "free",
    editable: bool = True,
    reach: float = FREE_REACH,
) -> tuple[SliderRow, ...]:
    """The sliders of ``a``'s length, ``b``'s length and the signed angle from b to a.

    A held quantity's slider is disabled (lengths held: both length sliders; angle held: the
    angle slider), and all are when the vectors cannot be edited.
    """
    la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    rows = []
    for key, length, name in (("len_a", la, names[0]), ("len_b", lb, names[1])):
        tick = round(min(length, reach) / reach * LENGTH_TICKS)
        enabled = editable and hold != "lengths"
        rows.append(SliderRow(key, f"‖{name}‖", tick, enabled, (Number(length),)))
    turn = signed_angle(a, b)
    tick = None if turn is None else round(turn * ANGLE_TICKS)
    shown: Text = ("—",) if turn is None else (Number(turn, 2, "degrees"),)
    rows.append(SliderRow("angle", "θ", tick, editable and hold != "angle", shown))
    return tuple(rows)


def slider_edit(
    key: str,
    tick: int,
    a: ArrayLike,
    b: ArrayLike,
    *,
    reach: float = FREE_REACH,
    directions: tuple[ArrayLike, ArrayLike] | None = None,
    names: tuple[str, str] = ("a", "b"),
) -> tuple[str, Array, str]:
    """What moving slider ``key`` to ``tick`` does: ``(which vector, its new value, the undo
    text)``. The angle slider turns a about b; a length slider keeps the direction (the last
    known one, from ``directions``, for a zero vector)."""
    dirs = directions if directions is not None else (unit(a), unit(b))
    if key == "angle":
        deg = tick / ANGLE_TICKS
        return "a", with_angle(a, b, deg, dirs[1]), f"Turn {names[0]} to {deg:g}°"
    which = 0 if key == "len_a" else 1
    length = tick * reach / LENGTH_TICKS
    new = with_length((a, b)[which], length, dirs[which])
    return ("a", "b")[which], new, f"Set ‖{names[which]}‖ to {length:g}"


# ---- the softmax strip's picture ------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StripPicture:
    """The softmax strip: the state's ``scores`` (n,), settings, and the two rows of weights
    (``raw``: plain softmax; ``weights``: of the scores divided by ``divisor``), with a caption
    ``(long, short)`` for each key's column and a label for each row."""

    scores: Array
    temperature: float
    scale: bool
    d_k: int
    logits: Array
    raw: Array
    weights: Array
    divisor: float
    header: tuple[tuple[str, str], ...]
    row_labels: tuple[str, str]


def strip_picture(state: ExplorerState) -> StripPicture:
    scores = np.asarray(state.scores, float)
    t, scale, dk = float(state.temperature), bool(state.scale), int(state.d_k)
    _, raw, _ = softmax_strip(scores)
    logits, weights, divisor = softmax_strip(scores, t, scale=scale, d_k=dk)
    parts = ([f"√{dk}"] if scale else []) + ([f"{t:.2f}"] if t != 1.0 else [])
    how = "×".join(parts) if parts else "1"
    if len(parts) > 1:
        how = f"({how})"
    header = tuple(
        (f"key {j + 1}: {s:g} → {lg:.2f}", f"{s:g}→{lg:.2g}")
        for j, (s, lg) in enumerate(zip(scores, logits, strict=True))
    )
    return StripPicture(
        scores=scores,
        temperature=t,
        scale=scale,
        d_k=dk,
        logits=logits,
        raw=raw,
        weights=weights,
        divisor=divisor,
        header=header,
        row_labels=("softmax(s)", f"softmax(s / {how})"),
    )
