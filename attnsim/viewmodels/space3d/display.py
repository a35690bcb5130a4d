"""Everything the 3-D panel shows around the scene, as plain data: the scene's inputs from a
scenario, the header, tooltips, the texts of a drag, the camera presets and the controls' state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from attnsim.engine.attention import HeadTrace
from attnsim.engine.geometry import Camera
from attnsim.engine.scenario import Scenario

from .frame import Array, Frame, SceneInput, ViewOptions, as_direction, move_within, undo_layout
from .scene import Scene
from .screen import drag_world_point

DEFAULT_CAMERA = Camera()
# Looking straight down at the plane of the first two axes: the natural view when d_k <= 2.
TOP_CAMERA = Camera(yaw_deg=0.0, pitch_deg=90.0)
# Preset views: (menu text template, yaw, pitch); {0} {1} {2} are the shown axis names.
PRESET_VIEWS = (
    ("Look along {2}: the {0}–{1} plane", 0.0, 90.0),
    ("Look along {1}: the {0}–{2} plane", 0.0, 0.0),
    ("Look along {0}: the {1}–{2} plane", 270.0, 0.0),
)
DRAGGABLE = ("query", "key", "other_query")


# ---- camera presets -----------------------------------------------------------------------------
def default_camera(d_k: int) -> Camera:
    """The camera a scenario of width ``d_k`` starts with (straight down when d_k <= 2)."""
    return TOP_CAMERA if d_k <= 2 else DEFAULT_CAMERA


def preset_camera(which: int, camera: Camera) -> Camera:
    """``camera`` turned to look straight at one plane of two shown axes (see PRESET_VIEWS);
    distance, field of view and zoom are kept."""
    _, yaw, pitch = PRESET_VIEWS[which]
    return Camera(yaw, pitch, camera.distance, camera.fov_deg, camera.zoom)


def view_menu_texts(axis_names: tuple[str, str, str]) -> tuple[str, ...]:
    """The preset views' menu texts for the shown axes (a padded axis is named by number)."""
    shown = [n or f"axis {a + 1} (= 0)" for a, n in enumerate(axis_names)]
    return tuple(text.format(*shown) for text, _, _ in PRESET_VIEWS)


# ---- view options and the controls --------------------------------------------------------------
def choose_axis(options: ViewOptions, which: int, index: int) -> ViewOptions:
    """Show coordinate ``index`` on view axis ``which``; one shown elsewhere swaps with it, so
    three different axes remain."""
    axes = list(options.axes)
    if index in axes and axes.index(index) != which:
        axes[axes.index(index)] = axes[which]
    axes[which] = index
    return replace(options, axes=tuple(axes))  # type: ignore[arg-type]


def options_for_width(options: ViewOptions, d_k: int) -> ViewOptions:
    """The options after the matching space changed width: the first three axes again, and,
    with many coordinates (where three axes show little), the best subspace."""
    return replace(options, axes=(0, 1, 2), subspace=d_k > 4)


@dataclass(frozen=True, eq=False)
class ControlsData:
    """What the controls above the 3-D view show."""

    options: ViewOptions
    axis_items: tuple[str, ...]  # the names offered in each axis box (the matching space's)
    set_axes: bool  # write options.axes into the boxes (only when there are more than 3)
    axes_visible: bool
    mode_enabled: bool
    mode_index: int  # 0: three axes, 1: best subspace
    others_enabled: bool
    direction_enabled: bool
    menu_texts: tuple[str, ...]  # the preset views, after "Default view"


def controls_data(
    options: ViewOptions, qk_axes: tuple[str, ...], n_queries: int, frame: Frame
) -> ControlsData:
    """The controls' state for a matching space with axes ``qk_axes``, drawn through ``frame``."""
    many = len(qk_axes) > 3
    return ControlsData(
        options=options,
        axis_items=tuple(qk_axes),
        set_axes=many,
        axes_visible=many and not options.subspace,
        mode_enabled=many,
        mode_index=1 if options.subspace and many else 0,
        others_enabled=n_queries > 1,
        # A direction-only query means nothing once distances are laid out for attention.
        direction_enabled=not options.layout,
        menu_texts=view_menu_texts(frame.axis_names),
    )


@dataclass(frozen=True, eq=False)
class CanvasData:
    """What the 3-D canvas draws: the scene, the numbers it came from (for tooltips), the
    header line, and the item of the focused key (ringed), if any."""

    scene: Scene
    inp: SceneInput | None  # None: no tooltips
    header: str
    focused: int | None = None
    tokens_mode: bool = False


# ---- the scene's inputs and the words around it ------------------------------------------------
def scene_input(
    sc: Scenario, tr: HeadTrace, receiving: int, focused_head: int, points: Array | None = None
) -> SceneInput:
    """The engine's numbers for the focused head, as the scene builder takes them.

    ``points`` (p, d_k) is an extra cloud, dropped when its width no longer matches.
    """
    absent_K = np.zeros((0, tr.d_k))
    absent_labels: tuple[str, ...] = ()
    if sc.mode == "tokens" and sc.absent:
        head = sc.heads[min(focused_head, len(sc.heads) - 1)]
        absent_labels = tuple(sc.absent)
        absent_K = np.vstack([sc.absent[t] for t in absent_labels]) @ head.Wk
    if points is not None and points.shape[1] != tr.d_k:
        points = None
    return SceneInput(
        Q=tr.Q,
        K=tr.K,
        V=tr.V,
        weights=tr.weights,
        score_row=tr.scores_row(receiving),
        mask=tr.mask,
        receiving=receiving,
        query_labels=tuple(sc.query_labels),
        key_labels=tuple(sc.tokens),
        qk_axes=tuple(sc.qk_axes),
        v_axes=tuple(sc.v_axes),
        absent_K=absent_K,
        absent_labels=absent_labels,
        mask_value=tr.mask_value,
        points=points,
    )


def dragged_vector(
    frame: Frame,
    kind: str,
    current: ArrayLike,
    camera: Camera,
    xy: tuple[float, float],
    depth: float,
    width: float,
    height: float,
) -> Array:
    """The engine's full query or key (d_k,) whose drawing sits at camera point ``xy``.

    ``current`` is the vector now, ``depth`` the camera depth of its tip at the press, and
    ``frame`` the frame frozen at the press; ``xy`` is in the camera's own band of ``width`` x
    ``height`` pixels. Coordinates the view does not show keep their values.
    """
    cur = np.asarray(current, dtype=float)
    d_k = cur.shape[0]
    world = drag_world_point(camera, xy, depth, width, height, dims=min(d_k, 3))
    p = world / frame.scale
    u = cur * frame.factor if kind == "query" else (cur + frame.shift) / frame.factor
    if kind == "query" and frame.direction_length > 0:
        # The arrow shows only a direction: turning it keeps the shown length.
        length = float(np.linalg.norm(frame.shown(u)))
        p = as_direction(p, length if length > 0 else frame.direction_length)[0]
    return undo_layout(move_within(u, frame.basis, p), kind, frame.shift, frame.factor)
