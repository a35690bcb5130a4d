"""The scene: every item the 3-D view draws (queries, keys, absent keys, values), as arrays."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .frame import (
    Array,
    Frame,
    SceneInput,
    ViewOptions,
    apply_layout,
    as_direction,
    make_frame,
    value_positions,
)

# Item kinds, in the order their labels get room on screen when labels collide.
KINDS = ("query", "key", "absent", "value", "other_query")
# More keys (or other queries) than this: the most attended ones stay arrows, the rest are points.
ARROW_LIMIT = 64
ARROWS_KEPT = 16


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
    s_row = np.asarray(inp.score_row, dtype=float)
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
            value_positions(inp, fr.basis),
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
