"""Lessons in the main window: Help ▸ Lessons, File ▸ Open lesson (a bad file refused with what
is wrong and nothing changed), a step's panels brought to the front, the Lessons dock on its
own column while a lesson runs, the first start's offer."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario


@pytest.fixture
def win(qtbot, home, monkeypatch):
    from PySide6.QtCore import QRect

    # a 1600 x 1000 screen (the offscreen platform's own is smaller than the window)
    monkeypatch.setattr(MainWindow, "_available", lambda self: QRect(0, 0, 1600, 1000))
    w = MainWindow(Workbench(resolve_scenario("money-bank")), ask=lambda t, x: True)
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    return w


def action(win, menu: str, text: str):
    m = next(a.menu() for a in win.menuBar().actions() if a.text() == menu)
    return next(a for a in m.actions() if a.text().replace("&", "") == text)


def in_front(win, pid: str) -> bool:
    dock = win.docks[pid]
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def test_help_lessons_brings_the_lessons_panel_forward(win):
    assert not in_front(win, "lessons")  # a tab behind Vectors at first
    action(win, "&Help", "Lessons").trigger()
    QApplication.processEvents()
    assert in_front(win, "lessons")


def test_a_step_brings_its_panels_forward_and_the_lesson_gets_a_column(win):
    win.open_lesson("mixing")
    QApplication.processEvents()
    panel = win.panels["lessons"]
    assert panel.run is not None and win.wb.scenario.name == "river-bank"
    assert in_front(win, "heatmap")  # step 1 names the heatmap first
    assert not win.tabifiedDockWidgets(win.docks["lessons"])  # its own column
    assert in_front(win, "lessons") and in_front(win, "vectors")
    panel.page.leave.click()
    QApplication.processEvents()
    assert win.docks["lessons"] in win.tabifiedDockWidgets(win.docks["vectors"])
    assert win.wb.scenario.name == "money-bank"


def test_a_malformed_lesson_is_refused_with_its_problem_and_nothing_changes(win, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('format = "attnsim-lesson"\nversion = 1\nid = "x"\ntitle = "t"\n'
                   '[[steps]]\ntitle = "a"\ntext = "b"\nscenario = "no-such-preset"\n',
                   encoding="utf-8")  # fmt: skip
    before, undo = win.wb.scenario, win.wb.undo_stack.count()
    assert not win.open_lesson(bad)
    message = win.statusBar().currentMessage()
    assert message.startswith("Refused: ") and "bad.toml" in message
    assert "step 1.scenario" in message and "no-such-preset" in message
    assert win.wb.scenario is before and win.wb.undo_stack.count() == undo
    assert win.panels["lessons"].run is None


def test_the_first_start_offers_the_first_lesson_once(win):
    win.offer_first_lesson()
    QApplication.processEvents()
    assert in_front(win, "lessons")
    assert "Lessons tab starts with Mixing" in win.statusBar().currentMessage()
    win.statusBar().clearMessage()
    win.offer_first_lesson()  # the second start: nothing
    assert win.statusBar().currentMessage() == ""


def test_save_during_a_lesson_never_writes_the_learners_file(win, tmp_path):
    mine = tmp_path / "mine.json"
    win.wb.path = mine
    win.open_lesson("mixing")
    assert win.wb.path is None  # the lesson's document is untitled: Save asks where
    win.panels["lessons"].leave()
    assert win.wb.path == mine


def test_after_a_crash_during_a_lesson_the_start_says_where_the_document_is(win, home):
    from attnsim.panels.lessons.panel import KEPT_FILE

    win.wb.edit(win.wb.scenario.replace(temperature=2.0), "my edit")
    win.open_lesson("mixing")  # the learner's unsaved document is kept aside
    assert win.panels["lessons"].keep_job.wait(30)  # in the background
    kept = home / KEPT_FILE
    assert kept.is_file()
    win.offer_first_lesson()  # what the next start says, had the app stopped here
    assert str(kept) in win.statusBar().currentMessage()


def test_a_step_points_at_the_control_it_talks_about(win, monkeypatch, qtbot):
    from attnsim.app import lessons as window_lessons

    monkeypatch.setattr(window_lessons, "OUTLINE_MS", 1000)
    win.open_lesson("mixing")
    panel = win.panels["lessons"]
    for _ in range(4):
        panel.page.next.click()  # step 5: "lower the temperature"
    QApplication.processEvents()
    control = window_lessons.control_named(win.panels["heatmap"], "Temperature")
    assert control is not None and control.isVisible()
    assert window_lessons.OUTLINE in control.styleSheet()
    qtbot.waitUntil(lambda: window_lessons.OUTLINE not in control.styleSheet(), timeout=5000)
    assert win.point_at("heatmap", "no control says this") is None


def test_on_a_screen_too_narrow_for_a_column_the_lesson_stays_a_tab(win, monkeypatch):
    from PySide6.QtCore import QRect

    monkeypatch.setattr(MainWindow, "_available", lambda self: QRect(0, 0, 800, 500))
    win.open_lesson("mixing")
    QApplication.processEvents()
    assert win.docks["lessons"] in win.tabifiedDockWidgets(win.docks["vectors"])
    assert in_front(win, "lessons")
