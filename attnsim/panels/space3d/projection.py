"""The scene projected to screen pixels for one camera and canvas size: tips, arrow heads,
paint order, axes, grid, cloud and where each label goes. Recomputed whenever the camera turns,
so everything is vectorised over items."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PySide6.QtCore import QRectF

from attnsim.engine.geometry import Camera
from attnsim.viewmodels.space3d import (
    Scene,
    arrow_geometry,
    axis_segments,
    grid_segments,
    paint_order,
    place_labels,
)

from .._safe_draw import VIEW_MARGIN, clip_points
from ..kit.hidpi import line_scale

COLORBAR_W = 12.0
# Labels' rank by kind (smaller gets room first); other kinds 4.
_PRIORITY = {"query": 0.0, "key": 1.0, "absent": 2.0, "value": 3.0}


@dataclass
class ScreenGeometry:
    """The scene projected for one camera and canvas size (all screen pixels)."""

    origin: np.ndarray  # (2,)
    tips: np.ndarray  # (m, 2)
    depth: np.ndarray  # (m,)
    shaft_end: np.ndarray  # (m, 2), set for arrows only
    heads: np.ndarray  # (m, 3, 2), set for arrows only
    order: np.ndarray  # (a,) the items drawn as arrows, far to near
    axes: np.ndarray  # (3, 2, 2)
    axis_text: np.ndarray  # (3, 2) baseline start of each axis name
    grid: np.ndarray  # (g, 2, 2)
    points: np.ndarray  # (p, 2)
    label_pos: np.ndarray  # (m, 2) top-left
    label_visible: np.ndarray  # (m,)
    label_size: np.ndarray  # (m, 2)


@dataclass(frozen=True)
class TextMetrics:
    """What label placement needs from the label font."""

    width: Callable[[str], float]
    height: float
    ascent: float
    # The receiving query's name is painted bold: measured in the regular font, it spilled
    # past its box over its neighbours' names.
    bold_width: Callable[[str], float] | None = None


def colorbar_rect(w: float, h: float) -> QRectF | None:
    """Where the weight colour bar goes on a ``w`` x ``h`` canvas (None when too short)."""
    top, bottom = 40.0, min(h - 40.0, 200.0)
    if bottom - top < 40:
        return None
    # room on the right for the "0.5" beside it and the "weight" above, at the text's size
    room = 30.0 * line_scale()
    return QRectF(w - COLORBAR_W - room, top, COLORBAR_W, bottom - top)


@lru_cache(maxsize=8)
def _frame_points(extent: float, scale: float) -> tuple[np.ndarray, int]:
    """The origin, the axes' ends and the grid's ends in world units (what a frame draws,
    the same for every scene of it: a drag's every move), and how many grid points."""
    axes3 = axis_segments(extent).reshape(-1, 3)
    grid3 = grid_segments(extent).reshape(-1, 3)
    fixed = np.vstack([np.zeros((1, 3)), axes3 * scale, grid3 * scale])
    fixed.setflags(write=False)
    return fixed, grid3.shape[0]


def project_scene(
    sc: Scene,
    cam: Camera,
    w: float,
    h: float,
    band: tuple[float, float],
    text: TextMetrics,
) -> ScreenGeometry:
    """``sc`` seen through ``cam`` on a ``w`` x ``h`` canvas whose camera draws into the
    horizontal ``band`` (top, height) between the header and the notes."""
    top, view_h = band
    fr = sc.frame
    m = len(sc.kind)
    fixed, n_grid = _frame_points(float(fr.extent), float(fr.scale))
    # One projection for everything: items, origin, axes, grid, cloud.
    world = np.vstack([sc.world, fixed, sc.points * fr.scale])
    # A vector whose length overflowed has no direction to draw: it collapses to the
    # origin rather than sending NaN or 1e300 pixels to the painter (see _safe_draw).
    world[~np.isfinite(world).all(axis=1)] = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        allxy, alldepth = cam.project(world, w, view_h)
    allxy[:, 1] += top
    box = (-VIEW_MARGIN * w, (1 + VIEW_MARGIN) * w, -VIEW_MARGIN * h, (1 + VIEW_MARGIN) * h)
    allxy, _ = clip_points(allxy, box)
    alldepth = np.nan_to_num(alldepth, nan=0.0, posinf=1e9, neginf=-1e9)
    tips, depth = allxy[:m], alldepth[:m]
    origin = allxy[m]
    axes = allxy[m + 1 : m + 7].reshape(3, 2, 2)
    gr = allxy[m + 7 : m + 7 + n_grid]
    pts = allxy[m + 7 + n_grid :]
    # Arrow heads, label boxes and paint order only for the items drawn as arrows: at
    # n = 2048 the other keys are cloud points (painted in one call, no label).
    arrows = np.flatnonzero(sc.arrow)
    kinds = sc.kinds[arrows]
    # Heads grow a little with the pen (the receiving query and heavy keys).
    head_len = np.where(kinds == "query", 13.0, 9.0) + sc.width[arrows]
    shaft_end, heads = np.zeros((m, 2)), np.zeros((m, 3, 2))
    shaft_end[arrows], heads[arrows] = arrow_geometry(
        origin, tips[arrows], head_len, head_len * 0.75
    )
    # Item 0 is the receiving query: painted last, whatever its depth.
    on_top = np.flatnonzero(arrows == 0)
    order = arrows[paint_order(depth[arrows], int(on_top[0]) if on_top.size else None)]
    line_h = text.height + 2.0
    sizes = np.zeros((m, 2))
    labels = sc.label
    bold = text.bold_width or text.width
    sizes[arrows, 0] = [
        (bold if sc.kind[k] == "query" else text.width)(labels[k]) + 6.0 for k in arrows.tolist()
    ]
    sizes[arrows, 1] = line_h
    away = tips[arrows] - origin
    n = np.linalg.norm(away, axis=1, keepdims=True)
    away = np.where(n > 1e-9, away / np.maximum(n, 1e-9), np.array([[1.0, 0.0]]))
    prio = np.array([_PRIORITY.get(kind, 4.0) for kind in kinds.tolist()], dtype=float)
    # Among keys, the most attended get room first.
    weight = np.nan_to_num(sc.weight[arrows])
    prio = prio + np.where(kinds == "key", 1.0 - weight, 0.0) * 0.5
    # Axis names sit just past the axes' ends; labels avoid them and the colour bar.
    obstacles = []
    axis_text = np.zeros((3, 2))
    ox, oy = origin.tolist()
    for a, name in enumerate(fr.axis_names):
        ex, ey = axes[a, 1].tolist()  # (Python floats: the same sums, a tenth of the time)
        dx, dy = ex - ox, ey - oy
        norm = float(np.hypot(dx, dy)) or 1.0
        ux, uy = dx / norm, dy / norm
        tw = text.width(name)
        # Past the axis' end by enough that the name's box clears the axis line.
        clear = min(tw / 2 / max(abs(ux), 1e-9), text.height / 2 / max(abs(uy), 1e-9))
        push = min(clear, 4.0 * text.height) + 6.0
        at_x, at_y = ex + ux * push, ey + uy * push
        # Inside the camera's band: a short canvas put "structure" over the header's text.
        half = text.height / 2
        at_y = min(max(at_y, top + half), max(top + view_h - half, top + half))
        at_x = min(max(at_x, tw / 2 + 2), max(w - tw / 2 - 2, tw / 2 + 2))
        axis_text[a] = (at_x - tw / 2, at_y + text.ascent / 2 - 1)
        if name:
            obstacles.append([at_x - tw / 2 - 2, at_y - text.height / 2, at_x + tw / 2 + 2,
                              at_y + text.height / 2])  # fmt: skip
    cb = colorbar_rect(w, h)
    if cb is not None:
        obstacles.append([cb.left() - 12, cb.top() - 16, w, cb.bottom() + 8])
    bottom = top + view_h
    label_pos = np.zeros((m, 2))
    visible = np.zeros(m, dtype=bool)
    # Nor do they cross a line: the named axes, the arrows' shafts and the edges of their heads.
    named = [a for a in range(3) if fr.axis_names[a]]
    n_lines = len(named) + arrows.size
    segments = np.empty((n_lines + 3 * arrows.size, 4))
    segments[:n_lines, :2] = origin
    segments[: len(named), 2:] = axes[named, 1]
    segments[len(named) : n_lines, 2:] = shaft_end[arrows]
    head = heads[arrows]  # each head's three edges: corner i to corner i + 1
    edges = segments[n_lines:].reshape(-1, 3, 4)
    edges[..., :2] = head
    edges[..., 2:] = head[:, [1, 2, 0]]
    label_pos[arrows], visible[arrows] = place_labels(
        tips[arrows],
        away,
        sizes[arrows],
        prio,
        bounds=(0.0, top, w, bottom),
        obstacles=np.asarray(obstacles, float).reshape(-1, 4),
        segments=segments,
    )
    return ScreenGeometry(
        origin=origin,
        tips=tips,
        depth=depth,
        shaft_end=shaft_end,
        heads=heads,
        order=order,
        axes=axes,
        axis_text=axis_text,
        grid=gr.reshape(-1, 2, 2),
        points=pts,
        label_pos=label_pos,
        label_visible=visible,
        label_size=sizes,
    )
