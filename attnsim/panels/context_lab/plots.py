"""The two sweep plots (weight on the best key, ||o_k − o_0||, against k; all four kinds, the
chosen one bold, the current k marked by a line that can be dragged) and the route's bars at
the chosen k. Every pyqtgraph item is made once and updated by ``refresh``."""

from __future__ import annotations

import bisect
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from attnsim.engine.ticks import nice_ceil
from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.context_lab import KINDS, Bar, ContextData

from ..kit.numbers import fmt_fixed
from ..kit.painted import copy_scale, frame_image
from ..style import KEY, MUTED

INK = QColor("#222222")
#: One colour per kind (Okabe-Ito), the same in both plots, the bars and the verdicts.
KIND_COLOURS = {
    "noisy": QColor("#E69F00"),
    "high-norm": QColor("#56B4E9"),
    "duplicate": QColor("#009E73"),
    "superseded": QColor("#CC79A7"),
}
TITLE_NAME_MAX = 16  # characters of the best key's name in the weight plot's title
BEST = QColor("#003F66")  # the best key's bar: the keys' blue, darker


class FramedPlot(pg.PlotWidget):
    """A plot that keeps its frame (background, axes, ticks, title: everything but the items of
    :meth:`live_items`) as a picture while the ranges, the layout, the texts and the size stay
    the same, and on each repaint copies it and draws only the live items over it, each with
    its own paint, where the scene puts it. An edit that keeps the ranges so costs the curves,
    not the axes. Where a copy could differ from painting afresh (an export, a rotation, a
    fractional offset) the whole scene is painted as pyqtgraph paints it."""

    #: False: paint the whole scene each time, as pyqtgraph does (tests compare the two)
    keep_frame = True

    def __init__(self, parent: QWidget | None = None) -> None:
        self._frame: tuple[tuple, QImage] | None = None  # (key, the plot without live items)
        self.frame_paints = 0  # how often the frame was painted afresh (tests count them)
        # no context menu to build (a third of the cost)
        super().__init__(parent=parent, enableMenu=False)

    def live_items(self) -> list[QGraphicsItem]:
        """The items drawn afresh on every repaint (the rest is the frame)."""
        return []

    def layout_key(self) -> tuple:
        """What the frame depends on besides the widget's size: the ranges, where the view box,
        the axes and the title sit, the texts and the ticks; an axis whose picture was dropped
        (new ticks, a new font) makes a key never seen before."""
        item = self.plotItem
        vb = item.getViewBox()
        axes = [item.getAxis(n) for n in ("left", "bottom")]
        # where each sits in the plot item, and the plot item in the scene (C++ geometry: no
        # Python bounding rectangles to ask)
        rects = [item.geometry(), vb.geometry(), item.titleLabel.geometry()]
        rects += [a.geometry() for a in axes]
        return (
            tuple(map(tuple, vb.state["viewRange"])),
            tuple(r.getRect() for r in rects),
            item.titleLabel.text,
            item.titleLabel.isVisible(),
            tuple((a.labelText, repr(a._tickLevels), id(a.picture)) for a in axes),
        )

    def forget_frame(self) -> None:
        self._frame = None

    def changeEvent(self, e: QEvent) -> None:  # Qt's name
        if e.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange):
            self._frame = None
        super().changeEvent(e)

    def resizeEvent(self, ev: QResizeEvent | None) -> None:  # Qt's name
        self._frame = None
        super().resizeEvent(ev)

    def paintEvent(self, ev: QPaintEvent) -> None:  # Qt's name
        live = self.live_items()
        if not self.keep_frame or any(getattr(c, "_exportOpts", False) for c in live):
            super().paintEvent(ev)  # an export draws its own way (see attnsim.export)
            return
        self.scene().prepareForPaint()
        vp = self.viewport()
        p = QPainter(vp)
        p.setRenderHints(p.renderHints() | self.renderHints())
        scale = copy_scale(p, vp.width(), vp.height())
        if scale is None:
            self._render(p)  # the whole scene, as pyqtgraph paints it
        else:
            key = (self.layout_key(), vp.width(), vp.height(), scale, p.renderHints())
            if self._frame is None or self._frame[0] != key:
                image = self._paint_frame(p, scale, live)
                # the frame's own painting may lay out its axes anew: keyed as it now is
                key = (self.layout_key(), *key[1:])
                self._frame = (key, image)
            p.drawImage(0, 0, self._frame[1])
            self._paint_live(p, live)
        p.end()

    def _render(self, p: QPainter) -> None:
        vp = self.viewport().rect()
        QGraphicsView.render(self, p, QRectF(vp), vp)

    def _paint_frame(self, p: QPainter, scale: float, live: list[QGraphicsItem]) -> QImage:
        """The plot without its live items, at the device's scale."""
        self.frame_paints += 1
        return frame_image(self, p, scale, live, self._render)

    def _paint_live(self, p: QPainter, live: list[QGraphicsItem]) -> None:
        """The live items (and their children) over the frame, in the scene's stacking order,
        each with its own paint where the scene puts it, clipped to the view box."""
        vb = self.plotItem.getViewBox()
        to_view = self.viewportTransform()
        p.save()
        box = self.plotItem.mapRectToScene(vb.geometry())  # the view box's rectangle
        p.setClipRect(self.mapFromScene(box).boundingRect())
        base = p.transform()
        option = QStyleOptionGraphicsItem()
        behind_flag = QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent
        empty_flag = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents

        def draw(item: QGraphicsItem) -> None:
            if not item.isVisible():
                return
            opacity = item.effectiveOpacity()
            if opacity <= 0.0:
                return
            kids = item.childItems()
            behind: list[QGraphicsItem] = []
            if kids:
                kids = sorted(kids, key=lambda c: c.zValue())
                behind = [c for c in kids if c.flags() & behind_flag]
                kids = [c for c in kids if c not in behind]
            for c in behind:
                draw(c)
            has_content = True
            if isinstance(item, pg.InfiniteLine):
                item.boundingRect()  # where its ends are (its paint reads them)
            elif isinstance(item, QGraphicsTextItem):
                option.exposedRect = item.boundingRect()  # (it clips its text to this)
            elif item.flags() & empty_flag:
                has_content = False
            if has_content:
                p.save()
                p.setTransform(item.deviceTransform(to_view) * base)
                p.setOpacity(opacity)
                item.paint(p, option, None)
                p.restore()
                option.exposedRect = QRectF()
            for c in kids:
                draw(c)

        for item in sorted(live, key=lambda c: c.zValue()):  # stable: ties in the order added
            draw(item)
        p.restore()


class KMarker(pg.InfiniteLine):
    """The vertical line at the current k; dragging it reports ``started``, ``moved(k)`` (k
    rounded to a whole number) and ``finished``."""

    def __init__(self, relay: SweepPlot) -> None:
        super().__init__(angle=90, movable=True, pen=pg.mkPen(INK, width=1.5))
        self.setHoverPen(pg.mkPen(INK, width=3))
        self.relay = relay
        self.sigDragged.connect(lambda line: relay.k_moved.emit(round(line.value())))

    def mouseDragEvent(self, ev) -> None:  # pyqtgraph's name
        if ev.button() == Qt.MouseButton.LeftButton and ev.isStart():
            self.relay.k_drag_started.emit()
        super().mouseDragEvent(ev)
        if ev.button() == Qt.MouseButton.LeftButton and ev.isFinish():
            self.relay.k_drag_finished.emit()


class SweepPlot(FramedPlot):
    """One quantity against k for the four kinds; ``which`` is "weight" or "shift"."""

    k_drag_started = Signal()
    k_moved = Signal(int)
    k_drag_finished = Signal()

    def __init__(self, which: str, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.which = which
        self.setMenuEnabled(False)
        self.setMouseEnabled(False, False)
        self.hideButtons()
        self.setBackground("w")
        for side in ("left", "bottom"):
            self.getAxis(side).enableAutoSIPrefix(False)
        self.getAxis("left").setWidth(40)
        self.setLabel("bottom", "k inserted")
        self.setMinimumSize(150, 120)
        self.setToolTip(
            "The weight on the best key as k distractors join the context (dashed, for "
            "duplicates: the fact as a whole, the original plus its copies)"
            if which == "weight"
            else "How far the output moves from the output without distractors"
        )
        # Bare curve items, not PlotDataItems: the data are finite and the plot's ranges are set
        # here, so PlotDataItem's pipeline (finite checks, downsampling, bounds) was most of the
        # cost of a redraw.
        self.curves = {
            kind: pg.PlotCurveItem([0.0], [0.0], pen=pg.mkPen(KIND_COLOURS[kind], width=1.2))
            for kind in KINDS
        }
        #: the fact as a whole (original plus copies), drawn for duplicates only
        self.fact_curve = pg.PlotCurveItem(
            [0.0], [0.0],
            pen=pg.mkPen(KIND_COLOURS["duplicate"], width=1.6, style=Qt.PenStyle.DashLine),
        )  # fmt: skip
        for item in (*self.curves.values(), self.fact_curve):
            self.addItem(item)
        self.marker = KMarker(self)
        self.addItem(self.marker, ignoreBounds=True)
        self._title: str | None = None
        self._drawn: tuple[object, str, int] | None = None
        self._ranges: tuple[float, float] | None = None
        self._bold = ""  # the kind whose curves are drawn bold
        self._pens = {
            (kind, bold): pg.mkPen(KIND_COLOURS[kind], width=2.4 if bold else 1.2)
            for kind in KINDS
            for bold in (False, True)
        }

    def live_items(self) -> list[QGraphicsItem]:
        return [*self.curves.values(), self.fact_curve, self.marker]

    def refresh(self, data: ContextData) -> None:
        # A drag of k keeps the sweeps (the same arrays): only the marker moves then.
        drawn = (data.curves[0].best_weight if data.curves else None, data.kind, data.k_max)
        last = self._drawn
        if last is None or last[0] is not drawn[0] or last[1:] != drawn[1:]:
            self._draw_curves(data)
            self._drawn = drawn
        self.marker.setVisible(bool(data.curves))
        self.marker.setValue(data.k)

    def _draw_curves(self, data: ContextData) -> None:
        ks = np.arange(data.k_max + 1, dtype=float)
        top = 0.0
        restyle = data.kind != self._bold
        for c in data.curves:
            y = c.best_weight if self.which == "weight" else c.shift
            self.curves[c.kind].setData(ks, y, skipFiniteCheck=True)
            if restyle:
                chosen = c.kind == data.kind
                self.curves[c.kind].setPen(self._pens[c.kind, chosen])
                self.curves[c.kind].setZValue(2 if chosen else 1)
            top = max(top, float(np.max(y)))
        self._bold = data.kind
        for curve in self.curves.values():
            curve.setVisible(bool(data.curves))
        chosen = data.chosen
        fact = self.which == "weight" and chosen is not None and chosen.fact_weight is not None
        self.fact_curve.setVisible(fact)
        if fact:
            assert chosen is not None and chosen.fact_weight is not None
            self.fact_curve.setData(ks, chosen.fact_weight, skipFiniteCheck=True)
        self.marker.setBounds((0, data.k_max))
        # Ranges in tenths of a 1-2-5 step: a small edit keeps them (no new axis layout).
        top = top if top > 1e-12 else 1.0  # a flat zero line still gets an axis
        step = nice_ceil(top) / 10
        y_top = 1.02 if self.which == "weight" else math.ceil(top * 1.02 / step) * step
        ranges = (max(data.k_max, 1), y_top)
        if ranges != self._ranges:
            self.setXRange(0, ranges[0], padding=0.02)
            self.setYRange(0.0, ranges[1], padding=0)
            self._ranges = ranges
        if self.which == "weight":
            # a long token would widen the title past the plot, which then gets cut
            name = data.best_label
            name = name if len(name) <= TITLE_NAME_MAX else name[: TITLE_NAME_MAX - 1] + "…"
            best = f"“{name}”" if name else "the best key"
            title = f"weight on {best}"
        else:
            title = "||o_k − o_0||"
        if title != self._title:  # a title re-lays out its plot: only when it changed
            self.setTitle(title, size=title_size(), color=INK.name())
            self._title = title


class _GroupedBars(pg.BarGraphItem):
    """Bars with a few brushes (one per role): each brush's bars drawn in one call. The base
    item records one rectangle call per bar into a picture, some 25 ms for the 2,080 bars of a
    2,048-token context; this draws the same rectangles with the same pen and brushes (bars
    that share a pixel, on a long context, overlap in the order of their brushes instead)."""

    def setOpts(self, **opts) -> None:  # pyqtgraph's name
        self._groups: list[tuple[object, list[QRectF]]] | None = None
        super().setOpts(**opts)

    def paint(self, p, *args) -> None:  # Qt's name
        brushes = self.opts.get("brushes")
        if brushes is None or self.opts.get("pens") is not None:
            super().paint(p, *args)
            return
        if getattr(self, "_groups", None) is None:
            x = np.asarray(self.opts["x"], dtype=float)
            h = np.asarray(self.opts["height"], dtype=float)
            w = float(self.opts["width"])
            x0, y0, hh = (x - w / 2).tolist(), np.minimum(h, 0.0).tolist(), np.abs(h).tolist()
            rects = list(map(QRectF, x0, y0, [w] * len(x0), hh))
            by: dict[int, tuple[object, list[QRectF]]] = {}
            for rect, brush in zip(rects, brushes, strict=True):
                by.setdefault(id(brush), (brush, []))[1].append(rect)
            self._groups = list(by.values())
        p.setPen(pg.mkPen(self.opts["pen"]))
        for brush, rects in self._groups or ():
            p.setBrush(brush)
            p.drawRects(rects)


class RouteBars(FramedPlot):
    """The route at the chosen k: one bar per original key (the best one dark, keys the query
    may not read grey) and one per inserted row in the kind's colour."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(False, False)
        self.hideButtons()
        self.setBackground("w")
        self.getAxis("left").setWidth(40)
        self.getAxis("left").enableAutoSIPrefix(False)
        self.setMinimumSize(150, 120)
        self.bars = _GroupedBars(x=[0.0], height=[0.0], width=0.7, pen=pg.mkPen(INK, width=0.5))
        self.addItem(self.bars)
        #: the best key's name and weight over its bar (its tick may not fit)
        self.best_text = pg.TextItem("", color=BEST, anchor=(0.5, 1.0))
        self.addItem(self.best_text, ignoreBounds=True)
        self._title: str | None = None
        self._brushes: dict[tuple[str, int], object] = {}
        self._labels: tuple[str, ...] = ()
        self._ranges: tuple[int, float] | None = None
        self._role = np.zeros(0, dtype=int)
        self._ticks: list[tuple[float, str]] = []
        self._ticked: tuple | None = None  # what the ticks were placed for
        self._brush_list: tuple[tuple[str, bytes], list] | None = None  # (kind, roles): brushes
        self._anchor: tuple[float, float] | None = None
        self._best_text: str | None = None
        #: the labels' widths in pixels (measured once per label)
        self._widths: dict[str, float] = {}

    def live_items(self) -> list[QGraphicsItem]:
        return [self.bars, self.best_text]

    def resizeEvent(self, ev) -> None:  # Qt's name
        super().resizeEvent(ev)
        self._tick()

    def _tick(self) -> None:
        """Label as many bars as fit without overlap: the best key first, then the first and
        the last inserted row, then the others from the left."""
        labels = getattr(self, "_labels", ())  # resized once before __init__ ends
        if not labels:
            return
        # Widths measured when a label is tried, once per label: of a long context's 2,000
        # bars most are ruled out by their neighbours whatever their width.
        known = self._widths
        font = self.getAxis("bottom").style.get("tickFont") or self.font()
        fm = QFontMetricsF(font)
        if len(known) > 20_000:
            known.clear()
        # the same labels, roles, width and font place the same ticks (an edit of a vector)
        ticked = (labels, self._role.tobytes(), self.getViewBox().width(), font.key())
        if ticked == self._ticked:
            return
        self._ticked = ticked

        def width(j: int) -> float:
            w = known.get(labels[j])
            if w is None:
                w = known[labels[j]] = fm.horizontalAdvance(labels[j])
            return w

        per_bar = max(self.getViewBox().width(), 1.0) / len(labels)
        role = self._role
        inserted = np.flatnonzero(role == 2)
        first = [int(j) for j in np.flatnonzero(role == 1)]
        if inserted.size:
            first += [int(inserted[0]), int(inserted[-1])]
        span = per_bar * len(labels)
        xs: list[float] = []  # the placed labels' centres, sorted, and their half widths
        halves: list[float] = []

        def place(j: int) -> int:
            """Place label ``j`` if it fits; the next label worth trying after it (a label
            that even at its narrowest, half of it 2 px, overlaps a placed one is followed by
            others that do too, up to where that one ends: less one, for rounding)."""
            centre = (j + 0.5) * per_bar
            at = bisect.bisect_left(xs, centre)
            if at < len(xs) and xs[at] == centre:
                return j + 1  # placed already
            for near in (at - 1, at):
                if 0 <= near < len(xs) and abs(centre - xs[near]) < 2 + halves[near]:
                    end = xs[near] + 2 + halves[near]
                    return max(j + 1, math.ceil(end / per_bar - 0.5) - 1)
            half = width(j) / 2 + 2
            # the axis drops a label that would stick out of the plot: leave it to the next
            if centre - half < -8 or centre + half > span + 8:
                return j + 1
            if at > 0 and centre - xs[at - 1] < half + halves[at - 1]:
                return j + 1
            if at < len(xs) and xs[at] - centre < half + halves[at]:
                return j + 1
            xs.insert(at, centre)
            halves.insert(at, half)
            return j + 1

        for j in first:
            place(j)
        j = 0
        while j < len(labels):
            j = place(j)
        ticks = [(float(round(x / per_bar - 0.5)), labels[round(x / per_bar - 0.5)]) for x in xs]
        if ticks != self._ticks:
            self.getAxis("bottom").setTicks([ticks])
            self._ticks = ticks

    def _brush(self, kind: str, role: int):
        key = (kind, role)
        if key not in self._brushes:  # at most 4 kinds × 4 roles
            colour = {0: KEY, 1: BEST, 2: KIND_COLOURS[kind], 3: MUTED}[role]
            self._brushes[key] = pg.mkBrush(colour)
        return self._brushes[key]

    def refresh(self, data: ContextData) -> None:
        bar: Bar | None = data.bars
        self.bars.setVisible(bar is not None)
        self.best_text.setVisible(bar is not None)
        if bar is None:
            return
        n = bar.weights.shape[0]
        x = np.arange(n, dtype=float)
        roles = (data.kind, bar.role.tobytes())
        if self._brush_list is None or self._brush_list[0] != roles:  # an edit keeps them
            table = [self._brush(data.kind, r) for r in range(4)]
            self._brush_list = (roles, [table[r] for r in bar.role.tolist()])
        self.bars.setOpts(x=x, height=bar.weights, width=0.7, brushes=self._brush_list[1])
        self._labels, self._role = bar.labels, bar.role
        self._tick()
        best = int(np.flatnonzero(bar.role == 1)[0])
        side = best / max(n - 1, 1)
        # near an edge the text hangs inwards, so it is never cut by the plot's frame
        anchor = (0.0 if side < 0.25 else 1.0 if side > 0.75 else 0.5, 1.0)
        if anchor != self._anchor:
            self.best_text.setAnchor(anchor)
            self._anchor = anchor
        text = f"{bar.labels[best]}: {fmt_fixed(float(bar.weights[best]), 3)}"
        if text != self._best_text:  # a new text lays its document out again
            self.best_text.setText(text)
            self._best_text = text
        self.best_text.setPos(
            best - (0.35 if side < 0.25 else -0.35 if side > 0.75 else 0), float(bar.weights[best])
        )
        # small weights stay readable; the scale only changes in steps of 0.2
        top = min(1.0, 0.2 * math.ceil(float(np.max(bar.weights, initial=0.0)) / 0.2 + 1e-9))
        ranges = (n, max(top, 0.2) * 1.02)
        if ranges != self._ranges:
            self.setXRange(-0.6, n - 0.4, padding=0)
            self.setYRange(0.0, ranges[1], padding=0)
            self._ranges = ranges
        title = f"weights at k = {data.k}"
        if title != self._title:
            self.setTitle(title, size=title_size(), color=INK.name())
            self._title = title
