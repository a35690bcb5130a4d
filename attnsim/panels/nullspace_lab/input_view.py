"""The lab's 3-D view of the input space: subspaces, the input e and the moved input x."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QMouseEvent, QPen, QPolygonF, QWheelEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.engine.geometry import Camera, pick
from attnsim.model.workbench import new_drag_id
from attnsim.panels.kit.hints import hints_shown
from attnsim.panels.kit.label_painter import paint_placed_label
from attnsim.panels.kit.labels import place_labels, segment_marks
from attnsim.panels.style import MUTED, OUTPUT
from attnsim.viewmodels.nullspace_lab import InputScene, SubspaceScene, closest_param_on_line

from .painting import INPUT_COLOUR, NULL_COLOUR, ROW_COLOUR, start_painting


class InputSpaceView(QWidget):
    """A QPainter 3-D view of the input space: orbit with the mouse, drag x along a line.

    Dragging on the moved input x slides it along the null-space direction (with Shift: along
    the row-space direction); dragging elsewhere orbits the camera; the wheel zooms. The panel
    feeds it world points; ``dragged(kind, value, drag_id)`` reports a new t or s.
    """

    dragged = Signal(str, float, int)
    drag_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # A view about 60 degrees off the null direction (1, 1, -1): the null line shows its
        # length and the row-space plane (normal to it) is seen at a slant, not edge-on.
        self.camera = Camera(yaw_deg=-30.0, pitch_deg=24.0, distance=7.0)
        self.extent = 3.0
        self.label_rects: list[tuple[float, float, float, float]] = []  # names, as drawn
        self.scene: SubspaceScene | None = None
        self.e = np.zeros(3)
        self.x = np.zeros(3)
        self.null_dir: np.ndarray | None = None
        self.row_dir: np.ndarray | None = None
        self.t = 0.0
        self.s = 0.0
        self._press: QPointF | None = None
        self._mode = ""
        self._drag_id = 0
        self._camera_at_press = self.camera
        self.setMinimumSize(220, 180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(False)
        self.setToolTip(
            "Drag the input x to slide it along the null space (Shift: along the row space); "
            "drag elsewhere to orbit; wheel to zoom"
        )

    def sizeHint(self) -> QSize:
        return QSize(360, 300)

    def refresh(self, data: InputScene) -> None:
        self.extent = data.extent
        self.scene = data.scene
        self.e, self.x = data.e, data.x
        self.null_dir, self.row_dir = data.null_dir, data.row_dir
        self.t, self.s = data.t, data.s
        self.update()

    # ---- geometry -----------------------------------------------------------------------------
    def _unit(self) -> float:
        # World points are divided by this so the camera (distance 7) frames +-extent.
        return self.extent / 1.6

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Screen pixels (m, 2) and depths (m,) of world points (m, 3)."""
        pts = np.asarray(points, dtype=float).reshape(-1, 3) / self._unit()
        return self.camera.project(pts, self.width(), self.height())

    def ray(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """Two world points under the screen point (x, y), at different depths."""
        w, h, u = self.width(), self.height(), self._unit()
        d = self.camera.distance
        a = self.camera.unproject((x, y), 0.5 * d, w, h) * u
        b = self.camera.unproject((x, y), 1.5 * d, w, h) * u
        return a, b

    def param_under(self, kind: str, x: float, y: float) -> float | None:
        """The t (kind "t") or s (kind "s") that puts the moved input under the cursor."""
        direction = self.null_dir if kind == "t" else self.row_dir
        if direction is None:
            return None
        # The line the point moves on, parametrised by the dragged parameter alone.
        other = self.row_dir if kind == "t" else self.null_dir
        fixed = self.s if kind == "t" else self.t
        base = self.e + (fixed * other if other is not None else 0.0)
        a, b = self.ray(x, y)
        return closest_param_on_line(base, direction, a, b)

    # ---- mouse --------------------------------------------------------------------------------
    def mousePressEvent(self, ev: QMouseEvent) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.position()
        self._press = pos
        xy, _ = self.project(self.x[None, :])
        on_point = pick(xy, pos.x(), pos.y(), 14.0) is not None
        if on_point:
            shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._mode = "s" if shift else "t"
            self._drag_id = new_drag_id()
        else:
            self._mode = "orbit"
            self._camera_at_press = self.camera
        ev.accept()

    def mouseMoveEvent(self, ev: QMouseEvent) -> None:
        if self._press is None:
            return
        pos = ev.position()
        if self._mode == "orbit":
            dx, dy = pos.x() - self._press.x(), pos.y() - self._press.y()
            self.camera = self._camera_at_press.orbit(-0.4 * dx, 0.4 * dy)
            self.update()
        elif self._mode in ("t", "s"):
            value = self.param_under(self._mode, pos.x(), pos.y())
            if value is not None:
                self.dragged.emit(self._mode, value, self._drag_id)
        ev.accept()

    @property
    def dragging(self) -> bool:
        """True while the moved input is being dragged (not while orbiting)."""
        return self._press is not None and self._mode in ("t", "s")

    def mouseReleaseEvent(self, ev: QMouseEvent) -> None:
        was_dragging = self.dragging
        self._press = None
        self._mode = ""
        if was_dragging:
            self.drag_finished.emit()
        ev.accept()

    def wheelEvent(self, ev: QWheelEvent) -> None:
        steps = ev.angleDelta().y() / 120.0
        self.camera = self.camera.zoomed(1.15**steps)
        self.update()
        ev.accept()

    # ---- painting -----------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p, fm = start_painting(self)
        R = self.extent

        def pt(v: np.ndarray) -> QPointF:
            xy, _ = self.project(np.asarray(v)[None, :])
            return QPointF(float(xy[0, 0]), float(xy[0, 1]))

        # Names are collected while drawing and placed together at the end (points first),
        # so that no name covers another.
        pending: list[tuple[int, QPointF, tuple[float, float], str, QColor]] = []
        drawn: list[tuple[QPointF, QPointF]] = []  # every line: the names keep off them

        def line(a: QPointF, b: QPointF) -> None:
            p.drawLine(a, b)
            drawn.append((a, b))

        def label(v: np.ndarray, text: str, colour: QColor, dx: float = 6, dy: float = -6) -> None:
            pending.append((1, pt(v), (dx, dy), text, colour))

        # Axes through the origin, light, with their names at the positive ends.
        p.setPen(QPen(MUTED, 1.0))
        for k, name in enumerate(("x1", "x2", "x3")):
            a, b = np.zeros(3), np.zeros(3)
            a[k], b[k] = -R, R
            line(pt(a), pt(b))
            label(b, name, QColor("#777777"), 3, -3)

        def polygon(corners: np.ndarray, colour: QColor, alpha: int) -> None:
            fill = QColor(colour)
            fill.setAlpha(alpha)
            p.setPen(QPen(colour, 1.0))
            p.setBrush(QBrush(fill))
            ring = [pt(c) for c in corners]
            p.drawPolygon(QPolygonF(ring))
            drawn.extend(zip(ring, ring[1:] + ring[:1], strict=True))
            p.setBrush(Qt.BrushStyle.NoBrush)

        def segment(ends: np.ndarray, colour: QColor, width: float, style=Qt.PenStyle.SolidLine):
            p.setPen(QPen(colour, width, style))
            line(pt(ends[0]), pt(ends[1]))

        sc, none = self.scene, np.zeros((0, 3))
        row, null, level = (sc.row_patch, sc.null_line, sc.level_line) if sc else (none,) * 3
        if row.shape[0] == 4:
            polygon(row, ROW_COLOUR, 45)
            label(row[0], "row space", ROW_COLOUR, 4, 12)
        elif row.shape[0] == 2:
            segment(row, ROW_COLOUR, 2.5)
            label(row[1], "row space", ROW_COLOUR)
        if null.shape[0] == 4:
            polygon(null, NULL_COLOUR, 45)
            label(null[0], "null space", NULL_COLOUR, 4, 12)
        elif null.shape[0] == 2:
            segment(null, NULL_COLOUR, 2.0, Qt.PenStyle.DashLine)
            label(null[1], "null space", NULL_COLOUR)
        if level.shape[0] == 4:
            polygon(level, NULL_COLOUR, 25)
            label(level[2], "same query as e", NULL_COLOUR, 4, 12)
        elif level.shape[0] == 2:
            segment(level, NULL_COLOUR, 1.5)
            ends, _ = self.project(level)
            low = int(np.argmax(ends[:, 1]))  # the lower end on screen: away from the axis names
            # Part-way toward that end and just below the line, clear of the points.
            spot = self.e + 0.75 * (level[low] - self.e)
            label(spot, "same query as e", NULL_COLOUR, 8, 14)

        # The input x and its foot in the row space: the connector is parallel to the null space.
        x_row = self.scene.x_row if self.scene else None
        if x_row is not None:
            p.setPen(QPen(ROW_COLOUR, 1.2, Qt.PenStyle.DotLine))
            line(pt(self.x), pt(x_row))
        origin = pt(np.zeros(3))
        for v, colour, width in ((self.e, INPUT_COLOUR, 1.2), (self.x, OUTPUT, 2.0)):
            p.setPen(QPen(colour, width))
            line(origin, pt(v))
        items = [(self.e, INPUT_COLOUR, 5.0, "e"), (self.x, OUTPUT, 7.0, "x")]
        if x_row is not None:
            # When e is itself in the row space, x's visible part is e: one label says so.
            if np.allclose(x_row, self.e, atol=1e-9 * max(1.0, R)):
                items[0] = (self.e, INPUT_COLOUR, 5.0, "e (all that M sees of x)")
            else:
                items.append((x_row, ROW_COLOUR, 4.5, "part of x that M sees"))
        _, depth = self.project(np.array([it[0] for it in items]))
        items_px = [pt(it[0]) for it in items]
        radii = [it[2] for it in items]
        for k in np.argsort(-depth):  # far first, near last
            v, colour, radius, name = items[int(k)]
            c = pt(v)
            p.setPen(QPen(QColor("white"), 1.2))
            p.setBrush(QBrush(colour))
            p.drawEllipse(c, radius, radius)
            p.setBrush(Qt.BrushStyle.NoBrush)
            # anchored at the circle's upper right, clear of the circle itself
            pending.append((0, QPointF(c.x() + radius, c.y() - radius), (1.0, -0.4), name, colour))
        caption_y = self.height() - fm.height() - 2
        pending.sort(key=lambda item: item[0])
        dots = [(c.x() - r, c.y() - r, 2 * r, 2 * r) for c, r in zip(items_px, radii, strict=True)]
        placed = place_labels(
            [(q.x(), q.y()) for _, q, _, _, _ in pending],
            [(float(fm.horizontalAdvance(t)), float(fm.height())) for *_, t, _ in pending],
            directions=[d for _, _, d, _, _ in pending],
            obstacles=dots + [m for a, b in drawn for m in segment_marks(
                (a.x(), a.y()), (b.x(), b.y()), step=5.0, max_marks=200)],
            bounds=(1.0, 1.0, self.width() - 2.0, caption_y - 1.0),
        )  # fmt: skip
        self.label_rects = [pl.rect for pl in placed]
        for (_, _, _, text, colour), pl in zip(pending, placed, strict=True):
            paint_placed_label(p, pl, text, colour, fm)
        p.setPen(QColor("#555555"))
        caption = "input space (3-D)"
        if hints_shown():  # how to use it: on screen, outside presentation mode
            caption += ": drag x along the orange line"
        p.drawText(
            QRectF(4, caption_y, self.width() - 8, fm.height()),
            Qt.AlignmentFlag.AlignLeft,
            fm.elidedText(caption, Qt.TextElideMode.ElideRight, self.width() - 8),
        )
        p.end()
