"""The main window as a user meets it: menus, documents, recovery, layout, export, import."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtGui import QGuiApplication

from attnsim.app import MainWindow, settings
from attnsim.engine import edits
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario


@pytest.fixture
def window(qtbot, home):
    answers = []

    def make(scenario="river-bank", answer=True, **kw):
        wb = Workbench(resolve_scenario(scenario))
        win = MainWindow(
            wb, ask=lambda title, text: answers.append(title) or answer, autosave_ms=10, **kw
        )
        qtbot.addWidget(win)
        win.answers = answers
        return win

    return make


def menu_titles(win):
    return [a.text().replace("&", "") for a in win.menuBar().actions()]


def test_menus_docks_and_presets(window):
    win = window()
    assert menu_titles(win) == ["File", "Edit", "View", "Presets", "Help"]
    view = next(a.menu() for a in win.menuBar().actions() if a.text() == "&View")
    titles = [a.text() for a in view.actions() if a.text()]
    for panel in win.panels.values():
        assert panel.title in titles
    presets = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Presets")
    assert len(presets.actions()) >= 14
    presets.actions()[0].trigger()
    assert win.wb.scenario.name == "river-bank"  # basic mixing opens the menu


def test_presets_menu_is_the_teaching_order_each_with_a_line_on_it(window):
    from attnsim.resources import TEACHING_ORDER, preset_titles

    win = window()
    presets = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Presets")
    acts = presets.actions()
    names = [a.data() for a in acts]
    assert names == [name for name, _ in TEACHING_ORDER]
    assert names.index("river-bank") < names.index("bank-river")
    assert names != sorted(names)  # not alphabetical
    titles = preset_titles()
    for act, (name, blurb) in zip(acts, TEACHING_ORDER, strict=True):
        assert act.text() == titles[name]
        assert act.toolTip() == blurb == act.statusTip()
    assert presets.toolTipsVisible()
    acts[names.index("bank-river")].trigger()
    assert win.wb.scenario.name == "bank-river"


def test_the_shortcut_list_names_undo_and_redo_plainly(window):
    win = window()
    win.wb.edit(edits.set_vector(win.wb.scenario, "x", 0, [1, 2, 3, 4]), "Drag bank's key")
    win.wb.undo_stack.undo()  # now both an undo and a redo are available, each naming the step
    edit = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Edit")
    assert any("Drag bank's key" in a.text() for a in edit.actions())
    listed = dict(win.shortcuts())
    assert "Undo" in listed and "Redo" in listed
    assert "Ctrl+Z" in listed["Undo"] and "Ctrl+Y" in listed["Redo"]
    assert not any("Drag" in name for name in listed)
    assert "Drag bank" not in win.help_markdown()


def test_undo_redo_shortcuts_exist(window):
    win = window()
    edit = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Edit")
    acts = {a.text().split()[0].replace("&", ""): a for a in edit.actions()}
    assert acts["Undo"].shortcut().toString() == "Ctrl+Z"
    assert acts["Redo"].shortcut().toString() in ("Ctrl+Shift+Z", "Ctrl+Y")


def test_opening_a_malformed_file_keeps_the_current_scenario(window, tmp_path):
    win = window()
    win.wb.edit(edits.set_vector(win.wb.scenario, "x", 0, [1, 2, 3, 4]), "edit")
    before = win.wb.scenario
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "b", "tokens": ["a"], "X": [[1, NaN]], "Wq": "identity"}')
    assert not win.open_path(bad)
    assert win.wb.scenario is before and win.wb.undo_stack.count() == 1
    assert "bad.json" in win.statusBar().currentMessage()


def test_unsaved_changes_prompt_before_discarding(window):
    win = window(answer=False)
    win.wb.edit(win.wb.scenario.replace(temperature=2.0), "T")
    assert not win.open_preset("eiffel-raw")
    assert win.answers == ["Discard changes?"]
    assert win.wb.scenario.name == "river-bank"


def test_save_as_round_trip_and_recent_files(window, tmp_path):
    win = window()
    win.wb.edit(edits.rename_token(win.wb.scenario, 0, "a"), "rename")
    win.wb.set_receiving(1)
    path = tmp_path / "mine.json"
    assert win.save_to(path)
    assert not win.wb.dirty
    data = json.loads(path.read_text())
    assert data["tokens"][0] == "a" and data["receiving"] == 1
    assert str(path.resolve()) in [a.text() for a in win.recent_menu.actions()]
    win.open_preset("eiffel-raw")
    assert win.open_path(path)
    assert win.wb.scenario.tokens[0] == "a" and win.wb.receiving == 1


def test_autosave_and_recovery_after_a_crash(window, qtbot):
    win = window()
    win.wb.edit(win.wb.scenario.replace(temperature=3.5), "T")
    qtbot.waitUntil(
        lambda: win.recovery_path is not None and win.recovery_path.exists(), timeout=20000
    )  # a write on a background thread: generous on a loaded machine
    # While the first window runs, a new one does not offer its work.
    win_live = window("eiffel-raw")
    assert not win_live.offer_recovery() and win_live.answers == []
    assert win.recovery_path.exists()
    win._recovery.abandon()  # the first window "crashes": its lock is gone, its file stays
    win2 = window("eiffel-raw")
    assert win2.offer_recovery()
    assert "Restore unsaved work?" in win2.answers
    assert win2.wb.scenario.temperature == 3.5 and win2.wb.scenario.name == "river-bank"
    assert win2.wb.dirty
    assert win2.recovery_path == win.recovery_path  # the restored work is protected at once


def test_declining_recovery_removes_the_file(window, qtbot):
    win = window()
    win.wb.edit(win.wb.scenario.replace(temperature=3.5), "T")
    qtbot.waitUntil(
        lambda: win.recovery_path is not None and win.recovery_path.exists(), timeout=20000
    )  # a write on a background thread: generous on a loaded machine
    win._recovery.abandon()
    win2 = window("eiffel-raw", answer=False)
    assert not win2.offer_recovery()
    assert not win.recovery_path.exists() and win2.wb.scenario.name == "eiffel-raw"


def test_layout_is_remembered_between_runs(window):
    win = window()
    win.show()
    pid = next(iter(win.docks))
    win.docks[pid].hide()
    win.save_layout()
    win2 = window()
    win2.show()
    assert not win2.docks[pid].isVisible()
    win2.reset_layout()
    assert win2.docks[pid].isVisible()
    assert settings().value("state") is not None


def test_a_layout_saved_on_a_large_screen_is_not_forced_on_a_small_one(window, monkeypatch):
    from PySide6.QtCore import QRect

    monkeypatch.setattr(MainWindow, "_available", lambda self: QRect(0, 0, 1600, 1000))
    big = window()
    big.show()
    big.save_layout()  # four groups
    monkeypatch.setattr(MainWindow, "_available", lambda self: QRect(0, 0, 800, 500))
    small = window()
    assert small._layout_groups == 1 and not small._sized  # not restored: the default
    small.show()
    vectors = small.docks["vectors"]
    together = set(small.tabifiedDockWidgets(vectors)) | {vectors}
    assert together == set(small.docks.values())  # every panel a tab of the one group
    small.save_layout()
    again = window()  # the same small screen: its own saved layout is restored
    assert again._sized


def test_export_all_panels(window, tmp_path):
    win = window()
    win.show()
    files = win.export_all(tmp_path, ("png", "svg"), mode="panel")
    assert len(files) == 2 * len(win.panels)
    assert all(f.stat().st_size > 500 for f in files)


def test_import_matrix_checks_the_shape_and_is_undoable(window, tmp_path):
    win = window()
    good = tmp_path / "wq.csv"
    good.write_text("a,b,c,d\n" + "\n".join(",".join(str(v) for v in row) for row in 2 * np.eye(4)))
    assert win.import_matrix("Wq", good)
    np.testing.assert_array_equal(win.wb.scenario.heads[0].Wq, 2 * np.eye(4))
    bad = tmp_path / "x.npy"
    np.save(bad, np.ones((2, 2)))
    before = win.wb.scenario
    assert not win.import_matrix("X", bad)
    assert win.wb.scenario is before
    assert "has shape (2, 2) but (3, 4) is needed" in win.statusBar().currentMessage()
    win.wb.undo_stack.undo()
    np.testing.assert_array_equal(win.wb.scenario.heads[0].Wq, np.eye(4))


def test_copy_and_paste_scenario_json(window):
    win = window()
    win.copy_json()
    text = QGuiApplication.clipboard().text()
    assert json.loads(text)["name"] == "river-bank"
    QGuiApplication.clipboard().setText(text.replace('"temperature": 1.0', '"temperature": 0.5'))
    assert win.paste_json()
    assert win.wb.scenario.temperature == 0.5
    QGuiApplication.clipboard().setText("{not json")
    assert not win.paste_json()
    assert win.wb.scenario.temperature == 0.5


def test_status_bar_shows_the_receiving_tokens_numbers(window):
    win = window()
    text = win.status_text()
    assert text.startswith("bank attends: the 0.26 · river 0.31 · bank 0.43")
    win.wb.set_receiving(0)
    assert win._status.text().startswith("the attends:")


def test_status_bar_lists_the_first_keys_of_a_long_row_and_counts_the_rest(window):
    from attnsim.app.status import STATUS_KEYS
    from attnsim.engine.numbers import fmt_number
    from attnsim.engine.scenario import random_scenario

    win = window()
    sc = random_scenario(STATUS_KEYS + 36, 4, seed=3, receiving=5)
    win.wb.load(sc)
    parts = win.status_parts()
    tr, i = win.wb.trace, win.wb.receiving
    keys = parts[:STATUS_KEYS]
    assert keys[0].startswith(f"{sc.query_labels[i]} attends: {sc.tokens[0]} ")
    for j in (0, 1, STATUS_KEYS - 1):  # the engine's numbers, as the bar formats them
        assert (
            keys[j].removesuffix(" ·").endswith(f"{sc.tokens[j]} {fmt_number(tr.weights[i, j], 2)}")
        )
    assert parts[STATUS_KEYS] == "and 36 more keys"
    assert parts[STATUS_KEYS + 1].startswith("|   softmax(")


def test_registry_names_match_the_panel_classes():
    from attnsim.panels import PANEL_SPECS

    for spec in PANEL_SPECS:
        cls = spec.load()
        assert (cls.panel_id, cls.title) == (spec.panel_id, spec.title)
    assert len({s.panel_id for s in PANEL_SPECS}) == len(PANEL_SPECS)


ON_SCREEN = {"vectors", "heatmap", "space3d", "explorer"}


def test_the_app_opens_the_panels_on_screen_after_its_first_frame(window, qtbot):
    # `attnsim gui` shows its window first and makes the panels on screen in the turn after
    # it: meanwhile each of their docks says what is coming. Once they are in, every dock holds
    # its panel, drawn, and the docks are shared out as in a window whose panels were made
    # before its first frame.
    from PySide6.QtWidgets import QLabel

    win = window(panels_after_first_frame=True)
    said_in = []
    win.panels_in.connect(lambda: said_in.append(sorted(win.panels.built())))
    win.show()
    assert win.panels.built() == {} and win.panels_opening()
    notes = {pid: win.docks[pid].widget() for pid in ON_SCREEN}
    assert all(isinstance(n, QLabel) and n.text().startswith("Opening ") for n in notes.values())
    qtbot.waitUntil(lambda: not win.panels_opening(), timeout=20000)
    assert set(win.panels.built()) == ON_SCREEN
    assert said_in == [sorted(ON_SCREEN)]  # once, when the last of them was in
    for pid, panel in win.panels.built().items():
        assert win.docks[pid].widget().widget() is panel
    qtbot.waitUntil(lambda: all(p.refresh_count > 0 for p in win.panels.built().values()))
    at_once = window()
    at_once.show()
    qtbot.waitExposed(at_once)
    qtbot.wait(50)  # the docks shared out (a timer after the first show)
    for pid in ON_SCREEN:
        assert win.docks[pid].geometry() == at_once.docks[pid].geometry(), pid


def test_panels_behind_tabs_are_made_when_first_seen(window, qtbot):
    win = window()
    win.show()
    qtbot.waitExposed(win)
    built = set(win.panels.built())
    assert built == ON_SCREEN
    win.docks["stepper"].raise_()
    qtbot.waitUntil(lambda: "stepper" in win.panels.built())
    assert win.docks["stepper"].widget().widget() is win.panels.built()["stepper"]
