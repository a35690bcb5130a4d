"""The routing laboratory: one query, a few key-value pairs, and the interventions on them.

The address (query-key geometry, scaling, temperature, mask) decides the route; the payload
(the values) decides what the route delivers. This module computes the lab's route, including a
*synthetic key dimension* d, diagnoses why a route is sharp, and builds the lab's edits
(rotate the query, swap values, replace a key, add a distractor) as pure scenario edits.

The synthetic dimension: if the components of q and k are independent with unit variance, q · k
is a sum of d_k unit-variance products, so its standard deviation grows as √d_k. The lab's
vectors are 2-D; to emulate a d-dimensional head it multiplies the raw logits by √(d / d_k).
With scaling on it then divides by √d, which cancels the growth exactly. Everything is pure
NumPy (no Qt).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine import edits
from attnsim.engine.attention import direct_trace, entropy_bits, softmax
from attnsim.engine.scenario import Scenario, ScenarioError

Array = NDArray[np.float64]
DistractorKind = Literal["large-norm", "near-duplicate"]

#: Keys the distractor tool adds are named with this prefix ("dist1", "dist2", ...).
DISTRACTOR_PREFIX = "dist"
#: Largest synthetic dimension the lab accepts.
MAX_SYNTHETIC_D = 65536

__all__ = [
    "DISTRACTOR_PREFIX",
    "MAX_SYNTHETIC_D",
    "Cause",
    "DistractorEffect",
    "Route",
    "RouteChange",
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
    "with_query_angle",
    "without_distractors",
]


# ---- the route ---------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Route:
    """One query's route over n_k keys, with the lab's synthetic dimension.

    Shapes: ``q`` (d_k,), ``K`` (n_k, d_k), ``V`` (n_k, d_v); ``scores`` (raw q · k),
    ``logits`` (after the √(d/d_k) growth, the optional ÷√d and ÷T), ``masked_logits``,
    ``weights``, ``mask`` (n_k,); ``output`` (d_v,); ``contributions`` (n_k, d_v).
    """

    q: Array
    K: Array
    V: Array
    scores: Array
    logits: Array
    masked_logits: Array
    weights: Array
    output: Array
    mask: NDArray[np.bool_]
    d: float
    d_native: int
    scale: bool
    temperature: float
    mask_value: float

    @property
    def growth(self) -> float:
        """√(d / d_k): how much larger a d-dimensional head's raw logits are on average."""
        return math.sqrt(self.d / self.d_native)

    @property
    def divisor(self) -> float:
        """(√d if scaling else 1) × T: what the grown logits are divided by."""
        return (math.sqrt(self.d) if self.scale else 1.0) * self.temperature

    @property
    def factor(self) -> float:
        """logit_j = factor × (q · k_j)."""
        return self.growth / self.divisor

    @property
    def top(self) -> int:
        """Index of the key with the largest weight (the first one on a tie)."""
        return int(np.argmax(self.weights))

    @property
    def top_weight(self) -> float:
        return float(self.weights[self.top])

    @cached_property
    def contributions(self) -> Array:
        """``w_j v_j``, shape (n_k, d_v); the rows sum to ``output``."""
        return self.weights[:, None] * self.V

    @cached_property
    def entropy(self) -> float:
        """Entropy of the weights in bits."""
        return float(entropy_bits(self.weights))

    @property
    def n_legal(self) -> int:
        return int(self.mask.sum())


def _vec(a: ArrayLike, name: str) -> Array:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D vector, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds a non-finite value")
    return arr


def _mat(a: ArrayLike, name: str) -> Array:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty matrix (rows, cols), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds a non-finite value")
    return arr


def synthetic_route(
    q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    *,
    d: float | None = None,
    scale: bool = False,
    temperature: float = 1.0,
    mask: ArrayLike | None = None,
    mask_value: float = -math.inf,
) -> Route:
    """The route of one query ``q`` (d_k,) over keys ``K`` (n_k, d_k) with values ``V`` (n_k, d_v).

    ``d`` is the synthetic key dimension (default d_k: no emulation). Raw scores q · k_j are
    multiplied by √(d / d_k) (the typical growth of a d-dimensional dot product), divided by √d
    when ``scale`` is on, and by ``temperature``. ``mask`` (n_k,) bool marks the legal keys;
    forbidden logits become ``mask_value`` (-inf is correct, 0 is the classic mistake). At
    d = d_k the numbers are exactly those of :func:`attnsim.engine.attention.direct_trace`.
    """
    qa = _vec(q, "q")
    Ka = _mat(K, "K")
    Va = _mat(V, "V")
    d_k = qa.shape[0]
    if Ka.shape[1] != d_k:
        raise ValueError(f"the keys have width {Ka.shape[1]} but the query has {d_k}")
    if Va.shape[0] != Ka.shape[0]:
        raise ValueError(f"{Ka.shape[0]} keys but {Va.shape[0]} values; each key needs one value")
    d_eff = float(d_k if d is None else d)
    if not math.isfinite(d_eff) or d_eff <= 0 or d_eff > MAX_SYNTHETIC_D:
        raise ValueError(f"the synthetic dimension d must be in (0, {MAX_SYNTHETIC_D}], got {d!r}")
    t = float(temperature)
    if not math.isfinite(t) or t <= 0:
        raise ValueError(f"temperature must be positive and finite, got {temperature!r}")
    n_k = Ka.shape[0]
    if mask is None:
        m = np.ones(n_k, dtype=bool)
    else:
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (n_k,):
            raise ValueError(f"mask must be {n_k} true/false values, got {m.dtype} {m.shape}")
        if not m.any():
            raise ValueError("the mask leaves no legal key; the query needs at least one")
    if not (mask_value == -math.inf or math.isfinite(mask_value)):
        raise ValueError(f"mask_value must be -inf or finite, got {mask_value}")
    if d_eff == d_k:
        # No emulation: the engine's own trace, so the lab's numbers are the engine's.
        tr = direct_trace(
            qa[None, :],
            Ka,
            Va,
            mask=None if mask is None else m[None, :],
            temperature=t,
            scale=scale,
            mask_value=mask_value,
        )
        scores, logits = tr.scores[0], tr.logits[0]
        masked, weights, output = tr.masked_logits[0], tr.weights[0], tr.output[0]
    else:
        # A d-dimensional head: the raw scores grow by sqrt(d / d_k) and are divided by sqrt(d)
        # (not sqrt(d_k)) when scaling is on. Only the logits differ from the engine's path.
        with np.errstate(over="ignore"):
            scores = (qa[None, :] @ Ka.T)[0]
            divisor = (math.sqrt(d_eff) if scale else 1.0) * t
            logits = scores * math.sqrt(d_eff / d_k) / divisor
        masked = logits if mask is None else np.where(m, logits, mask_value)
        weights = softmax(masked)
        output = weights @ Va
    return Route(
        q=qa,
        K=Ka,
        V=Va,
        scores=scores,
        logits=logits,
        masked_logits=masked,
        weights=weights,
        output=output,
        mask=m,
        d=d_eff,
        d_native=d_k,
        scale=bool(scale),
        temperature=t,
        mask_value=float(mask_value),
    )


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


def rotated(v: ArrayLike, degrees: float) -> Array:
    """``v`` rotated by ``degrees`` in the plane of axes 0 and 1 (1-D vectors: sign flip at
    |angle| > 90°)."""
    va = _vec(v, "v").copy()
    if va.shape[0] == 1:
        return -va if abs(math.remainder(degrees, 360.0)) > 90.0 else va
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    x, y = va[0], va[1]
    va[0], va[1] = c * x - s * y, s * x + c * y
    return va


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


# ---- four causes of a sharp route ------------------------------------------------------------
@dataclass(frozen=True)
class Cause:
    """One row of the four-causes table.

    ``top_before`` is the current top weight; ``top_after`` the top weight under the
    perturbation (for the direction sweep: the mean weight the current winner keeps over the
    rotated queries, and ``top_key_after`` is -1 unless one key dominates). ``effect`` is
    "broader", "sharper" or "unchanged"; ``implicated`` says
    whether the response points at this cause.
    """

    key: str
    perturbation: str
    top_before: float
    top_after: float
    top_key_before: int
    top_key_after: int
    effect: str
    implicated: bool
    verdict: str
    stays_on_top: int = 0
    trials: int = 0


def _effect(before: float, after: float) -> str:
    """Broader / sharper / unchanged, judged on the mass left outside the top key.

    A relative test on (1 − top) works both for broad routes (0.46 → 0.36) and saturated ones
    (0.9999 → 0.999, a tenfold change in what the other keys get).
    """
    rest_b, rest_a = 1.0 - before, 1.0 - after
    if rest_b <= 1e-15:
        if rest_a <= 1e-15:
            return "unchanged"
        return "broader"
    ratio = rest_a / rest_b
    if ratio > 1.01:
        return "broader"
    if ratio < 0.99:
        return "sharper"
    return "unchanged"


def _unit_rows(a: Array) -> Array:
    """Rows scaled to unit length (zero rows stay zero: they have no direction)."""
    norms = np.linalg.norm(a, axis=-1, keepdims=True)
    return np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)


def _perturbed(
    route: Route,
    q: Array | None = None,
    K: Array | None = None,
    *,
    d: float | None = None,
    temperature: float | None = None,
) -> Route:
    """``route`` recomputed with q, K, d or T replaced; values, scaling and mask stay."""
    return synthetic_route(
        route.q if q is None else q,
        route.K if K is None else K,
        route.V,
        d=route.d if d is None else d,
        temperature=route.temperature if temperature is None else temperature,
        scale=route.scale,
        mask=route.mask,
        mask_value=route.mask_value,
    )


def _cause(
    key: str, perturbation: str, route: Route, after: Route, *, implicated: bool, verdict: str
) -> Cause:
    """The table row for a perturbation that turned ``route`` into ``after``."""
    return Cause(
        key=key,
        perturbation=perturbation,
        top_before=route.top_weight,
        top_after=after.top_weight,
        top_key_before=route.top,
        top_key_after=after.top,
        effect=_effect(route.top_weight, after.top_weight),
        implicated=implicated,
        verdict=verdict,
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
    """Four perturbations that separate the causes of a sharp route, on ``route``'s state.

    1. **norm**: q and every key set to unit length (zero vectors stay zero).
    2. **temperature**: T × ``temperature_factor`` with the vectors fixed.
    3. **dimension**: the same head at d ÷ ``d_divisor`` (rounded, at least 1), same scaling.
    4. **direction**: the query rotated to ``n_directions - 1`` other evenly spaced directions
       (in the plane of axes 0 and 1); does the same key stay on top?
    """
    names = tuple(labels) if labels is not None else tuple(str(j) for j in range(route.K.shape[0]))
    top = route.top
    before = route.top_weight
    single = route.n_legal == 1
    rows: list[Cause] = []

    # 1. Norms.
    r1 = _perturbed(route, _unit_rows(route.q[None, :])[0], _unit_rows(route.K))
    eff = _effect(before, r1.top_weight)
    norms = np.linalg.norm(route.K, axis=1)
    q_norm = float(np.linalg.norm(route.q))
    if single:
        verdict = "one legal key → the mask alone decides"
    elif eff == "broader":
        verdict = (
            f"broader → norm carries part of the decision (|{names[top]}| = "
            f"{norms[top]:.3g}, |q| = {q_norm:.3g})"
        )
    elif eff == "sharper":
        verdict = "sharper → the winner is aligned, not long: norms are not the cause"
    else:
        verdict = "no change → norms are not the cause (the vectors are unit length)"
    rows.append(
        _cause(
            "norm",
            "unit-length q and keys",
            route,
            r1,
            implicated=eff == "broader" and not single,
            verdict=verdict,
        )
    )

    # 2. Temperature.
    t_new = route.temperature * temperature_factor
    r2 = _perturbed(route, temperature=t_new)
    eff = _effect(before, r2.top_weight)
    kept = _same_ranking(route, r2)
    low_t = route.temperature < 1.0
    if single:
        verdict = "one legal key → the mask alone decides"
    elif eff == "unchanged":
        verdict = "no change → the route is already uniform (equal logits)"
    else:
        ranking = "same ranking" if kept else "RANKING CHANGED (a bug)"
        verdict = f"{eff}, {ranking} → T sets the contest; " + (
            f"T = {route.temperature:.3g} < 1 sharpens this route"
            if low_t
            else f"T = {route.temperature:.3g} is not low: not the cause"
        )
    rows.append(
        _cause(
            "temperature",
            f"T × {temperature_factor:g} (T = {t_new:.3g})",
            route,
            r2,
            implicated=low_t and eff == "broader" and not single,
            verdict=verdict,
        )
    )

    # 3. Dimension.
    d_new = max(1.0, float(round(route.d / d_divisor)))
    r3 = _perturbed(route, d=d_new)
    eff = _effect(before, r3.top_weight)
    scaling = "scaled by √d" if route.scale else "unscaled"
    if single:
        verdict = "one legal key → the mask alone decides"
    elif d_new == route.d:
        verdict = "d is already at its smallest (1)"
    elif eff == "broader" and not route.scale:
        verdict = "broader → unscaled logits grow as √d: dimension is implicated"
    elif route.scale and eff == "unchanged":
        verdict = "no change → ÷√d cancels the growth: dimension is not the cause"
    else:
        verdict = f"{eff} at the smaller d → dimension plays a part"
    rows.append(
        _cause(
            "dimension",
            f"d = {d_new:g} ({scaling})",
            route,
            r3,
            implicated=eff == "broader" and not route.scale and not single,
            verdict=verdict,
        )
    )

    # 4. Direction of the query only.
    offsets = [360.0 * i / n_directions for i in range(1, n_directions)]
    stays = 0
    kept_w = []
    for off in offsets:
        r4 = _perturbed(route, rotated(route.q, off))
        stays += int(r4.top == top)
        kept_w.append(float(r4.weights[top]))
    trials = len(offsets)
    mean_kept = float(np.mean(kept_w)) if kept_w else before
    dominant = trials > 0 and stays >= dominance * trials
    if single:
        verdict = "one legal key → the mask alone decides"
        dominant = True
    elif q_norm == 0.0:
        verdict = "q = 0 → every key scores 0 in every direction"
    elif dominant:
        verdict = (
            f"{names[top]} stays on top in {stays}/{trials} → not alignment: check key norms, "
            "biases, the mask"
        )
    else:
        verdict = (
            f"{names[top]} on top in only {stays}/{trials} → the winner follows q: alignment "
            "decides"
        )
    rows.append(
        Cause(
            key="direction",
            perturbation=f"rotate q only ({trials} directions)",
            top_before=before,
            top_after=mean_kept,
            top_key_before=top,
            top_key_after=top if dominant else -1,
            effect=_effect(before, mean_kept),
            implicated=dominant,
            verdict=verdict,
            stays_on_top=stays,
            trials=trials,
        )
    )
    return rows


def _same_ranking(a: Route, b: Route) -> bool:
    legal = np.flatnonzero(a.mask)
    order = legal[np.argsort(-a.masked_logits[legal], kind="stable")]
    return bool(np.all(np.diff(b.weights[order]) <= 1e-15))


# ---- distractors -----------------------------------------------------------------------------
def useful_key(route: Route) -> int:
    """The key the query retrieves now: the legal key with the largest weight."""
    return route.top


def distractor_key(
    q: ArrayLike,
    K: ArrayLike,
    useful: int,
    kind: DistractorKind,
    *,
    norm_factor: float = 3.0,
    off_angle: float = 50.0,
    duplicate_angle: float = 5.0,
) -> Array:
    """A distractor key (d_k,) for query ``q`` against keys ``K`` (n_k, d_k).

    ``"large-norm"``: ``off_angle`` degrees away from the query (a poor match in direction)
    but ``norm_factor`` times as long as the longest key, so its raw score can still win.
    ``"near-duplicate"``: the useful key turned by ``duplicate_angle`` degrees, same length.
    """
    qa, Ka = _vec(q, "q"), _mat(K, "K")
    if not 0 <= useful < Ka.shape[0]:
        raise ValueError(f"no key {useful}; there are {Ka.shape[0]}")
    k_use = Ka[useful]
    if kind == "large-norm":
        base = qa if np.linalg.norm(qa) > 0 else k_use
        if np.linalg.norm(base) == 0:
            base = np.eye(qa.shape[0])[0]
        direction = rotated(base / np.linalg.norm(base), off_angle)
        length = norm_factor * max(1.0, float(np.max(np.linalg.norm(Ka, axis=1))))
        return direction * length
    if kind == "near-duplicate":
        if qa.shape[0] == 1:
            return k_use * 0.98
        return rotated(k_use, duplicate_angle)
    raise ValueError(f"unknown distractor kind {kind!r}; use 'large-norm' or 'near-duplicate'")


def distractor_value(V: ArrayLike, useful: int, kind: DistractorKind) -> Array:
    """The distractor's value (d_v,): nothing (zeros) for the irrelevant long key; the useful
    value reversed for the near-duplicate (a superseded or contradicting fact)."""
    Va = _mat(V, "V")
    if kind == "large-norm":
        return np.zeros(Va.shape[1])
    if kind == "near-duplicate":
        return -Va[useful]
    raise ValueError(f"unknown distractor kind {kind!r}; use 'large-norm' or 'near-duplicate'")


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
