"""The long-context lab: the k slider and the k line on a plot are one undo step per drag, the
kind and the boxes are one step each, bad values are refused inline naming the field, and the
plots and bars show the engine's numbers for the receiving query."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest

from attnsim.engine.long_context import distractor_sweep, duplicated_facts
from attnsim.panels.context_lab import ContextLabPanel, ContextLabState
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.viewmodels.context_lab import KINDS
from tests.panels.lab_helpers import drag, settle, type_into

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(ContextLabPanel(make_wb("river-bank")), size=(800, 560))


def state(wb) -> ContextLabState:
    return wb.lab_state(ContextLabState)


def test_the_curves_and_bars_are_the_engines_for_the_receiving_query(panel):
    wb = panel.wb
    tr, i = wb.trace, wb.receiving
    d = panel.data
    best = int(np.argmax(tr.weights[i]))
    assert d.best_label == wb.scenario.tokens[best]
    st = state(wb)
    ek, ev = duplicated_facts(tr.K[best], tr.V[best], st.k_max)
    s = distractor_sweep(tr.Q[i], tr.K, tr.V, ek, ev, divisor=tr.divisor, allowed=tr.mask[i])
    dup = next(c for c in d.curves if c.kind == "duplicate")
    np.testing.assert_allclose(dup.best_weight, s.best_weight, rtol=0, atol=1e-15)
    np.testing.assert_allclose(dup.shift, s.shift, rtol=0, atol=1e-15)
    # the drawn curve is that array, the marker sits at k
    x, y = panel.weight_plot.curves[st.kind].getData()
    chosen = d.chosen
    np.testing.assert_array_equal(y, chosen.best_weight)
    np.testing.assert_array_equal(x, np.arange(st.k_max + 1))
    assert panel.weight_plot.marker.value() == st.k == panel.shift_plot.marker.value()
    heights = panel.bars.bars.opts["height"]
    assert len(heights) == tr.K.shape[0] + st.k
    assert heights[best] == pytest.approx(chosen.best_weight[st.k], abs=1e-15)
    assert fmt_fixed(chosen.best_weight[st.k], 3) in panel.summary.text()
    for kind in KINDS:
        assert next(c for c in d.curves if c.kind == kind).verdict in panel.verdicts.text()


def test_dragging_the_k_slider_is_one_undo_step(panel, handle_center):
    wb = panel.wb
    slider = panel.controls.slider
    start = handle_center(slider)
    drag(slider, [start + QPoint(dx, 0) for dx in (0, 10, 30, 60, 90)])
    settle(panel)
    k = state(wb).k
    assert k > ContextLabState().k + 3
    assert wb.undo_stack.count() == 1
    assert panel.data.k == k and slider.value() == k and panel.controls.k_value.text() == str(k)
    assert len(panel.bars.bars.opts["height"]) == wb.trace.K.shape[0] + k
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == ContextLabState() and slider.value() == ContextLabState().k


def marker_point(plot, k: float) -> QPoint:
    vb = plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(k, 0.5))
    p = plot.mapFromScene(scene)
    return QPoint(round(p.x()), round(p.y()))


def test_dragging_the_k_line_on_the_plot_is_one_undo_step(panel):
    wb = panel.wb
    plot = panel.shift_plot
    start = marker_point(plot, ContextLabState().k)
    end = marker_point(plot, 20)
    points = [start + QPoint(round((end.x() - start.x()) * t / 5), 0) for t in range(6)]
    drag(plot.viewport(), points)
    settle(panel)
    assert state(wb).k == pytest.approx(20, abs=1)
    assert wb.undo_stack.count() == 1
    assert panel.weight_plot.marker.value() == state(wb).k
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb).k == ContextLabState().k


def test_choosing_a_kind_is_one_step_and_recolours_the_inserted_bars(panel):
    wb = panel.wb
    combo = panel.controls.kind_combo
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    QTest.keyClick(combo, Qt.Key.Key_Down)
    QTest.keyClick(combo, Qt.Key.Key_Down)
    settle(panel)
    assert state(wb).kind == "superseded" and wb.undo_stack.count() == 3
    d = panel.data
    assert d.kind == "superseded" and "<b>a superseded fact</b>" in panel.verdicts.text()
    # a superseded fact pulls the output further than a duplicated one at every k > 0
    by = {c.kind: c for c in d.curves}
    assert np.all(by["superseded"].shift[1:] > by["duplicate"].shift[1:])
    assert not panel.controls.noise_box.isEnabled()
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb).kind == "duplicate" and panel.data.chosen.fact_weight is not None
    assert panel.weight_plot.fact_curve.isVisible()


def test_a_larger_k_max_than_allowed_is_refused_inline_naming_k(panel):
    wb = panel.wb
    type_into(panel.controls.k_max_box, "300")
    settle(panel)
    assert state(wb) == ContextLabState() and wb.undo_stack.count() == 0
    assert panel.refusal.isVisible() and "K" in panel.refusal.text()
    assert "300" in panel.refusal.text()
    assert panel.set_setting("k", 40) is False  # past K = 32
    assert "k must lie between 0 and 32, got 40" in panel.refusal.text()
    assert state(wb) == ContextLabState() and wb.undo_stack.count() == 0


def test_a_shorter_sweep_keeps_k_on_its_end_in_one_step(panel):
    wb = panel.wb
    type_into(panel.controls.k_max_box, "3")
    settle(panel)
    assert (state(wb).k_max, state(wb).k) == (3, 3) and wb.undo_stack.count() == 1
    assert not panel.refusal.isVisible()
    assert panel.controls.slider.maximum() == 3
    assert panel.weight_plot.curves["noisy"].getData()[0].shape == (4,)


def test_the_seed_redraws_the_noisy_copies_and_comes_back_on_undo(panel):
    wb = panel.wb
    before = panel.data.chosen.best_weight.copy()
    type_into(panel.controls.seed_box, "7")
    settle(panel)
    assert state(wb).seed == 7 and wb.undo_stack.count() == 1
    assert not np.allclose(panel.data.chosen.best_weight[1:], before[1:])
    type_into(panel.controls.noise_box, "0")
    settle(panel)
    dup = next(c for c in panel.data.curves if c.kind == "duplicate")
    # noise 0: exact copies of the best key, so its weight follows the duplicates' closed form
    np.testing.assert_allclose(panel.data.chosen.best_weight, dup.best_weight, atol=1e-15)
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    settle(panel)
    np.testing.assert_array_equal(panel.data.chosen.best_weight, before)


def test_another_receiving_query_redraws_from_its_route(panel):
    wb = panel.wb
    wb.set_receiving(0)
    settle(panel)
    i = wb.receiving
    assert panel.data.query_label == wb.scenario.query_labels[i]
    assert panel.data.chosen.best_weight[0] == pytest.approx(
        float(np.max(wb.trace.weights[i])), abs=1e-12
    )
    assert wb.scenario.query_labels[i] in panel.summary.text()


def test_the_figure_is_the_plots_and_the_words(panel):
    parts = panel.figure_widgets()
    assert panel.plots in parts and panel.summary in parts and panel.verdicts in parts
    assert panel.controls not in parts


def test_the_view_model_is_the_workbenchs_and_a_k_drag_reuses_the_sweeps(panel):
    from dataclasses import replace

    from attnsim.panels.context_lab.panel import SWEEP_FIELDS, lab_sweeps, lab_view
    from attnsim.resources import resolve_scenario

    wb = panel.wb

    def sweeps():
        return wb.derived(lab_sweeps, lab=ContextLabState, fields=SWEEP_FIELDS)

    assert panel.data is wb.derived(lab_view, lab=ContextLabState)  # computed once, shared
    first = sweeps()
    wb.set_lab_state(replace(state(wb), k=7), "k = 7")
    panel.flush()
    assert sweeps() is first and panel.data.k == 7  # the marker moved, the sweeps stayed
    assert panel.data is wb.derived(lab_view, lab=ContextLabState)
    wb.set_lab_state(replace(state(wb), noise=0.5), "noise = 0.5")
    panel.flush()
    assert sweeps() is not first
    wb.undo_stack.undo()
    panel.flush()
    again = sweeps()
    assert again is not first  # recomputed for the state undo put back, to the same numbers
    for a, b in zip(first.sweeps, again.sweeps, strict=True):
        np.testing.assert_allclose(a.best_weight, b.best_weight, rtol=0, atol=1e-15)
    wb.load(resolve_scenario("money-bank"))
    panel.flush()
    assert panel.data.k == ContextLabState().k
    assert panel.data.query_label == wb.scenario.query_labels[wb.receiving]
    tr, i = wb.trace, wb.receiving
    assert panel.data.best_label == wb.scenario.tokens[int(np.argmax(tr.weights[i]))]
    assert panel.data is wb.derived(lab_view, lab=ContextLabState)


def test_two_panels_and_a_figure_share_one_computation(make_wb, show_panel, monkeypatch, tmp_path):
    from dataclasses import replace

    import attnsim.panels.context_lab.panel as lab
    from attnsim.export.figure import export_panel

    calls: list[int] = []
    real = lab.sweep_set
    monkeypatch.setattr(lab, "sweep_set", lambda *a: calls.append(1) or real(*a))
    wb = make_wb("river-bank")
    one = show_panel(ContextLabPanel(wb), size=(800, 560))
    two = show_panel(ContextLabPanel(wb), size=(800, 560))
    assert one.data is two.data and len(calls) == 1
    for k in (1, 2, 3, 5, 8):  # a drag of k: the sweeps are not redone
        wb.set_lab_state(replace(state(wb), k=k), f"k = {k}")
        one.flush()
        two.flush()
        assert one.data is two.data and one.data.k == k
    assert len(calls) == 1
    export_panel(one, tmp_path / "figure.png")
    assert (tmp_path / "figure.png").stat().st_size > 5000 and len(calls) == 1
    wb.edit(wb.scenario.replace(temperature=2.0), "T = 2")
    one.flush()
    two.flush()
    assert one.data is two.data and len(calls) == 2


def test_a_long_context_is_swept_on_the_runner_and_says_so_meanwhile(make_wb, qtbot):
    # 256 x 256 weights: the four sweeps are made on the runner. The first refresh draws
    # nothing yet and says the plots are being computed; when the sweeps arrive the plots and
    # bars show the engine's numbers, and the busy line is gone.
    from attnsim.engine.scenario import random_scenario
    from attnsim.panels.context_lab.panel import FIRST_BUSY_TEXT, lab_sweeps

    n = 256
    wb = make_wb(random_scenario(n, 16, mask="causal", receiving=n - 1))
    panel = ContextLabPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()  # no turn of the event loop yet: the runner has not answered
    assert panel.data is None and not panel.busy_line.isHidden()
    assert panel.busy_line.text() == FIRST_BUSY_TEXT
    assert "Computing" in panel.summary.text()
    qtbot.waitUntil(lambda: not wb.derived_pending(lab_sweeps), timeout=60000)
    panel.flush()
    assert panel.data is not None and panel.busy_line.isHidden()
    tr, st = wb.trace, state(wb)
    best = int(np.argmax(np.where(tr.mask[n - 1], tr.weights[n - 1], -np.inf)))
    ek, ev = duplicated_facts(tr.K[best], tr.V[best], st.k_max)
    s = distractor_sweep(tr.Q[n - 1], tr.K, tr.V, ek, ev, divisor=tr.divisor,
                         allowed=tr.mask[n - 1])  # fmt: skip
    dup = next(c for c in panel.data.curves if c.kind == "duplicate")
    np.testing.assert_allclose(dup.best_weight, s.best_weight, rtol=0, atol=1e-15)
    assert len(panel.bars.bars.opts["height"]) == n + st.k


def test_a_figure_of_a_long_context_waits_for_its_sweeps(make_wb, qtbot):
    # A figure (or an animation's frame) never shows "computing…": the sweeps are made at once.
    from attnsim.engine.scenario import random_scenario

    n = 256
    wb = make_wb(random_scenario(n, 16, mask="causal", receiving=n - 1))
    panel = ContextLabPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()
    assert panel.data is None and not panel.busy_line.isHidden()
    widgets = panel.figure_widgets()
    assert widgets and panel.data is not None and panel.busy_line.isHidden()
    assert len(panel.bars.bars.opts["height"]) == n + state(wb).k
