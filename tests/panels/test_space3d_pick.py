"""Where a query and a key nearly coincide in the 3-D view, a press takes the vector whose label
is under the mouse, a second press at the same place takes the other, and the status bar says
which vector will move."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.panels.space3d import PICK_RADIUS, Space3DPanel

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


def press_release(canvas, xy) -> None:
    p = QPoint(round(xy[0]), round(xy[1]))
    QTest.mousePress(canvas, LEFT, NOMOD, p)
    QTest.mouseRelease(canvas, LEFT, NOMOD, p)
    QApplication.processEvents()


def test_the_label_under_the_mouse_wins_and_a_second_press_takes_the_other(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(Space3DPanel(wb), size=(800, 600))
    panel.flush()
    messages: list[str] = []
    wb.message.connect(messages.append)
    scene, g = panel.scene, panel.canvas.geometry_now()
    q, k = scene.index("query", 2), scene.index("key", 2)  # bank's query and bank's key
    gap = float(np.hypot(*(g.tips[q] - g.tips[k])))
    assert gap < 2 * PICK_RADIUS  # the case at hand: the two tips nearly meet

    # On the query's label, the query is taken even if the key's tip is nearer.
    assert g.label_visible[q]
    (lx, ly), (lw, lh) = g.label_pos[q], g.label_size[q]
    on_label = (lx + lw / 2, ly + lh / 2)
    assert panel.canvas.items_at(*on_label)[0] == q
    press_release(panel.canvas, on_label)
    assert messages[-1].startswith("Picked bank's query")

    # Between the two tips: one press takes one, the next press at the same place the other.
    middle = (g.tips[q] + g.tips[k]) / 2
    meant = panel.canvas.items_at(*middle)
    assert {q, k} <= set(meant)
    press_release(panel.canvas, middle)
    first = messages[-1]
    press_release(panel.canvas, middle)
    second = messages[-1]
    assert {first.split(":")[0], second.split(":")[0]} == {
        "Picked bank's query",
        "Picked bank's key",
    }
    assert "press again at the same place" in first
    assert wb.undo_stack.count() == 0  # pressing picks; only a drag edits


def test_a_drag_from_the_query_label_edits_the_query_map(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(Space3DPanel(wb), size=(800, 600))
    panel.flush()
    scene, g = panel.scene, panel.canvas.geometry_now()
    q = scene.index("query", 2)
    (lx, ly), (lw, lh) = g.label_pos[q], g.label_size[q]
    start = QPoint(round(lx + lw / 2), round(ly + lh / 2))
    QTest.mousePress(panel.canvas, LEFT, NOMOD, start)
    QTest.mouseMove(panel.canvas, start + QPoint(25, 30))
    QTest.mouseRelease(panel.canvas, LEFT, NOMOD, start + QPoint(25, 30))
    assert wb.undo_stack.count() == 1
    assert "Wq" in wb.undo_stack.text(0) and "query" in wb.undo_stack.text(0)
