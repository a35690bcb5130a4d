"""Screen geometry of the 3-D view: axes, grid, arrow heads, paint order, labels, drag points."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.arrows import arrow_heads
from attnsim.engine.geometry import Camera

from .frame import Array, nice_step


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
    segments: ArrayLike | None = None,
) -> tuple[Array, NDArray[np.bool_]]:
    """Greedy label placement near anchors (m, 2), pushed along unit directions ``away`` (m, 2).

    ``sizes`` (m, 2) are text boxes (w, h); ``priority`` (m,) smaller first. Each label tries a
    few spots around its anchor and takes the first that overlaps no placed label; the first
    ``always`` labels are shown even if every spot overlaps (least overlap), later ones are
    hidden. ``bounds`` (x0, y0, x1, y1) keeps boxes inside; ``obstacles`` (o, 4) are boxes
    (x0, y0, x1, y1) already taken, e.g. axis names; ``segments`` (s, 4) are lines
    (x0, y0, x1, y1) no box may cross, e.g. the axes and the arrows' shafts. Besides the spots
    pushed away from the arrow, a label may sit with a corner at its anchor (one of the four
    quarters round a tip is clear of its own arrow). Returns ``(top_left (m, 2), visible (m,))``.
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
    # A corner at the anchor, one gap out, in each quarter round it (then a line further, up
    # to three: a pushed label gets a leader line back to its tip).
    corner = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], float)
    lines_out = np.arange(4.0)[None, :, None, None]  # 0 to 3 lines further: (1, 4, 1, 1)
    out_by = gap + lines_out * S[:, None, None, 1:2] + S[:, None, None, :] / 2  # (m, 4, 1, 2)
    corners = (A[:, None, None, :] + corner[None, None] * out_by).reshape(m, 16, 2)
    centres = np.concatenate([centres, corners], axis=1)
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

    origin = np.array([x0, y0, x0, y0], dtype=float)
    limits = np.array([nx, ny, nx, ny], dtype=np.int64)

    def span(b: NDArray) -> NDArray[np.int_]:
        q = (b - origin) / cell
        c = np.empty(b.shape, dtype=np.int64)
        c[..., :2] = np.floor(q[..., :2])
        c[..., 2:] = np.ceil(q[..., 2:])
        np.maximum(c, 0, out=c)
        return np.minimum(c, limits, out=c)

    for c0, r0, c1, r1 in span(obs).tolist():
        taken[r0:r1, c0:c1] = 1
    if segments is not None:
        # Points every half cell along each line, and a pixel either side, take their cells.
        seg = np.asarray(segments, float).reshape(-1, 4)
        seg = seg[np.isfinite(seg).all(axis=1)]
        if len(seg):
            # Every line's points at once: n_i = length // (cell / 2) + 2 points from end to
            # end (t = 0 … 1), then each point a pixel out along both diagonals.
            d = seg[:, 2:] - seg[:, :2]
            n = (np.hypot(d[:, 0], d[:, 1]) // (cell / 2)).astype(np.int64) + 2
            which = np.repeat(np.arange(len(seg)), n)
            first = np.repeat(np.cumsum(n) - n, n)
            t = (np.arange(which.size) - first) * np.repeat(1.0 / (n - 1), n)
            px = seg[which, 0] + t * d[which, 0]
            py = seg[which, 1] + t * d[which, 1]
            # The columns a pixel left and right, the rows a pixel up and down: the four
            # diagonal neighbours are their four pairings.
            left, right = (np.floor((px + o - x0) / cell).astype(np.int64) for o in (-1.0, 1.0))
            up, down = (np.floor((py + o - y0) / cell).astype(np.int64) for o in (-1.0, 1.0))
            cx = np.concatenate([left, right, left, right])
            cy = np.concatenate([up, up, down, down])
            on = (cx >= 0) & (cx < nx) & (cy >= 0) & (cy < ny)
            taken[cy[on], cx[on]] = 1
    cells = span(boxes).tolist()
    ok_l = ok.tolist()
    # Which cells are taken, as one Python int of bits per grid row (bit c: column c): a
    # candidate box is free when no row it spans has a bit set under it, a few integer ANDs
    # instead of a NumPy call per candidate. ``taken`` keeps the counts for the overlaps.
    packed = np.packbits(taken > 0, axis=1, bitorder="little")
    row_bytes, raw = packed.shape[1], packed.tobytes()
    bits = [int.from_bytes(raw[r * row_bytes : (r + 1) * row_bytes], "little") for r in range(ny)]
    order = np.argsort(np.asarray(priority, float), kind="stable").tolist()
    chosen = [0] * m
    for rank, k in enumerate(order):
        best, best_overlap = -1, math.inf
        # The first free spot, if any (a few integer ANDs each) ...
        ok_k = ok_l[k]
        for c, (c0, r0, c1, r1) in enumerate(cells[k]):
            if not ok_k[c]:
                continue
            if c1 > c0:
                mask = ((1 << (c1 - c0)) - 1) << c0
                for row in bits[r0:r1]:
                    if row & mask:
                        break
                else:  # no row has a bit under it
                    best, best_overlap = c, 0.0
                    break
            else:  # an empty box
                best, best_overlap = c, 0.0
                break
        if best < 0 and rank < always:  # ... else, for a label shown anyway, the least overlap
            for c, (c0, r0, c1, r1) in enumerate(cells[k]):
                if ok_l[k][c]:
                    overlap = float(taken[r0:r1, c0:c1].sum())
                    if overlap < best_overlap:
                        best, best_overlap = c, overlap
        if best < 0:  # nothing fits inside the bounds: keep the first spot
            best = 0
        if best_overlap == 0 or rank < always:
            c0, r0, c1, r1 = cells[k][best]
            if rank < always - 1:  # the counts are read for the labels shown anyway only
                taken[r0:r1, c0:c1] += 1
            if c1 > c0:
                mask = ((1 << (c1 - c0)) - 1) << c0
                for r in range(r0, r1):
                    bits[r] |= mask
            visible[k] = True
        chosen[k] = best
    out[:] = boxes[np.arange(m), chosen, :2]
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
