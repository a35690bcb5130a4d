"""File ▸ Open (and Open Recent) on every malformed file: refused, shown, nothing changed.

The file is validated before the window asks whether to discard unsaved changes, so a bad file
never costs the user their work nor a pointless question.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from attnsim.app import MainWindow, settings
from attnsim.engine import edits
from attnsim.engine.scenario import MAX_FILE_BYTES
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

CORPUS_DIR = Path(__file__).resolve().parents[1] / "data" / "malformed"
CORPUS = sorted(CORPUS_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def win(qapp):
    """One window for the whole corpus (building one per file would dominate the run)."""
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


@pytest.fixture
def dirty(win):
    """The window with an unsaved edit, as a user who has been working would have it."""
    if win.wb.scenario.name != "river-bank":  # a test before this one opened another file
        win.wb.undo_stack.setClean()
        win.open_scenario(resolve_scenario("river-bank"))
    sc = win.wb.scenario
    win.wb.edit(edits.set_vector(sc, "x", 0, [0.25, 0.5, 0.0, 1.0]), "edit")
    win.asked.clear()
    win.statusBar().clearMessage()
    assert win.wb.dirty
    return win


def _assert_refused(win, path, before, count):
    assert win.wb.scenario is before
    assert win.wb.undo_stack.count() == count and win.wb.dirty
    assert win.asked == []  # validated first: no "discard changes?" for a file that cannot load
    assert path.name in win.statusBar().currentMessage()
    assert QApplication.activeModalWidget() is None
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)
                and w.isVisible()]  # fmt: skip


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_open_refuses_every_malformed_file_and_keeps_the_work(dirty, path):
    before, count = dirty.wb.scenario, dirty.wb.undo_stack.count()
    assert not dirty.open_path(path)
    _assert_refused(dirty, path, before, count)


def test_open_refuses_a_folder_and_huge_files(dirty, tmp_path):
    folder = tmp_path / "folder.json"
    folder.mkdir()
    fifty = tmp_path / "fifty-mb.json"
    fifty.write_text("[" * (50 * 1024 * 1024))
    over = tmp_path / "over.json"
    with over.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    for path in (folder, tmp_path / "missing.json"):
        before, count = dirty.wb.scenario, dirty.wb.undo_stack.count()
        assert not dirty.open_path(path)
        _assert_refused(dirty, path, before, count)
    for path in (fifty, over):  # large: read in a child process, refused when it is read
        before, count = dirty.wb.scenario, dirty.wb.undo_stack.count()
        assert dirty.open_path(path)
        assert "Opening" in dirty.statusBar().currentMessage()
        deadline = time.monotonic() + 120
        while dirty._large_files.reader.reading is not None and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.01)
        assert dirty._large_files.reader.reading is None
        _assert_refused(dirty, path, before, count)


def test_open_refuses_more_heads_than_fit_at_the_length_and_keeps_the_work(dirty, tmp_path):
    # 4,096 tokens in one dimension with two heads: tiny as a file, but its attention tables
    # would not fit the memory budget, so the file is refused before anything is computed
    n, W = 4096, [[1.0]]
    data = {
        "format": "attnsim-scenario", "version": 1, "name": "too-many-heads",
        "tokens": [f"t{i}" for i in range(n)], "X": [[1.0]] * n,
        "heads": [{"Wq": W, "Wk": W, "Wv": W}, {"Wq": W, "Wk": W, "Wv": W}],
        "Wo": [[1.0], [1.0]], "mask": "causal",
    }  # fmt: skip
    path = tmp_path / "two-long-heads.json"
    path.write_text(json.dumps(data))
    before, count = dirty.wb.scenario, dirty.wb.undo_stack.count()
    assert not dirty.open_path(path)
    _assert_refused(dirty, path, before, count)
    shown = dirty.statusBar().currentMessage()
    assert "heads: 4,096 tokens × 2 heads need about" in shown
    assert "attnsim holds at most 1 head of this width at this length" in shown


def test_open_recent_refuses_a_file_that_went_bad(dirty, tmp_path):
    path = tmp_path / "was-fine.json"
    resolve_scenario("two-heads").save(path)
    path.write_text(path.read_text().replace('"temperature": 1.0', '"temperature": -1'))
    settings().setValue("recent", [str(path)])
    dirty._refresh_recent_menu()
    before, count = dirty.wb.scenario, dirty.wb.undo_stack.count()
    dirty.recent_menu.actions()[0].trigger()
    _assert_refused(dirty, path, before, count)
    settings().setValue("recent", [])
    dirty._refresh_recent_menu()


def test_a_good_file_still_asks_before_discarding(dirty, tmp_path):
    path = tmp_path / "good.json"
    resolve_scenario("eiffel-raw").save(path)
    assert dirty.open_path(path)
    assert dirty.asked == ["Discard changes?"]
    assert dirty.wb.scenario.name == "eiffel-raw"
