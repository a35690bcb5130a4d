"""The drag plane of the vector editor: arrows from the origin whose tips can be dragged.

A pyqtgraph plot with equal aspect, a light grid and axis names. It draws what it is given (a
:class:`~attnsim.viewmodels.vectors.PlanePicture`, tips in plane coordinates) and reports drags as
signals in plane coordinates; it never edits anything itself. The drawn pieces are in
:mod:`.plane_items`, the placement of names in :mod:`.plane_labels`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from attnsim.engine.geometry import pick
from attnsim.panels.kit.tip_drag import TipDragBox
from attnsim.viewmodels.vectors import (
    DETAIL_LIMIT,
    PlanePicture,
    affine_map,
    arrow_naming,
    view_range,
)

from .._safe_draw import BoundedTickAxis, safe_range
from ..style import KEY, MUTED, QUERY, TOKEN, VALUE
from .held import HeldRedraws
from .plane_items import ArrowGroup, Grid, Points, transparent
from .plane_labels import LabelPlacer

PICK_PX = 14.0  # how near (screen pixels) a press must be to a tip to grab it
MAX_REF_LABELS = 6
DOT_PX = 5.0  # the unnamed vectors of a long sequence: dots at their tips
DOT_ALPHA = 110  # light enough that the named arrows stand out of a dense cloud
HOVER_BRUSH = (230, 159, 0, 150)
_AXIS_TEXT_WIDTH = 30  # pyqtgraph's AxisItem starts with this much room for tick labels


def style_colors(style: str) -> tuple[QColor, QColor, QColor]:
    """(editable, highlighted, reference) colours for the edited ``style``: 'x' tokens,
    or the 'q', 'k', 'v' of a direct scenario."""
    if style == "q":
        return transparent(QUERY, 150), QUERY, transparent(KEY, 150)
    if style == "k":
        return KEY, KEY.darker(140), QUERY
    if style == "v":
        return VALUE, VALUE.darker(140), MUTED
    return TOKEN, QUERY, MUTED


class PlaneView(HeldRedraws, pg.PlotWidget):
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
        self.grid = Grid(item, self.vb)
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
        # Room above the plot for half a tick label: a tick at the very top of the range is
        # written across the axis's end, and was cut by the widget's edge in a wide dock.
        item.layout.setContentsMargins(1, 7, 1, 1)
        zero_pen = pg.mkPen("#B0B0B0", width=1)
        self.vb.addItem(pg.InfiniteLine(0, angle=90, pen=zero_pen), ignoreBounds=True)
        self.vb.addItem(pg.InfiniteLine(0, angle=0, pen=zero_pen), ignoreBounds=True)
        self.reference = ArrowGroup(self.vb, QColor("#999999"), 1.5, dashed=True, bold=False, z=1)
        self.main = ArrowGroup(self.vb, QColor("#333333"), 2.0, dashed=False, bold=False, z=2)
        self.highlight = ArrowGroup(self.vb, QColor("#D55E00"), 3.0, dashed=False, bold=True, z=3)
        self.labels = LabelPlacer(self.vb)
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
            brush=pg.mkBrush(transparent(self.main.color, DOT_ALPHA)),
            hoverable=True,
            hoverBrush=pg.mkBrush(*HOVER_BRUSH),
            hoverSize=9,
            tip=self._tip_text,
        )
        ref_cloud = pg.ScatterPlotItem(
            size=DOT_PX, pen=None, brush=pg.mkBrush(transparent(self.reference.color, DOT_ALPHA))
        )
        cloud.setZValue(1.5)
        ref_cloud.setZValue(0.5)
        self.vb.addItem(cloud)
        self.vb.addItem(ref_cloud)
        self.cloud, self.ref_cloud = Points(cloud), Points(ref_cloud)
        self.grips = Points(self.handles)
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

    @property
    def label_rects(self) -> list[tuple[float, float, float, float]]:
        """The shown names' rectangles in scene pixels, as placed."""
        return self.labels.rects

    @property
    def leaders(self) -> pg.PlotDataItem:
        """Thin lines from an arrow's tip to its name when the name had to move away."""
        return self.labels.leaders

    def refresh(self, picture: PlanePicture) -> None:
        """Draw ``picture`` (colours, arrows, axis names); fitting the view is the caller's."""
        self.set_colors(*style_colors(picture.style))
        self.set_arrows(
            picture.tips, picture.labels, picture.highlight, picture.ref_tips, picture.ref_labels
        )
        self.set_axis_labels(picture.x_label, picture.y_label)

    def set_colors(self, main: QColor, highlight: QColor, reference: QColor) -> None:
        self.main.set_color(main)
        self.highlight.set_color(highlight)
        self.reference.set_color(reference)
        for cloud, color in ((self.cloud, main), (self.ref_cloud, reference)):
            brush = pg.mkBrush(transparent(color, DOT_ALPHA))
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
        # While a tip is dragged the named set stays put (no arrows popping in and out).
        naming = arrow_naming(tips, highlight, self._drag_row, self.featured)
        others, named, stack = naming.others, naming.named, naming.stack
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

    def _redraw(self, *_: object) -> None:
        if self._redraw_waits():
            return
        pixel = self._pixel()
        self.grid.update(pixel)
        # The highlight's name chooses its place first.
        groups = (self.highlight, self.main, self.reference)
        # Names the placer puts are not laid out by their groups first: that set every name's
        # anchor and position twice per mouse move of a drag.
        names = not self.labels.places(groups)
        for group in (self.reference, self.main, self.highlight):
            group.draw(pixel, names=names)
        self.labels.place(groups)

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
