"""The kit's control row, alone: the control each kind of setting gets, values emitted as the
state stores them (the choice, not its index; the display offset taken off), sliders on lines of
their own with level labels, and a slider the mouse holds left where it is."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QComboBox, QSlider

from attnsim.engine.settings import LabSettings, Setting
from attnsim.panels.kit.control_row import ControlRow
from attnsim.panels.kit.number_boxes import SignificantSpinBox, WholeNumberBox
from tests.panels.lab_helpers import LEFT, NOMOD, type_into


@dataclass(frozen=True)
class Row:
    mode: str = "a"
    on: bool = False
    head: int = 0
    m: int = 3
    n: int = 1
    x: float = 0.5


DECL = LabSettings("Row lab", Row, (
    Setting("mode", "mode", "choice", choices=("a", "b"), names=("first", "second")),
    Setting("on", "switch", "flag"),
    Setting("head", "head", hi=7, offset=1),
    Setting("m", "a long label m", hi=10),
    Setting("n", "n", hi=10),
    Setting("x", "x", "real", hi=1.0),
))  # fmt: skip


@pytest.fixture
def row(qtbot):
    r = ControlRow(
        DECL, ("mode", "on", "head", "m", "n", "x"), sliders=("m", "n"), lines=("m", "n")
    )
    qtbot.addWidget(r)
    r.resize(500, 120)
    r.show()
    qtbot.waitExposed(r)
    r.refresh(Row())
    return r


def test_each_kind_gets_its_control_and_emits_the_stored_value(row, qtbot):
    assert isinstance(row.combos["mode"], QComboBox) and isinstance(row.checks["on"], QCheckBox)
    assert isinstance(row.boxes["head"], WholeNumberBox)
    assert isinstance(row.boxes["x"], SignificantSpinBox)
    assert isinstance(row.sliders["m"], QSlider) and "m" not in row.boxes
    assert [row.combos["mode"].itemText(i) for i in range(2)] == ["first", "second"]
    assert row.boxes["head"].value() == 1  # stored 0, shown from 1
    got = []
    row.setting.connect(lambda name, value: got.append((name, value)))
    row.combos["mode"].setCurrentIndex(1)
    row.checks["on"].setChecked(True)
    row.boxes["head"].setValue(4)
    row.sliders["n"].setValue(6)
    assert got == [("mode", "b"), ("on", True), ("head", 3), ("n", 6)]
    assert type(got[1][1]) is bool and type(got[2][1]) is int


def test_sliders_on_their_own_lines_start_level_and_show_their_value(row):
    m, n = row.sliders["m"], row.sliders["n"]
    assert m.mapTo(row, QPoint(0, 0)).x() == n.mapTo(row, QPoint(0, 0)).x()
    assert m.mapTo(row, QPoint(0, 0)).y() != n.mapTo(row, QPoint(0, 0)).y()
    assert (m.minimum(), m.maximum(), m.value()) == (0, 10, 3)
    assert row.values["m"].text() == "3"
    row.refresh(Row(m=7), ranges={"m": (2, 8)})
    assert (m.minimum(), m.maximum(), m.value(), row.values["m"].text()) == (2, 8, 7, "7")


def test_a_held_slider_keeps_its_place_and_the_drag_is_reported(row, handle_center):
    slider = row.sliders["m"]
    events = []
    row.pressed.connect(lambda name: events.append(("pressed", name)))
    row.released.connect(lambda name: events.append(("released", name)))
    start = handle_center(slider)
    QTest.mousePress(slider, LEFT, NOMOD, start)
    QTest.mouseMove(slider, start + QPoint(40, 0))
    held = slider.value()
    assert slider.isSliderDown() and held != 3
    row.refresh(Row(m=3))  # a redraw during the drag
    assert slider.value() == held and row.values["m"].text() == "3"
    QTest.mouseRelease(slider, LEFT, NOMOD, start + QPoint(40, 0))
    assert events == [("pressed", "m"), ("released", "m")]


def test_a_box_refusal_names_the_setting_and_set_enabled_greys_it_out(row):
    reasons = []
    row.refused.connect(reasons.append)
    box = row.boxes["head"]
    box.setFocus()
    type_into(box, "2.5")
    assert reasons and reasons[0].startswith("head: ") and "2.5" in reasons[0]
    row.set_enabled("x", False)
    assert not row.boxes["x"].isEnabled()
    row.set_enabled("x", True)
    assert row.boxes["x"].isEnabled()
