"""What each part of the routing lab shows, one frozen dataclass per sub-view.

The panel builds one :class:`LabView` per redraw (:func:`lab_view`) and hands each sub-view its
part: the key plane, the route bars, the payload plane, the four-causes table, the distractor
readout and the controls. Numbers stay numbers here; the sub-views format them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.routing import Route
from attnsim.engine.scenario import Scenario, ScenarioError

from .lab import (
    Cause,
    DistractorEffect,
    RouteChange,
    RoutingLabState,
    distractor_effect,
    four_causes,
    is_lab_scenario,
    lab_route,
    payload_arrows,
    query_angle,
    route_change,
)

Array = NDArray[np.float64]

#: The synthetic-d slider runs over d = 2**0 ... 2**D_SLIDER_MAX.
D_SLIDER_MAX = 12

__all__ = [
    "D_SLIDER_MAX",
    "BarsView",
    "CauseRow",
    "CausesView",
    "ControlsView",
    "DistractorView",
    "LabView",
    "LastEditLike",
    "PayloadView",
    "PlaneView",
    "bars_view",
    "causes_view",
    "change_text",
    "controls_view",
    "d_note",
    "d_position",
    "distractor_view",
    "key_texts",
    "lab_view",
    "last_edit_route",
    "payload_view",
    "plane_view",
    "plane_xy",
]


# ---- the edit that made the current state --------------------------------------------------------
class LastEditLike(Protocol):
    """The workbench's record of the last undo step (only what the lab reads of it)."""

    text: str
    scenario_before: Scenario | None
    labs_before: Mapping[type, object]


def last_edit_route(
    sc: Scenario, d: float, last: LastEditLike | None
) -> tuple[str, Route | None, tuple[str, ...]]:
    """The last edit's name and the lab's route before it, with its key labels.

    The route is None when the state before cannot be compared (not a lab scenario, or a
    refused one). A lab-state edit of this lab compares at the old d; another panel's lab-state
    edit left this lab as it was, so the route before is the current one.
    """
    if last is None:
        return "", None, ()
    before = last.scenario_before
    if before is not None:
        if not is_lab_scenario(before):
            return last.text, None, ()
        try:
            return last.text, lab_route(before, d), before.tokens
        except (ScenarioError, ValueError):
            return last.text, None, ()
    if RoutingLabState in last.labs_before:
        d_before = last.labs_before[RoutingLabState].d  # type: ignore[attr-defined]
        d_before = sc.d_k if d_before is None else d_before
        return last.text, lab_route(sc, float(d_before)), sc.tokens
    return last.text, lab_route(sc, d), sc.tokens


def change_text(text: str, change: RouteChange | None) -> str:
    """The change line in plain words ("" before any edit)."""
    if not text:
        return ""
    if change is None:
        return f"{text}: the lab starts here"
    return f"{text}: {change.describe()}"


# ---- the three plots ---------------------------------------------------------------------------
def plane_xy(a: ArrayLike) -> Array:
    """Rows of ``a`` on their first two axes (m, 2); a 1-D row gets y = 0."""
    a2 = np.atleast_2d(np.asarray(a, dtype=float))
    out = np.zeros((a2.shape[0], 2))
    out[:, : min(2, a2.shape[1])] = a2[:, :2]
    return out


@dataclass(frozen=True)
class PlaneView:
    """The key plane: the query and the keys on their first two axes.

    ``before_q`` is the query before the last edit when it moved (else None); ``anchors`` place
    each key's label so that labels near the left or right edge grow inwards; ``radius`` is
    the half-width of the view.
    """

    q: Array
    keys: Array
    before_q: Array | None
    query_label: str
    key_labels: tuple[str, ...]
    legal: tuple[bool, ...]
    anchors: tuple[tuple[float, float], ...]
    x_label: str
    y_label: str
    radius: float


def plane_view(sc: Scenario, route: Route, before: Route | None) -> PlaneView:
    assert sc.Q is not None and sc.K is not None
    q, K = plane_xy(sc.Q[:1]), plane_xy(sc.K)
    before_q = None
    if before is not None and before.q.shape == route.q.shape:
        bq = plane_xy(before.q)[0]
        if not np.array_equal(bq, q[0]):
            before_q = bq
    r = max(1.0, float(np.max(np.abs(np.vstack([q, K]))))) * 1.5
    legal = tuple(bool(m) for m in route.mask)
    anchors = tuple(
        (
            1.0 if x > 0.45 * r else 0.0 if x < -0.45 * r else (0.0 if x >= 0 else 1.0),
            1.0 if y >= 0 else 0.0,
        )
        for x, y in K
    )
    axes = sc.qk_axes
    return PlaneView(
        q=q[0],
        keys=K,
        before_q=before_q,
        query_label=sc.query_tokens[0],
        key_labels=tuple(
            t + ("" if ok else " (masked)") for t, ok in zip(sc.tokens, legal, strict=True)
        ),
        legal=legal,
        anchors=anchors,
        x_label=axes[0] if axes else "x",
        y_label=axes[1] if len(axes) > 1 else "",
        radius=r,
    )


@dataclass(frozen=True)
class BarsView:
    """The route: one bar per key, the bars before the last edit (matched by label) and the
    height at which each weight's label sits (above both bars)."""

    weights: Array
    legal: tuple[bool, ...]
    tokens: tuple[str, ...]
    before_x: Array
    before_h: Array
    label_tops: Array
    emulated_d: float | None


def bars_view(
    sc: Scenario, route: Route, before: Route | None, before_labels: tuple[str, ...]
) -> BarsView:
    n = route.weights.shape[0]
    floor = np.zeros(n)
    xs: list[float] = []
    hs: list[float] = []
    if before is not None:
        index = {t: i for i, t in enumerate(before_labels)}
        for j, t in enumerate(sc.tokens):
            if t in index:
                xs.append(float(j))
                hs.append(float(before.weights[index[t]]))
                floor[j] = hs[-1]
    tops = np.array([max(float(route.weights[j]), floor[j]) + 0.01 for j in range(n)])
    return BarsView(
        weights=route.weights,
        legal=tuple(bool(m) for m in route.mask),
        tokens=tuple(sc.tokens),
        before_x=np.array(xs),
        before_h=np.array(hs),
        label_tops=tops,
        emulated_d=None if route.d == route.d_native else float(route.d),
    )


@dataclass(frozen=True)
class PayloadView:
    """The payload plane: values, the contributions w_j v_j (``drawn`` where w_j > 0), the
    output, the output before the last edit when it moved, and the range to show."""

    values: Array
    contributions: Array
    drawn: tuple[bool, ...]
    output: Array
    before_output: Array | None
    value_labels: tuple[str, ...]
    labelled: tuple[bool, ...]
    output_vector: Array
    x_label: str
    y_label: str
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def payload_view(sc: Scenario, route: Route, before: Route | None) -> PayloadView:
    values, contrib, out = payload_arrows(route)
    pts = [values, contrib, out[None, :], np.zeros((1, 2))]
    before_out = None
    if before is not None and before.output.shape == route.output.shape:
        _, _, bout = payload_arrows(before)
        pts.append(bout[None, :])
        if not np.array_equal(bout, out):
            before_out = bout
    allp = np.vstack(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    pad = 0.25 * max(1.0, float(np.max(hi - lo)))
    axes = sc.v_axes
    return PayloadView(
        values=values,
        contributions=contrib,
        drawn=tuple(bool(w > 0) for w in route.weights),
        output=out,
        before_output=before_out,
        value_labels=tuple(f"v{t}" for t in sc.tokens),
        # A zero value sits under the output's tail; its label would cover it.
        labelled=tuple(bool(x or y) for x, y in values),
        output_vector=route.output,
        x_label=axes[0] if axes else "v1",
        y_label=axes[1] if len(axes) > 1 else "",
        x_range=(float(lo[0] - pad), float(hi[0] + pad)),
        y_range=(float(lo[1] - pad), float(hi[1] + pad)),
    )


# ---- the tabs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class CauseRow:
    """One row of the four-causes table; ``now`` names the key on top after the perturbation
    when it is another one ("" otherwise); ``mean`` marks the averaged direction sweep."""

    perturbation: str
    top_before: float
    top_after: float
    mean: bool
    now: str
    verdict: str
    implicated: bool


@dataclass(frozen=True)
class CausesView:
    top_weight: float
    top_label: str
    d: float
    temperature: float
    scale: bool
    rows: tuple[CauseRow, ...]


def causes_view(sc: Scenario, route: Route, causes: list[Cause]) -> CausesView:
    rows = tuple(
        CauseRow(
            perturbation=c.perturbation,
            top_before=c.top_before,
            top_after=c.top_after,
            mean=c.key == "direction",
            now=""
            if c.key == "direction" or c.top_key_after == c.top_key_before
            else sc.tokens[c.top_key_after],
            verdict=c.verdict,
            implicated=c.implicated,
        )
        for c in causes
    )
    return CausesView(
        top_weight=float(route.top_weight),
        top_label=sc.tokens[route.top],
        d=route.d,
        temperature=route.temperature,
        scale=route.scale,
        rows=rows,
    )


@dataclass(frozen=True)
class DistractorView:
    """The distractor readout: the effect (None without distractors), or why it could not be
    computed (``error``), and the key a near-duplicate would copy."""

    effect: DistractorEffect | None
    error: str
    top_label: str


def distractor_view(sc: Scenario, d: float, route: Route) -> DistractorView:
    top = sc.tokens[route.top]
    try:
        return DistractorView(distractor_effect(sc, d), "", top)
    except (ScenarioError, ValueError) as exc:
        return DistractorView(None, str(exc), top)


def d_note(sc: Scenario, route: Route) -> str:
    """Why a synthetic d changes the logits, and what scaling does about it."""
    d, dk = route.d, sc.d_k
    if d == dk:
        head = f"d = {d:g} is the real width of these vectors: no emulation."
    else:
        head = (
            f"Emulating a d = {d:g} head: the {dk}-D logits × √({d:g}/{dk}) = {route.growth:.3g}, "
            "because a dot product of d independent unit-variance parts has SD ∝ √d."
        )
    tail = (
        f" Scaling ÷√{d:g} cancels that: logit = {route.factor:.3g} × q·k."
        if route.scale
        else f" Unscaled: logit = {route.factor:.3g} × q·k."
    )
    if d != dk:
        tail += " Other panels show the plain head."
    return head + tail


def d_position(d: float) -> int:
    """The synthetic-d slider's position nearest to ``d`` (d = 2**position)."""
    return max(0, min(D_SLIDER_MAX, round(math.log2(d))))


def key_texts(sc: Scenario) -> tuple[str, ...]:
    """Each key as the replace-key box writes it ("x, y")."""
    assert sc.K is not None
    return tuple(", ".join(f"{x:.4g}" for x in row) for row in sc.K)


@dataclass(frozen=True)
class ControlsView:
    """The interventions tab: the query's angle (None for a 1-D query), temperature,
    synthetic d, scaling, the keys' labels, legality and texts, the d note and the refusal."""

    angle: float | None
    temperature: float
    d: float
    scale: bool
    labels: tuple[str, ...]
    legal: tuple[bool, ...]
    key_texts: tuple[str, ...]
    d_note: str
    message: str


def controls_view(sc: Scenario, route: Route, d: float, message: str = "") -> ControlsView:
    assert sc.Q is not None
    return ControlsView(
        angle=query_angle(sc.Q[0]) if sc.d_k >= 2 else None,
        temperature=sc.temperature,
        d=d,
        scale=sc.scale,
        labels=tuple(sc.tokens),
        legal=tuple(bool(m) for m in route.mask),
        key_texts=key_texts(sc),
        d_note=d_note(sc, route),
        message=message,
    )


# ---- the whole lab ------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabView:
    """Everything one redraw of the lab shows."""

    route: Route
    before: Route | None
    before_labels: tuple[str, ...]
    last_text: str
    change: RouteChange | None
    change_text: str
    causes: list[Cause]
    plane: PlaneView
    bars: BarsView
    payload: PayloadView
    causes_view: CausesView
    distractor: DistractorView
    controls: ControlsView


def lab_view(
    sc: Scenario, d: float, last: LastEditLike | None = None, message: str = ""
) -> LabView:
    """The lab on ``sc`` at synthetic dimension ``d``, compared with the state before ``last``."""
    route = lab_route(sc, d)
    text, before, before_labels = last_edit_route(sc, d, last)
    change = route_change(before, route, before_labels, sc.tokens) if before is not None else None
    causes = four_causes(route, sc.tokens)
    return LabView(
        route=route,
        before=before,
        before_labels=before_labels,
        last_text=text,
        change=change,
        change_text=change_text(text, change),
        causes=causes,
        plane=plane_view(sc, route, before),
        bars=bars_view(sc, route, before, before_labels),
        payload=payload_view(sc, route, before),
        causes_view=causes_view(sc, route, causes),
        distractor=distractor_view(sc, d, route),
        controls=controls_view(sc, route, d, message),
    )
