"""Scene geometry for the 3-D query/key view: pure NumPy, so tests check arrays, not pixels.

The view shows vectors of the matching space (width ``d_k``) through a *frame*:

1. an optional AttentionViz-style layout (keys translated by ``t``, queries scaled by ``c``
   and keys by ``1 / c``), which changes distances but no attention weight;
2. a 3-D basis of the matching space, ``B`` (d_k, 3) with orthonormal (or zero) columns: three
   chosen coordinate axes, the first coordinates padded with zeros when ``d_k < 3``, or the best
   3-D subspace of Q and K together;
3. optionally, queries rescaled to a fixed length (their direction only);
4. a uniform world scale so the scene fits the camera.

Each step has an inverse used by drags (:func:`move_within`, :func:`undo_layout`), so a tip
dragged on screen edits exactly the full vector whose drawing the user moved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.arrows import arrow_heads
from attnsim.engine.geometry import Camera, attentionviz_layout, best_subspace
from attnsim.engine.ticks import nice_ceil

Array = NDArray[np.floating]

__all__ = [
    "ARROW_LIMIT",
    "KINDS",
    "WORLD_RADIUS",
    "Frame",
    "Scene",
    "SceneInput",
    "ViewOptions",
    "apply_layout",
    "arrow_geometry",
    "as_direction",
    "axes_basis",
    "axis_segments",
    "build_scene",
    "drag_world_point",
    "grid_segments",
    "key_label",
    "layout_params",
    "make_frame",
    "move_within",
    "nice_step",
    "paint_order",
    "place_labels",
    "subspace_basis",
    "top_by_weight",
    "undo_layout",
]

# Item kinds, in the order their labels get room on screen when labels collide.
KINDS = ("query", "key", "absent", "value", "other_query")
# Largest extent of the scene in world units (the camera sees about +-1.9 at the origin).
WORLD_RADIUS = 1.55
# More keys (or other queries) than this: the most attended ones stay arrows, the rest are points.
ARROW_LIMIT = 64
ARROWS_KEPT = 16


# ---- the frame: layout, basis, scale -----------------------------------------------------------
def axes_basis(d_k: int, axes: Sequence[int] = (0, 1, 2)) -> Array:
    """Basis (d_k, 3) that shows three coordinate axes; for ``d_k <= 3`` the first ``d_k``.

    Columns beyond ``d_k`` are zero, i.e. the missing coordinates are drawn as zeros.
    """
    if d_k < 1:
        raise ValueError(f"d_k must be at least 1, got {d_k}")
    if d_k <= 3:
        return np.eye(d_k, 3)
    a = [int(i) for i in axes]
    if len(a) != 3 or len(set(a)) != 3:
        raise ValueError(f"choose three different axes, got {list(axes)}")
    if not all(0 <= i < d_k for i in a):
        raise ValueError(f"axes must lie in [0, {d_k}), got {a}")
    B = np.zeros((d_k, 3))
    B[a, [0, 1, 2]] = 1.0
    return B


def subspace_basis(points: ArrayLike) -> tuple[Array, Array]:
    """Best 3-D subspace through the origin of ``points`` (m, d_k), d_k >= 3.

    Returns ``(basis (d_k, 3), explained (3,))`` with the fraction of the total squared length
    captured by each direction.
    """
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[1] < 3:
        raise ValueError(f"points must be (m, d_k) with d_k >= 3, got shape {P.shape}")
    if P.shape[0] > P.shape[1] and np.all(np.isfinite(P)):
        # P = Q R with Q orthonormal: R (d_k, d_k) has P's singular values and right singular
        # vectors, so its best subspace is P's. best_subspace takes a full SVD of its input
        # (an m x m factor: about 0.3 s for the 4,096 rows of Q and K at n = 2048); R costs
        # microseconds.
        P = np.linalg.qr(P, mode="r")
    return best_subspace(P, 3)


def layout_params(Q: ArrayLike, K: ArrayLike, *, translate: bool = True) -> tuple[Array, float]:
    """Translation ``t`` (d_k,) of the keys and factor ``c`` of the AttentionViz layout.

    With ``translate=False`` only the scaling is used (``t = 0``): needed when masked logits are
    set to 0 instead of -inf, because then a per-row constant does change the weights.
    """
    Qa, Ka = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if translate:
        _, _, t, c = attentionviz_layout(Qa, Ka)
        return t, c
    mq = float(np.linalg.norm(Qa, axis=1).mean()) if Qa.size else 0.0
    mk = float(np.linalg.norm(Ka, axis=1).mean()) if Ka.size else 0.0
    c = math.sqrt(mk / mq) if mq > 0 and mk > 0 else 1.0
    return np.zeros(Qa.shape[1]), c


def apply_layout(Q: ArrayLike, K: ArrayLike, t: ArrayLike, c: float) -> tuple[Array, Array]:
    """``(Q c, (K + t) / c)``: every score of query i changes by the constant ``q_i · t``."""
    Qa, Ka = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return Qa * c, (Ka + np.asarray(t, dtype=float)) / c


def undo_layout(u: ArrayLike, kind: str, t: ArrayLike, c: float) -> Array:
    """The engine's vector (d_k,) whose layout image is ``u``: ``u / c`` or ``u c - t``."""
    ua = np.asarray(u, dtype=float)
    if kind == "query":
        return ua / c
    if kind == "key":
        return ua * c - np.asarray(t, dtype=float)
    raise ValueError(f"only queries and keys have a layout, not {kind!r}")


def as_direction(P: ArrayLike, length: float) -> Array:
    """Rows of ``P`` (m, 3) rescaled to ``length``; zero rows stay zero."""
    A = np.asarray(P, dtype=float).reshape(-1, 3)
    n = np.linalg.norm(A, axis=1, keepdims=True)
    out = np.zeros_like(A)
    nz = n[:, 0] > 0
    out[nz] = A[nz] / n[nz] * length
    return out


def move_within(u: ArrayLike, basis: ArrayLike, p: ArrayLike) -> Array:
    """Move ``u`` (d_k,) so its shown part becomes ``p`` (3,), keeping every hidden part.

    ``u + B (p - B^T u)``: only the components (or the subspace) the view shows change.
    """
    ua, B, pa = np.asarray(u, float), np.asarray(basis, float), np.asarray(p, float)
    return ua + B @ (pa - B.T @ ua)


def nice_step(span: float, target_lines: int = 4) -> float:
    """A 1-2-5 grid step so that about ``target_lines`` steps cover ``span``."""
    if not (span > 0 and math.isfinite(span)):
        return 1.0
    return nice_ceil(span / target_lines)


@dataclass(frozen=True, eq=False)
class ViewOptions:
    """What the user chose to see (view state, not part of the scenario)."""

    subspace: bool = False  # best 3-D subspace instead of three chosen axes (d_k > 3 only)
    axes: tuple[int, int, int] = (0, 1, 2)
    direction: bool = True  # queries drawn at a fixed length (direction only)
    layout: bool = False  # AttentionViz layout
    values: bool = False
    other_queries: bool = False


@dataclass(frozen=True, eq=False)
class Frame:
    """How matching-space vectors become drawn positions (see the module docstring).

    ``basis`` (d_k, 3); ``explained`` (3,) or None; ``shift`` (d_k,) = t; ``factor`` = c;
    ``scale`` world units per data unit; ``direction_length`` in data units (0: no rescaling);
    ``extent`` the half-length of the drawn axes in data units.
    """

    basis: Array
    axis_names: tuple[str, str, str]
    explained: Array | None
    shift: Array
    factor: float
    scale: float
    direction_length: float
    extent: float
    translated: bool = True

    def shown(self, U: ArrayLike) -> Array:
        """Layout-space vectors (m, d_k) -> their shown coordinates (m, 3)."""
        return np.asarray(U, dtype=float).reshape(-1, self.basis.shape[0]) @ self.basis


@dataclass(frozen=True, eq=False)
class SceneInput:
    """The numbers a scene is drawn from (all from the engine's trace of the focused head).

    ``Q`` (n_q, d_k), ``K`` (n_k, d_k), ``V`` (n_k, d_v), ``weights`` / ``scores`` / ``mask``
    (n_q, n_k), ``absent_K`` (a, d_k) keys of tokens absent from the sentence.
    """

    Q: Array
    K: Array
    V: Array
    weights: Array
    scores: Array
    mask: NDArray[np.bool_]
    receiving: int
    query_labels: tuple[str, ...]
    key_labels: tuple[str, ...]
    qk_axes: tuple[str, ...]
    v_axes: tuple[str, ...] = ()
    absent_K: Array = field(default_factory=lambda: np.zeros((0, 0)))
    absent_labels: tuple[str, ...] = ()
    mask_value: float = -math.inf
    points: Array | None = None  # extra points (p, d_k) drawn as a cloud

    @property
    def d_k(self) -> int:
        return int(self.K.shape[1])


def _layout_allowed_translation(inp: SceneInput) -> bool:
    # A per-row constant is ignored by softmax only when masked logits are -inf (or nothing is
    # masked); with masked logits set to 0 the translation would change the weights.
    return inp.mask_value == -math.inf or bool(np.all(inp.mask))


def make_frame(inp: SceneInput, opts: ViewOptions) -> Frame:
    """Choose the layout, basis, direction length and world scale for ``inp``."""
    d_k = inp.d_k
    Q, K = inp.Q, inp.K
    translated = _layout_allowed_translation(inp)
    if opts.layout:
        t, c = layout_params(Q, K, translate=translated)
    else:
        t, c = np.zeros(d_k), 1.0
    Qd, Kd = apply_layout(Q, K, t, c)
    explained = None
    if d_k <= 3:
        basis = axes_basis(d_k)
        names = tuple(inp.qk_axes[:3]) + ("",) * (3 - d_k)
    elif opts.subspace:
        basis, explained = subspace_basis(np.vstack([Qd, Kd]))
        names = tuple(f"PC{i + 1} {100 * explained[i]:.0f}%" for i in range(3))
    else:
        basis = axes_basis(d_k, opts.axes)
        names = tuple(inp.qk_axes[i] for i in opts.axes)
    Ks = Kd @ basis
    parts: list[Array] = [Ks, Qd @ basis]
    if inp.absent_K.size:
        parts.append(inp.absent_K @ basis)
    if inp.points is not None and inp.points.size:
        parts.append(np.asarray(inp.points, float) @ basis)
    key_norm = float(np.linalg.norm(Ks, axis=1).max()) if Ks.size else 0.0
    direction_length = 0.0
    if opts.direction and not opts.layout:
        # A little longer than the longest key, so a query along a key stays visible.
        direction_length = 1.1 * key_norm if key_norm > 0 else 1.0
        parts[1] = as_direction(parts[1], direction_length)
    if opts.values:
        parts.append(_value_positions(inp, basis))
    norms = np.concatenate([np.linalg.norm(p, axis=1) for p in parts if p.size])
    extent = float(norms.max()) if norms.size else 0.0
    if not extent > 0:
        extent = 1.0
    extent *= 1.1
    return Frame(
        basis=basis,
        axis_names=names,  # type: ignore[arg-type]
        explained=explained,
        shift=np.asarray(t, float),
        factor=float(c),
        scale=WORLD_RADIUS / extent,
        direction_length=direction_length,
        extent=extent,
        translated=translated,
    )


def _value_positions(inp: SceneInput, basis: Array) -> Array:
    d_v = inp.V.shape[1]
    if d_v == inp.d_k:
        return inp.V @ basis
    return inp.V @ np.eye(d_v, 3)


# ---- the scene: every drawn item as arrays ------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Scene:
    """Everything the 3-D view draws, as arrays over m items.

    ``kind`` (m,) from :data:`KINDS`; ``row`` (m,) the row in Q, K, V or the absent list;
    ``label`` (m,) the on-screen text ("" for an item drawn as a cloud point, which has no
    label); ``pos`` (m, 3) drawn position in data units and ``world`` (m, 3) =
    ``pos * frame.scale``; ``weight`` / ``score`` (m,) the engine's weight from the receiving
    query and raw score q·k (NaN where none); ``faded`` / ``masked`` / ``arrow`` (m,) bools (an
    item that is not an arrow is a point of the cloud); ``leaks`` (m,) forbidden keys that still
    get weight (masked logits set to 0 instead of -inf); ``width`` (m,) pen width in pixels.
    ``Q_shown`` (n_q, d_k) and ``K_shown`` (n_k, d_k) are the full vectors after the layout;
    ``points`` (p, 3) the extra cloud in data units. Item 0 is the receiving query.
    """

    frame: Frame
    kind: tuple[str, ...]
    row: NDArray[np.int_]
    label: tuple[str, ...]
    pos: Array
    weight: Array
    score: Array
    faded: NDArray[np.bool_]
    masked: NDArray[np.bool_]
    leaks: NDArray[np.bool_]
    arrow: NDArray[np.bool_]
    width: Array
    Q_shown: Array
    K_shown: Array
    points: Array
    notes: tuple[str, ...] = ()

    @property
    def world(self) -> Array:
        return self.pos * self.frame.scale

    @cached_property
    def kinds(self) -> NDArray[np.str_]:
        """``kind`` as an array (m,), for vectorised selections."""
        return np.asarray(self.kind, dtype=str)

    def index(self, kind: str, row: int) -> int | None:
        """Item index of the given kind and row, or None."""
        hit = np.flatnonzero((self.kinds == kind) & (self.row == row))
        return int(hit[0]) if hit.size else None


def top_by_weight(weights: ArrayLike, count: int) -> NDArray[np.bool_]:
    """Mask (n,) of the ``count`` largest weights (all of them when n <= count).

    One ``argpartition``, linear in n: the arrows of a long sequence are chosen without sorting
    it. Ties at the boundary are broken by position, earlier keys first.
    """
    w = np.nan_to_num(np.asarray(weights, dtype=float), nan=-np.inf)
    keep = np.zeros(w.shape[0], dtype=bool)
    if w.shape[0] <= count:
        keep[:] = True
        return keep
    if count <= 0:
        return keep
    cut = w[np.argpartition(-w, count - 1)[count - 1]]  # the count-th largest weight
    above = np.flatnonzero(w > cut)
    keep[above] = True
    ties = np.flatnonzero(w == cut)
    keep[ties[: count - above.size]] = True
    return keep


def key_label(name: str, weight: float, legal: bool) -> str:
    """A key's on-screen label: its name and the engine's weight, and why it is forbidden.

    A forbidden key that still gets weight (masked logits set to 0, not -inf) says it leaks,
    so the mistake is visible in the picture.
    """
    text = f"{name} {weight:.2f}"
    if legal:
        return text
    return text + (" (forbidden, leaks)" if weight > 0 else " (masked)")


class _Items:
    """Blocks of scene items of one kind each, concatenated once at the end."""

    def __init__(self) -> None:
        self.kind: list[str] = []
        self.blocks: list[dict[str, np.ndarray]] = []
        self.labels: list[str] = []

    def add(
        self,
        kind: str,
        rows: NDArray[np.int_],
        pos: Array,
        labels: list[str],
        *,
        weight: Array | None = None,
        score: Array | None = None,
        faded: bool = False,
        masked: NDArray[np.bool_] | None = None,
        leaks: NDArray[np.bool_] | None = None,
        arrow: NDArray[np.bool_] | bool = True,
        width: Array | float = 1.2,
    ) -> None:
        m = int(rows.size)
        nan = np.full(m, np.nan)
        no = np.zeros(m, dtype=bool)
        self.kind.extend([kind] * m)
        self.labels.extend(labels)
        self.blocks.append(
            {
                "row": rows,
                "pos": np.asarray(pos, float).reshape(m, 3),
                "weight": nan if weight is None else np.asarray(weight, float),
                "score": nan if score is None else np.asarray(score, float),
                "faded": np.full(m, faded),
                "masked": no if masked is None else masked,
                "leaks": no if leaks is None else leaks,
                "arrow": np.broadcast_to(np.asarray(arrow, bool), (m,)),
                "width": np.broadcast_to(np.asarray(width, float), (m,)),
            }
        )

    def column(self, name: str) -> np.ndarray:
        return np.concatenate([b[name] for b in self.blocks])


def _labels_where(arrow: NDArray[np.bool_], make) -> list[str]:
    # Labels only for arrows: at n = 2048 most items are cloud points, which carry none.
    out = [""] * arrow.size
    for j in np.flatnonzero(arrow).tolist():
        out[j] = make(j)
    return out


def build_scene(inp: SceneInput, opts: ViewOptions, frame: Frame | None = None) -> Scene:
    """Items to draw for ``inp`` under ``opts`` (``frame`` fixed during a drag, else chosen).

    Vectorised over keys: only the labels of the items drawn as arrows are formatted.
    """
    fr = frame if frame is not None else make_frame(inp, opts)
    Qd, Kd = apply_layout(inp.Q, inp.K, fr.shift, fr.factor)
    i = inp.receiving
    n_q, n_k = Qd.shape[0], Kd.shape[0]
    w_row = np.asarray(inp.weights[i], dtype=float)
    s_row = np.asarray(inp.scores[i], dtype=float)
    legal = np.asarray(inp.mask[i], dtype=bool)
    # Forbidden keys get exactly 0 under a -inf mask; under a 0 mask they still get weight.
    leaks = ~legal & (w_row > 0)

    Qs = fr.shown(Qd)
    if fr.direction_length > 0:
        Qs = as_direction(Qs, fr.direction_length)
    Ks = fr.shown(Kd)

    items = _Items()
    items.add("query", np.array([i]), Qs[i], [f"{inp.query_labels[i]} (query)"], width=3.5)

    keys_drawn = (
        top_by_weight(w_row, ARROWS_KEPT) if n_k > ARROW_LIMIT else np.ones(n_k, dtype=bool)
    )
    names = inp.key_labels
    w_list = w_row.tolist()
    legal_list = legal.tolist()
    items.add(
        "key",
        np.arange(n_k),
        Ks,
        _labels_where(keys_drawn, lambda j: key_label(names[j], w_list[j], legal_list[j])),
        weight=w_row,
        score=s_row,
        masked=~legal,
        leaks=leaks,
        arrow=keys_drawn,
        # A key's pen grows with the weight it gets, forbidden or not (a leak shows).
        width=np.where(legal | leaks, 1.2 + 4.0 * w_row, 1.0),
    )

    if inp.absent_K.size:
        a = inp.absent_K.shape[0]
        items.add(
            "absent",
            np.arange(a),
            fr.shown(inp.absent_K),
            [f"{name} (absent)" for name in inp.absent_labels],
            score=inp.absent_K @ inp.Q[i],
            faded=True,
        )

    if opts.values:
        items.add(
            "value",
            np.arange(n_k),
            _value_positions(inp, fr.basis),
            _labels_where(keys_drawn, lambda j: f"v {names[j]}"),
            arrow=keys_drawn,  # the values of the keys drawn as arrows
            width=1.5,
        )

    if opts.other_queries and n_q > 1:
        others = np.delete(np.arange(n_q), i)
        drawn = np.full(others.size, others.size <= ARROW_LIMIT)
        qnames = inp.query_labels
        items.add(
            "other_query",
            others,
            Qs[others],
            _labels_where(drawn, lambda r: qnames[int(others[r])]),
            faded=True,
            arrow=drawn,
        )

    notes = _notes(inp, opts, fr, w_row, legal)
    pts = (
        fr.shown(np.asarray(inp.points, float))
        if inp.points is not None and inp.points.size
        else np.zeros((0, 3))
    )
    return Scene(
        frame=fr,
        kind=tuple(items.kind),
        row=items.column("row").astype(int),
        label=tuple(items.labels),
        pos=items.column("pos"),
        weight=items.column("weight"),
        score=items.column("score"),
        faded=items.column("faded"),
        masked=items.column("masked"),
        leaks=items.column("leaks"),
        arrow=np.array(items.column("arrow"), dtype=bool),
        width=np.array(items.column("width"), dtype=float),
        Q_shown=Qd,
        K_shown=Kd,
        points=pts,
        notes=tuple(notes),
    )


def _notes(
    inp: SceneInput, opts: ViewOptions, fr: Frame, w_row: Array, legal: NDArray[np.bool_]
) -> list[str]:
    """The caveats printed under the view."""
    notes = []
    d_k = inp.d_k
    if not legal.all() and math.isfinite(inp.mask_value):
        leaked = float(w_row[~legal].sum())
        notes.append(
            f"masked with {inp.mask_value:g}, not −∞: forbidden keys still get "
            f"{leaked:.3f} of {inp.query_labels[inp.receiving]}'s weight"
        )
    if d_k > 3:
        if fr.explained is not None:
            notes.append(
                f"best 3-D subspace of Q and K: {100 * float(fr.explained.sum()):.0f}% of their "
                f"squared length; scores use all {d_k} coordinates"
            )
        else:
            notes.append(f"3 of {d_k} coordinates shown; scores use all {d_k}")
    elif d_k < 3:
        notes.append(f"d_k = {d_k}: the missing coordinates are drawn as 0")
    if fr.direction_length > 0:
        notes.append("query arrows rescaled to show direction; scores use the full query")
    if opts.layout:
        if fr.translated:
            notes.append(
                f"AttentionViz layout: keys shifted, queries ×{fr.factor:.2f}, keys "
                f"÷{fr.factor:.2f}; weights unchanged"
            )
        else:
            notes.append(
                f"AttentionViz layout without the shift (masked logits are 0, a shift would "
                f"change weights): queries ×{fr.factor:.2f}, keys ÷{fr.factor:.2f}"
            )
    if opts.values and inp.V.shape[1] != d_k:
        notes.append("values live in their own space: drawn on their first 3 coordinates")
    return notes


# ---- screen geometry ---------------------------------------------------------------------------
def axis_segments(extent: float) -> Array:
    """The three axes from ``-extent`` to ``+extent`` in data units: (3, 2, 3)."""
    seg = np.zeros((3, 2, 3))
    for a in range(3):
        seg[a, 0, a] = -extent
        seg[a, 1, a] = extent
    return seg


def grid_segments(extent: float, step: float | None = None) -> Array:
    """A light grid in the plane of the first two axes (third = 0): (g, 2, 3) data units."""
    st = step if step is not None else nice_step(extent, 3)
    n = math.floor(extent / st + 1e-9)
    ticks = np.arange(-n, n + 1) * st
    segs = []
    for v in ticks:
        segs.append([[v, -extent, 0.0], [v, extent, 0.0]])
        segs.append([[-extent, v, 0.0], [extent, v, 0.0]])
    return np.asarray(segs, dtype=float).reshape(-1, 2, 3)


def arrow_geometry(
    origin_xy: ArrayLike, tip_xy: ArrayLike, head_len: ArrayLike, head_width: ArrayLike
) -> tuple[Array, Array]:
    """Screen-space arrows from one origin (2,) to tips (m, 2).

    The head is at most 40% of the drawn length, so short arrows keep a visible shaft.
    Returns ``(shaft_end (m, 2), heads (m, 3, 2))``; a head's vertices are the tip and the two
    back corners. Zero-length arrows get a degenerate head at the tip.
    """
    return arrow_heads(origin_xy, tip_xy, head_len, head_width)


def paint_order(depth: ArrayLike, on_top: int | None = None) -> NDArray[np.int_]:
    """Indices far-to-near (painter's order: nearer items are painted last).

    ``on_top`` (the receiving query) is painted last whatever its depth, so a key pointing the
    same way cannot hide it.
    """
    order = np.argsort(-np.asarray(depth, float), kind="stable")
    if on_top is not None:
        order = np.concatenate([order[order != on_top], [on_top]])
    return order


def place_labels(
    anchor: ArrayLike,
    away: ArrayLike,
    sizes: ArrayLike,
    priority: ArrayLike,
    *,
    gap: float = 6.0,
    always: int = 4,
    bounds: tuple[float, float, float, float] | None = None,
    obstacles: ArrayLike | None = None,
) -> tuple[Array, NDArray[np.bool_]]:
    """Greedy label placement near anchors (m, 2), pushed along unit directions ``away`` (m, 2).

    ``sizes`` (m, 2) are text boxes (w, h); ``priority`` (m,) smaller first. Each label tries a
    few spots around its anchor and takes the first that overlaps no placed label; the first
    ``always`` labels are shown even if every spot overlaps (least overlap), later ones are
    hidden. ``bounds`` (x0, y0, x1, y1) keeps boxes inside; ``obstacles`` (o, 4) are boxes
    (x0, y0, x1, y1) already taken, e.g. axis names. Returns ``(top_left (m, 2), visible (m,))``.
    """
    A = np.asarray(anchor, float).reshape(-1, 2)
    U = np.asarray(away, float).reshape(-1, 2)
    S = np.asarray(sizes, float).reshape(-1, 2)
    m = A.shape[0]
    out = np.zeros((m, 2))
    visible = np.zeros(m, dtype=bool)
    if m == 0:
        return out, visible
    obs = np.zeros((0, 4)) if obstacles is None else np.asarray(obstacles, float).reshape(-1, 4)
    # Every candidate box of every label at once: (m, c, 4). Candidates: pushed away from the
    # arrow, then nudged up and down by whole lines, then on the opposite side.
    steps = np.array([0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0])
    push = U * (gap + S / 2)
    centres = np.empty((m, steps.size + 1, 2))
    centres[:, :-1] = (A + push)[:, None, :]
    centres[:, :-1, 1] += steps[None, :] * S[:, 1:2]
    centres[:, -1] = A - push
    half = S[:, None, :] / 2
    boxes = np.concatenate([centres - half, centres + half], axis=2)
    if bounds is not None:
        x0, y0, x1, y1 = (float(b) for b in bounds)
        ok = (boxes[..., 0] >= x0) & (boxes[..., 1] >= y0)
        ok &= (boxes[..., 2] <= x1) & (boxes[..., 3] <= y1)
    else:
        ok = np.ones(boxes.shape[:2], dtype=bool)
        x0, y0 = boxes[..., 0].min(), boxes[..., 1].min()
        x1, y1 = boxes[..., 2].max(), boxes[..., 3].max()
    # Occupancy on a grid of CELL-pixel cells; boxes are rounded outwards, so boxes that do not
    # overlap on the grid do not overlap on screen.
    cell = 4.0
    nx, ny = int((x1 - x0) // cell) + 2, int((y1 - y0) // cell) + 2
    taken = np.zeros((ny, nx), dtype=np.int32)

    def span(b: NDArray) -> NDArray[np.int_]:
        c = np.empty(b.shape, dtype=np.int64)
        c[..., 0] = np.floor((b[..., 0] - x0) / cell)
        c[..., 1] = np.floor((b[..., 1] - y0) / cell)
        c[..., 2] = np.ceil((b[..., 2] - x0) / cell)
        c[..., 3] = np.ceil((b[..., 3] - y0) / cell)
        c[..., 0::2] = np.clip(c[..., 0::2], 0, nx)
        c[..., 1::2] = np.clip(c[..., 1::2], 0, ny)
        return c

    for c0, r0, c1, r1 in span(obs).tolist():
        taken[r0:r1, c0:c1] = 1
    cells = span(boxes).tolist()
    ok_l = ok.tolist()
    order = np.argsort(np.asarray(priority, float), kind="stable").tolist()
    for rank, k in enumerate(order):
        best, best_overlap = -1, math.inf
        shown_anyway = rank < always
        for c, (c0, r0, c1, r1) in enumerate(cells[k]):
            if not ok_l[k][c]:
                continue
            sub = taken[r0:r1, c0:c1]
            if not sub.any():
                best, best_overlap = c, 0.0
                break
            if not shown_anyway:  # it will be hidden unless a free spot turns up
                continue
            overlap = float(sub.sum())
            if overlap < best_overlap:
                best, best_overlap = c, overlap
        if best < 0:  # nothing fits inside the bounds: keep the first spot
            best = 0
        if best_overlap == 0 or rank < always:
            c0, r0, c1, r1 = cells[k][best]
            taken[r0:r1, c0:c1] += 1
            visible[k] = True
        out[k] = boxes[k, best, :2]
    return out, visible


def drag_world_point(
    camera: Camera,
    xy: ArrayLike,
    depth: float,
    width: float,
    height: float,
    *,
    dims: int = 3,
) -> Array:
    """World point (3,) under screen point ``xy`` for a drag.

    With ``dims = 3`` it is the point at constant camera ``depth`` (the screen-parallel plane).
    With ``dims = 2`` (the vectors live in the plane z = 0) the mouse ray meets that plane, so
    the tip follows the mouse from any view; if the plane is seen almost edge-on the
    constant-depth point is projected onto it instead.
    """
    p = camera.unproject(xy, depth, width, height)
    if dims >= 3:
        return p
    R = camera.rotation()
    eye = -camera.distance * R[2]  # camera centre in world coordinates
    ray = p - eye
    if dims == 2 and abs(ray[2]) > 0.2 * float(np.linalg.norm(ray)):
        s = -eye[2] / ray[2]
        if s > 0:
            return eye + s * ray
    out = p.copy()
    out[dims:] = 0.0
    return out
