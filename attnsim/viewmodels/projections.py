"""What the projections panel shows: Q = X·Wq, K = X·Wk, V = X·Wv of one head, without the
rest of the attention trace. Pure NumPy, no Qt.

The panel needs only the three products; the full trace (n × n scores, softmax, outputs) costs
hundreds of milliseconds at n = 2,048, these three cost a fraction of one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import _as_float
from attnsim.engine.scenario import Scenario

Array = NDArray[np.floating]

__all__ = [
    "MATRICES",
    "PRODUCTS",
    "ROLE",
    "GridsData",
    "MatrixBlock",
    "ProductBlock",
    "changed_cells",
    "describe_marks",
    "grids_data",
    "head_products",
    "preset_entries",
    "preset_matrix",
    "preset_names",
    "update_marks",
]

MATRICES = ("Wq", "Wk", "Wv")
PRODUCTS = {"Wq": "Q", "Wk": "K", "Wv": "V"}
ROLE = {"Wq": "queries", "Wk": "keys", "Wv": "values"}
HINT = "Double-click a cell to type a number; Preset fills a whole matrix."


def head_products(X: ArrayLike, Wq: ArrayLike, Wk: ArrayLike, Wv: ArrayLike) -> dict[str, Array]:
    """``{"Wq": Q, "Wk": K, "Wv": V}`` for X (n, d), Wq and Wk (d, d_k), Wv (d, d_v): Q and K
    are (n, d_k), V is (n, d_v). The same arithmetic as :func:`attention.head_trace`, so the
    numbers equal the trace's Q, K, V exactly. The products are read-only, and equal
    projections (an identity head) share one, so a redraw can keep them without copies."""
    Xa = _as_float(X, "X")
    out: dict[str, Array] = {}
    made: list[tuple[Array, Array]] = []
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        Wa = _as_float(W, name)
        if Xa.ndim != 2 or Wa.ndim != 2 or Wa.shape[0] != Xa.shape[1]:
            raise ValueError(f"{name} {Wa.shape} does not fit X {Xa.shape}")
        same = [P for M, P in made if M.shape == Wa.shape and np.array_equal(M, Wa)]
        if same:
            out[name] = same[0]
        else:
            out[name] = Xa @ Wa
            out[name].flags.writeable = False
        made.append((Wa, out[name]))
    return out


def preset_matrix(name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A named matrix of ``shape``: 'identity' and 'swap' (the identity with its columns in
    reverse order) need a square shape; 'zero'; 'random' is seeded, N(0, 1/d) rounded to two
    decimals so that the grid shows it exactly."""
    rows, cols = shape
    if name in ("identity", "swap"):
        if rows != cols:
            raise ValueError(f"{name} needs a square matrix, this one is {rows}×{cols}")
        eye = np.eye(rows)
        return eye if name == "identity" else eye[:, ::-1].copy()
    if name == "zero":
        return np.zeros(shape)
    if name == "random":
        rng = np.random.default_rng(seed)
        return np.round(rng.normal(0.0, 1.0 / np.sqrt(rows), size=shape), 2) + 0.0
    raise ValueError(f"unknown preset {name!r}")


def changed_cells(before: np.ndarray | None, after: np.ndarray) -> np.ndarray:
    """Boolean mask (same shape as ``after``) of cells that differ; none if shapes differ."""
    if before is None or before.shape != after.shape:
        return np.zeros(after.shape, dtype=bool)
    return before != after


def describe_marks(marks: Mapping[str, np.ndarray]) -> str:
    """The last edit in words, "Q changed; K, V unchanged", from ``marks`` keyed by
    ``MATRICES``."""
    changed = [PRODUCTS[m] for m in MATRICES if marks[m].any()]
    same = [PRODUCTS[m] for m in MATRICES if not marks[m].any()]
    text = ", ".join(changed) + " changed"
    if same:
        text += f"; {', '.join(same)} unchanged"
    return text


Snapshot = tuple[tuple, dict[str, Array]]  # (what was compared, the products then)


def update_marks(
    last: Snapshot | None,
    marks: dict[str, np.ndarray],
    summary: str,
    key: tuple,
    products: Mapping[str, Array],
) -> tuple[Snapshot, dict[str, np.ndarray], str]:
    """The cells the last edit changed, for a redraw with ``products`` of the head ``key``
    names (head, document, tokens, shapes).

    ``last`` is the snapshot of the previous redraw, ``marks`` / ``summary`` what it showed.
    The same key: the changed cells become the marks if any changed (a pure selection keeps
    the old ones); another key (head, tokens, shapes or document): nothing to compare, no
    marks. Returns the new snapshot, marks and summary.
    """
    if last is not None and last[0] == key:
        new = {m: changed_cells(last[1][m], products[m]) for m in MATRICES}
        if any(mk.any() for mk in new.values()):
            marks, summary = new, describe_marks(new)
    else:
        marks, summary = {}, ""
    # a read-only product cannot change behind the snapshot's back: kept, not copied
    kept = {m: products[m] if not products[m].flags.writeable else products[m].copy()
            for m in MATRICES}  # fmt: skip
    return (key, kept), marks, summary


def preset_names(
    W: ArrayLike,
    which: str,
    wq_presets: Mapping[str, ArrayLike],
    seeded: tuple[int, ArrayLike] | None = None,
) -> tuple[str, ...]:
    """The presets ``W`` equals: identity, swap, zero, a scenario's Wq preset (for Wq), or
    "random, seed N" when ``seeded`` (seed, matrix) is the random matrix it was set to."""
    Wa = np.asarray(W)
    names = []
    r, c = Wa.shape
    if r == c:
        if np.array_equal(Wa, np.eye(r)):
            names.append("identity")
        elif r > 1 and np.array_equal(Wa, np.eye(r)[:, ::-1]):
            names.append("swap")
    if not Wa.any():
        names.append("zero")
    if which == "Wq":
        names += [n for n, P in wq_presets.items() if np.array_equal(P, Wa)]
    if seeded is not None and np.array_equal(seeded[1], Wa):
        names.append(f"random, seed {seeded[0]}")
    return tuple(dict.fromkeys(names))


def preset_entries(shape: tuple[int, ...], seed: int) -> tuple[str, ...]:
    """The preset menu's entries for a matrix of ``shape``: identity and swap when square."""
    square = ("identity", "swap") if shape[0] == shape[1] else ()
    return (*square, "zero", f"random (seed {seed})")


@dataclass(frozen=True, eq=False)
class MatrixBlock:
    """One editable matrix: values, row and column names, the presets it equals, its menu."""

    name: str  # "Wq", "Wk", "Wv" or "Wo"
    W: Array
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    tags: tuple[str, ...]
    presets: tuple[str, ...]
    scenario_presets: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class ProductBlock:
    """One product X·W: values, token rows, the cells the last edit changed."""

    name: str  # "Q", "K" or "V"
    P: Array
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    marks: np.ndarray | None
    n_changed: int


@dataclass(frozen=True, eq=False)
class GridsData:
    """The grids of one head: Wq, Wk, Wv beside Q, K, V, and Wo (None without one)."""

    of_head: str  # " of head 2" when there are several heads, else ""
    matrices: tuple[MatrixBlock, ...]
    products: tuple[ProductBlock, ...]
    any_marks: bool
    wo: MatrixBlock | None
    head_names: tuple[str, ...]
    summary: str


def grids_data(
    sc: Scenario,
    head: int,
    products: Mapping[str, Array],
    marks: Mapping[str, np.ndarray],
    summary: str,
    seeded: Mapping[tuple[int, str], tuple[int, ArrayLike]],
    seed: int,
) -> GridsData:
    """What the grids show for head ``head`` of a token scenario: ``products`` from
    :func:`head_products`, ``marks`` / ``summary`` from :func:`update_marks`, ``seeded`` the
    random matrices set per (head, matrix) (head -1 for Wo), ``seed`` the menu's seed."""
    h = sc.heads[head]
    matrices, prods = [], []
    for m in MATRICES:
        W = np.asarray(getattr(h, m))
        cols = tuple(sc.qk_axes if m != "Wv" else sc.v_axes)
        presets = tuple(sc.wq_presets) if m == "Wq" else ()
        tags = preset_names(W, m, sc.wq_presets, seeded.get((head, m)))
        matrices.append(MatrixBlock(m, W, tuple(sc.axes), cols, tags, preset_entries(W.shape, seed),
                                    presets))  # fmt: skip
        mk = marks.get(m)
        n = int(mk.sum()) if mk is not None else 0
        prods.append(ProductBlock(PRODUCTS[m], products[m], tuple(sc.tokens), cols, mk, n))
    names = tuple(x.name or f"head {i + 1}" for i, x in enumerate(sc.heads))
    wo = None
    if sc.Wo is not None:
        Wo = np.asarray(sc.Wo)
        rows = tuple(f"h{i + 1}·{a}" for i in range(len(sc.heads)) for a in sc.v_axes)
        tags = preset_names(Wo, "Wo", sc.wq_presets, seeded.get((-1, "Wo")))
        wo = MatrixBlock("Wo", Wo, rows, tuple(sc.axes), tags, preset_entries(Wo.shape, seed), ())
    of_head = f" of {h.name or f'head {head + 1}'}" if len(sc.heads) > 1 else ""
    text = (f"Last edit: {summary}. " if summary else "") + HINT
    return GridsData(of_head, tuple(matrices), tuple(prods), bool(marks), wo, names, text)
