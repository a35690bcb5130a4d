"""A panel placed by the window redraws in a timer turn after the placing, not in the same pass
of the event loop (panels/placed_first.py)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from attnsim.panels.anatomy import AnatomyPanel
from attnsim.panels.linear_lab import LinearLabPanel
from attnsim.panels.projections import ProjectionsPanel
from attnsim.panels.stepper import StepperPanel


def test_a_panel_that_comes_into_view_redraws_after_a_timer_not_a_posted_event(
    make_wb, show_panel, qtbot
):
    for cls in (LinearLabPanel, StepperPanel, ProjectionsPanel, AnatomyPanel):
        panel = show_panel(cls(make_wb("bank-river")))
        panel.flush()
        count = panel.refresh_count
        panel._pending = True  # as a panel placed with a redraw waiting
        panel.came_into_view()
        QCoreApplication.sendPostedEvents()  # the pass that placed it: no redraw yet
        assert panel.refresh_count == count, cls.__name__
        qtbot.waitUntil(lambda p=panel, c=count: p.refresh_count == c + 1, timeout=5000)
        assert not panel._pending
