"""The shared layout helpers: FlowLayout wraps, grows in height, and never asks for more width
than its widest item; compact combos shrink below their longest entry. Also the number parser
the table panels share and the spin box for values spanning decades."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QVBoxLayout, QWidget

from attnsim.panels.widgets import (
    FlowLayout,
    SignificantSpinBox,
    compact_combo,
    group,
    parse_number,
    significant_text,
)


class Fixed(QWidget):
    """A widget of a fixed size hint (and minimum), so the arithmetic below is exact."""

    def __init__(self, w: int, h: int, min_w: int | None = None) -> None:
        super().__init__()
        self._hint = QSize(w, h)
        self._min = QSize(w if min_w is None else min_w, h)

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return self._min


def make_flow(qtbot, sizes, h_spacing=6, v_spacing=4):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host, h_spacing=h_spacing, v_spacing=v_spacing)
    widgets = [Fixed(w, h) for w, h in sizes]
    for w in widgets:
        flow.addWidget(w)
    return host, flow, widgets


def test_items_wrap_onto_more_rows_when_narrow(qtbot):
    _host, flow, widgets = make_flow(qtbot, [(100, 20)] * 4)
    # One row needs 4*100 + 3*6 = 418 px.
    assert [len(r) for r in flow.rows_for_width(418)] == [4]
    assert [len(r) for r in flow.rows_for_width(417)] == [3, 1]
    assert [len(r) for r in flow.rows_for_width(250)] == [2, 2]
    assert [len(r) for r in flow.rows_for_width(150)] == [1, 1, 1, 1]
    # Order is kept across rows.
    assert [i.widget() for r in flow.rows_for_width(250) for i in r] == widgets


def test_height_for_width_grows_as_width_shrinks(qtbot):
    _host, flow, _ = make_flow(qtbot, [(100, 20)] * 4, v_spacing=4)
    assert flow.hasHeightForWidth()
    assert flow.heightForWidth(500) == 20
    assert flow.heightForWidth(250) == 20 + 4 + 20
    assert flow.heightForWidth(100) == 4 * 20 + 3 * 4
    heights = [flow.heightForWidth(w) for w in (600, 400, 300, 200, 120)]
    assert heights == sorted(heights)
    assert heights[-1] > heights[0]


def test_minimum_is_widest_item_and_hint_is_one_row(qtbot):
    _host, flow, _ = make_flow(qtbot, [(80, 20), (150, 30), (60, 10)], h_spacing=6)
    assert flow.minimumSize() == QSize(150, 30)
    assert flow.sizeHint() == QSize(80 + 150 + 60 + 2 * 6, 30)
    flow.setContentsMargins(3, 2, 5, 4)
    assert flow.minimumSize() == QSize(150 + 8, 30 + 6)


def test_spacing_setters(qtbot):
    _host, flow, _ = make_flow(qtbot, [(100, 20)] * 2, h_spacing=6, v_spacing=4)
    assert (flow.spacing(), flow.horizontalSpacing(), flow.verticalSpacing()) == (6, 6, 4)
    flow.setHorizontalSpacing(10)
    assert flow.sizeHint().width() == 210
    flow.setVerticalSpacing(9)
    assert flow.heightForWidth(100) == 20 + 9 + 20
    flow.setSpacing(2)
    assert (flow.horizontalSpacing(), flow.verticalSpacing()) == (2, 2)
    assert flow.heightForWidth(100) == 42


def test_geometry_places_rows_without_overlap(qtbot):
    host, _flow, widgets = make_flow(qtbot, [(100, 20), (100, 30), (100, 20)], v_spacing=4)
    host.resize(220, 200)
    host.show()
    qtbot.waitExposed(host)
    QApplication.processEvents()
    g = [w.geometry() for w in widgets]
    assert g[0].y() == g[1].y() or abs(g[0].center().y() - g[1].center().y()) <= 1
    assert g[0].right() < g[1].left()  # same row, side by side
    assert g[2].x() == 0 and g[2].top() > max(g[0].bottom(), g[1].bottom())  # wrapped
    for a in range(3):
        for b in range(a + 1, 3):
            assert not g[a].intersects(g[b])
    assert all(host.rect().contains(r) for r in g)


def test_hidden_widgets_take_no_room(qtbot):
    host, flow, widgets = make_flow(qtbot, [(100, 20), (300, 20), (100, 20)])
    host.show()
    widgets[1].hide()
    assert flow.minimumSize().width() == 100
    assert flow.sizeHint().width() == 206
    assert [len(r) for r in flow.rows_for_width(206)] == [2]


def test_too_wide_item_shrinks_to_row_but_not_below_its_minimum(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    wide = Fixed(400, 20, min_w=120)
    flow.addWidget(wide)
    assert flow.minimumSize().width() == 120
    host.resize(200, 60)
    host.show()
    qtbot.waitExposed(host)
    QApplication.processEvents()
    assert wide.width() == 200
    host.resize(120, 60)
    QApplication.processEvents()
    assert wide.width() == 120


def test_word_wrapped_label_gets_its_height_for_width(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    label = QLabel("many words that wrap onto several lines when the row is narrow " * 2)
    label.setWordWrap(True)
    flow.addWidget(label)
    assert flow.heightForWidth(120) > flow.heightForWidth(1000)


def test_flow_inside_a_box_keeps_the_host_narrow(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    outer = QVBoxLayout(host)
    flow = FlowLayout()
    outer.addLayout(flow)
    for _ in range(6):
        flow.addWidget(Fixed(90, 22))
    host.show()
    QApplication.processEvents()
    # Six 90 px items in one row want ~570 px; the host may be as narrow as one item.
    assert host.minimumSizeHint().width() < 90 + 40
    assert host.sizeHint().width() >= 6 * 90


def test_group_keeps_widgets_together(qtbot):
    a, b = QLabel("Head"), QComboBox()
    box = group(a, b, spacing=3)
    qtbot.addWidget(box)
    assert a.parent() is box and b.parent() is box
    assert box.layout().spacing() == 3


def test_compact_combo_shrinks_below_longest_entry(qtbot):
    long_text = "a very long entry name that would make the combo wide"
    plain = QComboBox()
    plain.addItems(["short", long_text])
    small = QComboBox()
    small.addItems(["short", long_text])
    qtbot.addWidget(plain)
    qtbot.addWidget(small)
    compact_combo(small, chars=6)
    assert small.minimumSizeHint().width() < plain.minimumSizeHint().width() - 100
    assert small.sizeHint().width() < plain.sizeHint().width() - 100
    small.setCurrentIndex(1)
    assert small.toolTip() == long_text  # the elided entry is still readable
    tipped = QComboBox()
    qtbot.addWidget(tipped)
    tipped.setToolTip("explains the choice")
    tipped.addItems(["x", "y"])
    compact_combo(tipped)
    tipped.setCurrentIndex(1)
    assert tipped.toolTip() == "explains the choice"


def test_stretch_items_share_the_spare_width_of_their_row(qtbot):
    from PySide6.QtWidgets import QSlider

    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host, h_spacing=6)
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setMinimumWidth(60)
    grown = group(QLabel("T"), slider, grow=slider)
    fixed = Fixed(100, 20)
    flow.addWidget(grown)
    flow.addWidget(fixed)
    host.resize(500, 60)
    host.show()
    qtbot.waitExposed(host)
    QApplication.processEvents()
    assert fixed.width() == 100  # no stretch: keeps its hint
    assert grown.width() == 500 - 100 - 6  # takes the rest of the row
    assert slider.width() > grown.width() - 40  # and gives it to the slider, not the label
    try:
        group(QLabel("a"), grow=QLabel("b"))
    except ValueError:
        pass
    else:
        raise AssertionError("grow must be one of the widgets")


def test_soft_label_never_widens_its_parent(qtbot):
    from attnsim.panels.widgets import SoftLabel

    label = SoftLabel("a rather long note that should not set a minimum width")
    qtbot.addWidget(label)
    assert label.minimumSizeHint().width() == 0
    assert label.sizeHint().width() > 200


def make_split(qtbot, **kw):
    from attnsim.panels.widgets import AdaptiveSplit

    a, b = Fixed(300, 200), Fixed(200, 250)
    split = AdaptiveSplit(a, b, ("first", "second"), **kw)
    qtbot.addWidget(split)
    split.show()
    qtbot.waitExposed(split)
    return split, a, b


def test_adaptive_split_modes_follow_the_size(qtbot):
    split, a, b = make_split(qtbot, side_width=600, stack_height=500)
    handle = split.splitter.handleWidth()
    assert split.wanted_mode(QSize(600, 300)) == "side"
    assert split.wanted_mode(QSize(599, 500)) == "stack"
    assert split.wanted_mode(QSize(599, 499)) == "tabs"
    assert split.wanted_mode(QSize(300 + 200 + handle, 300)) == "tabs"  # below side_width
    seen: list[str] = []
    split.mode_changed.connect(seen.append)
    split.resize(700, 300)
    QApplication.processEvents()
    assert split.mode() == "side" and a.isVisible() and b.isVisible()
    assert a.x() < b.x()
    split.resize(400, 600)
    QApplication.processEvents()
    assert split.mode() == "stack" and a.y() < b.y()
    split.resize(400, 300)
    QApplication.processEvents()
    assert split.mode() == "tabs"
    assert a.isVisible() != b.isVisible()  # one tab at a time
    split.set_current(1)
    assert b.isVisible() and not a.isVisible()
    split.resize(700, 300)
    QApplication.processEvents()
    assert split.mode() == "side" and a.isVisible() and b.isVisible()
    assert seen[-3:] == ["stack", "tabs", "side"]
    split.resize(400, 300)
    QApplication.processEvents()
    assert split.mode() == "tabs" and b.isVisible()  # the tab shown last comes back


def test_adaptive_split_minimum_is_the_tabs_whatever_is_shown(qtbot):
    split, _a, _b = make_split(qtbot)
    split.resize(900, 400)
    QApplication.processEvents()
    assert split.mode() == "side"
    m = split.minimumSizeHint()
    assert m.width() == 300  # the wider part, not both side by side
    assert 250 < m.height() < 250 + 60  # the taller part plus a tab bar
    assert split.sizeHint().width() >= 500


def test_adaptive_split_keeps_the_ratio_until_the_handle_moves(qtbot):
    split, _a, _b = make_split(qtbot, ratio=0.6)
    split.resize(1000, 400)
    QApplication.processEvents()
    sizes = split.splitter.sizes()
    assert abs(sizes[0] / sum(sizes) - 0.6) < 0.02
    split.splitter.moveSplitter(400, 1)  # as a drag of the handle does
    QApplication.processEvents()
    split.resize(1100, 400)
    QApplication.processEvents()
    # The user's split scales with the width; it is not reset to 60 %.
    assert abs(split.splitter.sizes()[0] - 440) <= 3


@pytest.mark.parametrize(
    "preset", ["river-bank", "two-heads", "three-fields", "routing-lab", "tired-cat"]
)
def test_every_panel_fits_a_laptop_dock(make_wb, qtbot, preset):
    """The main window puts panels in two tabbed dock columns of a 1200 x 800 window: no panel
    may ask for more than 480 x 360 px."""
    from attnsim.panels import panel_classes

    too_big = {}
    for cls in panel_classes():
        panel = cls(make_wb(preset))
        qtbot.addWidget(panel)
        panel.show()
        QApplication.processEvents()
        panel.flush()
        QApplication.processEvents()
        m = panel.minimumSizeHint()
        if m.width() > 480 or m.height() > 360:
            too_big[cls.panel_id] = (m.width(), m.height())
        panel.close()
    assert not too_big


# ---- parsing -------------------------------------------------------------------------------------
def test_parse_number_accepts_numbers_and_names_the_problem():
    assert parse_number(" −0.25 ") == -0.25
    assert parse_number("1e-3") == 0.001
    assert parse_number("2,5") == 2.5
    for bad, word in (
        ("abc", "not a number"),
        ("nan", "NaN"),
        ("inf", "infinity"),
        ("-inf", "infinity"),
        ("", "empty"),
    ):
        with pytest.raises(ValueError, match=word):
            parse_number(bad)


def test_the_table_panels_share_one_parser():
    from attnsim.panels import projections, vectors

    assert projections.parse_number is parse_number and vectors.parse_number is parse_number


# ---- a spin box for values spanning decades -----------------------------------------------------
def test_significant_text_keeps_four_digits_without_exponents():
    assert significant_text(0.001) == "0.001"
    assert significant_text(0.00123456) == "0.001235"
    assert significant_text(1.0) == "1"
    assert significant_text(123.456) == "123.5"
    assert significant_text(1000.0) == "1000"


def test_significant_spin_box_shows_small_and_large_values(qtbot):
    box = SignificantSpinBox(0.001, 1000.0)
    qtbot.addWidget(box)
    assert (box.minimum(), box.maximum()) == (0.001, 1000.0)
    for value, text in ((0.001, "0.001"), (0.0025, "0.0025"), (2.5, "2.5"), (1000.0, "1000")):
        box.setValue(value)
        assert box.value() == pytest.approx(value) and box.text() == text
    # Typing goes through the shared parser (a typographic minus, a decimal comma).
    assert box.valueFromText("0,004") == 0.004
    box.setValue(0.5)
    box.stepUp()  # adaptive: a tenth of the value's decade
    assert box.value() == pytest.approx(0.51)


# ---- where the pieces live ------------------------------------------------------------------------
def test_widgets_re_exports_the_kit_pieces_themselves():
    from attnsim.panels import widgets
    from attnsim.panels.kit import adaptive_split, flow_layout, number_boxes, number_entry

    for module in (adaptive_split, flow_layout, number_boxes, number_entry):
        for name in module.__all__:
            assert getattr(widgets, name) is getattr(module, name), name
            assert name in widgets.__all__, name


def test_number_entry_checks_the_scenario_range_and_shows_significant_digits():
    from attnsim.engine.scenario import MAX_ABS_VALUE
    from attnsim.panels.kit.number_entry import check_entry, parse_typed_number

    assert check_entry(-MAX_ABS_VALUE) == -MAX_ABS_VALUE
    with pytest.raises(ValueError, match="outside"):
        check_entry(MAX_ABS_VALUE * 1.5)
    assert parse_typed_number("2,5", decimal_point=",") == 2.5
    with pytest.raises(ValueError, match="ambiguous"):
        parse_typed_number("1,000")


@pytest.mark.parametrize("keep_rows", [False, True])
def test_a_flow_that_keeps_its_rows_is_never_drawn_under_the_widget_below(qtbot, keep_rows):
    # The Real model panel's buttons in a 1,024 x 768 window: three rows at the dock's width,
    # but a panel squeezed to the one row its minimum said, and the third row under the text
    # box. With keep_rows the rows at the width given are the panel's least height.
    from PySide6.QtWidgets import QPushButton, QTextEdit

    panel = QWidget()
    qtbot.addWidget(panel)
    buttons = QWidget()
    flow = FlowLayout(buttons, h_spacing=4, v_spacing=3, keep_rows=keep_rows)
    for i in range(8):
        flow.addWidget(QPushButton(f"a button {i}"))
    edit = QTextEdit()
    edit.setFixedHeight(60)
    lay = QVBoxLayout(panel)
    lay.addWidget(buttons)
    lay.addWidget(edit)
    panel.resize(260, 400)
    panel.show()
    qtbot.waitExposed(panel)
    QApplication.processEvents()
    rows = len(flow.rows_for_width(buttons.width()))
    assert rows >= 3
    # a holder sizes the panel to its minimum when the dock is shorter (app/docks.py)
    panel.resize(260, panel.minimumSizeHint().height())
    QApplication.processEvents()
    last = max(flow.itemAt(i).geometry().bottom() for i in range(flow.count()))
    under = last >= edit.geometry().top() - buttons.geometry().top()
    assert under == (not keep_rows)
