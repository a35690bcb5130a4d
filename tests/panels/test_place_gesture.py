"""One gesture, one result: dragging a key to a point gives the same K in the 3-D view, the
explorer (linked mode) and the routing lab, because all three call ``edits.place_vector``."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from attnsim.engine import edits
from attnsim.model.workbench import new_drag_id
from attnsim.panels.explorer import ExplorerPanel
from attnsim.panels.routing_lab import RoutingLabPanel
from attnsim.panels.space3d import Space3DPanel

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier
ROW = 1


@pytest.fixture
def calls(monkeypatch):
    """Every call of the shared edit, with the panels' own code paths left as they are."""
    seen: list[tuple] = []
    real = edits.place_vector

    def spy(sc, kind, row, target, head=0):
        seen.append((kind, row, np.array(target, dtype=float)))
        return real(sc, kind, row, target, head)

    monkeypatch.setattr(edits, "place_vector", spy)
    return seen


def _space3d_drag(make_wb, show_panel) -> np.ndarray:
    """A real mouse drag of key 1 in the 3-D view; returns where the key went."""
    wb = make_wb("routing-lab")
    panel = show_panel(Space3DPanel(wb))
    panel.flush()
    k = panel.scene.index("key", ROW)
    tip = panel.canvas.geometry_now().tips[k]
    p0 = QPoint(round(tip[0]), round(tip[1]))
    QTest.mousePress(panel.canvas, LEFT, NOMOD, p0)
    QTest.mouseMove(panel.canvas, p0 + QPoint(30, -20))
    QTest.mouseRelease(panel.canvas, LEFT, NOMOD, p0 + QPoint(30, -20))
    return np.array(wb.scenario.K)


def test_the_same_key_gesture_gives_the_same_matrix_in_three_panels(make_wb, show_panel, calls):
    K_space = _space3d_drag(make_wb, show_panel)
    assert calls and calls[-1][:2] == ("key", ROW)
    target = K_space[ROW]
    start = make_wb("routing-lab").scenario
    assert not np.array_equal(target, start.K[ROW])

    wb = make_wb("routing-lab")
    lab = show_panel(RoutingLabPanel(wb))
    n = len(calls)
    lab.drag_tip("k", ROW, (float(target[0]), float(target[1])), new_drag_id())
    assert len(calls) > n and calls[-1][:2] == ("key", ROW)
    K_lab = np.array(wb.scenario.K)

    wb = make_wb("routing-lab")
    explorer = ExplorerPanel(wb)
    explorer.set_mode("linked")
    show_panel(explorer, size=(700, 450))
    wb.set_focused_key(ROW)
    explorer.flush()
    basis = explorer._plane()
    n = len(calls)
    explorer._write("b", basis.T @ target, "drag k", new_drag_id())
    assert len(calls) > n and calls[-1][:2] == ("key", ROW)
    K_explorer = np.array(wb.scenario.K)

    np.testing.assert_array_equal(K_lab, K_space)
    # the explorer goes through its plane's basis and back: equal up to rounding
    np.testing.assert_allclose(K_explorer, K_space, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.delete(K_explorer, ROW, 0), np.delete(start.K, ROW, 0))
