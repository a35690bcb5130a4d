"""The scaling lab: the entropy experiment runs in the background and shows the engine's numbers;
the Jacobian view follows the receiving row; settings are undoable; the figure exports."""

from __future__ import annotations

import dataclasses
import math
import threading
import time

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits, jacobian
from attnsim.engine.experiments import entropy_vs_dk
from attnsim.engine.jacobian import softmax_jacobian
from attnsim.engine.scenario import Scenario
from attnsim.export import export_widget
from attnsim.panels import scaling_lab
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.scaling_lab import ScalingLabPanel, ScalingLabState, size_text
from attnsim.viewmodels import scaling_lab as labs

WAIT_MS = 60_000  # the reference generator takes ~2 s alone; CI shares two cores


@pytest.fixture
def make_panel(qtbot):
    made: list[ScalingLabPanel] = []

    def make(wb) -> ScalingLabPanel:
        # Results are kept by the workbench's runner: a fresh workbench starts with none.
        panel = ScalingLabPanel(wb)
        qtbot.addWidget(panel)
        panel.resize(760, 480)
        made.append(panel)
        return panel

    yield make
    for panel in made:  # never leave a run going into the next test
        assert panel.wb.runner.shutdown(10)


def numeric_params(**changes) -> ScalingLabState:
    return ScalingLabState(**changes)


def stored(wb) -> dict:
    return dataclasses.asdict(wb.lab_state(ScalingLabState))


def row_texts(values) -> list[str]:
    return [fmt_fixed(float(v), 2) for v in values]


def test_reference_run_is_in_the_background_and_shows_the_printed_table(make_wb, make_panel, qtbot):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    panel.flush()
    # The refresh returned while the experiment is still running: the GUI was not blocked.
    assert panel.is_computing() and panel.result is None
    assert panel.table_text()[0] == ["…"] * 4
    qtbot.waitUntil(lambda: panel.result is not None, timeout=WAIT_MS)
    # The GUI thread's timer kept firing while the worker drew the random numbers.
    assert panel.progress_updates >= 2
    assert panel.progress.value() == 100
    rows = panel.table_text()
    assert rows[0] == ["1.40", "0.63", "0.26", "0.16"]  # the reference text's printed table
    assert rows[1] == ["3.44", "3.43", "3.40", "3.41"]
    r = panel.result
    assert rows[2] == row_texts(r["score_sd"])
    assert rows[3] == ["4.00", "8.00", "16.00", "32.00"]
    assert r["rng"] == "reference" and r["trials"] == 200 and r["seed"] == 1
    # The curves are the same numbers, over log2 d_k.
    x, y = panel.unscaled_curve.getData()
    np.testing.assert_array_equal(x, np.log2([16, 64, 256, 1024]))
    np.testing.assert_array_equal(y, r["entropy_unscaled"])
    np.testing.assert_array_equal(panel.scaled_curve.getData()[1], r["entropy_scaled"])
    np.testing.assert_array_equal(panel.sd_curve.getData()[1], np.log2(r["score_sd"]))
    assert panel.max_line.value() == 4.0
    assert "4.00 bits" in panel.max_text.toPlainText()
    assert wb.undo_stack.count() == 0  # computing and drawing never edit


def test_panel_shows_the_engine_numbers_for_other_settings(make_wb, make_panel, qtbot):
    wb = make_wb("river-bank")
    settings = dict(n_keys=8, trials=15, seed=3, rng="reference", dks=(4, 16, 64, 256, 1024, 4096))
    wb.set_lab_state(numeric_params(**settings), "settings")
    panel = make_panel(wb)
    panel.flush()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=WAIT_MS)
    expected = entropy_vs_dk(settings["dks"], n_keys=8, trials=15, seed=3, rng="reference")
    assert panel.result == expected
    rows = panel.table_text()
    assert rows[0] == row_texts(expected["entropy_unscaled"])
    assert rows[1] == row_texts(expected["entropy_scaled"])
    assert rows[2] == row_texts(expected["score_sd"])
    assert rows[3] == row_texts(expected["sqrt_d_k"])
    assert panel.table.columnCount() == 6
    assert panel.max_line.value() == pytest.approx(3.0)  # log2 8
    assert panel.keys_spin.value() == 8 and panel.dk_checks[4].isChecked()
    assert panel.dk_checks[4096].isChecked() and panel.rng_combo.currentText() == "reference"


def test_settings_are_undoable_and_undo_shows_the_cached_result(make_wb, make_panel, qtbot):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    panel.flush()
    panel.rng_combo.setCurrentText("numpy")  # a user picks the fast generator
    assert stored(wb)["rng"] == "numpy"
    assert wb.undo_stack.count() == 1
    panel.flush()
    qtbot.waitUntil(lambda: panel.result is not None and panel.result["rng"] == "numpy",
                    timeout=WAIT_MS)  # fmt: skip
    first = panel.result
    assert first == entropy_vs_dk(rng="numpy")
    seen: list[type] = []
    wb.lab_changed.connect(lambda change: seen.append(change.kind))
    panel.keys_spin.setValue(32)
    assert wb.undo_stack.count() == 2 and seen == [ScalingLabState]
    assert stored(wb)["n_keys"] == 32
    panel.flush()
    qtbot.waitUntil(lambda: panel.result is not None and panel.result["n_keys"] == 32,
                    timeout=WAIT_MS)  # fmt: skip
    assert panel.table_text()[0] == row_texts(entropy_vs_dk(n_keys=32)["entropy_unscaled"])
    assert panel.max_line.value() == 5.0
    wb.undo_stack.undo()
    panel.flush()
    # Undo is instant: the earlier result comes from the cache, no new run starts.
    assert panel.keys_spin.value() == 16
    assert panel.result is first and not panel.is_computing()
    assert wb.undo_stack.count() == 2  # the redraw pushed nothing
    panel.dk_checks[4096].setChecked(True)
    assert stored(wb)["dks"] == (16, 64, 256, 1024, 4096)


def test_changing_settings_mid_run_cancels_the_old_run(make_wb, make_panel, qtbot):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    panel.flush()
    assert panel.is_computing()  # the first run starts after a short delay
    qtbot.waitUntil(lambda: panel._job is not None and panel._job.fraction > 0, timeout=WAIT_MS)
    old = panel._job
    assert not old.done
    wb.set_lab_state(numeric_params(rng="numpy", trials=50), "fast")
    panel.flush()
    assert old.cancelled
    qtbot.waitUntil(lambda: panel.result is not None, timeout=WAIT_MS)
    assert panel.result == entropy_vs_dk(rng="numpy", trials=50)
    assert old.wait(10)
    assert not old.running and old.result is None  # it stopped without finishing


def test_bad_settings_are_reported_not_raised(make_wb, make_panel, qtbot):
    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(n_keys=1, rng="numpy"), "bad")
    panel = make_panel(wb)
    messages: list[str] = []
    wb.message.connect(messages.append)
    panel.flush()
    qtbot.waitUntil(lambda: panel.status.text() == "failed", timeout=WAIT_MS)
    assert panel.result is None
    assert any("n_keys must be at least 2" in m for m in messages)


# ---- the Jacobian at the receiving row ----------------------------------------------------------
def test_jacobian_follows_the_receiving_row_and_temperature(make_wb, make_panel):
    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(rng="numpy", trials=5), "fast")
    panel = make_panel(wb)
    panel.flush()
    i = wb.receiving
    J = softmax_jacobian(wb.trace.weights[i], 1.0)
    np.testing.assert_array_equal(panel.jacobian, J)
    np.testing.assert_array_equal(panel.jac_map.matrix, J)
    assert panel.jac_map.labels == ["the", "river", "bank"]
    assert fmt_fixed(float(np.abs(J).max()), 4) in panel.jac_stats.text()
    assert fmt_fixed(float(np.linalg.norm(J)), 4) in panel.jac_stats.text()
    wb.set_receiving(0)
    panel.flush()
    np.testing.assert_array_equal(panel.jacobian, softmax_jacobian(wb.trace.weights[0], 1.0))
    assert not np.array_equal(panel.jacobian, J)
    assert "<b>the</b>" in panel.jac_title.text()
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    panel.flush()
    w = wb.trace.weights[0]
    np.testing.assert_array_equal(panel.jacobian, softmax_jacobian(w, 0.5))
    # The saturation curve passes through the current state at factor 1.
    c = panel.curve
    k = int(np.argmin(np.abs(c.factor - 1.0)))
    assert c.factor[k] == 1.0
    assert c.frobenius[k] == pytest.approx(np.linalg.norm(panel.jacobian), abs=1e-15)
    assert c.max_abs[k] == pytest.approx(np.abs(panel.jacobian).max(), abs=1e-15)
    # d_k = 4 with scaling on: without the divisor these logits would be twice as large.
    assert panel.unscaled_line.isVisible() and panel.unscaled_line.value() == 1.0


def test_jacobian_leaves_out_masked_keys(make_wb, make_panel):
    wb = make_wb("bank-river")  # causal
    wb.set_lab_state(numeric_params(rng="numpy", trials=5), "fast")
    panel = make_panel(wb)
    wb.set_receiving(0)
    panel.flush()
    assert panel.jacobian_keys.tolist() == [0]
    np.testing.assert_array_equal(panel.jacobian, [[0.0]])
    assert "one legal key" in panel.jac_stats.text()
    wb.set_receiving(1)
    panel.flush()
    assert panel.jacobian_keys.tolist() == [0, 1]
    np.testing.assert_array_equal(
        panel.jacobian, softmax_jacobian(wb.trace.weights[1, :2], wb.scenario.temperature)
    )


def test_jacobian_saturates_as_a_distinct_row_sharpens(make_wb, make_panel):
    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(rng="numpy", trials=5), "fast")
    # A query that clearly prefers one key: large logits saturate the row.
    wb.edit(edits.set_vector(wb.scenario, "x", 2, [0.0, 3.0, 0.0, 0.0]), "sharpen")
    panel = make_panel(wb)
    panel.flush()
    frob = panel.curve.frobenius
    assert frob[-1] < 0.2 * frob.max()


def test_the_figure_exports_as_png_and_svg_with_text(make_wb, make_panel, tmp_path):
    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(rng="numpy"), "fast")
    panel = make_panel(wb)
    panel.show()
    QApplication.processEvents()
    png = export_widget(panel.figure_widget(), tmp_path / "lab.png", scale=1.0)
    svg = export_widget(panel.figure_widget(), tmp_path / "lab.svg")
    assert panel.result is not None  # export waited for the run
    assert png.stat().st_size > 10_000
    text = svg.read_text()
    assert text.count("<text") > 20
    assert "maximum log2 16" in text and "now" in text
    assert math.isclose(panel.max_line.value(), 4.0)


def test_a_whole_panel_figure_waits_for_the_experiment(make_wb, make_panel):
    # `attnsim export --panel` grabbed the lab while its experiment was still running
    from attnsim import export

    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(rng="numpy"), "fast")
    panel = make_panel(wb)
    panel.show()
    QApplication.processEvents()
    export.render_image(export.figure_of(panel, "panel"), 1.0)
    assert panel.result is not None
    assert "running" not in panel.status.text()


def test_small_dock_shows_experiment_and_jacobian_on_tabs(make_panel, make_wb, qtbot):
    panel = make_panel(make_wb("river-bank"))
    panel.show()
    qtbot.waitExposed(panel)
    QApplication.processEvents()
    assert panel.split.mode() == "side"  # 760 px: side by side
    panel.resize(520, 420)
    QApplication.processEvents()
    assert panel.split.mode() == "tabs"
    assert panel.table.isVisible() and not panel.jac_map.isVisible()
    panel.split.set_current(1)
    assert panel.jac_map.isVisible() and panel.jac_map.width() > 400  # the whole width
    panel.resize(560, 760)
    QApplication.processEvents()
    assert panel.split.mode() == "stack"
    assert panel.table.isVisible() and panel.jac_map.isVisible()
    assert (
        panel.table.mapTo(panel, panel.table.rect().topLeft()).y()
        < panel.jac_map.mapTo(panel, panel.jac_map.rect().topLeft()).y()
    )
    assert panel.minimumSizeHint().width() <= 480


# ---- long rows and extreme temperatures --------------------------------------------------------
def direct_scenario(
    n_keys: int, temperature: float, *, seed: int = 0, mask=None, mask_value: float = -math.inf
) -> Scenario:
    g = np.random.default_rng(seed)
    return Scenario(
        name="long-row",
        mode="direct",
        tokens=tuple(f"k{j}" for j in range(n_keys)),
        Q=g.normal(size=(1, 8)) * 3.0,
        K=g.normal(size=(n_keys, 8)),
        V=g.normal(size=(n_keys, 2)),
        temperature=temperature,
        mask="none" if mask is None else mask,
        mask_value=mask_value,
    )


@pytest.mark.parametrize("t", [0.001, 1.0, 1000.0])
def test_a_2048_key_row_shows_sizes_without_building_the_matrix(
    make_wb, make_panel, monkeypatch, t
):
    wb = make_wb(direct_scenario(2048, t))
    wb.set_lab_state(numeric_params(rng="numpy", trials=5), "fast")
    tr = wb.trace
    J = softmax_jacobian(tr.weights[0], t)  # the test builds it once, to compare
    expected = (float(np.linalg.norm(J)), float(np.abs(J).max()))

    def refuse_large(weights, temperature=1.0):
        if len(weights) > labs.MAX_JACOBIAN_KEYS:
            raise AssertionError(f"built a {len(weights)} x {len(weights)} Jacobian")
        return softmax_jacobian(weights, temperature)

    monkeypatch.setattr(labs, "softmax_jacobian", refuse_large)
    monkeypatch.setattr(jacobian, "softmax_jacobian", refuse_large)
    panel = make_panel(wb)
    panel.flush()
    assert panel.jacobian_keys.size == 2048 and panel.jacobian.shape == (0, 0)
    assert not panel.jac_map.isVisibleTo(panel)
    assert panel.jacobian_sizes == pytest.approx(expected, abs=1e-13 / t)
    text = panel.jac_stats.text()
    assert "2048 keys" in text and "too large to draw" in text
    frob, biggest = panel.jacobian_sizes
    assert f"max |J| = {size_text(biggest)} · ‖J‖_F = {size_text(frob)}" in text
    # A saturated row's tiny sizes keep their digits instead of reading 0.0000.
    assert size_text(3.2e-120) == "3.2e−120" and size_text(0.0) == "0.0000"
    assert size_text(0.25) == "0.2500"
    c = panel.curve
    k = int(np.argmin(np.abs(c.factor - 1.0)))
    assert c.frobenius[k] == pytest.approx(expected[0], abs=1e-13 / t)
    assert np.isfinite(c.frobenius).all() and np.isfinite(c.max_abs).all()
    assert f"T = {t:g}" in panel.jac_title.text()


def test_the_matrix_is_drawn_up_to_32_keys_only(make_wb, make_panel):
    wb = make_wb(direct_scenario(labs.MAX_JACOBIAN_KEYS, 0.5))
    panel = make_panel(wb)
    panel.flush()
    assert panel.jacobian.shape == (32, 32) and panel.jac_map.isVisibleTo(panel)
    np.testing.assert_array_equal(panel.jac_map.matrix, softmax_jacobian(wb.trace.weights[0], 0.5))
    wb.edit(direct_scenario(33, 0.5), "33 keys")
    panel.flush()
    assert panel.jacobian.shape == (0, 0) and not panel.jac_map.isVisibleTo(panel)
    assert "33 keys" in panel.jac_stats.text()
    wb.undo_stack.undo()
    panel.flush()
    assert panel.jacobian.shape == (32, 32) and panel.jac_map.isVisibleTo(panel)


def test_mask_value_zero_keeps_the_forbidden_keys_that_take_weight(make_wb, make_panel):
    mask = np.array([[True, False, True, False, True]])
    wb = make_wb(direct_scenario(5, 1.0, mask=mask, mask_value=0.0))
    panel = make_panel(wb)
    panel.flush()
    tr = wb.trace
    assert tr.weights[0, 1] > 0  # the classic mistake: forbidden keys get weight
    assert panel.jacobian_keys.tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(panel.jacobian, softmax_jacobian(tr.weights[0], 1.0))
    assert "2 forbidden keys take part" in panel.jac_stats.text()
    wb.edit(wb.scenario.replace(mask_value=-math.inf), "mask value -inf")
    panel.flush()
    assert panel.jacobian_keys.tolist() == [0, 2, 4]
    assert "forbidden" not in panel.jac_stats.text()


@pytest.mark.parametrize("size", [(728, 330), (760, 480)])
def test_plot_texts_do_not_collide_at_laptop_dock_sizes(make_wb, make_panel, qtbot, size):
    from attnsim.panels.kit.labels import any_overlap, rects_intersect

    wb = make_wb("river-bank")
    wb.set_lab_state(numeric_params(rng="numpy"), "fast")
    panel = make_panel(wb)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    panel.flush()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=WAIT_MS)
    panel.flush()
    for _ in range(3):
        QApplication.processEvents()
    for texts in (panel.entropy_texts, panel.sat_texts):
        texts.place()
        rects = texts.rects
        assert rects, "the plot shows its texts"
        assert not any_overlap(rects), rects
        box = texts.vb.sceneBoundingRect()
        for legend in texts.avoid:
            lr = legend.sceneBoundingRect()
            legend_rect = (lr.x(), lr.y(), lr.width(), lr.height())
            assert not any(rects_intersect(r, legend_rect) for r in rects)
        for x, y, w, h in rects:
            assert box.x() - 0.5 <= x and x + w <= box.right() + 0.5
            assert box.y() - 0.5 <= y and y + h <= box.bottom() + 0.5
    # the maximum's text is on screen, in full or in short
    assert panel.max_text.isVisible() and "4.00" in panel.max_text.toPlainText()


def test_the_run_goes_through_the_workbench_runner_and_stops_at_close(
    make_wb, make_panel, qtbot, monkeypatch
):
    # A run that cannot finish before close: it reports progress, then keeps going (for at
    # most 30 s) until the runner cancels it. The real run may finish first on a fast machine.
    def endless(dks, **kwargs):
        deadline = time.monotonic() + 30.0
        step = 0
        while time.monotonic() < deadline:
            step += 1
            yield min(0.99, step / 1000), None
            time.sleep(0.002)

    monkeypatch.setattr(scaling_lab.experiment, "entropy_vs_dk_steps", endless)
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    panel.flush()
    panel._start_deferred()  # no waiting for the first-run delay
    job = panel._job
    assert job is not None and wb.runner.job(scaling_lab.EXPERIMENT) is job
    qtbot.waitUntil(lambda: job.fraction > 0, timeout=WAIT_MS)
    wb.close()  # what quitting the app does
    assert job.cancelled and not job.running and wb.runner.active_threads() == 0
    assert not any(t.name == "scaling-lab" for t in threading.enumerate())


# ---- the sub-views on their own ------------------------------------------------------------------
def test_experiment_view_shows_settings_silently_and_emits_edits(qtbot, record):
    view = scaling_lab.ExperimentView()
    qtbot.addWidget(view)
    edits_seen = record(view.edited)
    view.show_settings(ScalingLabState(n_keys=8, trials=3, seed=9, rng="numpy", dks=(4, 16)))
    assert not edits_seen
    assert (view.keys_spin.value(), view.trials_spin.value(), view.seed_spin.value()) == (8, 3, 9)
    assert view.rng_combo.currentText() == "numpy" and view.dk_checks[4].isChecked()
    view.dk_checks[4096].setChecked(True)
    (state,) = edits_seen[-1]
    assert state == ScalingLabState(n_keys=8, trials=3, seed=9, rng="numpy",
                                    dks=(4, 16, 64, 256, 1024, 4096))  # fmt: skip


def test_experiment_view_draws_a_result_or_says_it_is_waiting(qtbot):
    view = scaling_lab.ExperimentView()
    qtbot.addWidget(view)
    shown = labs.ExperimentShown(16, 10, 1, "numpy", (16, 64), fraction=0.4)
    view.refresh(shown)
    assert view.table_text()[0] == ["…", "…"] and view.progress.value() == 40
    result = {
        "entropy_unscaled": [1.5, 0.5], "entropy_scaled": [3.5, 3.5],
        "score_sd": [4.1, 7.9], "sqrt_d_k": [4.0, 8.0],
    }  # fmt: skip
    view.refresh(dataclasses.replace(shown, result=result))
    assert view.table_text()[0] == ["1.50", "0.50"] and view.table_text()[3] == ["4.00", "8.00"]
    view.refresh(dataclasses.replace(shown, error="boom"))
    assert view.status.text() == "failed" and view.status.toolTip() == "boom"


def test_jacobian_view_hides_the_map_of_a_long_row_but_keeps_its_sizes(make_wb, qtbot):
    view = scaling_lab.JacobianView()
    qtbot.addWidget(view)
    wb = make_wb("river-bank")
    d = labs.jacobian_data(wb.trace, 2, wb.scenario.tokens, "bank")
    view.refresh(d)
    assert view.jac_map.isVisibleTo(view) and view.jac_map.labels == ["the", "river", "bank"]
    assert "bank" in view.jac_title.text() and size_text(d.max_abs) in view.jac_stats.text()
    long = dataclasses.replace(d, drawn=False, matrix=np.zeros((0, 0)), labels=())
    view.refresh(long)
    assert not view.jac_map.isVisibleTo(view) and "too large to draw" in view.jac_stats.text()


def test_jacobian_map_names_the_derivative_under_the_mouse(qtbot):
    m = scaling_lab.JacobianMap()
    qtbot.addWidget(m)
    m.resize(300, 220)
    J = softmax_jacobian(np.array([0.5, 0.3, 0.2]), 1.0)
    m.set_jacobian(J, ["a", "b", "c"])
    m.grab()
    assert m.cache.numbers_drawn and m.colour_limit() == pytest.approx(np.abs(J).max())
    pt = m.cell_center(0, 2)
    assert m.cell_at(pt.x(), pt.y()) == (0, 2)
    assert m.tooltip(0, 2) == f"∂w[a] / ∂z[c] = {J[0, 2]!r}"
    assert m.scale_labels()[0] == (1.0, fmt_fixed(float(np.abs(J).max()), 2))


def test_opened_in_steps_a_long_rows_jacobian_comes_from_the_runner(qtbot, monkeypatch):
    """Opened as the window opens a panel (its parts a turn each) on a large head (threshold
    lowered): each plot is made by a part of its own, the Jacobian's sizes and curve are made on
    the runner while the view says so, and in the end the view shows the engine's numbers."""
    import attnsim.panels.lab as lab
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.base import parts_built_later

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    n = 200
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    wb.set_lab_state(numeric_params(rng="numpy", trials=5), "fast")
    with parts_built_later():
        panel = ScalingLabPanel(wb)
    qtbot.addWidget(panel)
    assert not hasattr(panel, "entropy_plot") and not hasattr(panel, "jacobian_view")
    parts = 0
    while panel.build_next_part():
        parts += 1
    assert parts == 4 and panel.sat_plot is panel.jacobian_view.sat_plot
    panel.opening = False
    panel.resize(900, 560)
    panel.show()
    qtbot.waitExposed(panel)
    panel.flush()
    assert "Computing the Jacobian" in panel.jac_stats.text()
    qtbot.waitUntil(lambda: not panel._jacobian_wanted, timeout=WAIT_MS)
    w = wb.trace.weights[n - 1]
    frob, biggest = labs.jacobian_sizes(w, wb.scenario.temperature)
    assert panel.jacobian_sizes == (frob, biggest)
    assert size_text(biggest) in panel.jac_stats.text() and f"{n} keys" in panel.jac_stats.text()
    curve = labs.saturation_curve(
        np.asarray(wb.trace.masked_logits_row(n - 1), dtype=float), wb.scenario.temperature,
        labs.FACTORS,
    )  # fmt: skip
    x, y = panel.jacobian_view.frob_curve.getData()
    np.testing.assert_allclose(y, curve.frobenius, rtol=1e-12, atol=0)
    np.testing.assert_allclose(x, np.log2(curve.factor), rtol=1e-12, atol=0)
