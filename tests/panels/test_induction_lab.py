"""The induction-head lab, driven with real clicks: play/pause, step, reset, settings, head
selection, ablation toggles, presets, and sending a head to the workbench (one undo step)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from attnsim.engine.scenario import random_scenario
from attnsim.model.workbench import Workbench
from attnsim.panels.induction_lab import InductionLabPanel
from attnsim.viewmodels.induction_lab import InductionLabState, lab_view

# Small enough that a step takes milliseconds even on a busy machine.
SMALL = InductionLabState(n_layers=2, n_heads=2, d_model=16, d_vocab=8, half_len=4, lr=1e-2)
WAIT_MS = 30_000


@pytest.fixture
def panel(qtbot, show_panel):
    wb = Workbench(random_scenario(4, 3, seed=1))
    wb.set_lab_state(SMALL, "small model")
    wb.undo_stack.clear()
    p = show_panel(InductionLabPanel(wb), size=(1300, 950))
    yield p
    p.session.close()
    assert wb.runner.shutdown(10)


def click(qtbot, widget, pos: QPoint | None = None) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=pos or widget.rect().center())


def settle(qtbot, panel) -> None:
    qtbot.waitUntil(lambda: not panel.session.busy, timeout=WAIT_MS)
    panel.flush()


def test_play_pause_trains_in_the_background(qtbot, panel):
    c = panel.controls
    assert c.play_button.text() == "Play"
    click(qtbot, c.play_button)
    assert panel.session.running and c.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: panel.session.step_count >= 30, timeout=WAIT_MS)
    click(qtbot, c.play_button)
    assert not panel.session.running and c.play_button.text() == "Play"
    settle(qtbot, panel)
    steps = panel.session.step_count
    qtbot.wait(200)
    assert panel.session.step_count == steps
    xs, _ = panel.curves.repeated_curve.getData()
    assert xs[-1] == panel.session.curve[-1].step >= 30
    assert "steps/s" in c.speed.text()
    assert panel.wb.undo_stack.count() == 0  # training is not an edit


def test_step_and_reset_are_seeded(qtbot, panel):
    start = panel.params()["embed.W_E"].copy()
    click(qtbot, panel.controls.step_button)
    settle(qtbot, panel)
    assert panel.session.step_count == 10
    after = panel.params()["embed.W_E"].copy()
    assert not np.array_equal(start, after)
    click(qtbot, panel.controls.reset_button)
    panel.flush()
    assert panel.session.step_count == 0
    assert np.array_equal(panel.params()["embed.W_E"], start)
    click(qtbot, panel.controls.step_button)
    settle(qtbot, panel)
    assert np.array_equal(panel.params()["embed.W_E"], after)


def test_click_a_head_selects_and_enlarges_it(qtbot, panel):
    grid = panel.patterns.grid
    rect = grid.cell_rects()[(0, 1)]
    click(qtbot, grid, rect.center().toPoint())
    panel.flush()
    assert panel.selected == (0, 1)
    assert np.allclose(panel.patterns.enlarged.values, panel.view.patterns[0, 1])
    assert panel.patterns.enlarged.title.startswith("L0H1")
    assert "L0H1" in panel.circuits.copying.text()


def test_ablation_toggle_is_one_undo_step_and_redraws(qtbot, panel):
    before = panel.view
    box = panel.heads.toggles[(0, 0)]
    click(qtbot, box)
    panel.flush()
    assert panel.state().ablated == ((0, 0),)
    assert box.isChecked()
    assert panel.wb.undo_stack.count() == 1
    assert not np.allclose(panel.view.patterns[1], before.patterns[1])
    assert panel.view.repeated_loss != before.repeated_loss
    assert "L0H0 ablated" in panel.heads.losses.text()
    panel.wb.undo_stack.undo()
    panel.flush()
    assert panel.state().ablated == () and not box.isChecked()
    assert np.allclose(panel.view.patterns, before.patterns)


def test_ablation_table_is_measured_after_training_and_sortable(qtbot, panel):
    assert panel.heads.ablations.rowCount() == 0
    assert "once training has started" in panel.heads.ablation_title.text()
    click(qtbot, panel.controls.step_button)
    settle(qtbot, panel)
    qtbot.waitUntil(lambda: panel.heads.ablations.rowCount() == 8, timeout=WAIT_MS)
    rows = panel.heads.table_text()
    assert {r[1] for r in rows} == {"zero", "mean"}
    deltas = [float(r[5].replace("−", "-")) for r in rows]
    assert deltas == sorted(deltas, reverse=True)
    header = panel.heads.ablations.horizontalHeader()
    qtbot.mouseClick(
        header.viewport(), Qt.MouseButton.LeftButton,
        pos=QPoint(header.sectionViewportPosition(2) + 5, header.height() // 2),
    )  # fmt: skip
    losses = [float(r[2]) for r in panel.heads.table_text()]
    assert losses in (sorted(losses), sorted(losses, reverse=True))


def test_settings_edit_retrains_and_undoes(qtbot, panel):
    box = panel.controls.boxes["seed"]
    box.setValue(7)  # committed like a typed value
    panel.flush()
    assert panel.state().seed == 7 and panel.session.step_count == 0
    assert panel.wb.undo_stack.count() == 1
    panel.controls.boxes["d_model"].setValue(15)  # not a multiple of 2 heads
    assert "multiple" in panel.last_refusal and panel.state().d_model == 16


def test_presets_show_the_hand_built_circuit_and_the_skip_trigram(qtbot, panel):
    combo = panel.controls.preset_combo
    combo.setCurrentIndex(combo.findData("hand_built"))
    panel.flush()
    assert panel.state().preset == "hand_built"
    assert panel.view.previous_token[0, 0] > 0.99
    assert not panel.controls.play_button.isEnabled()
    assert panel.circuits.comp_map.isVisible()
    combo.setCurrentIndex(combo.findData("skip_trigram"))
    panel.flush()
    assert panel.view.patterns.shape[:2] == (1, 1)
    assert "Skip-trigram" in panel.note.text()
    assert not panel.circuits.comp_map.isVisible()


def test_send_head_to_workbench_is_one_undo_step(qtbot, panel):
    grid = panel.patterns.grid
    click(qtbot, grid, grid.cell_rects()[(1, 1)].center().toPoint())
    panel.flush()
    old = panel.wb.scenario
    click(qtbot, panel.send_button)
    sc = panel.wb.scenario
    assert sc.mode == "direct" and sc.n_tokens == 2 * SMALL.half_len + 1
    assert panel.wb.undo_stack.count() == 1
    assert "L1H1" in panel.wb.undo_stack.undoText()
    weights = panel.wb.result.heads[0].weights
    assert np.allclose(weights, lab_view(panel.params(), panel.state()).patterns[1, 1], atol=1e-6)
    panel.wb.undo_stack.undo()
    assert panel.wb.scenario is old


def test_the_panel_answers_while_training_and_reset_keeps_playing(qtbot, panel):
    click(qtbot, panel.controls.play_button)
    qtbot.waitUntil(lambda: panel.session.step_count >= 10, timeout=WAIT_MS)
    click(qtbot, panel.heads.toggles[(1, 0)])  # handled at once, between training chunks
    panel.flush()
    assert panel.state().ablated == ((1, 0),) and panel.session.running
    click(qtbot, panel.controls.reset_button)
    assert panel.session.step_count == 0 and panel.session.running
    qtbot.waitUntil(lambda: panel.session.step_count >= 10, timeout=WAIT_MS)
    click(qtbot, panel.controls.play_button)
    settle(qtbot, panel)
    assert [p.step for p in panel.session.curve][:2] == [0, 10]  # the curves restarted


def test_composition_scores_come_from_the_runner_and_are_recalled(qtbot, panel):
    # The first measure for a model's shapes samples random weights for the baseline (tens of
    # milliseconds): it runs on the runner, the lab says "computing…" meanwhile.
    note = panel.circuits.comp_note
    assert "computing" in note.text() or "Random weights" in note.text()
    qtbot.waitUntil(lambda: "Random weights of these shapes score" in note.text(), timeout=WAIT_MS)
    assert panel.circuits.comp_map.values.shape == (2, 2)  # layer 0's heads x layer 1's
    panel.select_head(0, 1)
    panel.flush()
    # the same weights: their scores are recalled at once, not measured again
    assert "Random weights of these shapes score" in note.text()
    assert panel.circuits.comp_map.values.shape == (2, 2)
