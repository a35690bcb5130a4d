"""The routing laboratory's view-model: one query, a few key-value pairs, the interventions.

The address (query-key geometry, scaling, temperature, mask) decides the route; the payload
(the values) decides what the route delivers. The route itself, at a synthetic key dimension d,
and the four-causes experiment are engine maths (:mod:`attnsim.engine.routing`); this module
puts them on the lab's scenario, builds the lab's edits (rotate the query, swap values, replace
a key, add a distractor) as pure scenario edits, and words what the experiments found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine import edits
from attnsim.engine.routing import (
    MAX_SYNTHETIC_D,
    CauseTrial,
    DistractorKind,
    Effect,
    Finding,
    Route,
    cause_trials,
    distractor_key,
    distractor_value,
    rotated,
    synthetic_route,
)
from attnsim.engine.routing import checked_vector as _vec
from attnsim.engine.scenario import Scenario, ScenarioError

Array = NDArray[np.float64]
#: Keys the distractor tool adds are named with this prefix ("dist1", "dist2", ...).
DISTRACTOR_PREFIX = "dist"

__all__ = [
    "DISTRACTOR_PREFIX",
    "MAX_SYNTHETIC_D",
    "Cause",
    "DistractorEffect",
    "Route",
    "RouteChange",
    "RoutingLabState",
    "add_distractor",
    "distractor_effect",
    "distractor_key",
    "distractor_names",
    "distractor_value",
    "four_causes",
    "is_lab_scenario",
    "lab_route",
    "lab_unfit_reason",
    "payload_arrows",
    "query_angle",
    "replace_key",
    "rotate_query",
    "rotate_query_to",
    "rotated",
    "route_change",
    "swap_values",
    "synthetic_route",
    "useful_key",
    "verdict_text",
    "with_query_angle",
    "without_distractors",
]


@dataclass(frozen=True)
class RoutingLabState:
    """The lab's own settings (not saved with the scenario): the synthetic key dimension d,
    or None for the scenario's d_k."""

    d: float | None = None


# ---- the lab on a scenario ---------------------------------------------------------------------
def lab_unfit_reason(sc: Scenario) -> str:
    """Why ``sc`` cannot be the lab's state ("" if it can: a direct scenario with one query)."""
    if sc.mode != "direct":
        return (
            f"“{sc.title or sc.name}” is a token scenario: its queries and keys come out of "
            "projection matrices. The lab edits one query and its keys directly."
        )
    if sc.n_queries != 1:
        return (
            f"“{sc.title or sc.name}” has {sc.n_queries} queries; the lab works on a single "
            "query so that every intervention has one route to compare."
        )
    return ""


def is_lab_scenario(sc: Scenario) -> bool:
    return not lab_unfit_reason(sc)


def _mask_row(sc: Scenario) -> NDArray[np.bool_] | None:
    m = sc.mask_matrix()
    return None if m is None else np.asarray(m[0], dtype=bool)


def lab_route(sc: Scenario, d: float | None = None) -> Route:
    """The lab's route for a one-query direct scenario at synthetic dimension ``d``."""
    reason = lab_unfit_reason(sc)
    if reason:
        raise ScenarioError("mode", reason)
    assert sc.Q is not None and sc.K is not None and sc.V is not None
    return synthetic_route(
        sc.Q[0],
        sc.K,
        sc.V,
        d=d,
        scale=sc.scale,
        temperature=sc.temperature,
        mask=_mask_row(sc),
        mask_value=sc.mask_value,
    )


def query_angle(q: ArrayLike) -> float:
    """Angle of the query in the plane of its first two axes, in degrees in (-180, 180]."""
    qa = _vec(q, "q")
    if qa.shape[0] < 2:
        raise ValueError("a query needs at least 2 dimensions to be rotated")
    return math.degrees(math.atan2(qa[1], qa[0]))


def with_query_angle(q: ArrayLike, degrees: float) -> Array:
    """``q`` (d_k,) turned to ``degrees`` in the plane of axes 0 and 1, keeping its length.

    Components beyond the first two are untouched, so the whole vector keeps its length.
    """
    qa = _vec(q, "q").copy()
    if qa.shape[0] < 2:
        raise ValueError("a query needs at least 2 dimensions to be rotated")
    r = math.hypot(qa[0], qa[1])
    a = math.radians(degrees)
    qa[0], qa[1] = r * math.cos(a), r * math.sin(a)
    return qa


def rotate_query_to(sc: Scenario, degrees: float) -> Scenario:
    """Edit: the lab's query turned to ``degrees`` (its length kept). Only Q changes."""
    assert sc.Q is not None
    if lab_unfit_reason(sc):
        raise ScenarioError("Q", lab_unfit_reason(sc))
    if sc.d_k < 2:
        raise ScenarioError("Q", "a 1-dimensional query cannot be rotated")
    if math.hypot(sc.Q[0, 0], sc.Q[0, 1]) == 0.0:
        raise ScenarioError("Q", "the query has length 0 in the rotation plane; give it a length")
    return edits.place_query(sc, 0, with_query_angle(sc.Q[0], degrees))


def rotate_query(sc: Scenario, degrees: float) -> Scenario:
    """Edit: the lab's query rotated by ``degrees`` (its length kept)."""
    assert sc.Q is not None
    return rotate_query_to(sc, query_angle(sc.Q[0]) + degrees)


def swap_values(sc: Scenario, i: int, j: int) -> Scenario:
    """Edit: keys ``i`` and ``j`` exchange their values; the keys (the addresses) stay."""
    assert sc.V is not None
    n = sc.n_tokens
    if not (0 <= i < n and 0 <= j < n):
        raise ScenarioError("V", f"cannot swap values {i} and {j}; keys run from 0 to {n - 1}")
    if i == j:
        raise ScenarioError("V", "pick two different keys to swap their values")
    order = np.arange(n)
    order[[i, j]] = [j, i]
    return edits.set_matrix(sc, "V", np.asarray(sc.V)[order])


def replace_key(sc: Scenario, j: int, key: ArrayLike) -> Scenario:
    """Edit: key ``j`` becomes ``key`` (d_k,); its value stays."""
    return edits.place_key(sc, j, key)


# ---- comparing two routes ------------------------------------------------------------------------
@dataclass(frozen=True)
class RouteChange:
    """What one edit did to the lab: the route (weights) and the payload (output).

    ``max_dw`` is over the keys present before and after (matched by label); ``added`` and
    ``removed`` are labels; ``new_weight`` is the weight the added keys took.
    """

    max_dw: float
    output_shift: float
    route_changed: bool
    output_changed: bool
    shared: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    new_weight: float

    def describe(self) -> str:
        """E.g. "route unchanged (max Δw 0), output moved by 1.17"."""
        parts = []
        if self.added or self.removed:
            what = []
            if self.added:
                what.append(f"+{', '.join(self.added)}")
            if self.removed:
                what.append(f"−{', '.join(self.removed)}")
            parts.append(
                f"candidates changed ({'; '.join(what)}); route "
                + ("changed" if self.route_changed else "unchanged")
                + f" (max Δw on the {self.shared} kept keys {_num(self.max_dw)}"
                + (f", new keys took {_num(self.new_weight)}" if self.added else "")
                + ")"
            )
        else:
            parts.append(
                ("route changed" if self.route_changed else "route unchanged")
                + f" (max Δw {_num(self.max_dw)})"
            )
        if math.isnan(self.output_shift):
            parts.append("the output changed its width")
        elif self.output_changed:
            parts.append(f"output moved by {_num(self.output_shift)}")
        else:
            parts.append(f"output unchanged (moved by {_num(self.output_shift)})")
        return ", ".join(parts)


def _num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e-3:
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:.4g}"
    return f"{x:.1e}"


def route_change(
    before: Route,
    after: Route,
    before_labels: tuple[str, ...] | list[str] | None = None,
    after_labels: tuple[str, ...] | list[str] | None = None,
    *,
    tol: float = 1e-12,
) -> RouteChange:
    """Compare two routes of the lab (before and after an edit).

    Keys are matched by label when the label lists differ (a key added or removed); without
    labels they are matched by position and must be equally many.
    """
    nb, na = before.weights.shape[0], after.weights.shape[0]
    lb = tuple(before_labels) if before_labels is not None else tuple(str(i) for i in range(nb))
    la = tuple(after_labels) if after_labels is not None else tuple(str(i) for i in range(na))
    if len(lb) != nb or len(la) != na:
        raise ValueError("one label per key is needed")
    if lb == la:
        pairs = [(i, i) for i in range(nb)]
        added: tuple[str, ...] = ()
        removed: tuple[str, ...] = ()
    else:
        index_a = {name: i for i, name in enumerate(la)}
        pairs = [(i, index_a[name]) for i, name in enumerate(lb) if name in index_a]
        added = tuple(name for name in la if name not in set(lb))
        removed = tuple(name for name in lb if name not in set(la))
    if pairs:
        ib, ia = np.array(pairs).T
        max_dw = float(np.max(np.abs(after.weights[ia] - before.weights[ib])))
    else:
        max_dw = 0.0
    new_weight = float(sum(after.weights[la.index(name)] for name in added))
    old_weight = float(sum(before.weights[lb.index(name)] for name in removed))
    route_changed = max_dw > tol or new_weight > tol or old_weight > tol
    if before.output.shape == after.output.shape:
        shift = float(np.linalg.norm(after.output - before.output))
        scale = max(1.0, float(np.linalg.norm(before.output)))
        output_changed = shift > tol * scale
    else:
        shift = math.nan
        output_changed = True
    return RouteChange(
        max_dw=max_dw,
        output_shift=shift,
        route_changed=bool(route_changed),
        output_changed=bool(output_changed),
        shared=len(pairs),
        added=added,
        removed=removed,
        new_weight=new_weight,
    )


# ---- four causes of a sharp route, in words ----------------------------------------------------
@dataclass(frozen=True)
class Cause:
    """One row of the four-causes table: a :class:`~attnsim.engine.routing.CauseTrial` with the
    perturbation and the verdict written out for the reader.

    ``effect`` is "broader", "sharper" or "unchanged"; ``implicated`` says whether the response
    points at this cause.
    """

    key: str
    perturbation: str
    top_before: float
    top_after: float
    top_key_before: int
    top_key_after: int
    effect: Effect
    implicated: bool
    verdict: str
    stays_on_top: int = 0
    trials: int = 0


def _perturbation_text(t: CauseTrial, route: Route, temperature_factor: float) -> str:
    if t.key == "norm":
        return "unit-length q and keys"
    if t.key == "temperature":
        return f"T × {temperature_factor:g} (T = {t.setting:.3g})"
    if t.key == "dimension":
        return f"d = {t.setting:g} ({'scaled by √d' if route.scale else 'unscaled'})"
    return f"rotate q only ({t.trials} directions)"


def verdict_text(t: CauseTrial, route: Route, names: tuple[str, ...]) -> str:
    """The sentence that explains one trial's finding, naming keys by ``names``."""
    f, top = t.finding, names[route.top]
    if f is Finding.MASK_DECIDES:
        return "one legal key → the mask alone decides"
    if f is Finding.NORM_CARRIES:
        k_norm = float(np.linalg.norm(route.K[route.top]))
        q_norm = float(np.linalg.norm(route.q))
        return (
            f"broader → norm carries part of the decision (|{top}| = "
            f"{k_norm:.3g}, |q| = {q_norm:.3g})"
        )
    if f is Finding.ALIGNED_NOT_LONG:
        return "sharper → the winner is aligned, not long: norms are not the cause"
    if f is Finding.NORM_NOT_CAUSE:
        return "no change → norms are not the cause (the vectors are unit length)"
    if f is Finding.ALREADY_UNIFORM:
        return "no change → the route is already uniform (equal logits)"
    if f in (Finding.TEMPERATURE_SHARPENS, Finding.TEMPERATURE_NOT_LOW):
        ranking = "same ranking" if t.ranking_kept else "RANKING CHANGED (a bug)"
        return f"{t.effect}, {ranking} → T sets the contest; " + (
            f"T = {route.temperature:.3g} < 1 sharpens this route"
            if f is Finding.TEMPERATURE_SHARPENS
            else f"T = {route.temperature:.3g} is not low: not the cause"
        )
    if f is Finding.D_AT_SMALLEST:
        return "d is already at its smallest (1)"
    if f is Finding.UNSCALED_GROWTH:
        return "broader → unscaled logits grow as √d: dimension is implicated"
    if f is Finding.SCALING_CANCELS:
        return "no change → ÷√d cancels the growth: dimension is not the cause"
    if f is Finding.DIMENSION_PLAYS_PART:
        return f"{t.effect} at the smaller d → dimension plays a part"
    if f is Finding.ZERO_QUERY:
        return "q = 0 → every key scores 0 in every direction"
    if f is Finding.NOT_ALIGNMENT:
        return (
            f"{top} stays on top in {t.stays_on_top}/{t.trials} → not alignment: check key "
            "norms, biases, the mask"
        )
    return (
        f"{top} on top in only {t.stays_on_top}/{t.trials} → the winner follows q: alignment "
        "decides"
    )


def four_causes(
    route: Route,
    labels: tuple[str, ...] | list[str] | None = None,
    *,
    temperature_factor: float = 4.0,
    d_divisor: float = 4.0,
    n_directions: int = 12,
    dominance: float = 0.75,
) -> list[Cause]:
    """The four-causes table of ``route``: :func:`attnsim.engine.routing.cause_trials`, worded.

    ``labels`` name the keys in the verdicts (default: their indices).
    """
    names = tuple(labels) if labels is not None else tuple(str(j) for j in range(route.K.shape[0]))
    trials = cause_trials(
        route,
        temperature_factor=temperature_factor,
        d_divisor=d_divisor,
        n_directions=n_directions,
        dominance=dominance,
    )
    return [
        Cause(
            key=t.key,
            perturbation=_perturbation_text(t, route, temperature_factor),
            top_before=t.top_before,
            top_after=t.top_after,
            top_key_before=t.top_key_before,
            top_key_after=t.top_key_after,
            effect=t.effect,
            implicated=t.implicated,
            verdict=verdict_text(t, route, names),
            stays_on_top=t.stays_on_top,
            trials=t.trials,
        )
        for t in trials
    ]


def useful_key(route: Route) -> int:
    """The key the query retrieves now: the legal key with the largest weight."""
    return route.top


def _is_distractor(name: str) -> bool:
    return name.startswith(DISTRACTOR_PREFIX) and name[len(DISTRACTOR_PREFIX) :].isdigit()


def without_distractors(sc: Scenario) -> Scenario:
    """``sc`` with every key the distractor tool added ("dist1", "dist2", ...) removed."""
    out = sc
    for j in reversed(range(sc.n_tokens)):
        if _is_distractor(sc.tokens[j]) and out.n_tokens > 1:
            out = edits.remove_token(out, j)
    return out


def distractor_names(sc: Scenario) -> list[str]:
    return [t for t in sc.tokens if _is_distractor(t)]


def add_distractor(
    sc: Scenario, kind: DistractorKind, d: float | None = None
) -> tuple[Scenario, str]:
    """Edit: append a distractor aimed at the key the query currently retrieves.

    Returns the new scenario and the distractor's name.
    """
    route = lab_route(sc, d)
    useful = useful_key(route)
    key = distractor_key(route.q, route.K, useful, kind)
    value = distractor_value(route.V, useful, kind)
    used = set(sc.tokens)
    i = 1
    while f"{DISTRACTOR_PREFIX}{i}" in used:
        i += 1
    name = f"{DISTRACTOR_PREFIX}{i}"
    return edits.add_token(sc, name, key, value=value), name


@dataclass(frozen=True)
class DistractorEffect:
    """The useful key before the distractors were added and now.

    ``useful`` is its label; scores are raw q · k; ``stolen`` = weight_before − weight_after.
    """

    useful: str
    distractors: tuple[str, ...]
    score_before: float
    score_after: float
    weight_before: float
    weight_after: float
    distractor_weight: float
    output_shift: float

    @property
    def stolen(self) -> float:
        return self.weight_before - self.weight_after


def distractor_effect(sc: Scenario, d: float | None = None) -> DistractorEffect | None:
    """Compare the lab with and without its distractor keys (None if there are none).

    The useful key is the one on top without the distractors.
    """
    names = distractor_names(sc)
    if not names:
        return None
    clean = without_distractors(sc)
    r0 = lab_route(clean, d)
    r1 = lab_route(sc, d)
    u = useful_key(r0)
    label = clean.tokens[u]
    j = sc.tokens.index(label)
    dist_w = float(sum(r1.weights[sc.tokens.index(n)] for n in names))
    return DistractorEffect(
        useful=label,
        distractors=tuple(names),
        score_before=float(r0.scores[u]),
        score_after=float(r1.scores[j]),
        weight_before=float(r0.weights[u]),
        weight_after=float(r1.weights[j]),
        distractor_weight=dist_w,
        output_shift=float(np.linalg.norm(r1.output - r0.output)),
    )


# ---- drawing geometry ------------------------------------------------------------------------
def payload_arrows(route: Route, axes: tuple[int, int] = (0, 1)) -> tuple[Array, Array, Array]:
    """The value plane: ``values`` (n_k, 2), ``contributions`` w_j v_j (n_k, 2) and the
    ``output`` (2,), on value axes ``axes`` (a 1-D value space gets y = 0)."""

    def plane(a: Array) -> Array:
        a2 = np.atleast_2d(a)
        out = np.zeros((a2.shape[0], 2))
        for c, ax in enumerate(axes):
            if ax < a2.shape[1]:
                out[:, c] = a2[:, ax]
        return out

    return plane(route.V), plane(route.contributions), plane(route.output[None, :])[0]
