"""File ▸ Export as Python script… / Jupyter notebook…: the window's scenario as code, the labs
changed in the session named as left out, a failed write said in the status bar."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFileDialog

from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.routing_lab import RoutingLabState


@pytest.fixture
def win(qtbot, home):
    w = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: True)
    qtbot.addWidget(w)
    return w


def file_action(win: MainWindow, text: str):
    file_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&File")
    return next(a for a in file_menu.actions() if a.text().replace("&", "") == text)


def answer_dialog(monkeypatch, path) -> list[tuple]:
    asked: list[tuple] = []

    def fake(parent, caption, name, filt):
        asked.append((caption, name, filt))
        return str(path), filt

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    return asked


def test_export_as_python_script_writes_the_current_scenario(win, monkeypatch, tmp_path) -> None:
    # an edit first: the export is of the scenario as it is now, not the preset
    win.wb.edit(win.wb.scenario.replace(temperature=0.5), "temperature")
    asked = answer_dialog(monkeypatch, tmp_path / "mine")  # the suffix is added
    file_action(win, "Export as Python script…").trigger()
    assert asked == [("Export as Python script", "river-bank.py", "Python script (*.py)")]
    text = (tmp_path / "mine.py").read_text()
    assert "TEMPERATURE = 0.5" in text
    assert "left out" not in text  # no lab was changed
    assert win.statusBar().currentMessage() == (
        f"Wrote the scenario as a python script to {tmp_path / 'mine.py'}"
    )
    assert win.wb.undo_stack.count() == 1  # exporting edited nothing


def test_a_changed_labs_settings_are_named_as_not_exported(win, monkeypatch, tmp_path) -> None:
    import nbformat

    win.wb.set_lab_state(RoutingLabState(d=64.0), "Routing lab: key dimension 64")
    answer_dialog(monkeypatch, tmp_path / "nb.ipynb")
    file_action(win, "Export as Jupyter notebook…").trigger()
    nb = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    nbformat.validate(nb)
    intro = " ".join(nb.cells[0].source.split())
    assert "Changed in this session and left out: the settings of the routing lab." in intro


def test_a_failed_export_says_so_and_leaves_no_file(win, monkeypatch, tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    answer_dialog(monkeypatch, out / "missing" / "a.py")
    file_action(win, "Export as Python script…").trigger()
    message = win.statusBar().currentMessage()
    assert message.startswith("The scenario could not be written as code: ")
    assert "missing" in message
    assert list(out.iterdir()) == []
