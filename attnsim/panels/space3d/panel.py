"""The 3-D query/key space panel: queries and keys as arrows from the origin, orbit, zoom, drag.

The panel builds the scene from the workbench (``views.space3d``), hands the controls and the
canvas their data, and turns their gestures into view changes or workbench edits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from attnsim.engine import edits
from attnsim.engine.geometry import Camera
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.viewmodels.space3d import (
    DEFAULT_CAMERA,
    DRAGGABLE,
    TOP_CAMERA,
    CanvasData,
    Frame,
    Scene,
    SceneInput,
    ViewOptions,
    build_scene,
    controls_data,
    default_camera,
    dragged_vector,
    options_for_width,
    preset_camera,
    scene_input,
)

from ..base import Panel
from .canvas import SpaceCanvas
from .controls import Space3DControls
from .frames import FrameKey, FramesSoon, slow_frame
from .texts import drag_texts, header_text, not_draggable, picked_text, zero_input

DRAG_THRESHOLD = 3.0
STILL_COMPUTING = (
    "The 3-D view is still computing its axes for the latest change; "
    "drag a tip again once it is drawn."
)
ORBIT_DEG_PER_PX = 0.4


@dataclass
class DragState:
    """One gesture on the canvas, from press to release."""

    kind: str  # "orbit" or an item kind
    press: QPointF
    last: QPointF
    item: int | None = None
    row: int = -1
    drag_id: int = 0
    depth: float = 0.0
    offset: tuple[float, float] = (0.0, 0.0)
    frame: Frame | None = None
    moved: bool = False
    announced: bool = False


class Space3DPanel(Panel):
    """Queries and keys as arrows in the query/key matching space, in 3-D."""

    panel_id = "space3d"
    title = "Query/key space"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.options = ViewOptions()
        self.scene: Scene | None = None
        self._input: SceneInput | None = None
        self._points: np.ndarray | None = None
        self._drag: DragState | None = None
        self._d_k = -1
        self._frames = FramesSoon(workbench, self.schedule_refresh)
        self._now = False  # make a slow frame here (a figure, a press), not on the runner
        self._frame_missing = False  # the last refresh waited for a frame from the runner

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        self.controls = Space3DControls(self)
        self.controls.options_edited.connect(self._options_edited)
        self.controls.reset_requested.connect(self.reset_view)
        self.controls.plane_requested.connect(self.view_plane)
        layout.addWidget(self.controls)
        c = self.controls
        # The controls' widgets, under the names tests and callers have always used.
        self.view_mode, self.axis_boxes, self.axes_group = c.view_mode, c.axis_boxes, c.axes_group
        self.views_button, self.views_menu = c.views_button, c.views_menu
        self.reset_button = c.reset_button
        self.direction_box, self.others_box = c.direction_box, c.others_box
        self.values_box, self.layout_box = c.values_box, c.layout_box

        self.canvas = SpaceCanvas(self)
        self.canvas.pressed.connect(self.on_press)
        self.canvas.dragged.connect(self.on_drag)
        self.canvas.released.connect(self.on_release)
        self.canvas.reset_requested.connect(self.reset_view)
        layout.addWidget(self.canvas, 1)
        self.schedule_refresh()

    # ---- view state (never edits the workbench) ---------------------------------------------
    def figure_widget(self) -> QWidget:
        self.flush_now()
        return self.canvas

    def figure_widgets(self) -> list[QWidget]:
        self.flush_now()
        return [self.canvas]

    def computing_anchor(self) -> QWidget | None:
        return self.canvas

    def flush(self) -> None:
        super().flush()
        if self._frame_missing:  # still on its way: the note stays with the old picture
            self._show_computing(True)

    def flush_now(self) -> None:
        """Draw the state as it is now, a slow frame made here: a figure never shows an old
        picture."""
        self._now = True
        try:
            if self.scene is None or self._frame_missing:
                self.schedule_refresh()
            self.flush()
        finally:
            self._now = False

    @property
    def camera(self) -> Camera:
        return self.canvas.camera

    def set_camera(self, camera: Camera) -> None:
        self.canvas.set_camera(camera)

    def default_camera(self) -> Camera:
        return default_camera(self._d_k)

    def reset_view(self) -> None:
        self.canvas.set_camera(self.default_camera())

    def view_plane(self, which: int) -> None:
        """Look straight at one plane of two shown axes (0: axes 1-2, 1: axes 1-3, 2: 2-3)."""
        self.canvas.set_camera(preset_camera(which, self.canvas.camera))

    def set_points(self, points: np.ndarray | None) -> None:
        """Extra matching-space points (p, d_k) drawn as a grey cloud (None removes them)."""
        if points is not None:
            P = np.asarray(points, dtype=float)
            if P.ndim != 2 or P.shape[1] != self.wb.scenario.d_k:
                raise ValueError(
                    f"points must have shape (p, {self.wb.scenario.d_k}), got {P.shape}"
                )
            points = P
        self._points = points
        self.schedule_refresh()

    def _options_edited(self, options: ViewOptions) -> None:
        if not self.is_updating:
            self.options = options
            self.schedule_refresh()

    # ---- drawing ----------------------------------------------------------------------------
    def scene_input(self) -> SceneInput:
        """The engine's numbers for the focused head, as the scene builder takes them."""
        wb = self.wb
        return scene_input(wb.scenario, wb.trace, wb.receiving, wb.focused_head, self._points)

    def refresh(self) -> None:
        wb = self.wb
        sc = wb.scenario
        if sc.d_k != self._d_k:
            first = self._d_k == -1
            self._d_k = sc.d_k
            self.options = options_for_width(self.options, sc.d_k)
            if first or self.canvas.camera in (DEFAULT_CAMERA, TOP_CAMERA):
                self.canvas.set_camera(self.default_camera())
        inp = self.scene_input()
        frame = self._drag.frame if self._drag is not None else None
        self._frame_missing = False
        if frame is None and slow_frame(inp, self.options):
            key = FrameKey(wb.trace, self.options, self._points, sc.absent)
            frame = self._frames.frame(inp, self.options, key, now=self._now)
            if frame is None:  # made on the runner: the picture stays, and says so
                self._frame_missing = True
                self._show_computing(True)
                return
        self._input = inp
        self.scene = scene = build_scene(inp, self.options, frame)
        with self.updating():
            self.controls.refresh(
                controls_data(self.options, tuple(sc.qk_axes), sc.n_queries, scene.frame)
            )
        focused = None if wb.focused_key is None else scene.index("key", wb.focused_key)
        header = header_text(sc, wb.trace, wb.receiving, wb.focused_head)
        self.canvas.refresh(CanvasData(scene, inp, header, focused, sc.mode == "tokens"))

    # ---- gestures ---------------------------------------------------------------------------
    def on_press(self, pos: QPointF) -> None:
        self.flush()  # the scene must match the workbench before picking
        canvas = self.canvas
        k, meant = canvas.pick_for_press(pos.x(), pos.y())
        if k is not None and self._frame_missing:  # the picture is of the state before
            self.wb.say(STILL_COMPUTING)
            k = None
        if k is None or self.scene is None:
            self._drag = DragState("orbit", QPointF(pos), QPointF(pos))
            return
        sc_ = self.scene
        kind, row = sc_.kind[k], int(sc_.row[k])
        if kind not in DRAGGABLE:
            self.wb.say(not_draggable(kind, sc_.label[k]))
            self._drag = DragState("none", QPointF(pos), QPointF(pos))
            return
        reason = zero_input(self.wb.scenario, kind, row)
        if reason is not None:
            self.refuse(ValueError(reason))
            self._drag = DragState("none", QPointF(pos), QPointF(pos))
            return
        self.wb.say(picked_text(self.wb.scenario, sc_, k, meant))
        g = canvas.geometry_now()
        assert g is not None
        tip = g.tips[k]
        self._drag = DragState(
            kind,
            QPointF(pos),
            QPointF(pos),
            item=k,
            row=row,
            drag_id=new_drag_id(),
            depth=float(g.depth[k]),
            offset=(pos.x() - float(tip[0]), pos.y() - float(tip[1])),
            frame=sc_.frame,
        )

    def on_drag(self, pos: QPointF) -> None:
        d = self._drag
        if d is None or d.kind == "none":
            return
        if not d.moved:
            if math.hypot(pos.x() - d.press.x(), pos.y() - d.press.y()) < DRAG_THRESHOLD:
                return
            d.moved = True
        if d.kind == "orbit":
            dx, dy = pos.x() - d.last.x(), pos.y() - d.last.y()
            d.last = QPointF(pos)
            self.canvas.set_camera(
                self.canvas.camera.orbit(dx * ORBIT_DEG_PER_PX, dy * ORBIT_DEG_PER_PX)
            )
            return
        d.last = QPointF(pos)
        self._drag_to(pos.x() - d.offset[0], pos.y() - d.offset[1])

    def on_release(self, pos: QPointF) -> None:
        d = self._drag
        self._drag = None
        if d is None:
            return
        if d.kind in DRAGGABLE and d.moved:
            self.schedule_refresh()  # the frame is free again (scale, layout, subspace)
        elif d.kind == "other_query" and not d.moved:
            self.wb.set_receiving(d.row)
        elif d.kind == "key" and not d.moved:
            self.wb.set_focused_key(d.row)

    def drag_target(self, x: float, y: float) -> tuple[str, int, np.ndarray] | None:
        """Where the tip under drag would go for screen point (x, y): (kind, row, vector).

        ``vector`` (d_k,) is the engine's full query or key that the drawing would show at that
        point, with the frame frozen at press time. None when no drag is running.
        """
        d = self._drag
        if d is None or d.frame is None or d.kind not in DRAGGABLE:
            return None
        tr = self.wb.trace
        kind = "key" if d.kind == "key" else "query"
        current = (tr.K if kind == "key" else tr.Q)[d.row]
        top, view_h = self.canvas.view_box()
        cam, width = self.canvas.camera, self.canvas.width()
        vec = dragged_vector(d.frame, kind, current, cam, (x, y - top), d.depth, width, view_h)
        return kind, d.row, vec

    def _drag_to(self, x: float, y: float) -> None:
        d = self._drag
        target = self.drag_target(x, y)
        if d is None or target is None:
            return
        kind, row, vec = target
        wb = self.wb
        sc = wb.scenario
        names: list[str] = []

        def make() -> Scenario:
            h = min(wb.focused_head, len(sc.heads) - 1) if sc.mode != "direct" else 0
            new = edits.place_vector(sc, kind, row, vec, h)
            direction = d.frame is not None and d.frame.direction_length > 0
            message, text = drag_texts(sc, kind, row, h, kind == "query" and direction)
            if not d.announced:
                d.announced = True
                wb.say(message)
            names.append(text)
            return new

        self.propose(make, lambda _: names[0], drag=d.drag_id)
