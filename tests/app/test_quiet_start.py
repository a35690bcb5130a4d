"""While the window opens its docks are placed at once, not through Qt's animations; once the
panels on screen are in, the docks animate as before."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QStyle

from attnsim.app import MainWindow
from attnsim.app.quiet_start import with_rule
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

DURATION = QStyle.StyleHint.SH_Widget_Animation_Duration


@pytest.fixture
def rule(qapp):
    old = qapp.styleSheet()
    qapp.setStyleSheet(with_rule(old))  # as create_app sets it
    yield
    qapp.setStyleSheet(old)


def _durations(win):
    bars = [b for b in win._tab_bars() if b.count() > 1]
    assert bars
    return {w.style().styleHint(DURATION, None, w) for w in [*win.docks.values(), *bars]}


@pytest.mark.parametrize("after_first_frame", [True, False])
def test_docks_animate_only_once_the_window_is_open(rule, qtbot, home, after_first_frame):
    win = MainWindow(
        Workbench(resolve_scenario("river-bank")), panels_after_first_frame=after_first_frame
    )
    qtbot.addWidget(win)
    assert _durations(win) == {0}  # placed at once while it opens
    win.show()
    qtbot.waitUntil(lambda: not win.property("opening"), timeout=20000)
    assert not win.panels_opening()  # the panels on screen are in
    assert min(_durations(win)) > 0  # the style's own animations again
