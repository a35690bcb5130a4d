"""A large scenario file is read in a child process: the window keeps answering meanwhile, the
scenario arrives whole (the numbers the file holds), a newer file supersedes an older one, and
the question about unsaved changes comes only once the file has been read."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from attnsim.app import MainWindow, opening
from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, random_scenario
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

pytestmark = pytest.mark.process


@pytest.fixture
def win(qapp, monkeypatch):
    monkeypatch.setattr(opening, "LARGE_FILE_BYTES", 1)  # every file is large here
    asked: list[str] = []
    w = MainWindow(
        Workbench(resolve_scenario("river-bank")),
        ask=lambda title, text: asked.append(title) or True,
        restore_layout=False,
    )
    w.asked = asked
    w.show()
    qapp.processEvents()
    yield w
    w.wb.undo_stack.setClean()
    w.close()
    w.deleteLater()
    qapp.processEvents()


def _wait_read(win) -> None:
    deadline = time.monotonic() + 120
    while win._large_files.reader.reading is not None and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)
    assert win._large_files.reader.reading is None, "the file was not read within two minutes"
    QApplication.processEvents()


def test_a_large_file_opens_while_the_window_answers(win, tmp_path):
    path = tmp_path / "wide.json"
    saved = random_scenario(40, 12, mask="causal", receiving=7, seed=3)
    saved.save(path)
    before = win.wb.scenario
    assert win.open_path(path)  # at once: reading has started
    assert win.wb.scenario is before and "Opening wide.json" in win.statusBar().currentMessage()
    _wait_read(win)
    sc, want = win.wb.scenario, Scenario.load(path)
    assert sc is not before and sc.tokens == want.tokens and sc.axes == want.axes
    np.testing.assert_array_equal(sc.X, want.X)  # the file's numbers, to the bit
    for a, b in zip(sc.heads, want.heads, strict=True):
        assert a.equals(b)
    assert sc.mask == "causal" and sc.receiving == 7 and not sc.X.flags.writeable
    assert win.wb.path == path and not win.wb.dirty and win.wb.undo_stack.count() == 0
    assert win.asked == []  # nothing to discard: no question
    assert "Opened" in win.statusBar().currentMessage()
    assert win._large_files.reader._folder is None  # the child's file and folder are gone


def test_unsaved_work_is_asked_about_only_once_the_file_is_read(win, tmp_path):
    path = tmp_path / "later.json"
    resolve_scenario("eiffel-raw").save(path)
    sc = win.wb.scenario
    win.wb.edit(edits.set_vector(sc, "x", 0, [0.25, 0.5, 0.0, 1.0]), "edit")
    assert win.open_path(path) and win.asked == []
    _wait_read(win)
    assert win.asked == ["Discard changes?"] and win.wb.scenario.name == "eiffel-raw"


def test_a_newer_file_supersedes_the_one_being_read(win, tmp_path):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    resolve_scenario("eiffel-raw").save(first)
    resolve_scenario("two-heads").save(second)
    assert win.open_path(first) and win.open_path(second)
    _wait_read(win)
    assert win.wb.path == second and win.wb.scenario.name == "two-heads"
    deadline = time.monotonic() + 1.0  # and the first never arrives afterwards
    while time.monotonic() < deadline:
        QApplication.processEvents()
    assert win.wb.scenario.name == "two-heads"


def _wait_runner(win, key: tuple = ("save",)) -> None:
    deadline = time.monotonic() + 60
    while win.wb.runner.job(key) is not None and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)
    QApplication.processEvents()


def test_a_large_scenario_is_saved_in_the_background(win, tmp_path, monkeypatch):
    monkeypatch.setattr("attnsim.app.documents.LARGE_SAVE_NUMBERS", 1)
    path = tmp_path / "saved.json"
    sc = win.wb.scenario
    win.wb.edit(edits.set_vector(sc, "x", 0, [0.25, 0.5, 0.0, 1.0]), "edit")
    assert win.save_to(path) and "Saving saved.json" in win.statusBar().currentMessage()
    _wait_runner(win)
    assert Scenario.load(path).equals(win.wb.scenario)
    assert not win.wb.dirty and win.wb.path == path


def test_an_edit_made_while_saving_stays_unsaved(win, tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr("attnsim.app.documents.LARGE_SAVE_NUMBERS", 1)
    go = threading.Event()
    save = Scenario.save
    monkeypatch.setattr(Scenario, "save", lambda self, p: go.wait(30) and save(self, p))
    path = tmp_path / "saved.json"
    at_save = win.wb.scenario
    assert win.save_to(path)
    win.wb.edit(edits.set_vector(at_save, "x", 1, [1.0, 0.0, 0.0, 0.0]), "edit while saving")
    go.set()
    _wait_runner(win)
    assert Scenario.load(path).equals(at_save)  # what was on screen when Save was chosen
    assert win.wb.dirty and "edits since are not saved" in win.statusBar().currentMessage()


def test_a_large_scenario_is_copied_as_json_in_the_background(win, monkeypatch):
    from PySide6.QtGui import QGuiApplication

    monkeypatch.setattr("attnsim.app.documents.LARGE_SAVE_NUMBERS", 1)
    QGuiApplication.clipboard().setText("before")
    win.copy_json()
    assert "Copying the scenario" in win.statusBar().currentMessage()
    assert QGuiApplication.clipboard().text() == "before"  # the text is made on the runner
    _wait_runner(win, ("copy",))
    assert Scenario.loads(QGuiApplication.clipboard().text()).equals(win.wb.scenario)
    assert "Scenario copied as JSON" in win.statusBar().currentMessage()


def _wait_paste(win) -> None:
    _wait_runner(win, ("paste",))  # the text kept in a file, on the runner
    deadline = time.monotonic() + 120
    paster = win._large_files.paster
    while paster.reading is not None and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)
    assert paster.reading is None, "the pasted text was not read within two minutes"
    QApplication.processEvents()


def test_a_long_pasted_text_is_read_in_the_background_and_pasted_as_one_edit(win, monkeypatch):
    from PySide6.QtGui import QGuiApplication

    monkeypatch.setattr("attnsim.app.documents.LARGE_PASTE_CHARS", 1)
    before = win.wb.scenario
    pasted = random_scenario(24, 6, seed=5, name="pasted")
    QGuiApplication.clipboard().setText(pasted.dumps())
    assert win.paste_json()  # started
    assert win.wb.scenario is before  # read in a child process, not in this turn
    assert "Reading the scenario on the clipboard" in win.statusBar().currentMessage()
    _wait_runner(win, ("paste",))  # the text kept in a file, for the child to read
    kept = win._large_files.paster.reading
    assert kept is not None and kept.read_text(encoding="utf-8") == pasted.dumps()
    _wait_paste(win)
    assert not kept.exists() and not kept.parent.exists()  # the kept text is removed
    assert win.wb.scenario.equals(pasted)
    assert win.wb.undo_stack.undoText() == "Paste scenario pasted"
    win.wb.undo_stack.undo()
    assert win.wb.scenario is before
    # a text that is no scenario: the reason, with nothing changed
    QGuiApplication.clipboard().setText('{"name": "broken", "tokens": 3}')
    assert win.paste_json()
    _wait_paste(win)
    assert win.wb.scenario is before
    said = win.statusBar().currentMessage()
    assert said.startswith("clipboard: ") and "is missing" in said, said


def test_a_paste_read_after_another_document_opened_is_not_pasted_into_it(win, monkeypatch):
    from PySide6.QtGui import QGuiApplication

    monkeypatch.setattr("attnsim.app.documents.LARGE_PASTE_CHARS", 1)
    QGuiApplication.clipboard().setText(random_scenario(8, 4, seed=1, name="late").dumps())
    assert win.paste_json()
    other = resolve_scenario("two-heads")
    win.open_scenario(other, None)  # before the child's result is handed over
    _wait_paste(win)
    assert win.wb.scenario is other
    assert "it was not pasted" in win.statusBar().currentMessage()
