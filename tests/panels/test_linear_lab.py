"""The linear memory lab: the slider, Back and Step move the position (one undo step each, a
drag merges into one), the matrices are the engine's S_i and the term just added, the feature
map and normaliser are undoable, bad input is refused inline by name, the comparison and growth
plots draw the engine's numbers, and each tab exports its content."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from attnsim.engine.linear import linear_memory, linear_vs_softmax, memory_sizes
from attnsim.engine.scenario import Scenario
from attnsim.panels.base import CONTROL_TYPES
from attnsim.panels.linear_lab import LinearLabPanel, LinearLabState
from tests.panels.lab_helpers import drag, settle, type_into

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(LinearLabPanel(make_wb("tired-cat")), size=(760, 520))


def state(wb) -> LinearLabState:
    return wb.lab_state(LinearLabState)


def engine_trace(wb, **options):
    tr = wb.trace
    return linear_memory(tr.Q, tr.K, tr.V, **options)


def test_step_and_back_move_one_token_each_as_one_undo_step(panel):
    wb = panel.wb
    controls = panel.step_controls
    assert state(wb).position == 1 and not controls.back_button.isEnabled()
    for _ in range(3):
        QTest.mouseClick(controls.step_button, LEFT)
        settle(panel)
    assert state(wb).position == 4 and wb.undo_stack.count() == 3
    trace = engine_trace(wb)
    np.testing.assert_array_equal(panel.memory_view.memory.values, trace.S[3])
    tr = wb.trace
    np.testing.assert_allclose(panel.memory_view.term.values, np.outer(tr.V[3], tr.K[3]))
    assert panel.memory_view.memory.title == "memory S_4"
    QTest.mouseClick(controls.back_button, LEFT)
    settle(panel)
    assert state(wb).position == 3 and wb.undo_stack.count() == 4
    assert controls.slider.value() == 3 and controls.position_box.value() == 3
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb).position == 4 and controls.slider.value() == 4


def test_step_stops_at_the_last_token(panel):
    n = panel.wb.trace.K.shape[0]
    panel.set_setting("position", n)
    settle(panel)
    assert not panel.step_controls.step_button.isEnabled()
    count = panel.wb.undo_stack.count()
    panel.step_by(1)
    assert state(panel.wb).position == n and panel.wb.undo_stack.count() == count


def test_dragging_the_position_slider_is_one_undo_step(panel, handle_center):
    wb = panel.wb
    slider = panel.step_controls.slider
    start = handle_center(slider)
    width = slider.width()
    drag(slider, [start + QPoint(dx, 0) for dx in (0, 10, width // 4, width // 2, width)])
    settle(panel)
    n = wb.trace.K.shape[0]
    assert state(wb).position == n and wb.undo_stack.count() == 1
    np.testing.assert_array_equal(panel.memory_view.memory.values, engine_trace(wb).S[n - 1])
    assert panel.step.token == wb.scenario.tokens[n - 1]
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == LinearLabState() and slider.value() == 1


def test_elu_and_the_normaliser_are_undoable_and_read_out(panel):
    wb = panel.wb
    combo = panel.step_controls.feature_combo
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)  # "elu(x) + 1"
    settle(panel)
    assert state(wb).feature_map == "elu+1" and wb.undo_stack.count() == 1
    check = panel.step_controls.normalise_check
    QTest.mouseClick(check, LEFT, NOMOD, QPoint(6, check.height() // 2))
    settle(panel)
    assert state(wb).normalise and wb.undo_stack.count() == 2
    panel.set_setting("position", 3)
    settle(panel)
    trace = engine_trace(wb, feature_map="elu+1", normalise=True)
    d = panel.step
    np.testing.assert_array_equal(d.output, trace.output[2])
    np.testing.assert_array_equal(panel.memory_view.memory.values, trace.S[2])
    text = panel.memory_view.readout.text()
    assert "z_3 = Σ φ(k_j)" in text and "over all 5 positions" in text
    assert d.max_difference <= 1e-12
    for _ in range(3):
        wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == LinearLabState() and not check.isChecked() and combo.currentIndex() == 0


def test_normalising_raw_vectors_with_negative_scores_is_refused_inline(panel):
    wb = panel.wb
    check = panel.step_controls.normalise_check
    QTest.mouseClick(check, LEFT, NOMOD, QPoint(6, check.height() // 2))
    settle(panel)
    assert not state(wb).normalise and wb.undo_stack.count() == 0
    assert panel.refusal.isVisibleTo(panel)
    text = panel.refusal.text()
    assert "normalise by z_i · φ(q_i) = on" in text and "not positive" in text
    assert "at i = 1 (“the”)" in text
    assert not check.isChecked()  # the box shows the stored state again


def test_a_position_past_the_end_is_refused_by_name(panel):
    wb = panel.wb
    type_into(panel.step_controls.position_box, "9")
    settle(panel)
    assert state(wb).position == 1 and wb.undo_stack.count() == 0
    assert "position i" in panel.refusal.text() and "9" in panel.refusal.text()
    assert not panel.set_setting("position", 9)
    assert "between 1 and n = 5, got 9" in panel.refusal.text()
    type_into(panel.step_controls.position_box, "2")
    settle(panel)
    assert state(wb).position == 2 and not panel.refusal.isVisibleTo(panel)


def test_the_comparison_bars_are_the_engine_outputs(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    combo = panel.compare_controls.coord_combo
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    settle(panel)
    assert state(wb).coord == 1 and wb.undo_stack.count() == 1
    tr = wb.trace
    ref = linear_vs_softmax(tr.Q, tr.K, tr.V, scale=tr.scale, temperature=tr.temperature)
    view = panel.compare_view
    np.testing.assert_array_equal(view.linear_bars.opts["height"], ref.linear[:, 1])
    np.testing.assert_array_equal(view.softmax_bars.opts["height"], ref.softmax[:, 1])
    np.testing.assert_array_equal(view.diff_bars.opts["height"], ref.max_abs_difference)
    assert "not a fixed-size function" in view.message.text()
    title = view.outputs.getPlotItem().titleLabel.text
    assert f"“{wb.scenario.v_axes[1]}”" in title and "softmax" in title and "linear" in title


def test_the_growth_plot_draws_the_engine_sizes_and_refuses_a_tiny_range(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(2)
    settle(panel)
    box = panel.growth_controls.n_box
    type_into(box, "100000")
    settle(panel)
    assert state(wb).plot_n == 100_000 and wb.undo_stack.count() == 1
    g = panel.growth
    d_k, d_v = wb.trace.Q.shape[1], wb.trace.V.shape[1]
    sizes = memory_sizes(g.n, d_k, d_v, normalised=False)
    x, y = panel.growth_view.kv_curve.getData()
    np.testing.assert_allclose(10**x, g.n, rtol=1e-12)
    np.testing.assert_allclose(10**y, sizes.kv_cache_numbers, rtol=1e-12)
    _, y_mem = panel.growth_view.memory_curve.getData()
    np.testing.assert_allclose(10**y_mem, d_k * d_v, rtol=1e-12)
    assert panel.growth_view.marker.value() == pytest.approx(np.log10(5))
    assert panel.growth_view.n_text.textItem.toPlainText() == "n = 5"
    type_into(box, "3")
    settle(panel)
    assert state(wb).plot_n == 100_000 and wb.undo_stack.count() == 1
    assert "plot up to n" in panel.refusal.text()


def test_a_cross_attention_scenario_explains_and_still_plots_memory(make_wb, show_panel):
    panel = show_panel(LinearLabPanel(make_wb("three-fields")))
    assert "self-attention" in panel.memory_view.message.text()
    assert panel.memory_view.message.isVisibleTo(panel)
    assert not panel.memory_view.memory.isVisibleTo(panel)
    assert not panel.step_controls.step_button.isEnabled()
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    assert "self-attention" in panel.compare_view.message.text()
    panel.tabs.setCurrentIndex(2)
    settle(panel)
    assert panel.growth.current == panel.wb.trace.K.shape[0]


@pytest.mark.parametrize("tab", [0, 1, 2])
def test_each_tab_exports_content_without_controls(panel, tab, export_png_svg):
    panel.tabs.setCurrentIndex(tab)
    settle(panel)
    parts = panel.figure_widgets()
    assert parts
    for w in parts:
        assert not isinstance(w, CONTROL_TYPES)
        shown = [c for c in w.findChildren(QWidget) if c.isVisibleTo(panel)]
        assert not any(isinstance(c, CONTROL_TYPES) for c in shown)
    assert "<svg" in export_png_svg(parts[0])


def n64_scenario() -> Scenario:
    n, d = 64, 8
    rng = np.random.default_rng(3)
    return Scenario(
        name="n64", tokens=tuple(f"t{j}" for j in range(n)), mode="direct",
        query_tokens=tuple(f"q{i}" for i in range(n)), Q=rng.normal(size=(n, d)),
        K=rng.normal(size=(n, d)), V=rng.normal(size=(n, d)), mask="causal",
        qk_axes=tuple(f"x{i}" for i in range(d)), v_axes=tuple(f"v{i}" for i in range(d)),
    )  # fmt: skip


def test_a_long_scenario_steps_and_compares(make_wb, show_panel):
    panel = show_panel(LinearLabPanel(make_wb(n64_scenario())), size=(640, 480))
    panel.set_setting("position", 40)
    settle(panel)
    assert panel.step_controls.slider.maximum() == 64
    np.testing.assert_array_equal(panel.memory_view.memory.values, engine_trace(panel.wb).S[39])
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    assert panel.compare_view.linear_bars.opts["height"].shape == (64,)
    assert panel.compare_view.marks[0].value() == 40
    ticks = panel.compare_view._ticks
    assert 4 <= len(ticks) <= 10  # numbered every few positions, not 64 labels


def test_an_edit_of_a_later_token_keeps_the_memory_picture(make_wb, show_panel):
    from attnsim.engine import edits

    panel = show_panel(LinearLabPanel(make_wb(n64_scenario())), size=(640, 480))
    panel.set_setting("position", 10)
    settle(panel)
    memory, term = panel.memory_view.memory, panel.memory_view.term
    memory.grab()
    term.grab()
    painted = memory.picture.paints, term.picture.paints
    wb = panel.wb
    value = np.array(wb.scenario.V[50]) + 0.01  # S_10 does not depend on token 51
    wb.edit(edits.set_vector(wb.scenario, "v", 50, value), "move a later value")
    settle(panel)
    memory.grab()
    term.grab()
    assert (memory.picture.paints, term.picture.paints) == painted  # copied, not painted
    np.testing.assert_array_equal(memory.values, engine_trace(wb).S[9])
    wb.edit(edits.set_vector(wb.scenario, "v", 3, np.array(wb.scenario.V[3]) + 0.01), "earlier")
    settle(panel)
    memory.grab()
    assert memory.picture.paints > painted[0]  # S_10 holds token 4: painted afresh


def test_the_running_memory_is_derived_once_and_kept_while_the_position_moves(panel):
    from dataclasses import replace

    from attnsim.panels.linear_lab.panel import RUN_FIELDS, lab_run, step_view

    wb = panel.wb

    def run():
        return wb.derived(lab_run, lab=LinearLabState, fields=RUN_FIELDS)

    assert panel.step is wb.derived(step_view, lab=LinearLabState)  # the panel's, shared
    first = run()
    wb.set_lab_state(replace(state(wb), position=3), "position 3")
    settle(panel)
    assert run() is first and panel.step is wb.derived(step_view, lab=LinearLabState)
    np.testing.assert_array_equal(panel.memory_view.memory.values, engine_trace(wb).S[2])
    wb.set_lab_state(replace(state(wb), normalise=not state(wb).normalise), "normaliser")
    settle(panel)
    assert run() is not first
    wb.undo_stack.undo()
    settle(panel)
    again = run()
    assert again is not first and state(wb).position == 3
    np.testing.assert_array_equal(panel.memory_view.memory.values, engine_trace(wb).S[2])


def test_the_other_tabs_are_made_when_first_raised(panel):
    """The first show builds only the running memory; each other tab is made when raised (once)
    and then draws the engine's numbers."""
    assert not hasattr(panel, "compare_view") and not hasattr(panel, "growth_view")
    assert [panel.tabs.tabText(i) for i in range(3)] == [
        "Running memory", "Linear vs softmax", "Memory as n grows",
    ]  # fmt: skip
    panel.tabs.setCurrentIndex(2)
    settle(panel)
    assert not hasattr(panel, "compare_view") and panel.growth_view.isVisibleTo(panel)
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    tr = panel.wb.trace
    out = linear_vs_softmax(tr.Q, tr.K, tr.V, scale=tr.scale, temperature=tr.temperature)
    coord = panel.state().coord
    np.testing.assert_allclose(
        panel.compare_view.linear_bars.opts["height"], out.linear[:, coord], rtol=1e-12, atol=0
    )
    made = panel.compare_view
    panel.tabs.setCurrentIndex(0)
    panel.tabs.setCurrentIndex(1)
    assert panel.compare_view is made


def test_a_large_head_shows_the_engines_memory_once_made_on_the_runner(
    show_panel, qtbot, monkeypatch
):
    """Large (threshold lowered): the running memory is made on the runner, the busy line
    shown meanwhile; then the matrices are the engine's S_i and the term just added."""
    import attnsim.panels.lab as lab
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    n = 200
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    wb.set_lab_state(LinearLabState(position=5), "position")
    panel = LinearLabPanel(wb)
    panel.flush()
    assert panel.step is None and not panel.busy_line.isHidden()
    panel = show_panel(panel, size=(760, 520))
    qtbot.waitUntil(lambda: panel.step is not None and panel.busy_line.isHidden(), timeout=60000)
    trace = engine_trace(wb)
    np.testing.assert_allclose(panel.memory_view.memory.values, trace.S[4], rtol=1e-12, atol=0)
    tr = wb.trace
    np.testing.assert_allclose(
        panel.memory_view.term.values, np.outer(tr.V[4], tr.K[4]), rtol=1e-12, atol=1e-15
    )
