"""A refusal says why an edit did not go through; once an edit goes through, from any panel,
or another document opens, the refusal no longer describes the state and goes away."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits
from attnsim.panels.heatmap import HeatmapPanel
from attnsim.panels.vectors import VectorEditorPanel
from attnsim.resources import resolve_scenario


def settle(*panels) -> None:
    for _ in range(3):
        QApplication.processEvents()
    for panel in panels:
        panel.flush()


def test_a_refused_cell_clears_on_an_edit_from_elsewhere_and_on_a_new_document(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.item(2, 2).setText("2e6")  # bank, water: beyond ±1e6
    settle(panel)
    assert panel.message.isVisible()
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.1, 0.2, 0.3, 0.4]), "another panel's edit")
    settle(panel)
    assert not panel.message.isVisible()

    panel.table.item(2, 2).setText("abc")
    settle(panel)
    assert panel.message.isVisible()
    wb.load(resolve_scenario("money-bank"))
    settle(panel)
    assert not panel.message.isVisible()


def test_the_temperature_box_says_why_in_the_panel_and_the_line_clears(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 500))
    said: list[str] = []
    wb.message.connect(said.append)
    box = panel.t_spin
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), "0")
    QTest.keyClick(box, Qt.Key.Key_Return)
    settle(panel)
    assert wb.scenario.temperature == 1.0
    assert panel.refusal.isVisible()
    assert "temperature: 0 is below 0.001" in panel.refusal.text()
    assert said and "0 is below 0.001" in said[-1]
    wb.edit(wb.scenario.replace(temperature=2.0), "temperature 2")
    settle(panel)
    assert not panel.refusal.isVisible()


def test_the_status_bar_drops_a_refusal_once_an_edit_goes_through(qtbot, home):
    from attnsim.app import MainWindow
    from attnsim.model.workbench import Workbench

    wb = Workbench(resolve_scenario("river-bank"))
    win = MainWindow(wb, ask=lambda title, text: True, autosave_ms=10)
    qtbot.addWidget(win)
    win.show()
    wb.say("Refused: bank · water: 2e+06 is outside ±1e+06")
    assert win.statusBar().currentMessage().startswith("Refused: ")
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.1, 0.2, 0.3, 0.4]), "an edit")
    assert win.statusBar().currentMessage() == ""
    wb.say("Saved somewhere")  # other messages keep their time
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.2, 0.2, 0.3, 0.4]), "an edit")
    assert win.statusBar().currentMessage() == "Saved somewhere"
