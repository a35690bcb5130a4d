"""The 3-D canvas: holds the camera (view state), projects the scene it is given and paints it.

Drawn with QPainter over the NumPy camera (``engine.geometry.Camera``), so it renders offscreen
and exports to SVG/PDF with labels as text. Mouse gestures on items leave as signals; orbit is
the panel's call too (it knows whether a press hit an item), zoom and hover are the canvas's.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QImage,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from attnsim.engine.geometry import Camera
from attnsim.panels.kit.hidpi import layer_scale as _layer_scale
from attnsim.panels.kit.hidpi import line_scale
from attnsim.panels.kit.hints import hints_shown
from attnsim.viewmodels.space3d import DEFAULT_CAMERA, CanvasData, Scene

from .overlay import KeptOverlay
from .painting import SceneLayers
from .projection import ScreenGeometry, colorbar_rect, project_scene
from .texts import describe

PICK_RADIUS = 10.0


class SpaceCanvas(QWidget):
    """The QPainter view. ``refresh(CanvasData)`` gives it a scene; the camera is its own."""

    pressed = Signal(QPointF)
    dragged = Signal(QPointF)
    released = Signal(QPointF)
    reset_requested = Signal()  # a double-click on empty space

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.camera = DEFAULT_CAMERA
        self.data: CanvasData | None = None
        self.layers = SceneLayers(self.font())
        self.setMouseTracking(True)
        self.setMinimumSize(300, 140)  # the whole panel fits a 1,024 × 768 screen's dock
        self.setAutoFillBackground(False)
        # Every paint covers the whole canvas (white or the kept backdrop first): the panel
        # under it is not painted again when only the canvas changed (a drag's every move).
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self._geom: ScreenGeometry | None = None
        self._geom_key: tuple | None = None
        self.last_tooltip = ""
        self.hover: int | None = None
        self.paint_count = 0
        self._rendering = False
        self._last_press: tuple[float, float, int] | None = None  # x, y, the item it took
        # (key, image): the white ground with the grid and the axes, as last drawn (see
        # _backdrop): a drag's frame is frozen, so every move of it draws the same one.
        self._backdrop_image: tuple[tuple, QImage] | None = None
        self._overlay = KeptOverlay()  # the colour bar and the texts over the arrows

    def sizeHint(self) -> QSize:
        return QSize(640, 420)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:  # View ▸ Text size, presentation mode
            self.layers.set_fonts(self.font())
            self._geom = None  # label boxes are measured in the new font
            self.update()
        super().changeEvent(event)

    @property
    def scene(self) -> Scene | None:
        return None if self.data is None else self.data.scene

    @property
    def header(self) -> str:
        return "" if self.data is None else self.data.header

    # ---- geometry -------------------------------------------------------------------------
    def refresh(self, data: CanvasData) -> None:
        self.data = data
        self._geom = None
        self.update()

    def set_scene(self, scene: Scene, header: str) -> None:
        """Show ``scene`` under ``header``, keeping the rest of the data (focus, tooltips)."""
        if self.data is None:
            self.refresh(CanvasData(scene, None, header))
        else:
            self.refresh(replace(self.data, scene=scene, header=header))

    def set_camera(self, camera: Camera) -> None:
        if camera != self.camera:
            self.camera = camera
            self._geom = None
            self.update()

    def geometry_now(self) -> ScreenGeometry | None:
        """The scene projected with the current camera at the current size (cached)."""
        sc = self.scene
        if sc is None:
            return None
        w, h = float(self.width()), float(self.height())
        key = (id(sc), self.camera, w, h)
        if self._geom is None or self._geom_key != key:
            self._geom = project_scene(sc, self.camera, w, h, self.view_box(), self.layers.metrics)
            self._geom_key = key
        return self._geom

    def view_box(self) -> tuple[float, float]:
        """(top, height) of the band the camera draws into: between the header and the notes.

        The camera projects into a canvas of this height, then everything moves down by
        ``top``; drags undo both (see :meth:`Space3DPanel.drag_target`).
        """
        h = float(self.height())
        top = self.layers.fm_label.height() + 6.0
        n_notes = len(self.scene.notes) if self.scene is not None else 0
        bottom = n_notes * self.layers.fm_small.height() + 6.0
        return top, max(h - top - bottom, 40.0)

    def pick_item(self, x: float, y: float, kinds: tuple[str, ...] | None = None) -> int | None:
        """The item under (x, y): the one whose label is there, else the one whose arrow tip is
        within PICK_RADIUS, nearest the camera first (it is painted on top)."""
        found = self.items_at(x, y, kinds)
        return found[0] if found else None

    def items_at(self, x: float, y: float, kinds: tuple[str, ...] | None = None) -> list[int]:
        """Every item a press at (x, y) could mean, best first: items whose label is under the
        point (nearest the camera first), then items whose tip is within PICK_RADIUS."""
        sc, g = self.scene, self.geometry_now()
        if sc is None or g is None:
            return []
        # Arrow tips and cloud points alike: a key drawn as a point can be hovered and dragged.
        ok = np.ones(len(sc.kind), dtype=bool)
        if kinds is not None:
            ok &= np.isin(sc.kinds, kinds)
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return []
        on_label = idx[g.label_visible[idx]]
        lx, ly = g.label_pos[on_label, 0], g.label_pos[on_label, 1]
        lw, lh = g.label_size[on_label, 0], g.label_size[on_label, 1]
        on_label = on_label[(lx <= x) & (x <= lx + lw) & (ly <= y) & (y <= ly + lh)]
        d2 = ((g.tips[idx] - (x, y)) ** 2).sum(axis=1)
        near = idx[d2 <= PICK_RADIUS**2]
        found = [int(k) for k in on_label[np.argsort(g.depth[on_label], kind="stable")]]
        found += [int(k) for k in near[np.argsort(g.depth[near], kind="stable")] if k not in found]
        return found

    def pick_for_press(self, x: float, y: float) -> tuple[int | None, list[int]]:
        """The item a press at (x, y) takes, and every item it could have meant.

        Where several tips or labels meet (a query and a key that coincide), a second press at
        the same place takes the next of them, so every one of them can be dragged.
        """
        found = self.items_at(x, y)
        if not found:
            self._last_press = None
            return None, found
        last = self._last_press
        pick = found[0]
        again = last is not None and math.hypot(x - last[0], y - last[1]) <= 3.0
        if again and last[2] in found and len(found) > 1:  # type: ignore[index]
            pick = found[(found.index(last[2]) + 1) % len(found)]  # type: ignore[index]
        self._last_press = (x, y, pick)
        return pick, found

    @staticmethod
    def colorbar_rect(w: float, h: float) -> QRectF | None:
        return colorbar_rect(w, h)

    # ---- painting -------------------------------------------------------------------------
    def render(self, *args, **kwargs) -> None:  # type: ignore[override]
        """Qt's render (used by exports), minus the on-screen usage hint."""
        self._rendering = True
        try:
            super().render(*args, **kwargs)
        finally:
            self._rendering = False

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            self.paint(p)
        finally:
            p.end()
        self.paint_count += 1

    def paint(self, p: QPainter) -> None:
        w, h = float(self.width()), float(self.height())
        data, g = self.data, self.geometry_now()
        if data is None or g is None:
            p.fillRect(QRectF(0, 0, w, h), QColor("white"))
            return
        sc = data.scene
        layers = self.layers
        ppx = _layer_scale(p)
        if ppx is None:  # vector output (SVG, PDF) or a transformed painter: draw it all
            p.fillRect(QRectF(0, 0, w, h), QColor("white"))
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            layers.paint_grid_and_axes(p, sc, g)
        else:
            p.drawImage(QPointF(0, 0), self._backdrop(sc, g, w, h, ppx))
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        layers.paint_cloud(p, sc, g)
        ringed = {k for k in (self.hover, data.focused) if k is not None}
        layers.paint_arrows(p, sc, g, ringed)
        layers.paint_labels(p, sc, g)
        hint = not self._rendering and hints_shown()
        if ppx is None:
            layers.paint_colorbar(p, w, h)
            layers.paint_text(p, sc, data.header, w, h, hint=hint)
        else:  # kept: a drag changes what is under them, not them
            self._overlay.paint(p, layers, sc, data.header, (w, h, ppx), hint=hint)

    def _backdrop(self, sc: Scene, g: ScreenGeometry, w: float, h: float, ppx: float) -> QImage:
        """The white ground, the grid and the axes with their names, at the device's pixels
        (drawn 1:1 under the rest); made again only when something it shows has moved."""
        key = (
            w, h, ppx, line_scale(), self.layers.font_label.key(), sc.frame.axis_names,
            g.grid.tobytes(), g.axes.tobytes(), g.origin.tobytes(), g.axis_text.tobytes(),
        )  # fmt: skip
        kept = self._backdrop_image
        if kept is not None and kept[0] == key:
            return kept[1]
        image = QImage(
            max(1, round(w * ppx)), max(1, round(h * ppx)),
            QImage.Format.Format_RGB32,  # opaque: drawn by copying, not blending
        )  # fmt: skip
        image.setDevicePixelRatio(ppx)
        image.fill(QColor("white"))
        q = QPainter(image)
        q.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        q.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self.layers.paint_grid_and_axes(q, sc, g)
        q.end()
        self._backdrop_image = (key, image)
        return image

    # ---- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.pressed.emit(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.dragged.emit(event.position())
        else:
            self._hover(event.position(), event.globalPosition().toPoint())
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.released.emit(event.position())
        event.accept()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if self.pick_item(event.position().x(), event.position().y()) is None:
            self.reset_requested.emit()
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.set_camera(self.camera.zoomed(1.15**steps))
        event.accept()

    def leaveEvent(self, event) -> None:
        if self.hover is not None:
            self.hover = None
            self.update()
        super().leaveEvent(event)

    def _hover(self, pos: QPointF, global_pos: QPoint) -> None:
        k = self.pick_item(pos.x(), pos.y())
        if k != self.hover:
            self.hover = k
            self.update()
        text = "" if k is None or self.data is None else describe(self.data, k)
        if text != self.last_tooltip:
            self.last_tooltip = text
            if text:
                QToolTip.showText(global_pos, text, self)
            else:
                QToolTip.hideText()
