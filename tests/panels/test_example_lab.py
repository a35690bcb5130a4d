"""The lab contract, followed literally from docs/architecture.md ("How to add a lab"): a frozen
state dataclass, its settings declared once, a LabPanel subclass with one control row, mounted
on a workbench. A setting edit is one undo step, a bad value is refused in the one wording and
changes nothing, and the control row's combo, slider (one drag, one step) and box work."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from attnsim.engine.settings import LabSettings, Setting
from attnsim.model.workbench import Workbench
from attnsim.panels.kit.control_row import ControlRow
from attnsim.panels.lab import LabPanel
from tests.panels.lab_helpers import drag, settle, type_into


# 1. The settings: a frozen dataclass with defaults (in a real lab, attnsim/viewmodels/<name>.py) ...
@dataclass(frozen=True)
class ExampleLabState:
    rule: str = "softmax"
    k: int = 2
    temperature: float = 1.0


# ... and each setting declared once, next to it.
SETTINGS = LabSettings("Example lab", ExampleLabState, (
    Setting("rule", "weights by", "choice", choices=("softmax", "argmax"),
            names=("softmax", "the best key only")),
    Setting("k", "keys read k", lo=1, hi=8, tip="How many keys the query reads"),
    Setting("temperature", "temperature T", "real", lo=0.01, hi=100.0),
))  # fmt: skip


# 2. The panel (in a real lab, attnsim/panels/<name>/panel.py): LabPanel plus one control row.
class ExampleLabPanel(LabPanel):
    """One page: the control row over a line of text."""

    panel_id, title, settings = "example_lab", "Example lab", SETTINGS

    def __init__(self, workbench: Workbench) -> None:
        super().__init__(workbench)
        row = ControlRow(SETTINGS, ("rule", "k", "temperature"), sliders=("k",))
        self.controls = self.connect_controls(row)
        self.view = QLabel()
        self.add_page("Example", self.controls, self.view)

    def refresh(self) -> None:
        st = self.state()
        with self.updating():
            self.controls.refresh(st)
        self.view.setText(f"{st.rule}: {st.k} keys at T = {st.temperature:g}")


@pytest.fixture
def panel(make_wb, show_panel):
    lab = ExampleLabPanel(make_wb("river-bank"))
    assert lab.state_type is ExampleLabState  # from the declaration
    return show_panel(lab, size=(600, 300))


def state(wb) -> ExampleLabState:
    return wb.lab_state(ExampleLabState)


def test_a_setting_edit_is_one_undo_step_and_the_view_follows(panel):
    wb = panel.wb
    assert panel.set_setting("temperature", 2.5)
    settle(panel)
    assert state(wb) == ExampleLabState(temperature=2.5) and wb.undo_stack.count() == 1
    assert wb.undo_stack.text(0) == "Example lab: temperature T = 2.5"
    assert panel.view.text() == "softmax: 2 keys at T = 2.5"
    assert panel.controls.boxes["temperature"].value() == pytest.approx(2.5, abs=1e-12)
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == ExampleLabState() and panel.view.text() == "softmax: 2 keys at T = 1"


def test_a_bad_value_is_refused_in_the_one_wording_and_changes_nothing(panel):
    wb = panel.wb
    assert not panel.set_setting("k", 9)
    assert state(wb) == ExampleLabState() and wb.undo_stack.count() == 0
    assert panel.refusal.isVisibleTo(panel)
    assert panel.refusal.text() == "Refused: keys read k must lie between 1 and 8, got 9"
    assert not panel.set_setting("rule", "sparsemax")
    assert "weights by must be one of softmax, the best key only, got 'sparsemax'" in (
        panel.refusal.text()
    )
    assert not panel.set_setting("temperature", "warm")
    assert panel.refusal.text() == "Refused: temperature T must be a number, got 'warm'"
    box = panel.controls.boxes["temperature"]
    type_into(box, "0.001")  # a number out of range: the lab refuses it, in the one wording
    settle(panel)
    assert state(wb) == ExampleLabState() and wb.undo_stack.count() == 0
    assert panel.refusal.text() == "Refused: temperature T must lie between 0.01 and 100, got 0.001"
    assert box.value() == pytest.approx(1.0, abs=1e-12)  # the box shows the stored value again
    type_into(box, "warm")  # no number at all: the box refuses it, naming the setting
    settle(panel)
    assert panel.refusal.text().startswith("Refused: temperature T: ")
    assert panel.set_setting("k", 3)  # a good edit hides the refusal
    settle(panel)
    assert state(wb).k == 3 and not panel.refusal.isVisibleTo(panel)


def test_the_control_row_combo_slider_and_box_edit_the_lab(panel, handle_center):
    wb, row = panel.wb, panel.controls
    combo = row.combos["rule"]
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    settle(panel)
    assert state(wb).rule == "argmax" and wb.undo_stack.count() == 1
    assert wb.undo_stack.text(0) == "Example lab: weights by = the best key only"
    slider = row.sliders["k"]
    assert (slider.minimum(), slider.maximum(), slider.value()) == (1, 8, 2)
    start = handle_center(slider)
    drag(slider, [start + QPoint(dx, 0) for dx in (0, 10, 40, 80, 160)])
    settle(panel)
    assert state(wb).k > 3 and wb.undo_stack.count() == 2  # the whole drag: one step
    assert row.values["k"].text() == str(state(wb).k) and slider.value() == state(wb).k
    type_into(row.boxes["temperature"], "4")
    settle(panel)
    assert state(wb).temperature == pytest.approx(4.0, abs=1e-12)
    assert wb.undo_stack.count() == 3
    for _ in range(3):
        wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == ExampleLabState()
    assert (combo.currentIndex(), slider.value()) == (0, 2)
    assert row.boxes["temperature"].value() == pytest.approx(1.0, abs=1e-12)
