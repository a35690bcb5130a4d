"""Every box for typing a number accepts what a scientist types, or refuses it visibly; it never
sets another number than the one typed (typing '1e-3' once set T = 13)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication

from attnsim.panels.widgets import SignificantSpinBox, WholeNumberBox, parse_typed_number

C = QLocale.c()
GERMAN = QLocale(QLocale.Language.German, QLocale.Country.Germany)


def type_into(box: QAbstractSpinBox, text: str) -> str:
    """Select all, type ``text`` key by key, press Return; returns what the line showed."""
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), text)
    shown = box.lineEdit().text()
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    QApplication.processEvents()
    return shown


def assert_refused(box: SignificantSpinBox, before: float, *words: str) -> None:
    assert box.value() == before  # unchanged
    reason = box.refusal()
    assert reason and all(w in reason for w in words), reason
    assert "B00020" in box.styleSheet()  # the red frame
    assert box.toolTip() == f"Refused: {reason}"


@pytest.fixture
def temperature_box(qtbot):
    def make(locale: QLocale) -> SignificantSpinBox:
        box = SignificantSpinBox(1e-3, 1e3)
        box.setLocale(locale)
        box.setToolTip("Temperature")
        qtbot.addWidget(box)
        box.show()
        box.setValue(1.0)
        return box

    return make


ACCEPTED = [
    ("1e-3", 0.001),
    ("5e-2", 0.05),
    ("2e2", 200.0),
    ("1.5e1", 15.0),
    ("1E1", 10.0),
    (".5", 0.5),
    ("0.0042", 0.0042),
    ("1000", 1000.0),
    ("2.5", 2.5),
]


@pytest.mark.parametrize("locale", [C, GERMAN], ids=["C", "German"])
@pytest.mark.parametrize(("typed", "value"), ACCEPTED)
def test_scientific_notation_and_leading_points_are_accepted(temperature_box, locale, typed, value):
    box = temperature_box(locale)
    shown = type_into(box, typed)
    assert shown == typed  # no character was dropped on the way
    assert box.value() == pytest.approx(value, rel=1e-12)
    assert box.refusal() == "" and box.styleSheet() == ""


@pytest.mark.parametrize("locale", [C, GERMAN], ids=["C", "German"])
def test_a_decimal_comma_is_accepted(temperature_box, locale):
    box = temperature_box(locale)
    type_into(box, "2,5")
    assert box.value() == 2.5


def test_a_comma_that_may_be_a_thousands_separator_is_refused_unless_the_locale_says(
    temperature_box,
):
    box = temperature_box(C)
    type_into(box, "1,000")
    assert_refused(box, 1.0, "ambiguous")
    german = temperature_box(GERMAN)
    german.setValue(3.0)
    type_into(german, "1,000")
    assert german.value() == 1.0  # in German, 1,000 is one


@pytest.mark.parametrize("locale", [C, GERMAN], ids=["C", "German"])
@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("1e-6", ("1e-6 is below 0.001", "outside the range 0.001 to 1000")),
        ("2e3", ("2e3 is above 1000",)),
        ("-.5", ("-.5 is below 0.001",)),
        ("0", ("0 is below 0.001",)),
        ("abc", ("not a number",)),
        ("1e", ("not a complete number",)),
        ("1e-3x", ("not a number",)),
        ("inf", ("infinity",)),
        ("nan", ("NaN",)),
        ("1e999", ("finite",)),
        ("1.5.2", ("not a number",)),
    ],
)
def test_out_of_range_or_garbage_is_refused_visibly_and_the_value_kept(
    temperature_box, locale, typed, words
):
    box = temperature_box(locale)
    box.setValue(2.0)
    seen = []
    box.refused.connect(seen.append)
    changes = []
    box.valueChanged.connect(changes.append)
    assert type_into(box, typed) == typed  # what was typed stays visible until committed
    assert_refused(box, 2.0, *words)
    assert seen == [box.refusal()] and changes == []
    # The next accepted value clears the red frame and gives the plain tool tip back.
    type_into(box, "3")
    assert box.value() == 3.0 and box.refusal() == "" and box.styleSheet() == ""
    assert box.toolTip() == "Temperature"


def test_focus_out_commits_or_refuses_like_return(temperature_box):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QFocusEvent

    box = temperature_box(C)

    def leave(text: str) -> None:
        box.lineEdit().selectAll()
        QTest.keyClicks(box.lineEdit(), text)
        QApplication.sendEvent(
            box, QFocusEvent(QEvent.Type.FocusOut, Qt.FocusReason.TabFocusReason)
        )
        QApplication.processEvents()

    leave("5e-2")
    assert box.value() == 0.05
    leave("5e5")
    assert_refused(box, 0.05, "is above")


def test_committing_the_shown_text_keeps_the_exact_value(temperature_box):
    box = temperature_box(C)
    type_into(box, "0.00123456")
    assert box.value() == 0.00123456 and box.text() == "0.001235"
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)  # the rounded text, committed again
    assert box.value() == 0.00123456


def test_keystrokes_do_not_pass_through_other_values(temperature_box):
    box = temperature_box(C)
    changes = []
    box.valueChanged.connect(changes.append)
    type_into(box, "5e-2")  # '5' on the way must not set 5
    assert changes == [0.05]


def test_a_box_through_zero_steps_by_its_step(qtbot):
    box = SignificantSpinBox(-100.0, 100.0, step=0.1)
    qtbot.addWidget(box)
    box.setValue(0.0)
    box.stepUp()
    assert box.value() == pytest.approx(0.1)
    type_into(box, "-1e-3")
    assert box.value() == -0.001 and box.text() == "-0.001"


def test_parse_typed_number_names_the_problem():
    assert parse_typed_number(" −.5 ") == -0.5
    assert parse_typed_number("2,5", ",") == 2.5
    assert parse_typed_number("0,004") == 0.004
    for bad, word in [("", "empty"), ("1,5.2", "decimal point"), ("1,000", "ambiguous"),
                      ("e5", "not a complete"), ("--1", "not a number")]:  # fmt: skip
        with pytest.raises(ValueError, match=word):
            parse_typed_number(bad)


# ---- the boxes of the panels ---------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["river-bank", "routing-lab"])
def test_every_number_box_of_every_panel_is_one_of_the_typed_boxes(make_wb, qtbot, preset):
    from attnsim.panels import panel_classes

    decimal = whole = 0
    for cls in panel_classes():
        panel = cls(make_wb(preset))
        qtbot.addWidget(panel)
        for box in panel.findChildren(QAbstractSpinBox):
            assert type(box) in (SignificantSpinBox, WholeNumberBox), (cls.__name__, type(box))
            assert not box.keyboardTracking()
            decimal += type(box) is SignificantSpinBox
            whole += type(box) is WholeNumberBox
    assert decimal >= 6  # heatmap T, routing T, three e components, stepper lr
    assert whole >= 8  # routing d, projections seed, explorer d_k, scaling lab x3, anatomy


@pytest.mark.parametrize(
    ("typed", "value"), [("1e3", 1000), ("4096", 4096), ("2E2", 200), ("1.0e1", 10), ("+7", 7)]
)
def test_whole_number_box_reads_scientific_notation(qtbot, typed, value):
    box = WholeNumberBox(1, 4096)
    qtbot.addWidget(box)
    box.show()
    box.setValue(5)
    assert type_into(box, typed) == typed
    assert box.value() == value and box.refusal() == ""


@pytest.mark.parametrize(
    ("typed", "words"),
    [("2.5", "not a whole number"), ("1e4", "outside"), ("0", "outside"), ("x", "not a number")],
)
def test_whole_number_box_refuses_visibly(qtbot, typed, words):
    box = WholeNumberBox(1, 4096)
    qtbot.addWidget(box)
    box.show()
    box.setValue(5)
    type_into(box, typed)
    assert_refused(box, 5, words)


def test_routing_lab_synthetic_d_typed_as_1e3_is_a_thousand(make_wb, show_panel):
    from attnsim.panels.routing_lab import RoutingLabPanel

    panel = show_panel(RoutingLabPanel(make_wb("routing-lab")), size=(900, 600))
    type_into(panel.d_spin, "1e3")
    assert panel.d_spin.value() == 1000  # was 13


def test_heatmap_temperature_typed_in_scientific_notation(make_wb, show_panel):
    from attnsim.panels.heatmap import HeatmapPanel

    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    type_into(panel.t_spin, "1e-3")
    assert wb.scenario.temperature == 0.001  # was 13
    type_into(panel.t_spin, "1.5e1")
    assert wb.scenario.temperature == 15.0  # was 1.51
    count = wb.undo_stack.count()
    type_into(panel.t_spin, "1e-6")
    assert wb.scenario.temperature == 15.0 and wb.undo_stack.count() == count
    assert "1e-6" in panel.t_spin.refusal() and "outside" in panel.last_refusal


def test_routing_lab_temperature_typed_in_scientific_notation(make_wb, show_panel):
    from attnsim.panels.routing_lab import RoutingLabPanel

    wb = make_wb("routing-lab")
    panel = show_panel(RoutingLabPanel(wb), size=(900, 600))
    type_into(panel.t_spin, "5e-2")
    assert wb.scenario.temperature == 0.05
    type_into(panel.t_spin, "2e3")
    assert wb.scenario.temperature == 0.05
    assert "outside" in panel.t_spin.refusal() and "temperature" in panel.message_label.text()


def test_nullspace_input_typed_in_scientific_notation(make_wb, show_panel):
    from attnsim.panels.nullspace_lab import NullSpaceLabPanel, NullSpaceLabState

    wb = make_wb("river-bank")
    panel = show_panel(NullSpaceLabPanel(wb), size=(900, 600))
    type_into(panel.e_spins[0], "-2.5e-1")
    assert panel.input_e()[0] == -0.25
    before = wb.lab_state(NullSpaceLabState).e
    type_into(panel.e_spins[1], "1e3")  # beyond ±100
    assert panel.input_e()[0] == -0.25 and "outside" in panel.e_spins[1].refusal()
    assert panel.refusal.isVisible() and "input e" in panel.refusal.text()
    assert wb.lab_state(NullSpaceLabState).e == before


def test_stepper_learning_rate_typed_in_scientific_notation(qtbot, make_wb, show_panel):
    from attnsim.panels.stepper import StepperPanel

    wb = make_wb("river-bank")
    panel = show_panel(StepperPanel(wb), size=(900, 600))
    type_into(panel.lr_box, "5e-2")
    assert panel.session.lr == 0.05
    type_into(panel.lr_box, "1e2")
    assert panel.session.lr == 0.05 and "outside" in panel.lr_box.refusal()


def test_escape_takes_the_typing_back_and_focus_out_commits_nothing(temperature_box):
    # Found by the GUI monkey: "4", Escape, then focus on another box set T = 4 anyway.
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QFocusEvent

    box = temperature_box(C)
    changed: list[float] = []
    box.valueChanged.connect(changed.append)
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), "4")
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Escape)
    assert box.lineEdit().text() == box.textFromValue(1.0)
    QApplication.sendEvent(box, QFocusEvent(QEvent.Type.FocusOut, Qt.FocusReason.TabFocusReason))
    QApplication.processEvents()
    assert box.value() == 1.0 and changed == []
    assert box.refusal() == ""
