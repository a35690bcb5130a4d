"""Every tab of the window's docks is named whole: when the window opens, with its layout as
saved or not, and after the user moves a dock to a new place (Qt then makes a new tab bar)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario


def _window(qtbot):
    win = MainWindow(Workbench(resolve_scenario("river-bank")))
    qtbot.addWidget(win)
    return win


def _cut_bars(win):
    return [
        [bar.tabText(i) for i in range(bar.count())]
        for bar in win._tab_bars()
        if bar.count() and bar.elideMode() != Qt.TextElideMode.ElideNone
    ]


def test_tab_names_are_whole_at_the_start_and_after_a_dock_is_moved(qtbot, home):
    win = _window(qtbot)
    win.show()
    qtbot.waitExposed(win)
    shown = lambda: [b for b in win._tab_bars() if b.isVisible()]  # noqa: E731
    qtbot.waitUntil(lambda: len(shown()) == win._layout_groups)
    assert _cut_bars(win) == []
    win.close()  # the layout is saved, and restored by the next window
    again = _window(qtbot)
    again.show()
    qtbot.waitExposed(again)
    assert _cut_bars(again) == []
    # the user docks two panels together at the bottom: a new tab bar for them
    bars = set(again._tab_bars())
    again.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, again.docks["readout"])
    again.tabifyDockWidget(again.docks["readout"], again.docks["stepper"])
    qtbot.waitUntil(lambda: any(b.count() == 2 for b in again._tab_bars()))
    assert set(again._tab_bars()) - bars  # (a new one)
    assert _cut_bars(again) == []
