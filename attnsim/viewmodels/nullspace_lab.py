"""What the query-map null-space lab shows, computed without Qt.

A linear query map ``q = M x`` (M of shape (m, n), column-vector notation; the row-vector
code's ``Wq`` is ``M.T``), its row and null spaces, an input moved along them, and the attention
that the resulting query pays to fixed keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import direct_trace
from attnsim.engine.geometry import canonical_sign, null_space, row_space
from attnsim.engine.numbers import fmt_fixed, fmt_vector

Array = NDArray[np.float64]

__all__ = [
    "DEFAULT_E",
    "DEFAULT_KEYS",
    "DEFAULT_M",
    "DEFAULT_T",
    "ENTRY_LIMIT",
    "KEY_NAMES",
    "SLIDER_RANGE",
    "InputScene",
    "NullSpaceLabState",
    "NullSpaceLabView",
    "ParamRow",
    "QueryPlane",
    "QueryProbe",
    "QuerySpaces",
    "SubspaceScene",
    "closest_param_on_line",
    "input_scene",
    "lab_view",
    "matrix_entry",
    "query_map_spaces",
    "query_probe",
    "readable_direction",
    "subspace_scene",
    "view_extent",
]

# The 3-D -> 2-D example of the reference text: M reads x1 + x3 and x2 + x3.
DEFAULT_M = ((1.0, 0.0, 1.0), (0.0, 1.0, 1.0))
DEFAULT_E = (1.0, 2.0, 3.0)
DEFAULT_KEYS = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0))
KEY_NAMES = ("k1", "k2", "k3")
DEFAULT_T = 1.0  # start at e + n, the reference's second input: same query (4, 5)
SLIDER_RANGE = 3.0  # t and s run over [-3, 3]
ENTRY_LIMIT = 100.0  # |M entries| and |e| components above this are refused


@dataclass(frozen=True)
class NullSpaceLabState:
    """The lab's sandbox (not the workbench's scenario): the query map M (2x3), the input e,
    and how far x = e + t n + s r has moved along the null space (t) and the row space (s)."""

    M: tuple[tuple[float, ...], ...] = DEFAULT_M
    e: tuple[float, ...] = DEFAULT_E
    t: float = DEFAULT_T
    s: float = 0.0


@dataclass(frozen=True, eq=False)
class QuerySpaces:
    """Row and null space of a query map M (m, n): orthonormal bases as columns, and one
    readable direction of each (None when that space is only the origin)."""

    rank: int
    row_basis: Array  # (n, rank)
    null_basis: Array  # (n, n - rank)
    row_dir: Array | None  # (n,)
    null_dir: Array | None  # (n,)


@dataclass(frozen=True, eq=False)
class QueryProbe:
    """An input x, the query M x it makes, and that query's attention over fixed keys."""

    x: Array  # (n,)
    query: Array  # (m,)
    base_query: Array  # (m,), M e
    x_row: Array  # (n,), the part of x the query sees
    x_null: Array  # (n,), the part it cannot see
    scores: Array  # (k,)
    logits: Array  # (k,)
    weights: Array  # (k,)
    spaces: QuerySpaces


@dataclass(frozen=True, eq=False)
class SubspaceScene:
    """World points (rows of 3) to draw for a map from R^3; see :func:`subspace_scene`."""

    row_patch: Array
    null_line: Array
    level_line: Array
    x_row: Array  # (3,)


def readable_direction(v: ArrayLike) -> Array:
    """``v`` (n,) rescaled so its largest absolute entry is +1 (the first such entry, if tied).

    An orthonormal basis vector like (1, 1, -1)/sqrt(3) reads as (1, 1, -1).
    """
    a = canonical_sign(np.asarray(v, dtype=float))
    peak = float(np.max(np.abs(a))) if a.size else 0.0
    if peak == 0:
        raise ValueError("the zero vector has no direction")
    return a / peak


def _check_map(M: ArrayLike) -> Array:
    A = np.asarray(M, dtype=float)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"M must be a non-empty 2-D matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("M contains a non-finite value")
    return A


def query_map_spaces(M: ArrayLike) -> QuerySpaces:
    """Row space and null space of the query map ``q = M x``, M of shape (m, n).

    Returns a :class:`QuerySpaces`: ``rank``, ``row_basis`` (n, rank) and ``null_basis``
    (n, n - rank) with orthonormal columns, and ``null_dir`` / ``row_dir`` (n,): the first
    basis vector of each, rescaled by :func:`readable_direction`, or None when that space is
    only the origin. Moving the input along ``null_dir`` leaves the query unchanged; along
    ``row_dir`` it changes it by ``M @ row_dir`` per unit.
    """
    A = _check_map(M)
    R, N = row_space(A), null_space(A)
    return QuerySpaces(
        rank=int(R.shape[1]),
        row_basis=R,
        null_basis=N,
        row_dir=readable_direction(R[:, 0]) if R.shape[1] else None,
        null_dir=readable_direction(N[:, 0]) if N.shape[1] else None,
    )


def query_probe(
    M: ArrayLike,
    e: ArrayLike,
    t: float = 0.0,
    s: float = 0.0,
    keys: ArrayLike = DEFAULT_KEYS,
    *,
    scale: bool = True,
) -> QueryProbe:
    """The input ``x = e + t * null_dir + s * row_dir`` and what the query map makes of it.

    ``M`` (m, n), ``e`` (n,), ``keys`` (k, m). Returns ``x`` (n,), ``query = M x`` (m,),
    ``base_query = M e`` (m,), ``x_row`` / ``x_null`` (n,), the parts of x in the row space
    (what the query sees) and in the null space (what it cannot see), and the attention of the
    query over the keys through :func:`attnsim.engine.attention.direct_trace` (values = keys):
    ``scores`` (k,) raw q . k, ``logits`` (k,) and ``weights`` (k,), plus ``spaces`` from
    :func:`query_map_spaces`.
    """
    A = _check_map(M)
    ev = np.asarray(e, dtype=float)
    K = np.asarray(keys, dtype=float)
    if ev.shape != (A.shape[1],) or not np.isfinite(ev).all():
        raise ValueError(f"e must be {A.shape[1]} finite numbers, got shape {ev.shape}")
    if K.ndim != 2 or K.shape[1] != A.shape[0]:
        raise ValueError(f"keys must have {A.shape[0]} columns, got shape {K.shape}")
    if not (math.isfinite(t) and math.isfinite(s)):
        raise ValueError("t and s must be finite")
    spaces = query_map_spaces(A)
    x = ev.copy()
    if spaces.null_dir is not None:
        x = x + t * spaces.null_dir
    if spaces.row_dir is not None:
        x = x + s * spaces.row_dir
    R = spaces.row_basis
    x_row = R @ (R.T @ x)
    q = A @ x
    tr = direct_trace(q[None, :], K, K, scale=scale)
    return QueryProbe(
        x=x,
        query=q,
        base_query=A @ ev,
        x_row=x_row,
        x_null=x - x_row,
        scores=tr.scores_row(0),
        logits=tr.logits[0],
        weights=tr.weights[0],
        spaces=spaces,
    )


def subspace_scene(M: ArrayLike, e: ArrayLike, x: ArrayLike, extent: float) -> SubspaceScene:
    """3-D geometry to draw for a map from R^3: every entry an array of world points.

    ``M`` (m, 3), ``e`` and ``x`` (3,), ``extent`` the half-size of the drawn patches and lines.
    Returns ``row_patch`` (4, 3) corners of the row-space plane (rank 2) or (2, 3) ends of the
    row-space line (rank 1) or (0, 3); ``null_line`` (2, 3) ends of the null-space line through
    the origin (null space of dimension 1), a (4, 3) patch (dimension 2) or (0, 3);
    ``level_line``: the inputs with the same query as ``e`` (e + the null space): (2, 3) ends of
    a line, (4, 3) corners of a plane patch, or (0, 3); ``x_row`` (3,), the foot of x in the
    row space.
    """
    A = _check_map(M)
    if A.shape[1] != 3:
        raise ValueError(f"the 3-D view needs a map from R^3, got M of shape {A.shape}")
    R, N = row_space(A), null_space(A)
    ev, xv = np.asarray(e, dtype=float), np.asarray(x, dtype=float)

    def patch(B: Array, centre: Array) -> Array:
        if B.shape[1] >= 3:
            return np.zeros((0, 3))
        if B.shape[1] == 2:
            u, v = B[:, 0] * extent, B[:, 1] * extent
            return np.array([centre + u + v, centre - u + v, centre - u - v, centre + u - v])
        if B.shape[1] == 1:
            u = B[:, 0] * extent
            return np.array([centre - u, centre + u])
        return np.zeros((0, 3))

    origin = np.zeros(3)
    level = patch(N, ev)
    return SubspaceScene(
        row_patch=patch(R, origin),
        null_line=patch(N, origin),
        level_line=level,
        x_row=R @ (R.T @ xv),
    )


def closest_param_on_line(
    point: ArrayLike, direction: ArrayLike, ray_a: ArrayLike, ray_b: ArrayLike
) -> float:
    """Parameter t of the point ``point + t * direction`` nearest to the ray through a and b.

    All arguments have shape (3,). Used to drag a point along a 3-D line with the mouse: the
    ray is the set of world points under the cursor. A line parallel to the ray gives t = 0.
    """
    p, d = np.asarray(point, float), np.asarray(direction, float)
    a = np.asarray(ray_a, float)
    r = np.asarray(ray_b, float) - a
    # Minimise |p + t d - (a + u r)|^2 over t and u (two linear equations).
    dd, rr, dr = float(d @ d), float(r @ r), float(d @ r)
    w = p - a
    den = dd * rr - dr * dr
    if dd == 0 or rr == 0 or abs(den) <= 1e-12 * dd * rr:
        return 0.0
    return (dr * float(r @ w) - rr * float(d @ w)) / den


# ---- what the lab's widgets show ---------------------------------------------------------------
def view_extent(e: ArrayLike, x: ArrayLike) -> float:
    """Half-size of the drawn scene (3,) inputs e and x: both fit, with a margin."""
    return max(
        3.0, 1.5 * float(np.linalg.norm(np.asarray(e))), 1.15 * float(np.linalg.norm(np.asarray(x)))
    )


def matrix_entry(name: str, text: str) -> float:
    """The number typed for the entry ``name`` of M; ValueError naming it when the text is not
    a finite number within +-ENTRY_LIMIT. A typographic minus counts as a minus."""
    try:
        value = float(text.strip().replace("−", "-"))
    except ValueError:
        raise ValueError(f"{name}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: {value} is not a finite number")
    if abs(value) > ENTRY_LIMIT:
        raise ValueError(f"{name}: {value:g} is outside [−100, 100]")
    return value


@dataclass(frozen=True)
class ParamRow:
    """One slider row: t (along the null space) or s (along the row space)."""

    kind: str  # "t" or "s"
    value: float
    name: str  # what the row moves along, with its direction
    value_text: str
    enabled: bool  # False when that space is only the origin


@dataclass(frozen=True, eq=False)
class InputScene:
    """What the 3-D input-space view draws (world units)."""

    extent: float
    scene: SubspaceScene
    e: Array
    x: Array
    null_dir: Array | None
    row_dir: Array | None
    t: float
    s: float


@dataclass(frozen=True, eq=False)
class QueryPlane:
    """What the 2-D query-space view draws: fixed keys (k, 2), the query M x, the query M e,
    and the half-size that frames every query the s slider can reach."""

    keys: Array
    query: Array
    base_query: Array
    extent: float


@dataclass(frozen=True, eq=False)
class NullSpaceLabView:
    """Everything the lab shows for one lab state."""

    M: Array  # (2, 3)
    e: Array  # (3,)
    probe: QueryProbe
    params: tuple[ParamRow, ParamRow]
    query_plane: QueryPlane
    x_text: str
    query_text: str
    compare_text: str
    key_cells: tuple[tuple[str, str, str], ...]  # per key: name and vector, q · k, weight
    key_tips: tuple[str, ...]


def _vec(v: ArrayLike, digits: int = 2) -> str:
    return fmt_vector(np.asarray(v, dtype=float), digits, item=fmt_fixed)


def _param_row(kind: str, value: float, direction: Array | None) -> ParamRow:
    where = "null space n" if kind == "t" else "row space r"
    if direction is None:
        name = f"{kind}: the {where.split()[0]} space is only 0"
    else:
        # Round away -0.00 and 1e-17 noise in the label only.
        shown = np.round(np.asarray(direction), 12) + 0.0
        name = f"{kind} along {where} = {_vec(shown, 2)}"
    return ParamRow(kind, value, name, f"{kind} = {fmt_fixed(value, 2)}", direction is not None)


def lab_view(state: NullSpaceLabState) -> NullSpaceLabView:
    """The probe of ``state`` and the texts and framing the lab shows for it."""
    M, e = np.array(state.M, dtype=float), np.array(state.e, dtype=float)
    t, s = float(state.t), float(state.s)
    probe = query_probe(M, e, t, s, DEFAULT_KEYS)
    spaces = probe.spaces
    q, q0 = probe.query, probe.base_query
    # Frame every query the s slider can reach (t cannot move it), so nothing rescales.
    step = M @ spaces.row_dir if spaces.row_dir is not None else np.zeros(2)
    reach = max(
        float(np.abs(q0 + SLIDER_RANGE * step).max()),
        float(np.abs(q0 - SLIDER_RANGE * step).max()),
        float(np.abs(q).max()),
        1.0,
    )
    plane = QueryPlane(np.array(DEFAULT_KEYS, dtype=float), q, q0, 1.1 * reach)
    dq = float(np.max(np.abs(q - q0)))
    compare = (
        f"M e = {_vec(q0, 3)} · max |q − M e| = {dq:.3g}"
        + (" (same query)" if dq <= 1e-12 else "")
        + f" · rank {spaces.rank}"
    )
    scores, weights = probe.scores, probe.weights
    cells = tuple(
        (f"{name} {_vec(DEFAULT_KEYS[j], 0)}", fmt_fixed(scores[j], 3), fmt_fixed(weights[j], 4))
        for j, name in enumerate(KEY_NAMES)
    )
    tips = tuple(
        f"q · {name} = {scores[j]!r}, weight = {weights[j]!r}" for j, name in enumerate(KEY_NAMES)
    )
    return NullSpaceLabView(
        M=M,
        e=e,
        probe=probe,
        params=(_param_row("t", t, spaces.null_dir), _param_row("s", s, spaces.row_dir)),
        query_plane=plane,
        x_text=_vec(probe.x, 2),
        query_text=_vec(q, 3),
        compare_text=compare,
        key_cells=cells,
        key_tips=tips,
    )


def input_scene(view: NullSpaceLabView, extent: float) -> InputScene:
    """What the 3-D view draws for ``view``, framed to ``extent`` (half-size, world units)."""
    probe = view.probe
    x = np.asarray(probe.x)
    return InputScene(
        extent=extent,
        scene=subspace_scene(view.M, view.e, x, extent * 0.85),
        e=view.e,
        x=x,
        null_dir=probe.spaces.null_dir,
        row_dir=probe.spaces.row_dir,
        t=float(view.params[0].value),
        s=float(view.params[1].value),
    )
