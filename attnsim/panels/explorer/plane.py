"""The explorer's plane: two arrows, the shadow of one on the other, the angle, drag handles."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QFont

from attnsim.viewmodels.explorer import PlanePicture

from ..kit.arrows import PlotArrowHead
from ..kit.hints import hints_shown
from ..kit.numbers import fmt_fixed
from ..kit.tip_drag import TipDragBox
from ..style import KEY, MUTED, QUERY, VALUE

PICK_PX = 14.0  # how close (screen pixels) a press must be to a tip to grab it
SHADOW = QColor(VALUE)
COLOURS = {"a": QUERY, "b": KEY}


class DragHandles(pg.ScatterPlotItem):
    """The circles round the tips that say they can be dragged: drawn on screen only, never in
    a figure or in presentation mode (they are about using the screen, not about attention)."""

    def paint(self, p, *args) -> None:
        if hints_shown():
            super().paint(p, *args)


class ProductPlane(pg.PlotWidget):
    """Draws a :class:`PlanePicture`; a left drag on a tip is a gesture.

    Signals: ``drag_started(name, x, y)`` (name "a" or "b", where the press was, in data
    coordinates), ``drag_moved(x, y)``, ``drag_finished()``.
    """

    drag_started = Signal(str, float, float)
    drag_moved = Signal(float, float)
    drag_finished = Signal()

    def __init__(self, *, items: bool = True) -> None:
        box = TipDragBox(lambda pos: self.pick(pos), hover_cursor=True)
        super().__init__(viewBox=box)
        self.view_box = box
        self.picture: PlanePicture | None = None
        self._axis_labels: bool | None = None
        self.view_box.drag_started.connect(self._started)
        self.view_box.drag_moved.connect(
            lambda _name, _drag, x, y, _shift: self.drag_moved.emit(x, y)
        )
        self.view_box.drag_finished.connect(self._finished)
        self.setMinimumSize(200, 150)
        item = self.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.showGrid(x=True, y=True, alpha=0.15)
        for side in ("left", "bottom"):
            item.getAxis(side).setStyle(tickLength=-4)
            item.getAxis(side).enableAutoSIPrefix(False)  # a "(x0.001)" suffix would mislead
        if items:
            self.add_items()

    def add_items(self) -> None:
        """The lines, arrows, handles and words of the picture (``items=False`` leaves them
        to this call, so that a panel opened in steps makes them in a turn of their own)."""
        muted = QColor(MUTED)
        self.line_item = pg.PlotDataItem(pen=pg.mkPen(muted, width=1, style=Qt.PenStyle.DashLine))
        self.guides = (
            pg.PlotDataItem(pen=pg.mkPen(QColor(QUERY).lighter(170), width=1)),
            pg.PlotDataItem(pen=pg.mkPen(QColor(KEY).lighter(170), width=1)),
        )
        shadow = QColor(SHADOW)
        shadow.setAlpha(150)
        self.shadow_item = pg.PlotDataItem(pen=pg.mkPen(shadow, width=7))
        self.drop_item = pg.PlotDataItem(pen=pg.mkPen(SHADOW, width=1.5, style=Qt.PenStyle.DotLine))
        self.arc_item = pg.PlotDataItem(pen=pg.mkPen("#444444", width=1.2))
        self.shaft = {n: pg.PlotDataItem(pen=pg.mkPen(c, width=3)) for n, c in COLOURS.items()}
        self.head = {name: PlotArrowHead(head_px=13.0) for name in COLOURS}
        self.handles = DragHandles(size=17, brush=pg.mkBrush(None))
        self.tip_text = {n: pg.TextItem(color=c) for n, c in COLOURS.items()}
        self.angle_text = pg.TextItem(color="#333333", anchor=(0.5, 0.5))
        self.shadow_text = pg.TextItem(color=SHADOW.darker(130), anchor=(0.5, 0.0))
        bold = QFont()
        bold.setBold(True)
        for t in self.tip_text.values():
            t.setFont(bold)
        for it in (
            self.line_item,
            *self.guides,
            self.shadow_item,
            self.drop_item,
            self.arc_item,
            self.shaft["b"],
            self.shaft["a"],
            self.head["b"],
            self.head["a"],
            self.handles,
            self.tip_text["a"],
            self.tip_text["b"],
            self.angle_text,
            self.shadow_text,
        ):
            self.addItem(it)

    def _started(self, name: str, _drag: int, x: float, y: float) -> None:
        self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        self.drag_started.emit(name, x, y)

    def _finished(self, _name: str, _drag: int) -> None:
        self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        self.drag_finished.emit()

    def pick(self, scene_pos) -> str | None:
        """Which tip ("a" or "b") is under a scene position, within PICK_PX pixels; None when
        nothing can be dragged."""
        pic = self.picture
        if pic is None or not pic.draggable:
            return None
        best, best_d = None, PICK_PX + 1e-9
        for name, vec in (("a", pic.a), ("b", pic.b)):
            tip = self.view_box.mapViewToScene(QPointF(float(vec[0]), float(vec[1])))
            d = math.hypot(tip.x() - scene_pos.x(), tip.y() - scene_pos.y())
            if d < best_d:  # on a tie (tips on top of each other) a wins
                best, best_d = name, d
        return best

    def refresh(self, pic: PlanePicture) -> None:
        self.picture = pic
        if pic.refit:
            box = pic.box
            self.view_box.setRange(
                xRange=(float(box[0]), float(box[1])),
                yRange=(float(box[2]), float(box[3])),
                padding=0.0,
            )
        for item, seg in (
            (self.line_item, pic.shadow.line),
            (self.shadow_item, pic.shadow.shadow),
            (self.drop_item, pic.shadow.drop),
            (self.guides[0], pic.guides[0]),
            (self.guides[1], pic.guides[1]),
            (self.arc_item, pic.arc),
        ):
            item.setData(seg[:, 0], seg[:, 1])
        self.angle_text.setVisible(pic.angle_at is not None)
        if pic.angle_at is not None:
            self.angle_text.setText("θ")
            self.angle_text.setPos(float(pic.angle_at[0]), float(pic.angle_at[1]))
        for name, v, label, anchor in zip(
            ("a", "b"), (pic.a, pic.b), pic.names, pic.anchors, strict=True
        ):
            self.shaft[name].setData([0.0, float(v[0])], [0.0, float(v[1])])
            self.head[name].point((0.0, 0.0), v, COLOURS[name])
            text = self.tip_text[name]
            text.setText(label)
            text.setAnchor(anchor)
            text.setPos(float(v[0]), float(v[1]))
        self.shadow_text.setVisible(pic.projection is not None)
        if pic.projection is not None:
            self.shadow_text.setText(f"shadow {fmt_fixed(pic.projection, 2)}")
            self.shadow_text.setPos(float(pic.foot[0]), float(pic.foot[1]))
        if pic.draggable:
            self.handles.setData(
                [float(pic.a[0]), float(pic.b[0])],
                [float(pic.a[1]), float(pic.b[1])],
                pen=[pg.mkPen(QUERY, width=1.5), pg.mkPen(KEY, width=1.5)],
                brush=[pg.mkBrush(None), pg.mkBrush(None)],
            )
        else:
            self.handles.setData([], [])
        if self._axis_labels != pic.linked:  # relabelling re-lays out the axes: only on a change
            self._axis_labels = pic.linked
            item = self.getPlotItem()
            for side, text in (("bottom", "along k"), ("left", "⊥ k, in span{q, k}")):
                if pic.linked:
                    item.setLabel(side, text)
                else:
                    item.getAxis(side).showLabel(False)
