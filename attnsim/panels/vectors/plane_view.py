"""The drag plane of the vector editor: arrows from the origin whose tips can be dragged.

A pyqtgraph plot with equal aspect, a light grid and axis names. It draws what it is given (tips
in plane coordinates, computed by :mod:`attnsim.views.vectors`) and reports drags as signals in
plane coordinates; it never edits anything itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QWidget

from attnsim.engine.geometry import pick
from attnsim.panels.kit.labels import leader_segment, place_labels, segment_marks
from attnsim.panels.kit.tip_drag import TipDragBox
from attnsim.views.vectors import (
    DETAIL_LIMIT,
    FEATURED,
    affine_map,
    arrow_geometry,
    featured_rows,
    grid_lines,
    stack_indices,
    view_range,
)

from ._safe_draw import (
    BoundedTickAxis,
    clip_points,
    clip_segments,
    extended_box,
    safe_range,
    tick_step,
)

HEAD_PX = 11.0  # arrow-head length on screen
PICK_PX = 14.0  # how near (screen pixels) a press must be to a tip to grab it
LABEL_PX = 5.0
SHAFT_OBSTACLES_UP_TO = 16  # names avoid the arrows' shafts when there are this few
# Up to this many names are placed by the shared placer (a few ms); a larger crowd keeps the
# quick per-arrow placement, so a drag among 64 arrows stays smooth.
PLACED_LABELS_UP_TO = 24
MAX_REF_LABELS = 6
STACK_PX = 15.0
GRID_PX = 36.0  # major grid lines at least this far apart (pixels)
DOT_PX = 5.0  # the unnamed vectors of a long sequence: dots at their tips
DOT_ALPHA = 110  # light enough that the named arrows stand out of a dense cloud
HOVER_BRUSH = (230, 159, 0, 150)
# Named arrows' tips at least this share of the longest arrow apart, in x or in y: about a
# name's width and height when the view is fitted to the arrows.
FEATURED_GAP = (0.25, 0.1)
_AXIS_TEXT_WIDTH = 30  # pyqtgraph's AxisItem starts with this much room for tick labels


def _transparent(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


class _Points:
    """A ScatterPlotItem that is given points (m, 2) and their rows (m,), and skips the
    (costly: a Python loop over the points) update when neither changed; hidden when empty."""

    def __init__(self, item: pg.ScatterPlotItem) -> None:
        self.item = item
        self.pos: np.ndarray | None = None  # None: what the item shows is unknown
        self.rows = np.zeros(0, dtype=int)
        item.setVisible(False)

    def set(self, pos: np.ndarray, rows: np.ndarray | None = None) -> None:
        rows = np.zeros(0, dtype=int) if rows is None else rows
        if (
            self.pos is not None
            and np.array_equal(pos, self.pos)
            and np.array_equal(rows, self.rows)
        ):
            return
        self.pos, self.rows = pos, rows
        if len(pos):
            self.item.setData(x=pos[:, 0], y=pos[:, 1], data=rows if len(rows) else None)
        else:
            self.item.setData(x=[], y=[])
        self.item.setVisible(len(pos) > 0)

    def restyle(self) -> None:
        """Redraw every point at the next :meth:`set` (after a brush change)."""
        self.pos = None


class _ArrowGroup:
    """Arrows of one style: shafts (one line item), filled heads (one path item), labels."""

    def __init__(
        self, vb: pg.ViewBox, color: QColor, width: float, *, dashed: bool, bold: bool, z: float
    ) -> None:
        pen = pg.mkPen(color, width=width)
        if dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.color = QColor(color)
        self.shafts = pg.PlotDataItem(pen=pen, connect="pairs", antialias=True)
        self.shafts.setZValue(z)
        self.heads = QGraphicsPathItem()
        head_pen = QPen(color)
        head_pen.setCosmetic(True)
        head_pen.setWidthF(1.0)
        self.heads.setPen(head_pen)
        self.heads.setBrush(QBrush(color))
        self.heads.setZValue(z + 0.5)
        vb.addItem(self.shafts)
        vb.addItem(self.heads)
        self.vb = vb
        self.font = QFont()
        self.font.setBold(bold)
        self.labels: list[pg.TextItem] = []
        self.tips = np.zeros((0, 2))
        self._label_texts: list[str] = []
        self.show_labels = True
        self._anchors: dict[int, tuple[float, float]] = {}

    def set(
        self,
        tips: np.ndarray,
        labels: Sequence[str],
        show_labels: bool = True,
        stack: np.ndarray | None = None,
    ) -> None:
        self.tips = np.asarray(tips, dtype=float).reshape(-1, 2)
        self.stack = np.zeros(len(self.tips)) if stack is None else np.asarray(stack, float)
        self.show_labels = show_labels
        if not show_labels:
            labels = []
        while len(self.labels) < len(labels):
            item = pg.TextItem("", color=self.color)
            item.setFont(self.font)
            item.setZValue(5)
            self.vb.addItem(item)
            self.labels.append(item)
        for k, item in enumerate(self.labels):
            if k < len(labels):
                if k >= len(self._label_texts) or self._label_texts[k] != labels[k]:
                    item.setText(labels[k])
                if not item.isVisible():
                    item.setVisible(True)
            elif item.isVisible():
                item.setVisible(False)
        self._label_texts = list(labels)

    def visible_texts(self) -> list[str]:
        return self._label_texts if self.show_labels else []

    def draw(self, pixel: float) -> None:
        """Lay out shafts, heads and labels for the current tips at ``pixel`` view units / px."""
        tips = self.tips
        (x_lo, x_hi), (y_lo, y_hi) = self.vb.viewRange()
        # Nothing reaches the painters more than a few views away from what is shown, and
        # nothing non-finite at all (see _safe_draw).
        box = extended_box((x_lo, x_hi, y_lo, y_hi))
        with np.errstate(over="ignore", invalid="ignore"):
            shafts, heads = arrow_geometry(tips, HEAD_PX * pixel)
        shafts = clip_segments(shafts, box).reshape(-1, 2)
        self.shafts.setData(shafts[:, 0], shafts[:, 1])
        path = QPainterPath()
        inside = np.isfinite(heads).all(axis=(1, 2)) & (
            (heads[:, :, 0] >= box[0]).all(axis=1)
            & (heads[:, :, 0] <= box[1]).all(axis=1)
            & (heads[:, :, 1] >= box[2]).all(axis=1)
            & (heads[:, :, 1] <= box[3]).all(axis=1)
        )
        for tri in heads[inside]:
            if tri[0, 0] == tri[1, 0] and tri[0, 1] == tri[1, 1]:
                continue  # a zero arrow has no head
            path.moveTo(QPointF(tri[0, 0], tri[0, 1]))
            path.lineTo(QPointF(tri[1, 0], tri[1, 1]))
            path.lineTo(QPointF(tri[2, 0], tri[2, 1]))
            path.closeSubpath()
        self.heads.setPath(path)
        with np.errstate(over="ignore", invalid="ignore"):
            norms = np.hypot(tips[:, 0], tips[:, 1]) if len(tips) else np.zeros(0)
        at, finite = clip_points(tips, box)
        for k in range(len(tips) if self.show_labels else 0):
            item = self.labels[k]
            if not finite[k]:
                item.setVisible(False)
                continue
            u = tips[k] / norms[k] if 0 < norms[k] < np.inf else np.array([0.7071, 0.7071])
            # Anchor the text on the side the arrow points to, so it never covers the shaft...
            ax = 0.0 if u[0] > 0.35 else 1.0 if u[0] < -0.35 else 0.5
            ay = 1.0 if u[1] > 0.35 else 0.0 if u[1] < -0.35 else 0.5
            # ...unless it would run out of the view: then it goes on the inner side.
            width = item.textItem.boundingRect().width() * pixel
            if ax == 0.0 and at[k, 0] + width > x_hi:
                ax, ay = 1.0, (1.0 if u[1] >= 0 else 0.0)
            elif ax == 1.0 and at[k, 0] - width < x_lo:
                ax, ay = 0.0, (1.0 if u[1] >= 0 else 0.0)
            if self._anchors.get(k) != (ax, ay):
                self._anchors[k] = (ax, ay)
                item.setAnchor((ax, ay))
            # Names of arrows that end at the same point are stacked, not printed on each other.
            drop = self.stack[k] * STACK_PX * pixel
            item.setPos(
                float(at[k, 0] + u[0] * LABEL_PX * pixel),
                float(at[k, 1] + u[1] * LABEL_PX * pixel - drop),
            )


class PlaneView(pg.PlotWidget):
    """Arrows in a plane. Signals report drags of the editable arrows' tips, in plane units.

    Signals
    -------
    drag_started(int)            row whose tip was grabbed
    drag_moved(int, float, float, bool)  row, where its tip should go (x, y), Shift held
    drag_finished(int)
    tip_clicked(int)
    """

    drag_started = Signal(int)
    drag_moved = Signal(int, float, float, bool)
    drag_finished = Signal(int)
    tip_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        # Drags that start off a tip pan the plane; the box hands the others to _drag_*.
        self.vb = TipDragBox(lambda scene_pos: self.tip_at_scene(scene_pos), fixed=False)
        # Bounded axes: a tick spacing left from a smaller view never yields millions of labels.
        axes = {name: BoundedTickAxis(name) for name in ("left", "bottom")}
        super().__init__(parent, viewBox=self.vb, axisItems=axes)
        self.vb.drag_started.connect(self._drag_start)
        self.vb.drag_moved.connect(self._drag_move)
        self.vb.drag_finished.connect(self._drag_finish)
        self.vb.tip_clicked.connect(lambda row: self.tip_clicked.emit(int(row)))
        self.setMinimumSize(180, 160)
        item = self.getPlotItem()
        # Our own grid, not the axes' (showGrid): theirs repainted ~4 ms of antialiased lines
        # on every frame of a drag. Ticks use the same step, so lines and numbers agree.
        self.grid_major = pg.PlotDataItem(
            pen=pg.mkPen(0, 0, 0, 34), connect="pairs", antialias=False
        )
        self.grid_minor = pg.PlotDataItem(
            pen=pg.mkPen(0, 0, 0, 14), connect="pairs", antialias=False
        )
        for g in (self.grid_minor, self.grid_major):
            g.setZValue(-10)
            self.vb.addItem(g, ignoreBounds=True)
        self._grid_key: tuple | None = None
        item.hideButtons()
        item.setMenuEnabled(False)
        for name in ("left", "bottom"):
            item.getAxis(name).setPen(pg.mkPen("#555555"))
            item.getAxis(name).setTextPen(pg.mkPen("#333333"))
            # No SI prefixes: '(x0.001)' on an axis of plain coordinates only confuses.
            item.getAxis(name).enableAutoSIPrefix(False)
        # The left axis only ever widens. Letting it shrink again closed a loop at small sizes
        # (392 x 305): a refit changes the tick labels, their width the view's width, that
        # width the next refit, and so on for ever, with the event loop stuck in relayouts.
        item.getAxis("left").setStyle(autoReduceTextSpace=False)
        zero_pen = pg.mkPen("#B0B0B0", width=1)
        self.vb.addItem(pg.InfiniteLine(0, angle=90, pen=zero_pen), ignoreBounds=True)
        self.vb.addItem(pg.InfiniteLine(0, angle=0, pen=zero_pen), ignoreBounds=True)
        self.reference = _ArrowGroup(self.vb, QColor("#999999"), 1.5, dashed=True, bold=False, z=1)
        self.main = _ArrowGroup(self.vb, QColor("#333333"), 2.0, dashed=False, bold=False, z=2)
        self.highlight = _ArrowGroup(self.vb, QColor("#D55E00"), 3.0, dashed=False, bold=True, z=3)
        # Thin lines from an arrow's tip to its name when the name had to move away.
        self.leaders = pg.PlotDataItem(pen=pg.mkPen("#9A9A9A", width=1), connect="pairs")
        self.leaders.setZValue(4)
        self.vb.addItem(self.leaders)
        self.label_rects: list[tuple[float, float, float, float]] = []  # scene px, as placed
        self.handles = pg.ScatterPlotItem(
            size=13,
            pen=None,
            brush=pg.mkBrush(0, 0, 0, 28),
            hoverable=True,
            hoverBrush=pg.mkBrush(*HOVER_BRUSH),
            tip=self._tip_text,
        )
        self.handles.setZValue(4)
        self.vb.addItem(self.handles)
        # Long sequences: the vectors without an arrow are dots (one item each, no labels);
        # a dot shows its token on hover and can be dragged like a tip.
        cloud = pg.ScatterPlotItem(
            size=DOT_PX,
            pen=None,
            brush=pg.mkBrush(_transparent(self.main.color, DOT_ALPHA)),
            hoverable=True,
            hoverBrush=pg.mkBrush(*HOVER_BRUSH),
            hoverSize=9,
            tip=self._tip_text,
        )
        ref_cloud = pg.ScatterPlotItem(
            size=DOT_PX, pen=None, brush=pg.mkBrush(_transparent(self.reference.color, DOT_ALPHA))
        )
        cloud.setZValue(1.5)
        ref_cloud.setZValue(0.5)
        self.vb.addItem(cloud)
        self.vb.addItem(ref_cloud)
        self.cloud, self.ref_cloud = _Points(cloud), _Points(ref_cloud)
        self.grips = _Points(self.handles)
        self.grips.item.setVisible(True)
        self.featured = np.zeros(0, dtype=int)  # rows drawn as named arrows (long sequences)
        self._ref_points = np.zeros((0, 2))  # every reference tip, arrow or dot
        self.tips = np.zeros((0, 2))  # editable tips, plane coordinates, row order
        self.highlight_row: int | None = None
        self.tooltip_for: Callable[[int], str] = lambda row: ""
        self._drag_row: int | None = None
        self._grab_offset = np.zeros(2)
        self._auto_range = True  # False once the user pans or zooms
        self._fit_target: tuple[float, float, float, float] | None = None
        self._axis_labels: tuple[str, str] | None = None
        self.vb.sigRangeChanged.connect(self._redraw)
        self.vb.sigResized.connect(self._resized)
        self.vb.sigRangeChangedManually.connect(self._manual_range)

    # ---- content -------------------------------------------------------------------------------
    def set_axis_labels(self, x: str, y: str) -> None:
        if (x, y) == self._axis_labels:
            return
        self._axis_labels = (x, y)
        item = self.getPlotItem()
        item.setLabel("bottom", x)
        item.setLabel("left", y)

    def set_colors(self, main: QColor, highlight: QColor, reference: QColor) -> None:
        for group, color in (
            (self.main, main),
            (self.highlight, highlight),
            (self.reference, reference),
        ):
            if group.color != color:
                group.color = QColor(color)
                pen = group.shafts.opts["pen"]
                pen = QPen(pen)
                pen.setColor(color)
                group.shafts.setPen(pen)
                group.heads.setBrush(QBrush(color))
                hp = QPen(group.heads.pen())
                hp.setColor(color)
                group.heads.setPen(hp)
                for label in group.labels:
                    label.setColor(color)
        for cloud, color in ((self.cloud, main), (self.ref_cloud, reference)):
            brush = pg.mkBrush(_transparent(color, DOT_ALPHA))
            if cloud.item.opts["brush"].color() != brush.color():
                cloud.item.setBrush(brush)
                cloud.restyle()

    def set_arrows(
        self,
        tips: np.ndarray,
        labels: Sequence[str],
        highlight: int | None,
        ref_tips: np.ndarray | None = None,
        ref_labels: Sequence[str] = (),
    ) -> None:
        """Editable arrows ``tips`` (n, 2) with names; ``highlight`` stands out; reference
        arrows (m, 2) are drawn dashed and cannot be dragged.

        Up to ``DETAIL_LIMIT`` vectors each is a named arrow. Beyond it only ``highlight``, the
        ``FEATURED`` longest and the one being dragged are; the others are dots (still
        draggable and with a tooltip), and so are the references."""
        tips = np.asarray(tips, dtype=float).reshape(-1, 2)
        n = len(tips)
        self.tips = tips
        self.highlight_row = highlight
        has_hi = highlight is not None and 0 <= highlight < n
        if n <= DETAIL_LIMIT:
            others = np.array([k for k in range(n) if k != highlight], dtype=int)
            stack = stack_indices(tips)
            named = np.ones(n, dtype=bool)
        else:
            if self._drag_row is not None and len(self.featured):
                # While a tip is dragged the named set stays put (no arrows popping in and out)
                pinned = (*self.featured.tolist(), self._drag_row)
                others = featured_rows(tips, highlight, 0, pinned)
            else:
                pinned = () if self._drag_row is None else (self._drag_row,)
                longest = float(np.max(np.hypot(tips[:, 0], tips[:, 1])))
                gap = (FEATURED_GAP[0] * longest, FEATURED_GAP[1] * longest)
                others = featured_rows(tips, highlight, FEATURED, pinned, min_gap=gap)
            named = np.zeros(n, dtype=bool)
            named[others] = True
            if has_hi:
                named[highlight] = True
            stack = np.zeros(n)
            stack[named] = stack_indices(tips[named])
        self.featured = others
        self.main.set(tips[others], [labels[k] for k in others], stack=stack[others])
        if has_hi:
            self.highlight.set(tips[[highlight]], [labels[highlight]], stack=stack[[highlight]])
        else:
            self.highlight.set(np.zeros((0, 2)), [])
        # Grips (grey discs, hover) under the named tips; the others are the cloud's dots. Both
        # are updated only when their points change: a drag moves one grip, not 2,048 dots.
        grips, dots = np.flatnonzero(named), np.flatnonzero(~named)
        self.grips.set(tips[grips], grips)
        self.cloud.set(tips[dots], dots)
        ref = np.zeros((0, 2)) if ref_tips is None else np.asarray(ref_tips, float).reshape(-1, 2)
        self._ref_points = ref
        if len(ref) > DETAIL_LIMIT:
            self.reference.set(np.zeros((0, 2)), [])
            self.ref_cloud.set(ref)
        else:
            # Many dashed reference arrows with names become a thicket: name them only when few.
            self.reference.set(ref, list(ref_labels), show_labels=len(ref) <= MAX_REF_LABELS)
            self.ref_cloud.set(np.zeros((0, 2)))
        self._redraw()

    def all_points(self) -> np.ndarray:
        return np.vstack([self.tips, self._ref_points])

    def fit(self, force: bool = False, *, content: bool = True) -> None:
        """Show the origin and every arrow; unless ``force``, only if something is out of view
        (so a user's zoom survives edits). Never during a drag: the view would slide away.

        ``content``: the arrows changed (not the view's size), so the axes may shrink back to
        what their new tick labels need; the picture then depends on the arrows and the size
        only, and an undo shows exactly what was there before."""
        if self._drag_row is not None:
            return
        pts = self.all_points()
        if not force and len(pts):
            (x0, x1), (y0, y1) = self.vb.viewRange()
            inside = (pts[:, 0] >= x0) & (pts[:, 0] <= x1) & (pts[:, 1] >= y0) & (pts[:, 1] <= y1)
            if inside.all():
                return
        longest = max(
            (
                len(t)
                for g in (self.main, self.highlight, self.reference)
                for t in g.visible_texts()
            ),
            default=0,
        )
        size = (max(self.vb.width(), 50.0), max(self.vb.height(), 50.0))
        margin = (min(20.0 + 7.0 * longest, 0.25 * size[0]), 24.0)
        with np.errstate(over="ignore", invalid="ignore"):
            r = view_range(pts[np.isfinite(pts).all(axis=1)], size, margin)
        x0, x1 = safe_range(r[0], r[1])
        y0, y1 = safe_range(r[2], r[3])
        target = (x0, x1, y0, y1)
        if content and target != self._fit_target:
            self._reset_axis_space()
        self._fit_target = target
        self.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
        if force:
            self._auto_range = True

    def _reset_axis_space(self) -> None:
        # The left axis only widens between content changes (see __init__); at a content
        # change it starts again from pyqtgraph's initial text width.
        axis = self.getPlotItem().getAxis("left")
        update = getattr(axis, "_updateWidth", None)  # pyqtgraph 0.13 and 0.14 have both
        if update is not None and getattr(axis, "textWidth", None) != _AXIS_TEXT_WIDTH:
            axis.textWidth = _AXIS_TEXT_WIDTH
            update()

    def _resized(self, *_: object) -> None:
        if self._auto_range and self._drag_row is None:
            self.fit(force=True, content=False)
        self._redraw()

    def _manual_range(self, *_: object) -> None:
        self._auto_range = False

    @property
    def auto_range(self) -> bool:
        """True until the user pans or zooms; a forced :meth:`fit` makes it True again."""
        return self._auto_range

    def _pixel(self) -> float:
        # From the range and the size, not Qt's inverted transform: that one is singular
        # (and pyqtgraph's answer meaningless) once a view spans more than ~1e6 units a pixel.
        (x0, x1), (y0, y1) = self.vb.viewRange()
        w, h = self.vb.width(), self.vb.height()
        if w < 1 or h < 1:
            return 0.01
        with np.errstate(over="ignore", invalid="ignore"):
            value = max((x1 - x0) / w, (y1 - y0) / h)
        return float(value) if np.isfinite(value) and value > 0 else 0.01

    def _update_grid(self, pixel: float) -> None:
        (x0, x1), (y0, y1) = self.vb.viewRange()
        length = max(self.vb.width(), self.vb.height(), 1.0)
        # One square grid: the step that suits the longer side in pixels, but never more
        # than MAX_TICKS lines along either side.
        steps = [
            tick_step(lo, hi, (hi - lo) / pixel if pixel > 0 else length, GRID_PX)
            for lo, hi in ((x0, x1), (y0, y1))
        ]
        step = None if None in steps else max(steps)  # type: ignore[type-var]
        key = (x0, x1, y0, y1, step)
        if key == self._grid_key:
            return
        self._grid_key = key
        item = self.getPlotItem()
        if step is None:
            for g in (self.grid_major, self.grid_minor):
                g.setData([], [])
            for name in ("left", "bottom"):
                item.getAxis(name).setTickSpacing()
            return
        major = grid_lines((x0, x1), (y0, y1), step)
        minor = grid_lines((x0, x1), (y0, y1), step / 5)
        self.grid_major.setData(major[:, 0], major[:, 1])
        self.grid_minor.setData(minor[:, 0], minor[:, 1])
        for name in ("left", "bottom"):
            item.getAxis(name).setTickSpacing(levels=[(step, 0.0)])

    def _redraw(self, *_: object) -> None:
        pixel = self._pixel()
        self._update_grid(pixel)
        for group in (self.reference, self.main, self.highlight):
            group.draw(pixel)
        self._place_labels()

    def _place_labels(self) -> None:
        # One placer for every name in the plane (all styles), so names of tokens at the
        # origin or at the same tip never print over each other; the highlight chooses first.
        groups = (self.highlight, self.main, self.reference)
        if sum(len(g.visible_texts()) for g in groups) > PLACED_LABELS_UP_TO:
            for g in groups:
                for item in g.labels[: len(g.visible_texts())]:
                    if not item.isVisible():
                        item.setVisible(True)  # it may have been left out while placed
            self.label_rects = []
            self.leaders.setData([], [])
            return
        items, anchors, sizes, dirs = [], [], [], []
        for group in groups:
            for k in range(len(group.visible_texts())):
                item, tip = group.labels[k], group.tips[k]
                if not np.all(np.isfinite(tip)):
                    continue
                sp = self.vb.mapViewToScene(QPointF(float(tip[0]), float(tip[1])))
                br = item.textItem.boundingRect()
                norm = float(np.hypot(tip[0], tip[1]))
                u = tip / norm if norm > 0 else np.array([0.7071, 0.7071])
                group._anchors.pop(k, None)  # its own placement must re-apply its anchor
                items.append(item)
                anchors.append((sp.x(), sp.y()))
                sizes.append((br.width(), br.height()))
                dirs.append((float(u[0]), -float(u[1])))  # scene y grows downwards
        # The shafts are obstacles too (small squares along each one): a name beside an
        # arrow, not across it.
        origin = self.vb.mapViewToScene(QPointF(0.0, 0.0))
        shafts = []
        # (Only for a few arrows: a crowd of names is placed against each other alone.)
        for ax, ay in anchors if len(anchors) <= SHAFT_OBSTACLES_UP_TO else ():
            shafts += segment_marks((origin.x(), origin.y()), (ax, ay))
        box = self.vb.sceneBoundingRect()
        crowd = len(anchors) > SHAFT_OBSTACLES_UP_TO
        placed = place_labels(
            anchors, sizes, directions=dirs, gap=LABEL_PX, obstacles=shafts,
            bounds=(box.x(), box.y(), box.width(), box.height()),
            max_rings=3 if crowd else 12, overflow="drop" if crowd else "stack",
        )  # fmt: skip
        segments = []
        for item, pl in zip(items, placed, strict=True):
            if item.isVisible() != pl.shown:
                item.setVisible(pl.shown)
            if not pl.shown:
                continue
            if tuple(item.anchor) != (0.0, 0.0):
                item.setAnchor((0, 0))
            item.setPos(self.vb.mapSceneToView(QPointF(pl.rect[0], pl.rect[1])))
            if pl.leader:
                for x, y in leader_segment(pl):
                    v = self.vb.mapSceneToView(QPointF(x, y))
                    segments.append((v.x(), v.y()))
        self.label_rects = [pl.rect for pl in placed if pl.shown]
        if segments:
            xy = np.asarray(segments)
            self.leaders.setData(xy[:, 0], xy[:, 1])
        else:
            self.leaders.setData([], [])

    def _tip_text(self, x: float, y: float, data: object) -> str:
        try:
            return self.tooltip_for(int(data))  # type: ignore[call-overload]
        except (TypeError, ValueError, IndexError):
            return ""

    # ---- picking and dragging ------------------------------------------------------------------
    def tips_in_scene(self) -> np.ndarray:
        """Editable tips in scene pixels (n, 2)."""
        # The view-to-scene map is affine: map three points, not every tip (2,048 Qt calls).
        o, x, y = (
            self.vb.mapViewToScene(QPointF(px, py))
            for px, py in ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0))
        )
        origin = np.array([o.x(), o.y()])
        return affine_map(
            self.tips, origin, np.array([x.x(), x.y()]) - origin, np.array([y.x(), y.y()]) - origin
        )

    def tip_at_scene(self, scene_pos: QPointF) -> int | None:
        if not len(self.tips):
            return None
        return pick(self.tips_in_scene(), scene_pos.x(), scene_pos.y(), PICK_PX)

    @property
    def dragging(self) -> bool:
        return self._drag_row is not None

    def _drag_start(self, row: int, _drag: int, x: float, y: float) -> None:
        # Keep the grab point under the cursor: the tip moves with the mouse, not to it.
        self._grab_offset = self.tips[row] - np.array([x, y])
        self._drag_row = row
        self.drag_started.emit(row)

    def _drag_move(self, row: int, _drag: int, x: float, y: float, shift: bool) -> None:
        target = np.array([x, y]) + self._grab_offset
        self.drag_moved.emit(row, float(target[0]), float(target[1]), shift)

    def _drag_finish(self, row: int, _drag: int) -> None:
        self._drag_row = None
        self.drag_finished.emit(row)
