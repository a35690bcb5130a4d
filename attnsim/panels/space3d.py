"""The 3-D query/key space: queries and keys as arrows from the origin, orbit, zoom and drag.

Drawn with QPainter over the NumPy camera (``engine.geometry.Camera``), so it renders offscreen
and exports to SVG/PDF with labels as text. All geometry comes from ``views.space3d``; this module
only paints it and turns mouse gestures into workbench edits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph.functions as pgfn
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPolygonF,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QMenu,
    QPushButton,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.geometry import Camera, pick
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.views.space3d import (
    Frame,
    Scene,
    SceneInput,
    ViewOptions,
    arrow_geometry,
    as_direction,
    axis_segments,
    build_scene,
    drag_world_point,
    grid_segments,
    move_within,
    paint_order,
    place_labels,
    undo_layout,
)

from ._safe_draw import VIEW_MARGIN, clip_points
from .base import Panel
from .kit.colour_bar import paint_colour_bar
from .style import KEY, MUTED, QUERY, TOKEN, VALUE, fmt, fmt_vec, weight_cmap
from .widgets import FlowLayout, group

DEFAULT_CAMERA = Camera()
# Looking straight down at the plane of the first two axes: the natural view when d_k <= 2.
TOP_CAMERA = Camera(yaw_deg=0.0, pitch_deg=90.0)
# Preset views: (menu text template, yaw, pitch); {0} {1} {2} are the shown axis names.
PRESET_VIEWS = (
    ("Look along {2}: the {0}–{1} plane", 0.0, 90.0),
    ("Look along {1}: the {0}–{2} plane", 0.0, 0.0),
    ("Look along {0}: the {1}–{2} plane", 270.0, 0.0),
)
PICK_RADIUS = 10.0
DRAG_THRESHOLD = 3.0
ORBIT_DEG_PER_PX = 0.4
DRAGGABLE = ("query", "key", "other_query")
LEAK = "#b00020"  # labels of forbidden keys that still get weight (mask value 0)
COLORBAR_W = 12.0


def _lut() -> list[QColor]:
    cmap = weight_cmap()
    return [cmap.map(v, mode="qcolor") for v in np.linspace(0.0, 1.0, 101)]


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


class SpaceCanvas(QWidget):
    """The QPainter view. Holds the camera (view state); the panel gives it a scene."""

    def __init__(self, panel: Space3DPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.camera = DEFAULT_CAMERA
        self.scene: Scene | None = None
        self.header = ""
        self.setMouseTracking(True)
        self.setMinimumSize(300, 200)
        self.setAutoFillBackground(False)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.font_label = QFont()
        self.font_label.setPointSizeF(8.5)
        self.font_small = QFont()
        self.font_small.setPointSizeF(7.5)
        self.font_bold = QFont(self.font_label)
        self.font_bold.setBold(True)
        self._lut = _lut()
        self._fm_label = QFontMetricsF(self.font_label)
        self._widths: dict[str, float] = {}
        self._styles_for: Scene | None = None
        self._style_cache: list[tuple[QPen, QPen, QBrush, QPen]] = []
        self._style_pool: dict[tuple, tuple[QPen, QPen, QBrush, QPen]] = {}
        self._geom: ScreenGeometry | None = None
        self._geom_key: tuple | None = None
        self.last_tooltip = ""
        self.hover: int | None = None
        self.paint_count = 0
        self._rendering = False

    def sizeHint(self) -> QSize:
        return QSize(640, 420)

    # ---- geometry -------------------------------------------------------------------------
    def set_scene(self, scene: Scene, header: str) -> None:
        self.scene = scene
        self.header = header
        self._geom = None
        self.update()

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
        if self._geom is not None and self._geom_key == key:
            return self._geom
        cam = self.camera
        fr = sc.frame
        m = len(sc.kind)
        axes3 = axis_segments(fr.extent).reshape(-1, 3)
        grid3 = grid_segments(fr.extent).reshape(-1, 3)
        # One projection for everything: items, origin, axes, grid, cloud.
        top, view_h = self.view_box()
        world = np.vstack([sc.world, np.zeros((1, 3)), axes3 * fr.scale, grid3 * fr.scale,
                           sc.points * fr.scale])  # fmt: skip
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
        gr = allxy[m + 7 : m + 7 + grid3.shape[0]]
        pts = allxy[m + 7 + grid3.shape[0] :]
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
        fm = self._fm_label
        line_h = fm.height() + 2.0
        sizes = np.zeros((m, 2))
        labels = sc.label
        sizes[arrows, 0] = [self._text_width(labels[k]) + 6.0 for k in arrows.tolist()]
        sizes[arrows, 1] = line_h
        away = tips[arrows] - origin
        n = np.linalg.norm(away, axis=1, keepdims=True)
        away = np.where(n > 1e-9, away / np.maximum(n, 1e-9), np.array([[1.0, 0.0]]))
        prio = np.select(
            [kinds == "query", kinds == "key", kinds == "absent", kinds == "value"],
            [0.0, 1.0, 2.0, 3.0],
            4.0,
        )
        # Among keys, the most attended get room first.
        weight = np.nan_to_num(sc.weight[arrows])
        prio = prio + np.where(kinds == "key", 1.0 - weight, 0.0) * 0.5
        # Axis names sit just past the axes' ends; labels avoid them and the colour bar.
        obstacles = []
        axis_text = np.zeros((3, 2))
        for a, name in enumerate(fr.axis_names):
            d = axes[a, 1] - origin
            at = axes[a, 1] + d / (float(np.hypot(*d)) or 1.0) * 10.0
            tw = self._text_width(name)
            axis_text[a] = (at[0] - tw / 2, at[1] + fm.ascent() / 2 - 1)
            if name:
                obstacles.append([at[0] - tw / 2 - 2, at[1] - fm.height() / 2, at[0] + tw / 2 + 2,
                                  at[1] + fm.height() / 2])  # fmt: skip
        cb = self.colorbar_rect(w, h)
        if cb is not None:
            obstacles.append([cb.left() - 12, cb.top() - 16, w, cb.bottom() + 8])
        bottom = top + view_h
        label_pos = np.zeros((m, 2))
        visible = np.zeros(m, dtype=bool)
        label_pos[arrows], visible[arrows] = place_labels(
            tips[arrows],
            away,
            sizes[arrows],
            prio,
            bounds=(0.0, top, w, bottom),
            obstacles=np.asarray(obstacles, float).reshape(-1, 4),
        )
        self._geom = ScreenGeometry(
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
        self._geom_key = key
        return self._geom

    def view_box(self) -> tuple[float, float]:
        """(top, height) of the band the camera draws into: between the header and the notes.

        The camera projects into a canvas of this height, then everything moves down by
        ``top``; drags undo both (see :meth:`Space3DPanel.drag_target`).
        """
        h = float(self.height())
        top = self._fm_label.height() + 6.0
        n_notes = len(self.scene.notes) if self.scene is not None else 0
        bottom = n_notes * QFontMetricsF(self.font_small).height() + 6.0
        return top, max(h - top - bottom, 40.0)

    def _text_width(self, text: str) -> float:
        width = self._widths.get(text)
        if width is None:
            if len(self._widths) > 4096:
                self._widths.clear()
            width = self._widths[text] = self._fm_label.horizontalAdvance(text)
        return width

    def pick_item(self, x: float, y: float, kinds: tuple[str, ...] | None = None) -> int | None:
        """The item whose arrow tip is nearest to (x, y) within PICK_RADIUS, nearer first."""
        sc, g = self.scene, self.geometry_now()
        if sc is None or g is None:
            return None
        # Arrow tips and cloud points alike: a key drawn as a point can be hovered and dragged.
        ok = np.ones(len(sc.kind), dtype=bool)
        if kinds is not None:
            ok &= np.isin(sc.kinds, kinds)
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return None
        # Near the cursor, prefer the item nearest the camera (it is painted on top).
        d2 = ((g.tips[idx] - (x, y)) ** 2).sum(axis=1)
        close = idx[d2 <= PICK_RADIUS**2]
        if close.size > 1:
            return int(close[np.argmin(g.depth[close])])
        hit = pick(g.tips[idx], x, y, PICK_RADIUS)
        return None if hit is None else int(idx[hit])

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

    def _color(self, w: float) -> QColor:
        return self._lut[round(min(max(w, 0.0), 1.0) * 100)]

    def paint(self, p: QPainter) -> None:
        w, h = float(self.width()), float(self.height())
        p.fillRect(QRectF(0, 0, w, h), QColor("white"))
        sc, g = self.scene, self.geometry_now()
        if sc is None or g is None:
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self._paint_grid_and_axes(p, sc, g)
        self._paint_cloud(p, sc, g)
        self._paint_arrows(p, sc, g)
        self._paint_labels(p, sc, g)
        self._paint_colorbar(p, w, h)
        self._paint_text(p, sc, w, h)

    def _paint_grid_and_axes(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        p.setPen(QPen(QColor("#e4e4e4"), 1.0))
        grid = g.grid
        p.drawLines([QPointF(*grid[k, e]) for k in range(grid.shape[0]) for e in (0, 1)])
        o = g.origin
        names = sc.frame.axis_names
        p.setFont(self.font_label)
        for a in range(3):
            neg, pos = g.axes[a]
            if not names[a]:  # a padded axis (d_k < 3): a faint line, no name
                p.setPen(QPen(QColor("#d0d0d0"), 1.0, Qt.PenStyle.DashLine))
                p.drawLine(QPointF(*neg), QPointF(*pos))
                continue
            p.setPen(QPen(QColor("#c4c4c4"), 1.0))
            p.drawLine(QPointF(*neg), QPointF(*o))
            p.setPen(QPen(QColor("#6b6b6b"), 1.3))
            p.drawLine(QPointF(*o), QPointF(*pos))
            p.setPen(QColor("#444444"))
            p.drawText(QPointF(*g.axis_text[a]), names[a])

    def _paint_cloud(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        # Thousands of dots: small squares without antialiasing are ten times cheaper and look
        # the same at this size.
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        if g.points.shape[0]:
            p.setPen(QPen(QColor(130, 130, 130, 120), 2.0))
            poly = pgfn.create_qpolygonf(g.points.shape[0])
            pgfn.ndarray_from_qpolygonf(poly)[:] = g.points
            p.drawPoints(poly)
        # Keys beyond the arrow limit: points shaded by the engine's weight, 8 shades (a
        # forbidden key that gets nothing is light grey); other queries and values beyond it:
        # points in their own faded colour.
        rest = np.flatnonzero(~sc.arrow)
        if rest.size:
            kinds = sc.kinds[rest]
            keys = rest[kinds == "key"]
            nothing = sc.masked[keys] & ~sc.leaks[keys]
            groups: list[tuple[QColor, np.ndarray]] = []
            if nothing.any():
                groups.append((QColor(200, 200, 200), keys[nothing]))
            shaded = keys[~nothing]
            bins = np.minimum((np.nan_to_num(sc.weight[shaded]) * 8).astype(int), 7)
            for b in np.unique(bins).tolist():
                groups.append((QColor(self._color((b + 0.5) / 8)), shaded[bins == b]))
            for kind, base in (("other_query", QUERY), ("value", VALUE)):
                sel = rest[kinds == kind]
                if sel.size:
                    col = QColor(base)
                    col.setAlpha(110)
                    groups.append((col, sel))
            for col, sel in groups:
                p.setPen(QPen(col, 3.5))
                poly = pgfn.create_qpolygonf(sel.size)
                pgfn.ndarray_from_qpolygonf(poly)[:] = g.tips[sel]
                p.drawPoints(poly)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)

    def _color_of(self, kind: str, masked: bool, leaks: bool) -> tuple[QColor, Qt.PenStyle]:
        if kind == "query":
            return QColor(QUERY), Qt.PenStyle.SolidLine
        if kind == "other_query":
            c = QColor(QUERY)
            c.setAlpha(95)
            return c, Qt.PenStyle.SolidLine
        if kind == "key":
            if masked and leaks:
                # Forbidden, yet weighted (mask value 0): dashed but at full strength.
                return QColor(KEY), Qt.PenStyle.DashLine
            if masked:
                c = QColor(KEY)
                c.setAlpha(110)
                return c, Qt.PenStyle.DashLine
            return QColor(KEY), Qt.PenStyle.SolidLine
        if kind == "absent":
            c = QColor(MUTED)
            c.setAlpha(150)
            return c, Qt.PenStyle.DashLine
        return QColor(VALUE), Qt.PenStyle.SolidLine

    def _styles(self, sc: Scene) -> list[tuple[QPen, QPen, QBrush, QPen] | None]:
        """Per item: shaft pen, head outline pen, head brush, label pen (cached per scene).

        Only items drawn as arrows get a style (None for cloud points).
        """
        if self._styles_for is sc:
            return self._style_cache
        pool = self._style_pool
        if len(pool) > 2048:
            pool.clear()
        arrows = np.flatnonzero(sc.arrow)
        out: list[tuple[QPen, QPen, QBrush, QPen] | None] = [None] * len(sc.kind)
        widths = np.round(sc.width[arrows], 2).tolist()
        shades = np.round(np.nan_to_num(sc.weight[arrows]) * 100).astype(int).tolist()
        masked = sc.masked[arrows].tolist()
        leaks = sc.leaks[arrows].tolist()
        for a, k in enumerate(arrows.tolist()):
            kind = sc.kind[k]
            # Pens are reused across scenes: a drag makes a new scene on every move.
            key = (kind, masked[a], leaks[a], widths[a], shades[a])
            style_k = pool.get(key)
            if style_k is None:
                col, pen_style = self._color_of(kind, masked[a], leaks[a])
                shaft = QPen(col, widths[a], pen_style, Qt.PenCapStyle.FlatCap)
                outline = QPen(col, 1.0)
                if kind == "key" and (not masked[a] or leaks[a]):
                    # The head is shaded by the weight the key gets (viridis, see colour bar).
                    brush = QBrush(self._lut[min(max(shades[a], 0), 100)])
                    # A leaking forbidden key's label is in the warning colour.
                    text = QPen(QColor(LEAK if leaks[a] else TOKEN))
                else:
                    brush = QBrush(col)
                    text = QPen(col)
                style_k = pool[key] = (shaft, outline, brush, text)
            out[k] = style_k
        self._styles_for, self._style_cache = sc, out
        return out

    def _paint_arrows(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        o = QPointF(*g.origin)
        styles = self._styles(sc)
        order = g.order.tolist()
        # Python lists of the drawn arrows only (the cloud's thousands stay in NumPy).
        ends = g.shaft_end[g.order].tolist()
        heads = g.heads[g.order].tolist()
        for a, k in enumerate(order):
            style = styles[k]
            if style is None:  # pragma: no cover - the order holds arrows only
                continue
            shaft, outline, brush, _ = style
            p.setPen(shaft)
            p.drawLine(o, QPointF(*ends[a]))
            (x0, y0), (x1, y1), (x2, y2) = heads[a]
            p.setPen(outline)
            p.setBrush(brush)
            p.drawPolygon(QPolygonF((QPointF(x0, y0), QPointF(x1, y1), QPointF(x2, y2))))
        # A ring around the hovered item and the focused key, arrow or cloud point.
        focused = self.panel.wb.focused_key
        ringed = {self.hover, None if focused is None else sc.index("key", focused)}
        for k in sorted(r for r in ringed if r is not None and r < len(sc.kind)):
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor("#222222"), 1.0, Qt.PenStyle.DotLine))
            p.drawEllipse(QPointF(*g.tips[k]), 7.0, 7.0)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(QColor("#222222")))
        p.drawEllipse(o, 2.5, 2.5)

    def _paint_labels(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        ascent = self._fm_label.ascent()
        styles = self._styles(sc)
        backdrop = QColor(255, 255, 255, 200)
        shown = g.order[g.label_visible[g.order]]  # far to near
        pos = g.label_pos[shown].tolist()
        size = g.label_size[shown].tolist()
        tips = g.tips[shown].tolist()
        font = None
        leader = QPen(QColor(150, 150, 150, 170), 0.8)
        for a, k in enumerate(shown.tolist()):
            (x, y), (bw, bh) = pos[a], size[a]
            # A label pushed away from its tip gets a faint leader line back to it.
            tx, ty = tips[a]
            nx, ny = min(max(tx, x), x + bw), min(max(ty, y), y + bh)
            if (nx - tx) ** 2 + (ny - ty) ** 2 > 14.0**2:
                p.setPen(leader)
                p.drawLine(QPointF(tx, ty), QPointF(nx, ny))
            p.fillRect(QRectF(x, y, bw, bh), backdrop)
            want = self.font_bold if sc.kind[k] == "query" else self.font_label
            if want is not font:
                p.setFont(want)
                font = want
            style = styles[k]
            assert style is not None
            p.setPen(style[3])
            p.drawText(QPointF(x + 3.0, y + 1.0 + ascent), sc.label[k])

    @staticmethod
    def colorbar_rect(w: float, h: float) -> QRectF | None:
        top, bottom = 40.0, min(h - 40.0, 200.0)
        if bottom - top < 40:
            return None
        return QRectF(w - COLORBAR_W - 30.0, top, COLORBAR_W, bottom - top)

    def _paint_colorbar(self, p: QPainter, w: float, h: float) -> None:
        rect = self.colorbar_rect(w, h)
        if rect is None:
            return
        p.setFont(self.font_small)
        ink = QColor("#444444")
        paint_colour_bar(
            p,
            rect,
            [self._color(float(v)) for v in np.linspace(0, 1, 6)],
            vertical=True,
            labels=[(v, f"{v:g}") for v in (1.0, 0.5, 0.0)],
            fm=QFontMetricsF(self.font_small),
            ink=ink,
        )
        p.setPen(ink)
        p.drawText(QPointF(rect.left() - 6, rect.top() - 6), "weight")

    def _paint_text(self, p: QPainter, sc: Scene, w: float, h: float) -> None:
        p.setFont(self.font_label)
        fm = QFontMetricsF(self.font_label)
        p.setPen(QColor("#222222"))
        p.drawText(QPointF(6, 4 + fm.ascent()), self.header)
        p.setFont(self.font_small)
        fs = QFontMetricsF(self.font_small)
        p.setPen(QColor("#555555"))
        y = h - 4 - fs.descent()
        for note in reversed(sc.notes):
            p.drawText(QPointF(6, y), fs.elidedText(note, Qt.TextElideMode.ElideRight, w - 12))
            y -= fs.height()
        # How to use the view: on screen only, never in an exported figure.
        if not self._rendering:
            hint = "drag a tip to edit · drag space to orbit · wheel zooms"
            hw = fs.horizontalAdvance(hint)
            if hw + fm.horizontalAdvance(self.header) + 30 < w:
                p.setPen(QColor("#8a8a8a"))
                p.drawText(QPointF(w - hw - 6, 4 + fm.ascent()), hint)

    # ---- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.panel.on_press(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.panel.on_drag(event.position())
        else:
            self._hover(event.position(), event.globalPosition().toPoint())
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.panel.on_release(event.position())
        event.accept()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if self.pick_item(event.position().x(), event.position().y()) is None:
            self.panel.reset_view()
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
        text = "" if k is None else self.panel.describe(k)
        if text != self.last_tooltip:
            self.last_tooltip = text
            if text:
                QToolTip.showText(global_pos, text, self)
            else:
                QToolTip.hideText()


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
        self._menu_names: tuple[str, str, str] | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        # Flow rows: in a narrow dock the controls wrap instead of widening the panel.
        row1 = FlowLayout(h_spacing=4, v_spacing=3)
        self.view_mode = QComboBox()
        self.view_mode.addItems(["Three axes", "Best 3-D subspace"])
        self.view_mode.setToolTip(
            "Which 3-D view of the matching space: three of its coordinate axes, or the 3-D "
            "subspace that captures most of the squared length of Q and K together"
        )
        self.view_mode.currentIndexChanged.connect(self._view_mode_changed)
        row1.addWidget(self.view_mode)
        self.axis_boxes: list[QComboBox] = []
        for a in range(3):
            box = QComboBox()
            box.setToolTip(f"Matching-space coordinate drawn along the view's axis {a + 1}")
            box.setMinimumContentsLength(6)
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.currentIndexChanged.connect(lambda idx, a=a: self._axis_changed(a, idx))
            self.axis_boxes.append(box)
        self.axes_group = group(*self.axis_boxes)
        row1.addWidget(self.axes_group)
        self.views_button = QToolButton()
        self.views_button.setText("Views")
        self.views_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.views_menu = QMenu(self.views_button)
        self.views_button.setMenu(self.views_menu)
        self.views_button.setToolTip("Look straight along one axis at the plane of the other two")
        self.reset_button = QPushButton("Reset view")
        self.reset_button.setToolTip("Back to the default camera (double-click empty space too)")
        self.reset_button.clicked.connect(self.reset_view)
        row1.addWidget(group(self.views_button, self.reset_button))
        layout.addLayout(row1)

        row2 = FlowLayout(h_spacing=10, v_spacing=2)
        self.direction_box = QCheckBox("Query as direction")
        self.direction_box.setChecked(True)
        self.direction_box.setToolTip(
            "The query arrow is rescaled to show its direction. Scores use the full numerical "
            "query. Dragging it then turns it and keeps its length."
        )
        self.others_box = QCheckBox("Other queries")
        self.others_box.setToolTip("Also draw the other tokens' queries, faded")
        self.values_box = QCheckBox("Values")
        self.values_box.setToolTip("Also draw the value vectors (green); they are not draggable")
        self.layout_box = QCheckBox("AttentionViz layout")
        self.layout_box.setToolTip(
            "Make distance follow attention without changing it: all keys move by one vector "
            "(a constant per query, which softmax ignores) and queries are scaled up and keys "
            "down by one factor (q·k unchanged). The weights shown stay the engine's."
        )
        checks: tuple[QCheckBox, ...] = (
            self.direction_box,
            self.others_box,
            self.values_box,
            self.layout_box,
        )
        for check in checks:
            check.toggled.connect(self._options_changed)
            row2.addWidget(check)
        layout.addLayout(row2)

        self.canvas = SpaceCanvas(self)
        layout.addWidget(self.canvas, 1)
        self.schedule_refresh()

    # ---- view state (never edits the workbench) ---------------------------------------------
    def figure_widget(self) -> QWidget:
        return self.canvas

    @property
    def camera(self) -> Camera:
        return self.canvas.camera

    def set_camera(self, camera: Camera) -> None:
        self.canvas.set_camera(camera)

    def default_camera(self) -> Camera:
        return TOP_CAMERA if self._d_k <= 2 else DEFAULT_CAMERA

    def reset_view(self) -> None:
        self.canvas.set_camera(self.default_camera())

    def view_plane(self, which: int) -> None:
        """Look straight at one plane of two shown axes (0: axes 1-2, 1: axes 1-3, 2: 2-3)."""
        _, yaw, pitch = PRESET_VIEWS[which]
        cam = self.canvas.camera
        self.canvas.set_camera(Camera(yaw, pitch, cam.distance, cam.fov_deg, cam.zoom))

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

    def _options_changed(self, *_: object) -> None:
        if self.is_updating:
            return
        self.options = replace(
            self.options,
            direction=self.direction_box.isChecked(),
            other_queries=self.others_box.isChecked(),
            values=self.values_box.isChecked(),
            layout=self.layout_box.isChecked(),
        )
        # A direction-only query means nothing once distances are laid out for attention.
        self.direction_box.setEnabled(not self.options.layout)
        self.schedule_refresh()

    def _view_mode_changed(self, index: int) -> None:
        if self.is_updating:
            return
        self.options = replace(self.options, subspace=index == 1)
        self.schedule_refresh()

    def _axis_changed(self, which: int, index: int) -> None:
        if self.is_updating or index < 0:
            return
        axes = list(self.options.axes)
        if index in axes and axes.index(index) != which:
            # Choosing an axis shown elsewhere swaps the two, so three different axes remain.
            axes[axes.index(index)] = axes[which]
        axes[which] = index
        self.options = replace(self.options, axes=tuple(axes))  # type: ignore[arg-type]
        self.schedule_refresh()

    def _sync_controls(self) -> None:
        sc = self.wb.scenario
        d_k = sc.d_k
        with self.updating():
            if d_k != self._d_k:
                first = self._d_k == -1
                self._d_k = d_k
                # With many coordinates three axes show little: start on the best subspace.
                self.options = replace(self.options, axes=(0, 1, 2), subspace=d_k > 4)
                if first or self.canvas.camera in (DEFAULT_CAMERA, TOP_CAMERA):
                    self.canvas.set_camera(self.default_camera())
            names = list(sc.qk_axes)
            for a, box in enumerate(self.axis_boxes):
                if [box.itemText(j) for j in range(box.count())] != names:
                    box.clear()
                    box.addItems(names)
                if d_k > 3:
                    box.setCurrentIndex(self.options.axes[a])
            self.axes_group.setVisible(d_k > 3 and not self.options.subspace)
            self.view_mode.setEnabled(d_k > 3)
            self.view_mode.setCurrentIndex(1 if self.options.subspace and d_k > 3 else 0)
            self.values_box.setEnabled(True)
            self.others_box.setEnabled(sc.n_queries > 1)

    def _rebuild_views_menu(self, names: tuple[str, str, str]) -> None:
        self.views_menu.clear()
        act = QAction("Default view", self.views_menu)
        act.triggered.connect(self.reset_view)
        self.views_menu.addAction(act)
        shown = [n or f"axis {a + 1} (= 0)" for a, n in enumerate(names)]
        for k, (text, _, _) in enumerate(PRESET_VIEWS):
            act = QAction(text.format(*shown), self.views_menu)
            act.triggered.connect(lambda _=False, k=k: self.view_plane(k))
            self.views_menu.addAction(act)

    # ---- drawing ----------------------------------------------------------------------------
    def scene_input(self) -> SceneInput:
        """The engine's numbers for the focused head, as the scene builder takes them."""
        wb = self.wb
        sc = wb.scenario
        tr = wb.trace
        absent_K = np.zeros((0, tr.d_k))
        absent_labels: tuple[str, ...] = ()
        if sc.mode == "tokens" and sc.absent:
            head = sc.heads[min(wb.focused_head, len(sc.heads) - 1)]
            absent_labels = tuple(sc.absent)
            absent_K = np.vstack([sc.absent[t] for t in absent_labels]) @ head.Wk
        points = self._points
        if points is not None and points.shape[1] != tr.d_k:
            points = None
        return SceneInput(
            Q=tr.Q,
            K=tr.K,
            V=tr.V,
            weights=tr.weights,
            scores=tr.scores,
            mask=tr.mask,
            receiving=wb.receiving,
            query_labels=tuple(sc.query_labels),
            key_labels=tuple(sc.tokens),
            qk_axes=tuple(sc.qk_axes),
            v_axes=tuple(sc.v_axes),
            absent_K=absent_K,
            absent_labels=absent_labels,
            mask_value=tr.mask_value,
            points=points,
        )

    def figure_widgets(self) -> list[QWidget]:
        return [self.canvas]

    def refresh(self) -> None:
        self._sync_controls()
        inp = self.scene_input()
        frame = self._drag.frame if self._drag is not None else None
        scene = build_scene(inp, self.options, frame)
        self._input = inp
        self.scene = scene
        if self._menu_names != scene.frame.axis_names:
            self._menu_names = scene.frame.axis_names
            self._rebuild_views_menu(scene.frame.axis_names)
        sc = self.wb.scenario
        i = self.wb.receiving
        tr = self.wb.trace
        head = ""
        if sc.mode == "tokens" and len(sc.heads) > 1:
            name = sc.heads[self.wb.focused_head].name or f"head {self.wb.focused_head + 1}"
            head = f" · {name}"
        header = (
            f"{sc.query_labels[i]}'s query · weights = softmax(q·k / {fmt(tr.divisor, 3)}){head}"
        )
        self.canvas.set_scene(scene, header)

    # ---- hover ------------------------------------------------------------------------------
    def describe(self, k: int) -> str:
        """Tooltip text for item k: token, vector, score and weight (the engine's numbers)."""
        sc_ = self.scene
        inp = self._input
        if sc_ is None or inp is None:
            return ""
        kind, row = sc_.kind[k], int(sc_.row[k])
        i = inp.receiving
        qname = inp.query_labels[i]
        tokens_mode = self.wb.scenario.mode == "tokens"
        if kind in ("query", "other_query"):
            q = inp.Q[row]
            lines = [
                f"{inp.query_labels[row]} — query" + (" (receiving)" if kind == "query" else ""),
                f"q = {fmt_vec(q, 3)}" + ("  (x @ Wq)" if tokens_mode else ""),
                f"‖q‖ = {fmt(float(np.linalg.norm(q)), 3)}",
            ]
            if kind == "other_query":
                lines.append("click to make it the receiving query")
            return "\n".join(lines)
        if kind == "key":
            k_ = inp.K[row]
            # Always the engine's weight: under a 0 mask a forbidden key still gets some.
            w = float(inp.weights[i, row])
            weight = f"{w:.4f}"
            if not inp.mask[i, row]:
                weight += (
                    "  (forbidden, but masked with 0 instead of −∞: it leaks)"
                    if w > 0
                    else "  (forbidden by the mask)"
                )
            return "\n".join(
                [
                    f"{inp.key_labels[row]} — key",
                    f"k = {fmt_vec(k_, 3)}" + ("  (x @ Wk)" if tokens_mode else ""),
                    f"score q·k = {fmt(float(inp.scores[i, row]), 4)}  ({qname}'s query)",
                    f"weight = {weight}",
                ]
            )
        if kind == "absent":
            k_ = inp.absent_K[row]
            return "\n".join(
                [
                    f"{inp.absent_labels[row]} — absent from the sentence",
                    f"k = x @ Wk = {fmt_vec(k_, 3)}",
                    f"score q·k = {fmt(float(sc_.score[k]), 4)} if it were present "
                    f"({qname}'s query); no weight",
                ]
            )
        v = inp.V[row]
        return "\n".join(
            [
                f"{inp.key_labels[row]} — value",
                f"v = {fmt_vec(v, 3)}",
                f"weight from {qname} = {inp.weights[i, row]:.4f}",
            ]
        )

    # ---- gestures ---------------------------------------------------------------------------
    def on_press(self, pos: QPointF) -> None:
        self.flush()  # the scene must match the workbench before picking
        canvas = self.canvas
        k = canvas.pick_item(pos.x(), pos.y())
        if k is None or self.scene is None:
            self._drag = DragState("orbit", QPointF(pos), QPointF(pos))
            return
        sc_ = self.scene
        kind, row = sc_.kind[k], int(sc_.row[k])
        if kind not in DRAGGABLE:
            what = (
                f"{sc_.label[k]} is not in the sentence, so its key is only shown"
                if kind == "absent"
                else "values are shown for reference; edit them in the vectors panel"
            )
            self.wb.say(what)
            self._drag = DragState("none", QPointF(pos), QPointF(pos))
            return
        sc = self.wb.scenario
        if sc.mode == "tokens" and not np.any(sc.X[row]):  # type: ignore[index]
            which = "query" if kind != "key" else "key"
            matrix = "Wq" if which == "query" else "Wk"
            self.refuse(
                ValueError(
                    f"{sc.tokens[row]}'s input vector x is zero, so its {which} is 0 for every "
                    f"{matrix}: it cannot be dragged"
                )
            )
            self._drag = DragState("none", QPointF(pos), QPointF(pos))
            return
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
        fr = d.frame
        tr = self.wb.trace
        d_k = tr.d_k
        cam = self.canvas.camera
        top, view_h = self.canvas.view_box()
        world = drag_world_point(
            cam, (x, y - top), d.depth, self.canvas.width(), view_h, dims=min(d_k, 3)
        )
        p = world / fr.scale
        kind = "key" if d.kind == "key" else "query"
        current = (tr.K if kind == "key" else tr.Q)[d.row]
        u = current * fr.factor if kind == "query" else (current + fr.shift) / fr.factor
        if kind == "query" and fr.direction_length > 0:
            # The arrow shows only a direction: turning it keeps the shown length.
            length = float(np.linalg.norm(fr.shown(u)))
            p = as_direction(p, length if length > 0 else fr.direction_length)[0]
        u_new = move_within(u, fr.basis, p)
        return kind, d.row, undo_layout(u_new, kind, fr.shift, fr.factor)

    def _drag_to(self, x: float, y: float) -> None:
        d = self._drag
        target = self.drag_target(x, y)
        if d is None or target is None:
            return
        kind, row, vec = target
        wb = self.wb
        sc = wb.scenario
        label = (sc.query_labels if kind == "query" else sc.tokens)[row]
        names: list[str] = []

        def make() -> Scenario:
            if sc.mode == "direct":
                new = edits.place_vector(sc, kind, row, vec)
                matrix = "Q" if kind == "query" else "K"
                part = "" if sc.d_k <= 3 else " (only the shown part; hidden coordinates kept)"
                message = f"Dragging {label}'s {kind} edits row {row} of {matrix} only{part}"
                text = f"Drag {label}'s {kind}"
            else:
                h = min(wb.focused_head, len(sc.heads) - 1)
                which = edits.placed_matrix(sc, kind)
                new = edits.place_vector(sc, kind, row, vec, h)
                head = f" of {sc.heads[h].name or f'head {h + 1}'}" if len(sc.heads) > 1 else ""
                extra = " and the absent keys" if kind == "key" and sc.absent else ""
                message = (
                    f"Dragging {label}'s {kind} edits {which}{head}: every {kind} moved with it"
                    f"{extra} (the smallest change of {which} that puts this {kind} there)"
                )
                text = f"Drag {label}'s {kind} (edits {which})"
            if kind == "query" and d.frame is not None and d.frame.direction_length > 0:
                message += "; direction only, its length is kept"
            if not d.announced:
                d.announced = True
                wb.say(message)
            names.append(text)
            return new

        self.propose(make, lambda _: names[0], drag=d.drag_id)


__all__ = ["Space3DPanel", "SpaceCanvas"]
