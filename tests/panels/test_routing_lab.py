"""The routing lab panel: its numbers are the engine's, each control is one undoable edit, and
it marks what each intervention changed (the route, the payload, or both)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.model.workbench import LastEdit
from attnsim.panels.kit.log_slider import TEMPERATURE
from attnsim.panels.kit.numbers import fmt_fixed, fmt_vector
from attnsim.panels.routing_lab import (
    RoutingLabPanel,
    RoutingLabState,
)
from attnsim.panels.routing_lab.causes import CausesTable
from attnsim.panels.routing_lab.change_line import ChangeLine
from attnsim.panels.routing_lab.controls import NO_DRAG, Controls
from attnsim.panels.routing_lab.distractors import DistractorTab
from attnsim.panels.routing_lab.key_plane import KeyPlane
from attnsim.panels.routing_lab.plots import PayloadPlot, PlotRow, RouteBars
from attnsim.panels.routing_lab.titled_plot import TitledPlot
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.explorer import ExplorerState
from attnsim.viewmodels.routing_lab import (
    add_distractor,
    controls_view,
    distractor_effect,
    four_causes,
    lab_route,
    lab_view,
    query_angle,
    rotate_query_to,
    swap_values,
    synthetic_route,
)

V0 = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])


def settle(panel: RoutingLabPanel) -> None:
    QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


def bar_labels(panel: RoutingLabPanel) -> list[str]:
    items = panel.route_plot.getPlotItem().items
    return [it.toPlainText() for it in items if isinstance(it, pg.TextItem) and it.isVisible()]


def bar_heights(panel: RoutingLabPanel) -> np.ndarray:
    items = panel.route_plot.getPlotItem().items
    bars = [it for it in items if isinstance(it, pg.BarGraphItem)]
    return np.asarray(bars[0].opts["height"], dtype=float)


@pytest.fixture
def lab(make_wb, show_panel):
    wb = make_wb("routing-lab")
    return wb, show_panel(RoutingLabPanel(wb))


# ---- the numbers ---------------------------------------------------------------------------------
def test_lab_numbers_are_the_engines(lab):
    wb, panel = lab
    assert panel.stack.currentIndex() == 1
    tr = wb.trace
    np.testing.assert_array_equal(panel.route.weights, tr.weights[0])
    np.testing.assert_array_equal(panel.route.output, tr.output[0])
    np.testing.assert_array_equal(panel.route.logits, tr.logits[0])
    np.testing.assert_array_equal(bar_heights(panel), tr.weights[0])
    assert bar_labels(panel) == [fmt_fixed(w, 3) for w in tr.weights[0]]
    assert fmt_fixed(tr.output[0][0], 2) in panel.payload.getPlotItem().titleLabel.text


def test_synthetic_d_numbers_are_the_engines(lab):
    wb, panel = lab
    panel.set_d(64)
    settle(panel)
    sc = wb.scenario
    expected = synthetic_route(sc.Q[0], sc.K, sc.V, d=64, scale=False)
    np.testing.assert_array_equal(panel.route.logits, expected.logits)
    np.testing.assert_array_equal(panel.route.weights, expected.weights)
    np.testing.assert_allclose(panel.route.logits, expected.scores * math.sqrt(32), rtol=1e-15)
    assert bar_labels(panel) == [fmt_fixed(w, 3) for w in expected.weights]
    assert "√(64/2)" in panel.controls.d_note.text() and "SD ∝ √d" in panel.controls.d_note.text()
    assert "d = 64 emulated" in panel.route_plot.getPlotItem().titleLabel.text
    # The workbench's own head is not touched: other panels show the plain 2-D head.
    np.testing.assert_array_equal(wb.trace.weights[0], lab_route(sc).weights)
    # Scaling on: ÷√64 cancels the growth.
    panel.controls.scale_box.setChecked(True)
    settle(panel)
    assert wb.scenario.scale is True
    np.testing.assert_allclose(panel.route.logits, expected.scores / math.sqrt(2), rtol=1e-15)
    assert "cancels" in panel.controls.d_note.text()


def test_four_causes_table_shows_the_engines_rows(lab):
    wb, panel = lab
    rows = four_causes(lab_route(wb.scenario), wb.scenario.tokens)
    t = panel.causes_view.table
    assert t.rowCount() == 4
    for r, c in enumerate(rows):
        assert t.item(r, 0).text() == c.perturbation
        assert (
            t.item(r, 1)
            .text()
            .startswith(f"{fmt_fixed(c.top_before, 3)} → {fmt_fixed(c.top_after, 3)}")
        )
        assert t.item(r, 2).text() == c.verdict
    by = {c.key: c for c in panel.causes}
    # The documented responses on the preset: unit vectors already, so normalising is a no-op;
    # a higher temperature broadens; a smaller unscaled d broadens; A follows the query.
    assert by["norm"].effect == "unchanged"
    assert by["temperature"].top_after < by["temperature"].top_before
    assert by["dimension"].effect == "broader" and by["dimension"].implicated
    assert by["direction"].stays_on_top <= by["direction"].trials // 2
    assert t.item(2, 0).font().bold() and not t.item(0, 0).font().bold()


# ---- interventions: one undoable edit each ------------------------------------------------------
def test_rotating_the_query_changes_only_q_and_undoes(lab, record):
    wb, panel = lab
    before = wb.scenario
    changes = record(wb.changed)
    panel.controls.angle_slider.setValue(90)
    settle(panel)
    sc = wb.scenario
    assert query_angle(sc.Q[0]) == pytest.approx(90.0)
    assert np.linalg.norm(sc.Q[0]) == pytest.approx(1.0, rel=1e-15)
    assert sc.K is before.K and sc.V is before.V
    assert (sc.temperature, sc.scale, sc.mask_kind) == (1.0, False, "none")
    assert len(changes) == 1 and wb.undo_stack.count() == 1
    assert panel.change.route_changed and panel.change.output_changed
    assert "Rotate the query to 90°" in panel.change_text
    assert panel.route.top == 2
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.equals(before)
    assert panel.controls.angle_slider.value() == 0


def test_slider_drag_merges_into_one_undo_step(lab):
    wb, panel = lab
    s = panel.controls.angle_slider
    s.setSliderDown(True)  # emits sliderPressed: a new drag id
    for v in (10, 20, 30, 45):
        s.setValue(v)
    s.setSliderDown(False)
    settle(panel)
    assert wb.undo_stack.count() == 1
    assert query_angle(wb.scenario.Q[0]) == pytest.approx(45.0)
    wb.undo_stack.undo()
    assert query_angle(wb.scenario.Q[0]) == pytest.approx(0.0)


def test_swapping_values_keeps_the_route_and_moves_the_output(lab):
    wb, panel = lab
    w0, out0 = wb.trace.weights.copy(), wb.trace.output.copy()
    panel.controls.swap_a.setCurrentIndex(0)
    panel.controls.swap_b.setCurrentIndex(1)
    panel.controls.swap_button.click()
    settle(panel)
    np.testing.assert_array_equal(wb.scenario.V, V0[[1, 0, 2]])
    np.testing.assert_array_equal(wb.trace.weights, w0)
    assert not np.array_equal(wb.trace.output, out0)
    ch = panel.change
    assert not ch.route_changed and ch.max_dw == 0.0 and ch.output_changed
    shift = float(np.linalg.norm(wb.trace.output - out0))
    assert ch.output_shift == pytest.approx(shift, rel=1e-12)
    assert panel.change_text.startswith("Swap values A ↔ B: route unchanged (max Δw 0)")
    assert "route unchanged" in panel.change_label.text()
    assert "OUTPUT MOVED" in panel.change_label.text()
    wb.undo_stack.undo()
    np.testing.assert_array_equal(wb.scenario.V, V0)


def test_replacing_a_key_from_text_and_refusing_bad_text(lab):
    wb, panel = lab
    panel.controls.key_pick.setCurrentIndex(2)
    panel.controls.key_edit.setText("2, 0.5")
    panel.controls.replace_button.click()
    settle(panel)
    np.testing.assert_array_equal(wb.scenario.K[2], [2.0, 0.5])
    np.testing.assert_array_equal(wb.scenario.V, V0)
    assert panel.change.route_changed
    before = wb.scenario
    panel.controls.key_edit.setText("2, banana")
    panel.controls.replace_button.click()
    settle(panel)
    assert wb.scenario is before
    assert "could not read" in panel.message_label.text()
    panel.controls.key_edit.setText("1, 2, 3")
    panel.controls.replace_button.click()
    assert wb.scenario is before and "2 numbers" in panel.last_refusal


def test_temperature_controls(lab):
    wb, panel = lab
    assert TEMPERATURE.value(TEMPERATURE.position(0.25)) == pytest.approx(0.25)
    panel.controls.t_slider.setValue(TEMPERATURE.position(4.0))
    settle(panel)
    assert wb.scenario.temperature == pytest.approx(4.0)
    assert panel.t_spin.value() == pytest.approx(4.0)
    panel.t_spin.setValue(0.5)
    settle(panel)
    assert wb.scenario.temperature == 0.5
    assert wb.undo_stack.count() == 2
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    assert wb.scenario.temperature == 1.0


def test_synthetic_d_is_undoable_sandbox_state(lab, record):
    wb, panel = lab
    changes = record(wb.changed)
    labs = record(wb.lab_changed)
    panel.controls.d_slider.setValue(6)  # d = 64
    settle(panel)
    assert wb.lab_state(RoutingLabState).d == 64 and panel.d_spin.value() == 64
    assert changes == [] and [(c.kind, c.before.d, c.after.d) for (c,) in labs] == [
        (RoutingLabState, None, 64)
    ]
    assert "Synthetic key dimension d = 64" in panel.change_text
    assert panel.change.route_changed
    panel.d_spin.setValue(100)
    assert wb.lab_state(RoutingLabState).d == 100
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    settle(panel)
    assert wb.lab_state(RoutingLabState).d is None and panel.lab_d() == 2.0
    panel.set_d(0)
    assert "between 1" in panel.last_refusal and wb.lab_state(RoutingLabState).d is None


def test_mask_checkboxes_and_the_last_legal_key_is_kept(lab):
    wb, panel = lab
    a, b, _ = panel.controls.mask_boxes
    a.setChecked(False)
    settle(panel)
    assert wb.scenario.mask_matrix()[0].tolist() == [False, True, True]
    assert panel.route.weights[0] == 0.0
    b.setChecked(False)
    settle(panel)
    before = wb.scenario
    panel.controls.mask_boxes[2].setChecked(False)  # would leave no legal key
    settle(panel)
    assert wb.scenario is before
    assert panel.controls.mask_boxes[2].isChecked()
    assert "no key left" in panel.message_label.text()
    assert wb.undo_stack.count() == 2


def test_redraw_never_edits(lab):
    wb, panel = lab
    panel.controls.angle_slider.setValue(30)
    settle(panel)
    count = wb.undo_stack.count()
    for _ in range(3):
        panel.schedule_refresh()
        settle(panel)
    wb.set_lab_state(RoutingLabState(d=16), "d")
    settle(panel)
    assert wb.undo_stack.count() == count + 1


# ---- distractors -------------------------------------------------------------------------------
@pytest.mark.parametrize("button", ["long_button", "dup_button"])
def test_distractor_steals_weight_and_the_raw_score_stays(lab, button):
    wb, panel = lab
    score0 = float(wb.trace.scores[0, 0])
    weight0 = float(wb.trace.weights[0, 0])
    getattr(panel.distractors, button).click()
    settle(panel)
    sc = wb.scenario
    assert sc.tokens == ("A", "B", "C", "dist1")
    assert float(wb.trace.scores[0, 0]) == score0
    assert float(wb.trace.weights[0, 0]) < weight0
    eff = distractor_effect(sc)
    assert eff.weight_after == float(wb.trace.weights[0, 0])
    text = panel.distractors.label.text()
    assert f"{fmt_fixed(score0, 3)} → <b>{fmt_fixed(score0, 3)}</b> (unchanged)" in text
    assert f"{fmt_fixed(weight0, 3)} → <b>{fmt_fixed(eff.weight_after, 3)}</b>" in text
    assert "dist1" in bar_labels(panel) or len(bar_heights(panel)) == 4
    panel.distractors.clear_button.click()
    settle(panel)
    assert wb.scenario.tokens == ("A", "B", "C")
    assert wb.undo_stack.count() == 2


# ---- not a lab scenario ----------------------------------------------------------------------------
def test_token_scenario_offers_the_preset(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(RoutingLabPanel(wb))
    assert panel.stack.currentIndex() == 0
    assert "token scenario" in panel.unfit_label.text()
    panel.open_button.click()
    settle(panel)
    assert wb.scenario.name == "routing-lab" and panel.stack.currentIndex() == 1
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.name == "river-bank" and panel.stack.currentIndex() == 0


def test_opening_the_preset_is_a_new_untitled_document(make_wb, tmp_path, show_panel):
    wb = make_wb("river-bank")
    mine = tmp_path / "mine.json"
    wb.path = mine  # the user's own file is open
    panel = show_panel(RoutingLabPanel(wb))
    panel.open_button.click()
    settle(panel)
    assert wb.scenario.name == "routing-lab"
    assert wb.path is None  # File > Save asks where instead of overwriting mine.json
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.name == "river-bank" and wb.path == mine
    wb.undo_stack.redo()
    assert wb.scenario.name == "routing-lab" and wb.path is None


# ---- the key plane: real mouse drags ---------------------------------------------------------
def view_point(panel: RoutingLabPanel, x: float, y: float):
    scene = panel.plane.box.mapViewToScene(QPointF(x, y))
    return panel.plane.mapFromScene(scene)


def mouse_drag(panel: RoutingLabPanel, start, end, steps: int = 8) -> None:
    QApplication.processEvents()
    vp = panel.plane.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     view_point(panel, *start))  # fmt: skip
    for t in np.linspace(0, 1, steps + 1)[1:]:
        p = (start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]))
        QTest.mouseMove(vp, view_point(panel, *p))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       view_point(panel, *end))  # fmt: skip
    QApplication.processEvents()


def test_dragging_the_query_tip_rotates_it(lab, record):
    wb, panel = lab
    before = wb.scenario
    changes = record(wb.changed)
    mouse_drag(panel, (1.0, 0.0), (0.0, 1.3))
    settle(panel)
    sc = wb.scenario
    assert query_angle(sc.Q[0]) == pytest.approx(90.0, abs=3.0)
    assert np.linalg.norm(sc.Q[0]) == pytest.approx(1.0, rel=1e-12)  # length kept
    assert sc.K is before.K and sc.V is before.V
    assert wb.undo_stack.count() == 1 and len(changes) >= 2
    wb.undo_stack.undo()
    assert wb.scenario.equals(before)


def test_dragging_a_key_tip_replaces_it(lab):
    wb, panel = lab
    before = wb.scenario
    mouse_drag(panel, (0.0, 1.0), (-0.8, 0.4))
    settle(panel)
    px = max(abs(v) for v in panel.plane.box.viewPixelSize())
    np.testing.assert_allclose(wb.scenario.K[2], [-0.8, 0.4], atol=3 * px)
    np.testing.assert_array_equal(wb.scenario.Q, before.Q)
    assert wb.undo_stack.count() == 1
    assert "Drag key C" in panel.change_text
    wb.undo_stack.undo()
    assert wb.scenario.equals(before)


def test_drag_on_empty_space_does_nothing(lab):
    wb, panel = lab
    mouse_drag(panel, (-1.0, -1.0), (-0.5, -1.2))
    assert wb.undo_stack.count() == 0


# ---- export -----------------------------------------------------------------------------------------
def test_export_png_and_svg_with_text(lab, export_png_svg):
    _, panel = lab
    panel.controls.swap_button.click()
    text = export_png_svg(panel)
    assert "<text" in text and "OUTPUT MOVED" in text.replace("&nbsp;", " ")


def test_another_panels_sandbox_edit_is_marked_as_changing_nothing(lab):
    wb, panel = lab
    wb.set_lab_state(ExplorerState(a=(1.5, 0.0)), "Move the explorer's a")
    settle(panel)
    assert panel.change_text.startswith("Move the explorer's a: route unchanged (max Δw 0)")
    assert not panel.change.output_changed


def test_narrow_dock_wraps_controls_and_titles_instead_of_cutting_them(make_wb, show_panel):
    panel = show_panel(RoutingLabPanel(make_wb("routing-lab")))
    titles = [
        p.getPlotItem().titleLabel.text for p in (panel.plane, panel.route_plot, panel.payload)
    ]
    assert not any("<br>" in t for t in titles)
    panel.resize(480, 380)
    settle(panel)
    assert panel.width() == 480
    titles = [
        p.getPlotItem().titleLabel.text for p in (panel.plane, panel.route_plot, panel.payload)
    ]
    assert all("<br>" in t for t in titles)  # all three on two lines, level with each other
    tr = panel.wb.trace
    assert fmt_fixed(tr.output[0][0], 2) in titles[2]  # the numbers are still there
    # Every control is inside the visible width of its tab (it wrapped, it was not cut off).
    page = panel.tabs.widget(0).widget()
    for w in (
        panel.t_spin,
        panel.controls.swap_button,
        panel.controls.replace_button,
        panel.controls.scale_box,
    ):
        right = w.mapTo(page, w.rect().topRight()).x()
        assert right <= page.width(), w


@pytest.mark.parametrize("angle", [0, 90, 135])
def test_payload_and_key_names_do_not_overlap(lab, angle):
    from attnsim.panels.kit.labels import any_overlap

    _, panel = lab
    panel.controls.angle_slider.setValue(angle)  # 90: the query points at C, the output sits on vC
    panel.t_spin.setValue(0.05)
    settle(panel)
    QApplication.processEvents()
    for layer in (panel.payload.layer, panel.route_plot.layer):
        layer.placer.place()
        shown = [t for t in layer.texts[: layer.n_texts] if t.isVisible()]
        rects = []
        for t in shown:
            r = t.mapRectToScene(t.boundingRect())
            rects.append((r.x(), r.y(), r.width(), r.height()))
        assert len(rects) >= 3
        assert not any_overlap(rects), [t.toPlainText() for t in shown]


# ---- the sub-views alone: refresh(data) shows the data, gestures become signals ------------------
@pytest.fixture
def show(qtbot):
    def show(widget, size=(420, 300)):
        qtbot.addWidget(widget)
        widget.resize(*size)
        widget.show()
        qtbot.waitExposed(widget)
        QApplication.processEvents()
        return widget

    return show


@pytest.fixture
def views():
    """The lab's preset, and the lab's view after swapping values A and B."""
    lab_sc = resolve_scenario("routing-lab")
    swapped = swap_values(lab_sc, 0, 1)
    return lab_sc, lab_view(swapped, 2.0, LastEdit("Swap A and B", scenario_before=lab_sc))


def visible_texts(layer) -> list[str]:
    """The labels the last redraw wrote (whether each fits is the label placer's business)."""
    return [t.toPlainText() for t in layer.texts[: layer.n_texts]]


def test_change_line_shows_badges_and_the_instruction(show, views):
    lab_sc, v = views
    line = show(ChangeLine())
    line.refresh(v)
    assert "OUTPUT MOVED" in line.text() and "route unchanged" in line.text()
    assert "<b>Swap A and B</b>" in line.text()
    line.refresh(lab_view(lab_sc, 2.0))
    assert "No edit yet" in line.text()
    opened = LastEdit("Open <preset>", scenario_before=resolve_scenario("river-bank"))
    line.refresh(lab_view(lab_sc, 2.0, opened))
    assert "Open &lt;preset&gt;</b>: the lab starts here" in line.text()


def test_key_plane_draws_the_tips_and_picks_them(show):
    lab_sc = resolve_scenario("routing-lab")
    turned = rotate_query_to(lab_sc, 90.0)
    plane = show(KeyPlane())
    assert plane.pick_tip(QPointF(0, 0)) is None  # nothing drawn yet
    plane.refresh(lab_view(turned, 2.0, LastEdit("turn", scenario_before=lab_sc)).plane)
    QApplication.processEvents()
    assert plane.layer.n_arrows == 5  # the query before (dashed), the query, three keys
    assert visible_texts(plane.layer) == ["q", "A", "B", "C"]
    at = plane.box.mapViewToScene(QPointF(0.8, 0.6))
    assert plane.pick_tip(at) == ("k", 1)
    assert plane.pick_tip(plane.box.mapViewToScene(QPointF(-1.0, -1.0))) is None
    # The query sits on key C: at equal distance the query, picked first, wins.
    assert plane.pick_tip(plane.box.mapViewToScene(QPointF(0.0, 1.0))) == ("q", 0)
    plane.refresh(lab_view(lab_sc, 2.0).plane)
    assert plane.layer.n_arrows == 4
    plane.forget()
    assert plane.pick_tip(at) is None


def test_route_bars_show_the_weights_and_the_bars_before(show, views):
    lab_sc, v = views
    bars = show(RouteBars())
    bars.refresh(v.bars)
    np.testing.assert_array_equal(bars.bars.opts["height"], v.route.weights)
    assert bars.before_bars.isVisible()
    np.testing.assert_array_equal(bars.before_bars.opts["height"], v.before.weights)
    assert visible_texts(bars.layer) == [fmt_fixed(w, 3) for w in v.route.weights]
    assert bars.title_parts == ("route:", "weights")
    bars.refresh(lab_view(lab_sc, 64.0).bars)
    assert not bars.before_bars.isVisible()
    assert bars.title_parts == ("route:", "weights (d = 64 emulated)")


def test_payload_plot_draws_contributions_output_and_the_output_before(show, views):
    _, v = views
    payload = show(PayloadPlot())
    payload.refresh(v.payload)
    # Three contributions, the output before (dashed) and the output.
    assert payload.layer.n_arrows == 5
    assert visible_texts(payload.layer) == ["vA", "vB", "vC", "output"]
    assert payload.title_parts == (
        "payload:",
        f"output = {fmt_vector(v.route.output, 2, item=fmt_fixed)}",
    )


def test_plot_row_breaks_all_titles_when_one_does_not_fit(show, views):
    _, v = views
    row = show(PlotRow(), size=(900, 260))
    row.refresh(v)
    titles = [p.getPlotItem().titleLabel.text for p in row.plots]
    assert not any("<br>" in t for t in titles) and titles[0] == "address: query and keys"
    row.resize(430, 260)
    QApplication.processEvents()
    titles = [p.getPlotItem().titleLabel.text for p in row.plots]
    assert all("<br>" in t for t in titles)


def test_causes_table_shades_the_implicated_rows(show, views):
    _, v = views
    table = show(CausesTable(), size=(700, 300))
    table.refresh(v.causes_view)
    t = table.table
    assert t.rowCount() == len(v.causes_view.rows) == 4
    for r, row in enumerate(v.causes_view.rows):
        assert t.item(r, 2).text() == row.verdict
        assert t.item(r, 0).font().bold() == row.implicated
    assert t.item(3, 1).text().endswith("(mean)")
    assert f"<b>{fmt_fixed(v.route.top_weight, 3)}</b>" in table.caption.text()


def test_distractor_tab_reads_the_effect_and_asks_for_edits(show, record):
    lab_sc = resolve_scenario("routing-lab")
    tab = show(DistractorTab(), size=(600, 240))
    asked, removed = record(tab.add_requested), record(tab.remove_requested)
    tab.refresh(lab_view(lab_sc, 2.0).distractor)
    assert not tab.clear_button.isEnabled() and "softmax is a contest" in tab.label.text()
    assert tab.dup_button.text() == "Add a near-duplicate of A"
    tab.long_button.click()
    tab.dup_button.click()
    assert asked == [("large-norm",), ("near-duplicate",)]
    plus, _ = add_distractor(lab_sc, "large-norm")
    v = lab_view(plus, 2.0).distractor
    tab.refresh(v)
    assert tab.clear_button.isEnabled()
    assert f"lost {fmt_fixed(v.effect.stolen, 3)}" in tab.label.text()
    tab.clear_button.click()
    assert removed == [()]


def test_controls_show_the_model_and_emit_gestures(show, record):
    lab_sc = resolve_scenario("routing-lab")
    c = show(Controls(), size=(700, 300))
    c.refresh(controls_view(lab_sc, lab_route(lab_sc, 64), 64.0, "a refusal"))
    assert c.d_slider.value() == 6 and c.d_spin.value() == 64
    assert [b.text() for b in c.mask_boxes] == ["A", "B", "C"]
    assert all(b.isChecked() for b in c.mask_boxes)
    assert c.key_edit.text() == "1, 0" and c.message_label.text() == "a refusal"
    assert "√(64/2)" in c.d_note.text()
    angles, swaps, replaces = (
        record(c.angle_moved),
        record(c.swap_requested),
        record(c.replace_requested),
    )
    masks, refusals = record(c.mask_toggled), record(c.refused)
    c.angle_slider.setSliderDown(True)  # a drag: its moves share one id
    c.angle_slider.setValue(10)
    c.angle_slider.setValue(20)
    c.angle_slider.setSliderDown(False)
    c.angle_slider.setValue(30)  # not a drag
    assert [a for a, _ in angles] == [10, 20, 30]
    assert angles[0][1] == angles[1][1] != NO_DRAG and angles[2][1] == NO_DRAG
    c.key_pick.setCurrentIndex(1)
    assert c.key_edit.text() == "0.8, 0.6"  # picking a key shows it, without an edit
    c.key_edit.setText("2, 1")
    c.replace_button.click()
    assert replaces == [(1, "B", "2, 1")]
    c.swap_button.click()
    assert swaps == [(0, 1, "A", "B")]
    c.mask_boxes[2].setChecked(False)
    assert masks == [(2, False)]
    c.d_spin.refused.emit("too big")
    assert refusals == [("synthetic d: too big",)]
    # A refresh with other keys rebuilds the lists and keeps the key that was picked.
    plus, _ = add_distractor(lab_sc, "large-norm")
    c.refresh(controls_view(plus, lab_route(plus), 2.0))
    assert [b.text() for b in c.mask_boxes] == ["A", "B", "C", "dist1"]
    assert c.key_pick.count() == 4 and c.key_pick.currentIndex() == 1
    assert c.key_edit.text() == "0.8, 0.6"


def test_axis_names_do_not_overlap_the_tick_numbers(lab):
    # the left axes were 28 px wide: "y" was drawn over "0.0" and "−1.5"
    _, panel = lab
    panel.resize(740, 400)
    settle(panel)
    for plot in panel.findChildren(TitledPlot):
        axis = plot.getPlotItem().getAxis("left")
        plot.grab()  # tick texts are measured while painting
        label = axis.label
        margin = 2 * label.document().documentMargin()
        name_h = label.boundingRect().height() - margin if label.isVisible() else 0.0
        assert axis.textWidth + name_h <= axis.width(), plot.plotItem.titleLabel.text
