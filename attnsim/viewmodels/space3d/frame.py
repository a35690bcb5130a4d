"""The frame of the 3-D query/key view: how matching-space vectors become drawn positions.

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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.geometry import attentionviz_layout, best_subspace
from attnsim.engine.ticks import nice_ceil

Array = NDArray[np.floating]

# Largest extent of the scene in world units (the camera sees about +-1.9 at the origin).
WORLD_RADIUS = 1.55


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
    """``(Q c, (K + t) / c)``: every score of query i changes by the constant ``q_i · t``.

    With ``c`` = 1 and ``t`` = 0 (queries and keys of one length, no shift) that is Q and K
    themselves, returned without copies (two 34 MB arrays at 4,096 tokens of width 1,024)."""
    Qa, Ka = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    ta = np.asarray(t, dtype=float)
    if c == 1.0 and not ta.any():
        return Qa, Ka
    return Qa * c, (Ka + ta) / c


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

    ``Q`` (n_q, d_k), ``K`` (n_k, d_k), ``V`` (n_k, d_v), ``weights`` / ``mask`` (n_q, n_k),
    ``score_row`` (n_k,) the receiving query's scores q·k (the scene draws only its row: the
    whole table is 134 MB at 4,096 tokens), ``absent_K`` (a, d_k) keys of tokens absent from
    the sentence.
    """

    Q: Array
    K: Array
    V: Array
    weights: Array
    score_row: Array
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
        parts.append(value_positions(inp, basis))
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


def value_positions(inp: SceneInput, basis: Array) -> Array:
    """Drawn values (n_k, 3): through the basis when they share the matching space's width,
    else their own first three coordinates."""
    d_v = inp.V.shape[1]
    if d_v == inp.d_k:
        return inp.V @ basis
    return inp.V @ np.eye(d_v, 3)
