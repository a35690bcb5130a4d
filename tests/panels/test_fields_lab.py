"""The three-fields lab shows the engine's per-field weights and edits queries by field."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionSlider

from attnsim.engine.experiments import FIELD_NAMES, three_fields
from attnsim.panels.fields_lab import (
    FieldsLabPanel,
    fit_points,
    place_label,
    stacked_segments,
)
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.viewmodels.fields_lab import field_layout, field_sums, mix_of_query


@pytest.fixture
def lab(make_wb, show_panel):
    def make(name="three-fields"):
        wb = make_wb(name)
        return wb, show_panel(FieldsLabPanel(wb), size=(700, 450))

    return make


def x_of_value(slider, value: int) -> int:
    opt = QStyleOptionSlider()
    slider.initStyleOption(opt)
    handle = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle, slider
    )
    groove = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderGroove, slider
    )
    span = groove.width() - handle.width()
    pos = QStyle.sliderPositionFromValue(slider.minimum(), slider.maximum(), value, span)
    return groove.left() + pos + handle.width() // 2


def test_numbers_are_the_engines_on_the_preset(lab):
    wb, panel = lab()
    assert panel.active and panel.stack.currentIndex() == 0
    tr = wb.result.heads[0]
    layout = field_layout(wb.scenario)
    nums = panel.numbers()
    # Exactly the sums of the trace's weights over each field's keys.
    for f in range(3):
        np.testing.assert_array_equal(
            nums["per_field"][:, f], tr.weights[:, layout.key_field == f].sum(axis=1)
        )
    np.testing.assert_array_equal(nums["per_field"].round(2), [[0.87, 0.07, 0.07],
                                  [0.42, 0.49, 0.10], [0.26, 0.32, 0.42]])  # fmt: skip
    np.testing.assert_array_equal(nums["entropy"], tr.entropy)
    np.testing.assert_array_equal(nums["entropy"].round(2), [2.69, 3.31, 3.53])
    ref = three_fields()["results"]
    for i in range(3):
        np.testing.assert_allclose(
            nums["per_field"][i], [ref[i]["per_field"][f] for f in FIELD_NAMES], rtol=1e-12
        )
        assert nums["entropy"][i] == pytest.approx(ref[i]["entropy"], rel=1e-12)
    i = wb.receiving
    np.testing.assert_array_equal(nums["mixture"], tr.output[i])
    np.testing.assert_allclose(nums["mixture"], ref[i]["mixture"], rtol=1e-12)
    # What the views draw is those arrays.
    np.testing.assert_array_equal(panel.bars.sums, nums["per_field"])
    np.testing.assert_array_equal(panel.bars.entropy, tr.entropy)
    np.testing.assert_array_equal(panel.mixture.values, tr.output[i])
    assert [lbl.text() for lbl in panel.slider_values] == ["1.00", "0.00", "0.00"]
    assert [s.value() for s in panel.sliders] == [100, 0, 0]


def test_a_slider_drag_is_one_undoable_edit_and_the_numbers_follow(lab, record, handle_center):
    wb, panel = lab()
    wb.set_receiving(0)
    panel.flush()
    before = wb.scenario
    seen = record(wb.changed)
    slider = panel.sliders[1]  # control theory, now 0 for the query inside acoustics
    start = handle_center(slider)
    QTest.mousePress(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    assert slider.isSliderDown()
    for value in (10, 25, 40, 60):
        QTest.mouseMove(slider, QPoint(x_of_value(slider, value), start.y()))
        QApplication.processEvents()
    target = QPoint(x_of_value(slider, 60), start.y())
    QTest.mouseRelease(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, target)
    panel.flush()
    assert wb.undo_stack.count() == 1 and len(seen) >= 2
    share = slider.value() / 100
    assert 0.5 <= share <= 0.7
    q = wb.scenario.Q[0]
    layout = field_layout(wb.scenario)
    mix = mix_of_query(q, layout.directions)
    assert mix[1] == pytest.approx(share, abs=1e-12)  # the dragged share, exactly
    assert np.linalg.norm(q) == pytest.approx(1.0)
    np.testing.assert_array_equal(wb.scenario.Q[1:], before.Q[1:])  # only this query moved
    np.testing.assert_array_equal(wb.scenario.K, before.K)
    # The lab's numbers follow the new query.
    sums = field_sums(wb.result.heads[0].weights, layout.key_field)
    np.testing.assert_array_equal(panel.numbers()["per_field"], sums)
    np.testing.assert_array_equal(panel.bars.sums, sums)
    assert sums[0, 1] > 0.3 and sums[0, 0] < 0.87
    assert panel.slider_values[1].text() == f"{share:.2f}"
    wb.undo_stack.undo()
    assert wb.scenario.equals(before)
    panel.flush()
    assert [s.value() for s in panel.sliders] == [100, 0, 0]


def test_a_keyboard_step_is_one_edit_with_one_signal(lab, record):
    wb, panel = lab()
    wb.set_receiving(1)
    panel.flush()
    seen = record(wb.changed)
    slider = panel.sliders[2]
    slider.setFocus()
    QTest.keyClick(slider, Qt.Key.Key_PageUp)  # Buddhist texts 0 -> 0.10
    assert len(seen) == 1 and wb.undo_stack.count() == 1
    mix = mix_of_query(wb.scenario.Q[1], field_layout(wb.scenario).directions)
    assert mix[2] == pytest.approx(0.10, abs=1e-12)
    assert mix[0] == pytest.approx(mix[1])  # the other two kept their proportion
    panel.flush()
    assert wb.undo_stack.count() == 1  # redrawing pushed nothing


def test_selection_stays_in_sync_with_the_workbench(lab):
    wb, panel = lab()
    wb.set_receiving(2)
    panel.flush()
    assert panel.query_combo.currentIndex() == 2 and panel.bars.selected == 2
    assert panel.scatter.selected == 2
    panel.query_combo.setCurrentIndex(1)
    assert wb.receiving == 1
    panel.flush()
    panel.bars.repaint()
    rect = panel.bars.row_rects[0]
    QTest.mouseClick(panel.bars, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     rect.center().toPoint())  # fmt: skip
    assert wb.receiving == 0
    panel.flush()
    panel.scatter.repaint()
    x, y = panel.scatter.query_px[2]
    QTest.mouseClick(panel.scatter, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(round(x), round(y)))  # fmt: skip
    assert wb.receiving == 2
    assert wb.undo_stack.count() == 0


def test_other_scenarios_explain_and_offer_the_preset(lab, record):
    wb, panel = lab("river-bank")
    assert not panel.active and panel.stack.currentIndex() == 1
    assert "token scenario" in panel.off_text.text()
    assert "0.87" in panel.reference.text() and "3.53" in panel.reference.text()
    seen = record(wb.changed)
    QTest.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert wb.scenario.name == "three-fields" and len(seen) == 1
    panel.flush()
    assert panel.stack.currentIndex() == 0
    wb.undo_stack.undo()
    assert wb.scenario.name == "river-bank"
    panel.flush()
    assert panel.stack.currentIndex() == 1


def test_opening_the_preset_is_a_new_untitled_document(lab, tmp_path):
    wb, panel = lab("river-bank")
    mine = tmp_path / "mine.json"
    wb.path = mine
    QTest.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert wb.scenario.name == "three-fields"
    assert wb.path is None  # File > Save cannot write the preset over mine.json
    wb.undo_stack.undo()
    assert wb.scenario.name == "river-bank" and wb.path == mine


def test_divisor_and_entropy_ceiling_are_the_traces(lab):
    from attnsim.engine import edits

    wb, panel = lab()
    tr = wb.result.heads[0]
    assert f"logit = q·k / {fmt_fixed(tr.divisor, 3)}" in panel.info.text()
    n_k = wb.scenario.n_tokens
    np.testing.assert_array_equal(panel.bars.max_entropy, tr.max_entropy)
    assert panel.bars.shared_ceiling() == np.log2(n_k)
    assert panel.bars.header_texts()[0] == f"entropy, bits (max {fmt_fixed(np.log2(n_k), 2)})"
    assert panel.bars.entropy_text(0) == f"{fmt_fixed(tr.entropy[0], 2)} bits"
    # Forbid two keys of the first query: its ceiling drops to log2(n_k - 2).
    sc = edits.set_mask_cell(wb.scenario, 0, 0, False)
    wb.edit(edits.set_mask_cell(sc, 0, 1, False), "mask two keys")
    wb.edit(wb.scenario.replace(temperature=0.25), "T")
    panel.flush()
    tr = wb.result.heads[0]
    assert tr.max_entropy[0] == np.log2(n_k - 2) and tr.max_entropy[1] == np.log2(n_k)
    np.testing.assert_array_equal(panel.bars.max_entropy, tr.max_entropy)
    assert panel.bars.shared_ceiling() is None
    assert panel.bars.entropy_text(0) == (
        f"{fmt_fixed(tr.entropy[0], 2)} / {fmt_fixed(np.log2(n_k - 2), 2)}"
    )
    assert f"logit = q·k / {fmt_fixed(tr.divisor, 3)}" in panel.info.text()
    assert tr.divisor == pytest.approx(0.25 * (np.sqrt(tr.d_k) if tr.scale else 1.0))
    # Mask value 0: forbidden keys take weight, so every row can reach log2(n_k) again.
    wb.edit(wb.scenario.replace(mask_value=0.0), "mask value 0")
    panel.flush()
    assert panel.bars.shared_ceiling() == np.log2(n_k)


def test_drawing_geometry():
    px, ppu = fit_points([[0, 0], [2, 1]], 100, 60, margin=10)
    assert ppu == pytest.approx(40.0)  # the tighter of 80 / 2 and 40 / 1
    np.testing.assert_allclose(px, [[10, 50], [90, 10]])
    segs = stacked_segments([0.5, 0.25, 0.25], 10, 200)
    np.testing.assert_allclose(segs, [[10, 100], [110, 50], [160, 50]])
    taken = [(50.0, 40.0, 30.0, 20.0)]
    x, y = place_label((40, 50), (30, 12), 5, (0, 0, 200, 100), taken)
    assert not (x < 80 and x + 30 > 50 and y < 60 and y + 12 > 40)  # clear of the taken box
    assert 0 <= x <= 170 and 0 <= y <= 88


@pytest.mark.parametrize("name", ["three-fields", "river-bank"])
def test_exports_png_and_svg_with_text(lab, export_png_svg, name):
    _, panel = lab(name)
    text = export_png_svg(panel)
    assert "<text" in text
    assert ("acoustics" in text) and ("Open the three-fields preset" in text or "bits" in text)


# ---- the sub-views on their own -----------------------------------------------------------------
def test_field_sliders_show_a_mix_and_report_shares(qtbot, record):
    from attnsim.panels.fields_lab.sliders import FieldSliders

    view = FieldSliders()
    qtbot.addWidget(view)
    moved = record(view.moved)
    view.refresh([0.5, -0.25, 1.7])
    assert [s.value() for s in view.sliders] == [50, 0, 100]  # clipped to 0..1
    assert [v.text() for v in view.values] == ["0.50", "−0.25", "1.70"]
    assert moved == [(0, 0.5), (2, 1.0)]  # slider 1 stays at 0; the panel ignores these
    moved.clear()
    view.refresh([0.1, 0.2, 0.3], held=1)  # the slider under the mouse stays put
    assert [s.value() for s in view.sliders] == [10, 0, 30]
    assert view.values[1].text() == "0.20"
    view.sliders[2].setValue(42)
    assert moved[-1] == (2, 0.42)


def test_field_sliders_go_on_one_row_when_wide(qtbot):
    from attnsim.panels.fields_lab.sliders import FieldSliders

    view = FieldSliders()
    qtbot.addWidget(view)
    grid = view.layout()
    assert grid.rowCount() == 2  # narrow: each label above its slider
    view.place(wide=True)
    assert grid.itemAtPosition(0, 1).widget() is view.sliders[0]
    assert grid.itemAtPosition(0, 2).widget() is view.values[0]
    assert grid.itemAtPosition(0, 7).widget() is view.sliders[2]


def test_the_figures_draw_what_refresh_hands_them(make_wb, show_panel):
    from attnsim.viewmodels.fields_lab import lab_data

    wb = make_wb("three-fields")
    panel = show_panel(FieldsLabPanel(wb), size=(700, 450))
    layout = field_layout(wb.scenario)
    data = lab_data(wb.scenario, wb.result.heads[0], 2, layout)
    panel.bars.refresh(data.bars)
    panel.mixture.refresh(data.mixture)
    panel.scatter.refresh(data.scatter)
    assert panel.bars.selected == 2 and panel.scatter.selected == 2
    assert panel.bars.labels == list(data.bars.labels)
    np.testing.assert_array_equal(panel.mixture.values, data.mixture.values)
    assert panel.mixture.title == data.mixture.title
    panel.scatter.repaint()
    assert panel.scatter.query_px.shape == (3, 2)
    assert "spread (" in panel.scatter.toolTip()


def test_the_off_page_shows_the_reason_and_the_reference_rows(make_wb, show_panel):
    from attnsim.viewmodels.fields_lab import off_page_data

    panel = show_panel(FieldsLabPanel(make_wb("three-fields")), size=(700, 450))
    panel.off_page.refresh(off_page_data("because I say so"))
    assert "It does not run here: because I say so." in panel.off_text.text()
    text = panel.reference.text()
    for row in three_fields()["results"]:
        assert f"<td>{row['query']}</td>" in text
        assert f"{row['entropy']:.2f}" in text
