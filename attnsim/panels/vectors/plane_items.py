"""The drawn pieces of the vector editor's plane: arrow groups (shafts, heads, names), point
clouds that skip unchanged updates, and the square grid. Geometry comes from
:mod:`attnsim.viewmodels.vectors`; everything is clipped for the painters (see ``_safe_draw``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from attnsim.viewmodels.vectors import arrow_geometry, grid_lines

from .._safe_draw import clip_points, clip_segments, extended_box, tick_step

HEAD_PX = 11.0  # arrow-head length on screen
LABEL_PX = 5.0
STACK_PX = 15.0
GRID_PX = 36.0  # major grid lines at least this far apart (pixels)


def transparent(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


class Points:
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
        moved_only = (
            self.pos is not None
            and len(pos) == len(self.pos) == len(self.item.data)
            and np.array_equal(rows, self.rows)
        )
        self.pos, self.rows = pos, rows
        if moved_only and len(pos):
            self._move(pos)
        elif len(pos):
            self.item.setData(x=pos[:, 0], y=pos[:, 1], data=rows if len(rows) else None)
        else:
            self.item.setData(x=[], y=[])
        self.item.setVisible(len(pos) > 0)

    def _move(self, pos: np.ndarray) -> None:
        """The same points (count, style, rows) at new places: written into the item's record
        array, as ``setData`` would leave it, without its per-point style lookup (34 ms for the
        2,048 tips of a long scenario, where a drag moves one)."""
        item = self.item
        item.data["x"] = pos[:, 0]
        item.data["y"] = pos[:, 1]
        # what addPoints does after filling the records: bounds and the drawing are redone
        item.prepareGeometryChange()
        item.informViewBoundsChanged()
        item.bounds = [None, None]
        item.invalidate()
        item.sigPlotChanged.emit(item)

    def restyle(self) -> None:
        """Redraw every point at the next :meth:`set` (after a brush change)."""
        self.pos = None


class ArrowGroup:
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

    def set_color(self, color: QColor) -> None:
        if self.color == color:
            return
        self.color = QColor(color)
        pen = QPen(self.shafts.opts["pen"])
        pen.setColor(color)
        self.shafts.setPen(pen)
        self.heads.setBrush(QBrush(color))
        hp = QPen(self.heads.pen())
        hp.setColor(color)
        self.heads.setPen(hp)
        for label in self.labels:
            label.setColor(color)

    def draw(self, pixel: float, names: bool = True) -> None:
        """Lay out shafts, heads and (unless ``names`` is False: the caller places them) labels
        for the current tips at ``pixel`` view units / px."""
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
        if not names:
            return
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


class Grid:
    """Our own square grid, not the axes' (showGrid): theirs repainted ~4 ms of antialiased
    lines on every frame of a drag. The axes' ticks use the same step, so lines and numbers
    agree."""

    def __init__(self, plot: pg.PlotItem, vb: pg.ViewBox) -> None:
        self.plot, self.vb = plot, vb
        self.major = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 34), connect="pairs", antialias=False)
        self.minor = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 14), connect="pairs", antialias=False)
        for g in (self.minor, self.major):
            g.setZValue(-10)
            vb.addItem(g, ignoreBounds=True)
        self._key: tuple | None = None

    def update(self, pixel: float) -> None:
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
        if key == self._key:
            return
        self._key = key
        if step is None:
            for g in (self.major, self.minor):
                g.setData([], [])
            for name in ("left", "bottom"):
                self.plot.getAxis(name).setTickSpacing()
            return
        major = grid_lines((x0, x1), (y0, y1), step)
        minor = grid_lines((x0, x1), (y0, y1), step / 5)
        self.major.setData(major[:, 0], major[:, 1])
        self.minor.setData(minor[:, 0], minor[:, 1])
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setTickSpacing(levels=[(step, 0.0)])
