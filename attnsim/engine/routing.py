"""One query's route over a few keys at a synthetic key dimension, and the experiments on it.

The synthetic dimension: if the components of q and k are independent with unit variance, q · k
is a sum of d_k unit-variance products, so its standard deviation grows as √d_k. A route of 2-D
vectors emulates a d-dimensional head by multiplying the raw logits by √(d / d_k). With scaling
on it then divides by √d, which cancels the growth exactly.

The four-causes experiment perturbs a route in four ways (norms, temperature, dimension,
direction) and reports numbers and :class:`Finding` values; the sentences that explain a finding
belong to the view that shows them (:mod:`attnsim.viewmodels.routing_lab`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum, StrEnum, auto
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import entropy_bits, route_arrays, softmax

Array = NDArray[np.float64]

#: Largest synthetic dimension a route accepts.
MAX_SYNTHETIC_D = 65536

__all__ = [
    "MAX_SYNTHETIC_D",
    "CauseTrial",
    "DistractorKind",
    "Effect",
    "Finding",
    "Route",
    "cause_trials",
    "checked_matrix",
    "checked_vector",
    "distractor_key",
    "distractor_value",
    "rotated",
    "synthetic_route",
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


def checked_vector(a: ArrayLike, name: str) -> Array:
    """``a`` as a non-empty 1-D float vector of finite numbers, else ValueError naming it."""
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D vector, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds a non-finite value")
    return arr


def checked_matrix(a: ArrayLike, name: str) -> Array:
    """``a`` as a non-empty 2-D float matrix of finite numbers, else ValueError naming it."""
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
    qa = checked_vector(q, "q")
    Ka = checked_matrix(K, "K")
    Va = checked_matrix(V, "V")
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
        # (Its arrays without the entropy: the four-causes table runs fifteen of these per edit.)
        arrays = route_arrays(
            qa[None, :],
            Ka,
            Va,
            mask=None if mask is None else m[None, :],
            temperature=t,
            scale=scale,
            mask_value=mask_value,
        )
        scores, logits, _, masked, weights, output = (a[0] for a in arrays)
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


def rotated(v: ArrayLike, degrees: float) -> Array:
    """``v`` rotated by ``degrees`` in the plane of axes 0 and 1 (1-D vectors: sign flip at
    |angle| > 90°)."""
    va = checked_vector(v, "v").copy()
    if va.shape[0] == 1:
        return -va if abs(math.remainder(degrees, 360.0)) > 90.0 else va
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    x, y = va[0], va[1]
    va[0], va[1] = c * x - s * y, s * x + c * y
    return va


# ---- four causes of a sharp route ------------------------------------------------------------
class Effect(StrEnum):
    """What a perturbation did to the route, judged on the mass left outside the top key."""

    BROADER = "broader"
    SHARPER = "sharper"
    UNCHANGED = "unchanged"


class Finding(Enum):
    """What one perturbation of :func:`cause_trials` shows about its cause."""

    MASK_DECIDES = auto()  # one legal key: no perturbation can matter
    NORM_CARRIES = auto()
    ALIGNED_NOT_LONG = auto()
    NORM_NOT_CAUSE = auto()
    ALREADY_UNIFORM = auto()
    TEMPERATURE_SHARPENS = auto()
    TEMPERATURE_NOT_LOW = auto()
    D_AT_SMALLEST = auto()
    UNSCALED_GROWTH = auto()
    SCALING_CANCELS = auto()
    DIMENSION_PLAYS_PART = auto()
    ZERO_QUERY = auto()
    NOT_ALIGNMENT = auto()
    ALIGNMENT_DECIDES = auto()


@dataclass(frozen=True)
class CauseTrial:
    """One perturbation of a route and what it showed, as numbers and enums.

    ``top_before`` is the current top weight; ``top_after`` the top weight under the
    perturbation (for the direction sweep: the mean weight the current winner keeps over the
    rotated queries, and ``top_key_after`` is -1 unless one key dominates). ``implicated`` says
    whether the response points at this cause. ``setting`` is the perturbed value (temperature
    factor and new T, new d, number of directions); ``ranking_kept`` whether the order of the
    keys survived (it always should under a temperature change).
    """

    key: str
    top_before: float
    top_after: float
    top_key_before: int
    top_key_after: int
    effect: Effect
    implicated: bool
    finding: Finding
    setting: float = math.nan
    ranking_kept: bool = True
    stays_on_top: int = 0
    trials: int = 0


def _effect(before: float, after: float) -> Effect:
    """Broader / sharper / unchanged, judged on the mass left outside the top key.

    A relative test on (1 − top) works both for broad routes (0.46 → 0.36) and saturated ones
    (0.9999 → 0.999, a tenfold change in what the other keys get).
    """
    rest_b, rest_a = 1.0 - before, 1.0 - after
    if rest_b <= 1e-15:
        if rest_a <= 1e-15:
            return Effect.UNCHANGED
        return Effect.BROADER
    ratio = rest_a / rest_b
    if ratio > 1.01:
        return Effect.BROADER
    if ratio < 0.99:
        return Effect.SHARPER
    return Effect.UNCHANGED


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


def _trial(
    key: str, route: Route, after: Route, *, implicated: bool, finding: Finding, **more: object
) -> CauseTrial:
    """The trial for a perturbation that turned ``route`` into ``after``."""
    return CauseTrial(
        key=key,
        top_before=route.top_weight,
        top_after=after.top_weight,
        top_key_before=route.top,
        top_key_after=after.top,
        effect=_effect(route.top_weight, after.top_weight),
        implicated=implicated,
        finding=finding,
        **more,  # type: ignore[arg-type]
    )


def _same_ranking(a: Route, b: Route) -> bool:
    legal = np.flatnonzero(a.mask)
    order = legal[np.argsort(-a.masked_logits[legal], kind="stable")]
    return bool(np.all(np.diff(b.weights[order]) <= 1e-15))


def cause_trials(
    route: Route,
    *,
    temperature_factor: float = 4.0,
    d_divisor: float = 4.0,
    n_directions: int = 12,
    dominance: float = 0.75,
) -> list[CauseTrial]:
    """Four perturbations that separate the causes of a sharp route, on ``route``'s state.

    1. **norm**: q and every key set to unit length (zero vectors stay zero).
    2. **temperature**: T × ``temperature_factor`` with the vectors fixed.
    3. **dimension**: the same head at d ÷ ``d_divisor`` (rounded, at least 1), same scaling.
    4. **direction**: the query rotated to ``n_directions - 1`` other evenly spaced directions
       (in the plane of axes 0 and 1); does the same key stay on top?
    """
    top = route.top
    before = route.top_weight
    single = route.n_legal == 1
    rows: list[CauseTrial] = []

    # 1. Norms.
    r1 = _perturbed(route, _unit_rows(route.q[None, :])[0], _unit_rows(route.K))
    eff = _effect(before, r1.top_weight)
    finding = {
        Effect.BROADER: Finding.NORM_CARRIES,
        Effect.SHARPER: Finding.ALIGNED_NOT_LONG,
        Effect.UNCHANGED: Finding.NORM_NOT_CAUSE,
    }[eff]
    rows.append(
        _trial(
            "norm",
            route,
            r1,
            implicated=eff == Effect.BROADER and not single,
            finding=Finding.MASK_DECIDES if single else finding,
        )
    )

    # 2. Temperature.
    t_new = route.temperature * temperature_factor
    r2 = _perturbed(route, temperature=t_new)
    eff = _effect(before, r2.top_weight)
    low_t = route.temperature < 1.0
    if single:
        finding = Finding.MASK_DECIDES
    elif eff == Effect.UNCHANGED:
        finding = Finding.ALREADY_UNIFORM
    else:
        finding = Finding.TEMPERATURE_SHARPENS if low_t else Finding.TEMPERATURE_NOT_LOW
    rows.append(
        _trial(
            "temperature",
            route,
            r2,
            implicated=low_t and eff == Effect.BROADER and not single,
            finding=finding,
            setting=t_new,
            ranking_kept=_same_ranking(route, r2),
        )
    )

    # 3. Dimension.
    d_new = max(1.0, float(round(route.d / d_divisor)))
    r3 = _perturbed(route, d=d_new)
    eff = _effect(before, r3.top_weight)
    if single:
        finding = Finding.MASK_DECIDES
    elif d_new == route.d:
        finding = Finding.D_AT_SMALLEST
    elif eff == Effect.BROADER and not route.scale:
        finding = Finding.UNSCALED_GROWTH
    elif route.scale and eff == Effect.UNCHANGED:
        finding = Finding.SCALING_CANCELS
    else:
        finding = Finding.DIMENSION_PLAYS_PART
    rows.append(
        _trial(
            "dimension",
            route,
            r3,
            implicated=eff == Effect.BROADER and not route.scale and not single,
            finding=finding,
            setting=d_new,
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
        finding = Finding.MASK_DECIDES
        dominant = True
    elif float(np.linalg.norm(route.q)) == 0.0:
        finding = Finding.ZERO_QUERY
    elif dominant:
        finding = Finding.NOT_ALIGNMENT
    else:
        finding = Finding.ALIGNMENT_DECIDES
    rows.append(
        CauseTrial(
            key="direction",
            top_before=before,
            top_after=mean_kept,
            top_key_before=top,
            top_key_after=top if dominant else -1,
            effect=_effect(before, mean_kept),
            implicated=dominant,
            finding=finding,
            setting=float(trials),
            stays_on_top=stays,
            trials=trials,
        )
    )
    return rows


# A distractor for one query: the routing lab adds one, the long-context lab sweeps many.
DistractorKind = Literal["large-norm", "near-duplicate"]


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
    qa, Ka = checked_vector(q, "q"), checked_matrix(K, "K")
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
    Va = checked_matrix(V, "V")
    if kind == "large-norm":
        return np.zeros(Va.shape[1])
    if kind == "near-duplicate":
        return -Va[useful]
    raise ValueError(f"unknown distractor kind {kind!r}; use 'large-norm' or 'near-duplicate'")
