"""The training curves: loss on the first and on the repeated half of the evaluation batch
(the phase change shows as the repeated half dropping away), and the best induction and
previous-token scores over the steps. ``refresh(points)`` draws them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsView,
    QHBoxLayout,
    QStyleOptionGraphicsItem,
    QWidget,
)

from attnsim.engine.ticks import nice_ceil
from attnsim.model.induction_session import CurvePoint
from attnsim.panels.kit.hidpi import title_size

from ..kit.painted import PaintCache, copy_scale, frame_image
from ..kit.plot_note import PlotNote
from ..style import KEY, QUERY


class CachedPlot(pg.PlotWidget):
    """A plot that copies its last painting until its curves or its frame change: the curves
    change once per training chunk, the window repaints many times in between.

    The frame (axes, ticks, title: everything but the curves) is kept as a picture of its own
    while the ranges, the layout and the size stay the same; a new chunk then costs a copy of
    the frame and the curves drawn over it. ``refresh`` of the curves' data calls
    :meth:`curves_changed`; a change of the scene that leaves the frame as it was (the echo of
    new data, reported a turn later) repaints nothing."""

    def __init__(self) -> None:
        self.picture = PaintCache()  # before the base class, whose set-up resizes
        self._frame: tuple[tuple, QImage] | None = None  # (key, the plot without its curves)
        self.frame_paints = 0  # how often the frame was painted afresh (tests count them)
        self.note: PlotNote | None = None  # what the plot says while it has no curve
        super().__init__(enableMenu=False)  # no context menu to build (a third of the cost)
        self._painted_layout: tuple | None = None
        self.scene().changed.connect(self._changed)

    def layout_key(self) -> tuple:
        """What the frame's picture depends on besides the widget's size: the ranges, where the
        view box, the axes and the title sit, and the texts."""
        item = self.plotItem
        vb = item.getViewBox()
        rects = [vb.sceneBoundingRect(), item.titleLabel.sceneBoundingRect()]
        rects += [item.getAxis(n).sceneBoundingRect() for n in ("left", "bottom")]
        return (
            tuple(tuple(r) for r in vb.viewRange()),
            tuple(r.getRect() for r in rects),
            item.titleLabel.text,
            tuple(item.getAxis(n).labelText for n in ("left", "bottom")),
            self.note.shown() if self.note is not None else None,  # a part of the frame
        )

    def curves_changed(self) -> None:
        """The curves' data changed: paint them again (the frame stays if it can)."""
        self.picture.clear()

    def _changed(self, *_: object) -> None:
        self.fit_title()  # (the left axis takes its width from its first painting)
        if self.layout_key() != self._painted_layout:
            self.picture.clear()
            self._frame = None

    def changeEvent(self, e: QEvent) -> None:
        if e.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange):
            self.picture.clear()
            self._frame = None
        super().changeEvent(e)
        if e.type() == QEvent.Type.FontChange and getattr(self, "_title_lines", None):
            self._one_line_width, self._title_shown = None, ""  # measured again
            self.fit_title()

    def resizeEvent(self, ev: QResizeEvent | None) -> None:
        self.picture.clear()
        self._frame = None
        super().resizeEvent(ev)
        self.fit_title()

    def set_title_lines(self, first: str, second: str) -> None:
        """The title, on one line where the plot is wide enough and else on two (a narrow dock
        cut "Loss of the first and repeated half" at "repeated")."""
        self._title_lines: tuple[str, str] | None = (first, second)
        self._title_shown = self.plotItem.titleLabel.text  # (what _plot set: not set again)
        self._one_line_width: float | None = None  # measured as drawn, once per font
        self.fit_title()

    def fit_title(self) -> None:
        lines = getattr(self, "_title_lines", None)
        if lines is None:
            return
        one = f"{lines[0]} {lines[1]}"
        if self._one_line_width is None:
            self._set_title(one)
            self._one_line_width = self.plotItem.titleLabel.item.boundingRect().width()
        # The title sits over the view box, right of the left axis; a title wider than that
        # makes the plot wider than its widget, which then cuts its right side off.
        room = self.width() - self.plotItem.getAxis("left").width() - 16
        self._set_title(one if self._one_line_width <= room else "<br>".join(lines))

    def _set_title(self, text: str) -> None:
        if text != self._title_shown:
            self._title_shown = text
            self.setTitle(text, size=title_size(), color="#222222")
            # The plot was held at least as wide as the title it had (wider than the widget,
            # its right side cut off); it fits the widget again only when given its geometry.
            self.plotItem.setGeometry(QRectF(self.range))

    def paintEvent(self, ev: QPaintEvent) -> None:
        items = self.plotItem.listDataItems()
        if any(getattr(c, "_exportOpts", False) for c in items):
            super().paintEvent(ev)  # an export draws its own way (see attnsim.export)
            return
        self.scene().prepareForPaint()
        vp = self.viewport()
        p = QPainter(vp)
        self.picture.paint(vp, p, self._paint_scene)
        p.end()

    def _render(self, p: QPainter) -> None:
        p.setRenderHints(p.renderHints() | self.renderHints())
        vp = self.viewport().rect()
        QGraphicsView.render(self, p, QRectF(vp), vp)

    def _paint_scene(self, p: QPainter) -> None:
        self._painted_layout = self.layout_key()
        vp = self.viewport()
        scale = copy_scale(p, vp.width(), vp.height())
        if scale is None:  # not a plain copy: the whole scene, as pyqtgraph paints it
            self._render(p)
            return
        key = (self._painted_layout, vp.width(), vp.height(), scale, p.renderHints())
        if self._frame is None or self._frame[0] != key:
            self._frame = (key, self._paint_frame(p, scale))
        p.drawImage(0, 0, self._frame[1])
        self._paint_curves(p)

    def _paint_frame(self, p: QPainter, scale: float) -> QImage:
        """The plot without its curves, at the device's scale (the scene's echo of making them
        transparent changes no layout key)."""
        self.frame_paints += 1
        return frame_image(self, p, scale, self.plotItem.listDataItems(), self._render)

    def _paint_curves(self, p: QPainter) -> None:
        """The curves over the frame, each as the scene paints it (its item's own paint, in its
        place, clipped to the view box)."""
        vb = self.plotItem.getViewBox()
        to_view = self.viewportTransform()
        p.save()
        p.setRenderHints(p.renderHints() | self.renderHints())
        p.setClipRect(self.mapFromScene(vb.sceneBoundingRect()).boundingRect())
        base = p.transform()
        option = QStyleOptionGraphicsItem()
        for item in self.plotItem.listDataItems():
            if not item.isVisible() or item.opacity() <= 0.0:
                continue
            parts = [item] if isinstance(item, pg.PlotCurveItem) else item.childItems()
            for part in parts:
                if not part.isVisible() or not isinstance(part, pg.PlotCurveItem):
                    continue
                p.setTransform(part.deviceTransform(to_view) * base)
                p.setOpacity(part.effectiveOpacity())
                part.paint(p, option, None)
        p.restore()


def _key(text: str, colour: QColor) -> str:
    return f'<span style="color:{colour.name()}">{text}</span>'


def _plot(title: tuple[str, str], ylabel: str) -> CachedPlot:
    """A curves plot titled ``title`` (its two lines, one line where it fits)."""
    w = CachedPlot()
    w.note = PlotNote(w, "No training steps yet")
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setBackground("w")
    w.setTitle(" ".join(title), size=title_size(), color="#222222")
    w.setLabel("bottom", "step")
    w.getAxis("bottom").enableAutoSIPrefix(False)
    w.getAxis("left").enableAutoSIPrefix(False)
    w.setLabel("left", ylabel)
    # The title names the curves in their colours: a legend would cover them in a small dock.
    w.setMinimumSize(200, 110)
    # Ranges are set in round steps by refresh: an axis whose range changed with every chunk
    # would be laid out and drawn again in every frame that a chunk lands in.
    w.disableAutoRange()
    for name in ("left", "bottom"):
        w.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    w.set_title_lines(*title)
    return w


def round_top(x: float) -> float:
    """``x`` rounded up to a multiple of a 1-2-5 step of about a fifth of it: a range that
    follows growing data in a few jumps, and leaves at most a quarter of the plot empty."""
    if not (math.isfinite(x) and x > 0):
        return 1.0
    step = nice_ceil(x / 5.0)
    return math.ceil(x / step * (1 - 1e-12)) * step


def _curve(plot: pg.PlotWidget, colour: QColor, name: str) -> pg.PlotCurveItem:
    """A line of the plot: a bare curve item, whose new data costs a tenth of a plot data
    item's (no downsampling or clipping to offer for a few hundred points)."""
    curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=2), name=name)
    plot.addItem(curve)
    return curve


STEP_TOPS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)  # times a power of ten


def step_top(x: float) -> float:
    """The steps axis's end for ``x`` steps: the next of 10, 15, 20, 30, 40, 50, 60, 80, 100, …
    (at most a third of the plot empty). The axis is drawn again only when it changes, and
    training crosses these ends a few times a decade, not at every chunk."""
    if not (math.isfinite(x) and x > 0):
        return 10.0
    power = 10.0 ** math.floor(math.log10(x))
    for top in (*STEP_TOPS, 10.0):
        if top * power >= x * (1 - 1e-12):
            return top * power
    return 10.0 * power


class CurvesView(QWidget):
    def __init__(self, parent: QWidget | None = None, *, score_plot: bool = True) -> None:
        """``score_plot=False``: the scores' plot comes with :meth:`add_score_plot` (a window
        opening the lab builds each plot in a turn of the event loop of its own)."""
        super().__init__(parent)
        self._lay = lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.loss_plot = _plot(
            (f"Loss of the {_key('first', KEY)} and", _key("repeated half", QUERY)), "nats"
        )
        self.first_curve = _curve(self.loss_plot, KEY, "first half")
        self.repeated_curve = _curve(self.loss_plot, QUERY, "repeated half")
        lay.addWidget(self.loss_plot)
        self._ranges: dict[int, tuple[float, float]] = {}  # a plot's (last step, axis top)
        if score_plot:
            self.add_score_plot()

    def add_score_plot(self) -> None:
        self.score_plot = _plot(
            (f"Best {_key('induction', QUERY)} and", _key("previous-token", KEY)), "score"
        )
        self.induction_curve = _curve(self.score_plot, QUERY, "induction")
        self.previous_curve = _curve(self.score_plot, KEY, "previous token")
        self._lay.addWidget(self.score_plot)

    def refresh(self, points: Sequence[CurvePoint]) -> None:
        self.show_losses(points)
        self.show_scores(points)

    def show_losses(self, points: Sequence[CurvePoint]) -> None:
        """The losses' plot (while the lab trains, in a turn of its own: see ``stages``)."""
        losses = [v for p in points for v in (p.first_loss, p.repeated_loss) if math.isfinite(v)]
        top = round_top(max(losses, default=1.0))
        self._show(self.loss_plot, points, ("first_loss", "repeated_loss"), top)

    def show_scores(self, points: Sequence[CurvePoint]) -> None:
        """The scores' plot."""
        self._show(self.score_plot, points, ("best_induction", "best_previous"), 1.0)

    def _show(
        self, plot: CachedPlot, points: Sequence[CurvePoint], attrs: tuple[str, str], top: float
    ) -> None:
        plot.curves_changed()
        steps = np.array([p.step for p in points], dtype=float)
        if plot.note is not None:
            plot.note.set_shown(not (steps > 0).any())  # (a point at step 0 draws no line)
        for attr in attrs:
            curve = getattr(self, _CURVES[attr])
            curve.setData(steps, np.array([getattr(p, attr) for p in points], dtype=float))
        # Before training has gone anywhere, a single point would give a range around zero.
        last = float(steps.max()) if steps.size else 0.0
        right = step_top(max(last, 100.0))  # the first hundred steps on one axis
        if (right, top) != self._ranges.get(id(plot)):  # unchanged: the axes stay as they are
            self._ranges[id(plot)] = (right, top)
            plot.setRange(xRange=(0.0, right), yRange=(0.0, top), padding=0.02)


# Which curve of CurvesView draws which number of a CurvePoint.
_CURVES = {
    "first_loss": "first_curve",
    "repeated_loss": "repeated_curve",
    "best_induction": "induction_curve",
    "best_previous": "previous_curve",
}
