"""The one tip-dragging view box, driven by real mouse events on a bare plot."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.panels.kit.tip_drag import TipDragBox

TIP = (1.0, 1.0)


def _plot(qtbot, **kw):
    box: TipDragBox

    def pick(scene_pos: QPointF):
        tip = box.mapViewToScene(QPointF(*TIP))
        near = math.hypot(tip.x() - scene_pos.x(), tip.y() - scene_pos.y()) < 10
        return ("key", 0) if near else None

    box = TipDragBox(pick, **kw)
    plot = pg.PlotWidget(viewBox=box)
    qtbot.addWidget(plot)
    plot.resize(400, 400)
    plot.show()
    box.setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)
    qtbot.waitExposed(plot)
    QApplication.processEvents()
    return plot, box


def _px(plot, box, xy) -> QPoint:
    QApplication.processEvents()
    return plot.mapFromScene(box.mapViewToScene(QPointF(*xy)))


def _drag(plot, box, path, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    vp = plot.viewport()
    pts = [_px(plot, box, p) for p in path]
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, modifier, pts[0])
    for p in pts[1:]:
        QTest.mouseMove(vp, p)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, modifier, pts[-1])
    QApplication.processEvents()


def test_a_drag_from_a_tip_reports_one_id_from_start_to_finish(qtbot, record):
    plot, box = _plot(qtbot)
    started, moved, finished = (
        record(box.drag_started),
        record(box.drag_moved),
        record(box.drag_finished),
    )
    _px(plot, box, TIP)  # the locked aspect settles the range on the first event round
    shown = box.viewRange()
    _drag(plot, box, [TIP, (1.5, 1.2), (2.0, 1.5)])
    assert len(started) == 1 and len(finished) == 1 and len(moved) >= 2
    key, drag, x, y = started[0]
    assert key == ("key", 0) and abs(x - 1.0) < 0.05 and abs(y - 1.0) < 0.05
    assert {m[1] for m in moved} == {drag} and finished[0] == (key, drag)
    assert abs(moved[-1][2] - 2.0) < 0.05 and abs(moved[-1][3] - 1.5) < 0.05
    assert box.grab is None and not any(m[4] for m in moved)
    assert box.viewRange() == shown  # a fixed box: the drag did not pan


def test_a_drag_elsewhere_is_no_edit_and_a_new_drag_gets_a_new_id(qtbot, record):
    plot, box = _plot(qtbot)
    started = record(box.drag_started)
    _drag(plot, box, [(-2.0, -2.0), (-1.0, -1.0)])
    assert started == []
    _drag(plot, box, [TIP, (0.5, 0.5)])
    _drag(plot, box, [(0.5, 0.5), (0.0, 0.0)])  # the tip stayed at TIP: nothing grabbed
    _drag(plot, box, [TIP, (2.0, 2.0)])
    assert len(started) == 2 and started[0][1] != started[1][1]


def test_shift_is_reported_for_snapping(qtbot, record):
    plot, box = _plot(qtbot)
    moved = record(box.drag_moved)
    _drag(plot, box, [TIP, (1.5, 1.5), (2.0, 2.0)], Qt.KeyboardModifier.ShiftModifier)
    # QTest's moves carry no modifiers; the release does, and it is the move that commits.
    assert moved[-1][4] is True


def test_a_free_box_pans_off_the_tips_and_reports_clicks_on_them(qtbot, record):
    plot, box = _plot(qtbot, fixed=False)
    clicked, started = record(box.tip_clicked), record(box.drag_started)
    _px(plot, box, TIP)
    before = box.viewRange()
    _drag(plot, box, [(-2.0, -2.0), (-1.0, -1.5)])
    assert started == [] and box.viewRange() != before  # the drag panned the plane
    QTest.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=_px(plot, box, TIP))
    QApplication.processEvents()
    assert clicked == [(("key", 0),)]
