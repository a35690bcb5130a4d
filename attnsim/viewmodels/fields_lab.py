"""The three-fields lab: keys grouped into fields, per-field weights, and queries built from fields.

The lab applies to a *direct* scenario whose every key label names one of the fields
(:data:`FIELD_NAMES`): the label is the field name itself or the field name followed by a space
and anything (``"acoustics 1"``), compared case-insensitively, and every field has at least one
key. The three-fields preset follows this rule; a scenario built the same way by hand does too.

A field's *direction* is the unit vector over the query/key axes named after it (an axis whose
name starts with the field's first word, e.g. ``"control 3"`` for "control theory") when every
field owns at least one axis and no axis is claimed twice; otherwise it is the normalised mean
of the field's keys. A query's *mix* is its coefficients in these directions (for orthonormal
directions, its cosines with them); :func:`query_from_mix` turns a mix back into a query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import HeadTrace
from attnsim.engine.experiments import FIELD_NAMES, three_fields
from attnsim.engine.geometry import best_subspace
from attnsim.engine.numbers import fmt_fixed
from attnsim.engine.scenario import Scenario

Array = NDArray[np.float64]

__all__ = [
    "FIELD_NAMES",
    "BarsData",
    "FieldLayout",
    "FieldsLabData",
    "MixtureData",
    "OffPageData",
    "ScatterData",
    "axis_fields",
    "field_layout",
    "field_of",
    "field_sums",
    "fit_points",
    "lab_data",
    "mix_after_slider",
    "mix_of_query",
    "off_page_data",
    "place_label",
    "plane_coords",
    "query_from_mix",
    "reference_result",
    "span_fraction",
    "stacked_segments",
]


def field_of(label: str, fields: tuple[str, ...] = FIELD_NAMES) -> int | None:
    """Index of the field a key label belongs to ("acoustics 1" -> 0), or None."""
    text = label.strip().casefold()
    for f, name in enumerate(fields):
        base = name.casefold()
        if text == base or text.startswith(base + " "):
            return f
    return None


def axis_fields(axes: tuple[str, ...], fields: tuple[str, ...] = FIELD_NAMES) -> NDArray[np.int_]:
    """Field index of each axis by the first word of the field name ("control 2" -> 1), -1 if none.

    Shape (len(axes),).
    """
    words = [name.split()[0].casefold() for name in fields]
    out = np.full(len(axes), -1, dtype=int)
    for a, axis in enumerate(axes):
        text = axis.strip().casefold()
        hits = [f for f, w in enumerate(words) if text == w or text.startswith(w + " ")]
        if len(hits) == 1:
            out[a] = hits[0]
    return out


@dataclass(frozen=True, eq=False)
class FieldLayout:
    """How a scenario's keys and axes split into fields.

    ``key_field`` (n_k,) field index of each key; ``directions`` (n_fields, d_k), unit rows;
    ``source`` is "axes" or "keys" (see the module docstring); ``value_field`` (d_v,) field
    index of each value axis or -1.
    """

    fields: tuple[str, ...]
    key_field: NDArray[np.int_]
    directions: Array
    source: str
    value_field: NDArray[np.int_]

    def members(self, f: int) -> NDArray[np.int_]:
        """Indices of the keys in field ``f``."""
        return np.flatnonzero(self.key_field == f)


def field_layout(sc: Scenario, fields: tuple[str, ...] = FIELD_NAMES) -> FieldLayout | str:
    """The scenario's field layout, or a sentence saying why the lab does not apply."""
    if sc.mode != "direct":
        return (
            "this is a token scenario: its queries and keys come from Wq and Wk, not given "
            "vectors with field labels"
        )
    key_field = []
    for label in sc.tokens:
        f = field_of(label, fields)
        if f is None:
            names = ", ".join(repr(n) for n in fields)
            return f"the key {label!r} does not start with a field name ({names})"
        key_field.append(f)
    kf = np.array(key_field, dtype=int)
    empty = [fields[f] for f in range(len(fields)) if not np.any(kf == f)]
    if empty:
        return f"no key belongs to the field {empty[0]!r}"
    assert sc.K is not None
    K = np.asarray(sc.K, dtype=float)
    d = K.shape[1]
    ax = axis_fields(tuple(sc.qk_axes), fields)
    if all(np.any(ax == f) for f in range(len(fields))):
        dirs = np.zeros((len(fields), d))
        for f in range(len(fields)):
            dirs[f, ax == f] = 1.0
        source = "axes"
    else:
        dirs = np.array([K[kf == f].mean(axis=0) for f in range(len(fields))])
        source = "keys"
    norms = np.linalg.norm(dirs, axis=1)
    if np.any(norms == 0) or np.linalg.matrix_rank(dirs) < len(fields):
        return "the fields' directions are not independent (a field's keys average to zero?)"
    dirs = dirs / norms[:, None]
    return FieldLayout(tuple(fields), kf, dirs, source, axis_fields(tuple(sc.v_axes), fields))


def field_sums(weights: ArrayLike, key_field: ArrayLike, n_fields: int = 3) -> Array:
    """Weight each query puts on each field: (n_q, n_k) weights -> (n_q, n_fields)."""
    w = np.asarray(weights, dtype=float)
    kf = np.asarray(key_field)
    return np.stack([w[:, kf == f].sum(axis=1) for f in range(n_fields)], axis=1)


def mix_of_query(q: ArrayLike, directions: ArrayLike) -> Array:
    """Coefficients ``a`` (n_fields,) with ``a @ directions`` the closest vector to q / |q|.

    Zero for a zero query. For orthonormal directions these are q̂'s cosines with them.
    """
    qa = np.asarray(q, dtype=float)
    C = np.asarray(directions, dtype=float)
    norm = float(np.linalg.norm(qa))
    if norm == 0.0:
        return np.zeros(C.shape[0])
    a, *_ = np.linalg.lstsq(C.T, qa / norm, rcond=None)
    return a


def span_fraction(q: ArrayLike, directions: ArrayLike) -> float:
    """Fraction of |q|² inside the span of the field directions (1 for every preset query)."""
    qa = np.asarray(q, dtype=float)
    C = np.asarray(directions, dtype=float)
    total = float(qa @ qa)
    if total == 0.0:
        return 1.0
    a, *_ = np.linalg.lstsq(C.T, qa, rcond=None)
    inside = a @ C
    return float(inside @ inside) / total


def mix_after_slider(mix: ArrayLike, directions: ArrayLike, field: int, value: float) -> Array:
    """The mix after setting one field's coefficient to ``value``, still a unit query.

    The other coefficients keep their proportions and are rescaled by the one factor t >= 0
    that makes ``|mix @ directions| = 1``; if they are all zero the remainder is shared
    equally among the other fields. ``value`` must lie in [0, 1].
    """
    C = np.asarray(directions, dtype=float)
    a = np.array(mix, dtype=float)
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"a field's share must lie between 0 and 1, got {value!r}")
    others = a.copy()
    others[field] = 0.0
    others = np.clip(others, 0.0, None)
    # Only the proportions of the others matter (t absorbs their scale); normalising keeps
    # tiny shares from underflowing.
    top = float(others.max())
    others = others / top if top > 1e-12 else np.zeros_like(a)
    if not np.any(others):
        others = np.ones_like(a)
        others[field] = 0.0
    u = v * C[field]
    w = others @ C
    # |u + t w|² = 1  ->  t² |w|² + 2 t (u·w) + |u|² - 1 = 0; take the non-negative root.
    ww, uw, uu = float(w @ w), float(u @ w), float(u @ u)
    disc = max(uw * uw - ww * (uu - 1.0), 0.0)
    t = max((-uw + np.sqrt(disc)) / ww, 0.0) if ww > 0 else 0.0
    out = t * others
    out[field] = v
    return out


def query_from_mix(mix: ArrayLike, directions: ArrayLike, length: float = 1.0) -> Array:
    """The query ``length * normalise(mix @ directions)``, shape (d,).

    Raises ValueError when the combination is the zero vector (a query needs a direction).
    """
    C = np.asarray(directions, dtype=float)
    v = np.asarray(mix, dtype=float) @ C
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or not np.isfinite(norm):
        raise ValueError("every field's share is zero, so the query would have no direction")
    return (length / norm) * v


def plane_coords(K: ArrayLike, Q: ArrayLike) -> tuple[Array, Array, Array, Array, Array]:
    """Keys and queries on the 2-D plane that keeps most of their spread.

    The plane passes through the mean of all keys and queries (PCA of the centred points with
    :func:`best_subspace`), so three clusters in three orthogonal directions show as a
    triangle instead of collapsing onto their common mean direction.

    Returns ``basis`` (d, 2), ``explained`` (2,) fractions of the spread kept, ``centre``
    (d,), ``key_xy`` (n_k, 2) and ``query_xy`` (n_q, 2) = (points - centre) @ basis.
    """
    Ka = np.asarray(K, dtype=float)
    Qa = np.asarray(Q, dtype=float)
    P = np.vstack([Ka, Qa])
    centre = P.mean(axis=0)
    basis, explained = best_subspace(P - centre, min(2, Ka.shape[1]))
    if basis.shape[1] == 1:
        basis = np.hstack([basis, np.zeros((basis.shape[0], 1))])
        explained = np.append(explained, 0.0)
    return basis, explained, centre, (Ka - centre) @ basis, (Qa - centre) @ basis


# ---- what the lab's figures draw --------------------------------------------------------------
def fit_points(
    points: ArrayLike, width: float, height: float, margin: float = 14.0
) -> tuple[Array, float]:
    """Pixel positions of 2-D points in a ``width`` x ``height`` box, equal scale on both axes.

    ``points`` (m, 2) in data units; returns pixels (m, 2) with y pointing down, and the
    pixels per data unit. The points' bounding box is centred in the box.
    """
    P = np.asarray(points, dtype=float).reshape(-1, 2)
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    ppu = float(min((width - 2 * margin) / span[0], (height - 2 * margin) / span[1]))
    ppu = max(ppu, 1e-9)
    mid = (lo + hi) / 2
    x = width / 2 + (P[:, 0] - mid[0]) * ppu
    y = height / 2 - (P[:, 1] - mid[1]) * ppu
    return np.column_stack([x, y]), ppu


def stacked_segments(fractions: ArrayLike, x0: float, width: float) -> Array:
    """(left, width) in pixels of each segment of a stacked bar: (k,) fractions -> (k, 2)."""
    f = np.clip(np.asarray(fractions, dtype=float), 0.0, None)
    widths = f * width
    lefts = x0 + np.concatenate([[0.0], np.cumsum(widths)[:-1]])
    return np.column_stack([lefts, widths])


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


def place_label(
    anchor: ArrayLike,
    size: tuple[float, float],
    gap: float,
    bounds: tuple[float, float, float, float],
    taken: list[tuple[float, float, float, float]],
) -> tuple[float, float]:
    """Top-left corner of a ``size`` (w, h) label near ``anchor`` (2,), inside ``bounds``
    (x, y, w, h), overlapping the ``taken`` rectangles as little as possible.

    Tries right, left, below, above and the diagonals at ``gap`` and farther; the first spot
    that is inside and overlaps nothing wins, otherwise the least overlapping one.
    """
    ax, ay = (float(v) for v in np.asarray(anchor, dtype=float)[:2])
    w, h = size
    bx, by, bw, bh = bounds
    best, best_cost = (ax + gap, ay - h / 2), math.inf
    for extra in (0.0, 10.0, 22.0):
        g = gap + extra
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, -1), (1, 1), (-1, 1)):
            x = ax + g if dx > 0 else ax - g - w if dx < 0 else ax - w / 2
            y = ay + g if dy > 0 else ay - g - h if dy < 0 else ay - h / 2
            x = min(max(x, bx), bx + bw - w)
            y = min(max(y, by), by + bh - h)
            cost = sum(_overlap((x, y, w, h), t) for t in taken)
            cost += 0.01 * math.hypot(x + w / 2 - ax, y + h / 2 - ay)
            if cost < best_cost:
                best, best_cost = (x, y), cost
            if cost < 1.0:
                return x, y
    return best


@dataclass(frozen=True, eq=False)
class BarsData:
    """The stacked bars: per-field sums (n_q, 3), entropy and its ceiling (n_q,) in bits."""

    labels: tuple[str, ...]
    sums: Array
    entropy: Array
    max_entropy: Array
    selected: int


@dataclass(frozen=True, eq=False)
class MixtureData:
    """The receiving query's mixture (d_v,), each value coordinate's field (-1: none)."""

    values: Array
    value_field: NDArray[np.int_]
    axes: tuple[str, ...]
    title: str


@dataclass(frozen=True, eq=False)
class ScatterData:
    """Keys (n_k, 2) and queries (n_q, 2) on their best plane, with the origin (2,)."""

    key_xy: Array
    query_xy: Array
    origin_xy: Array
    key_field: NDArray[np.int_]
    query_labels: tuple[str, ...]
    explained: Array  # (2,) fractions of the spread the plane keeps
    selected: int


@dataclass(frozen=True, eq=False)
class FieldsLabData:
    """Everything the lab page shows for one scenario and receiving query."""

    bars: BarsData
    mixture: MixtureData
    scatter: ScatterData
    mix: Array  # (3,) the receiving query's coefficients on the field directions
    info: str
    note: str


def lab_data(sc: Scenario, trace: HeadTrace, receiving: int, layout: FieldLayout) -> FieldsLabData:
    """What the lab page draws: ``trace`` is the scenario's first head, ``receiving`` the
    receiving query; the numbers are the trace's own (sums of its weights, its entropy)."""
    assert sc.Q is not None and sc.K is not None
    i = receiving
    labels = tuple(sc.query_labels)
    mix = mix_of_query(sc.Q[i], layout.directions)
    bars = BarsData(
        labels,
        field_sums(trace.weights, layout.key_field, len(layout.fields)),
        np.asarray(trace.entropy, dtype=float),
        np.broadcast_to(np.asarray(trace.max_entropy, dtype=float), trace.entropy.shape).copy(),
        i,
    )
    mixture = MixtureData(
        np.asarray(trace.output[i], dtype=float),
        np.asarray(layout.value_field, dtype=int),
        tuple(sc.v_axes),
        f"Mixture Σ w·v returned to “{labels[i]}”",
    )
    basis, explained, centre, key_xy, query_xy = plane_coords(sc.K, sc.Q)
    scatter = ScatterData(
        key_xy, query_xy, (-centre) @ basis, np.asarray(layout.key_field, dtype=int), labels,
        explained, i,
    )  # fmt: skip
    info = (
        f"logit = q·k / {fmt_fixed(trace.divisor, 3)}  ·  "
        f"|q| = {fmt_fixed(float(np.linalg.norm(sc.Q[i])), 2)}"
    )
    inside = span_fraction(sc.Q[i], layout.directions)
    where = "axes named after the fields" if layout.source == "axes" else (
        "the mean of each field's keys"
    )  # fmt: skip
    note = (
        f"Sliders: the query’s coefficient on each field’s direction ({where}); moving one "
        "rescales the others so the query keeps its length. The 3-D view shows the same "
        "clusters."
    )
    if inside < 0.999:
        note += (
            f" {fmt_fixed(100 * (1 - inside), 0)} % of this query lies outside the fields’ "
            "directions; a slider edit drops that part."
        )
    return FieldsLabData(bars, mixture, scatter, mix, info, note)


@cache
def reference_result() -> dict[str, object]:
    """The engine's three-fields experiment (seed 4, gain 3), shown when the lab is off."""
    return three_fields()


@dataclass(frozen=True)
class OffPageData:
    """Why the lab does not run, and the preset's reference numbers (one row per query:
    label, per-field weights (3,), entropy in bits)."""

    reason: str
    rows: tuple[tuple[str, tuple[float, ...], float], ...]


def off_page_data(reason: str) -> OffPageData:
    ref = reference_result()
    rows = tuple(
        (str(r["query"]), tuple(float(r["per_field"][f]) for f in FIELD_NAMES), float(r["entropy"]))
        for r in ref["results"]  # type: ignore[union-attr]
    )
    return OffPageData(reason, rows)
