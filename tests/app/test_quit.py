"""Quitting with unsaved changes offers Save, Discard or Cancel, and none of them loses work."""

from __future__ import annotations

import json

import pytest

from attnsim.app import MainWindow
from attnsim.engine import edits
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario


@pytest.fixture
def edited_window(qtbot, home):
    def make(answer: str) -> MainWindow:
        wb = Workbench(resolve_scenario("river-bank"))
        asked: list[str] = []
        win = MainWindow(wb, ask_quit=lambda: asked.append(answer) or answer, autosave_ms=10)
        qtbot.addWidget(win)
        win.show()
        wb.edit(edits.set_vector(wb.scenario, "x", 0, [1.0, 2.0, 3.0, 4.0]), "edit")
        win.asked = asked
        return win

    return make


def test_cancel_keeps_the_window_and_the_work(edited_window):
    win = edited_window("cancel")
    assert not win.close()
    assert win.isVisible() and win.wb.dirty
    assert win.asked == ["cancel"]


def test_discard_quits(edited_window):
    win = edited_window("discard")
    assert win.close()


def test_save_writes_the_file_then_quits(edited_window, tmp_path):
    win = edited_window("save")
    path = tmp_path / "kept.json"
    win.wb.mark_saved(path)  # a document that has a file: Save writes it without asking
    win.wb.edit(edits.set_vector(win.wb.scenario, "x", 1, [4.0, 3.0, 2.0, 1.0]), "edit")
    assert win.close()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["X"][1] == [4.0, 3.0, 2.0, 1.0]


def test_a_save_that_fails_keeps_the_window(edited_window, tmp_path):
    win = edited_window("save")
    folder = tmp_path / "not-a-file.json"
    folder.mkdir()  # saving onto a folder fails
    win.wb.mark_saved(folder)
    win.wb.edit(edits.set_vector(win.wb.scenario, "x", 1, [4.0, 3.0, 2.0, 1.0]), "edit")
    assert not win.close()
    assert win.isVisible() and win.wb.dirty


def test_a_clean_document_quits_without_asking(qtbot, home):
    asked: list[str] = []
    win = MainWindow(
        Workbench(resolve_scenario("river-bank")), ask_quit=lambda: asked.append("x") or "cancel"
    )
    qtbot.addWidget(win)
    win.show()
    assert win.close()
    assert asked == []
