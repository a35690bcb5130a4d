"""The "Real model" panel, driven with real clicks: Run in the background, pick a head in the
grid, hover for exact weights, ablate it (zero or mean; a rerun, undoable), sort by metric,
open it in the workbench (one undo step), refuse a text over 512 tokens, probe SmolLM2, export
a figure.

Uses the installed model files (``attnsim models install``, which ``.ci/run`` runs); MiniLM in
most tests for speed. Without the files every test here fails, naming that command; the panel
without them is tested in ``test_real_model_window.py``."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from attnsim.engine.scenario import random_scenario
from attnsim.export import export_panel
from attnsim.model.workbench import Workbench
from attnsim.panels.real_model import PROBE_JOB, RealModelPanel
from attnsim.viewmodels.real_model import RealModelState

WAIT_MS = 60_000


pytestmark = pytest.mark.usefixtures("models_installed")


def make_panel(show_panel, state: RealModelState, size=(1024, 700)) -> RealModelPanel:
    wb = Workbench(random_scenario(4, 3, seed=1))
    wb.set_lab_state(state, "start")
    wb.undo_stack.clear()
    return show_panel(RealModelPanel(wb), size=size)


@pytest.fixture
def panel(qtbot, show_panel):
    p = make_panel(show_panel, RealModelState(model="minilm", text="the cat sat on the mat"))
    yield p
    assert p.wb.runner.shutdown(10)


def click(qtbot, widget, pos: QPoint | None = None) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=pos or widget.rect().center())


def run_and_wait(qtbot, panel: RealModelPanel) -> None:
    click(qtbot, panel.controls.run_button)
    settle(qtbot, panel)


def settle(qtbot, panel: RealModelPanel) -> None:
    qtbot.waitUntil(lambda: not panel.busy and panel.result is not None, timeout=WAIT_MS)
    panel.flush()
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)  # an ablation's own rerun
    panel.flush()


def test_run_shows_every_head_and_the_pieces(qtbot, panel):
    assert panel.result is None and "press Run" in panel.note.text()
    run_and_wait(qtbot, panel)
    r = panel.result
    assert r.key == panel.state().run_key() and r.weights.shape[:2] == (6, 12)
    assert len(panel.grid.cell_rects()) == 72
    assert "8 tokens: [CLS] | the | cat" in panel.controls.pieces.full
    assert "all-MiniLM-L6-v2, 8 tokens, " in panel.note.text()
    assert panel.wb.undo_stack.count() == 0  # the text was already the state's: nothing to undo


def test_typed_text_becomes_one_undo_step_and_runs(qtbot, panel):
    panel.controls.text_edit.setPlainText("a new text here")
    run_and_wait(qtbot, panel)
    assert panel.state().text == "a new text here" == panel.result.key[1]
    assert panel.wb.undo_stack.count() == 1
    panel.wb.undo_stack.undo()
    panel.flush()
    assert panel.state().text == "the cat sat on the mat"
    assert "press Run for this text" in panel.note.text()  # the maps shown are of the other


def test_click_a_head_enlarges_it_and_hover_gives_weights(qtbot, panel):
    run_and_wait(qtbot, panel)
    rect = panel.grid.cell_rects()[(3, 7)]
    click(qtbot, panel.grid, rect.center().toPoint())
    panel.flush()
    assert panel.state().selected == (3, 7) and panel.wb.undo_stack.count() == 1
    assert panel.enlarged.title.startswith("L3H7")
    np.testing.assert_allclose(panel.enlarged.values, panel.result.weights[3, 7], atol=1e-6)
    assert panel.enlarged.tooltip(2, 1).startswith("cat (pos 2) → the (pos 1): ")
    assert panel.grid.tip((3, 7)).startswith("L3H7: previous-token ")


def test_ablate_reruns_and_undo_restores(qtbot, panel):
    run_and_wait(qtbot, panel)
    click(qtbot, panel.grid, panel.grid.cell_rects()[(1, 2)].center().toPoint())
    panel.flush()
    click(qtbot, panel.controls.ablate_button)
    panel.flush()
    settle(qtbot, panel)
    assert panel.result.key[2] == ((1, 2),) and panel.controls.ablate_button.isChecked()
    assert panel.result.cosine < 1.0 - 1e-5
    assert "L1H2" in panel.predictions.summary.text()
    panel.wb.undo_stack.undo()
    panel.flush()
    settle(qtbot, panel)
    assert panel.result.key[2] == () and not panel.controls.ablate_button.isChecked()


def test_metric_sorts_the_heads_table(qtbot, panel):
    run_and_wait(qtbot, panel)
    combo = panel.controls.metric_combo
    combo.setCurrentIndex(combo.findData("entropy"))
    panel.flush()
    assert panel.state().metric == "entropy"
    layer, head = panel.heads.rows[0]
    assert panel.result.metrics["entropy"][layer, head] == pytest.approx(
        float(panel.result.metrics["entropy"].min())
    )


def test_open_head_in_workbench_is_one_undo_step(qtbot, panel):
    run_and_wait(qtbot, panel)
    click(qtbot, panel.grid, panel.grid.cell_rects()[(4, 1)].center().toPoint())
    panel.flush()
    before, steps = panel.wb.scenario, panel.wb.undo_stack.count()
    click(qtbot, panel.controls.open_button)
    sc = panel.wb.scenario
    assert panel.wb.undo_stack.count() == steps + 1
    assert sc.mode == "direct" and sc.tokens == panel.result.labels and sc.mask == "none"
    np.testing.assert_allclose(sc.compute().heads[0].weights, panel.result.weights[4, 1], atol=1e-5)
    panel.wb.undo_stack.undo()
    assert panel.wb.scenario is before


def test_changing_model_drops_ablations_and_asks_for_a_run(qtbot, panel):
    run_and_wait(qtbot, panel)
    click(qtbot, panel.controls.ablate_button)
    panel.flush()
    settle(qtbot, panel)
    combo = panel.controls.model_combo
    combo.setCurrentIndex(combo.findData("smollm2"))
    panel.flush()
    assert panel.state().model == "smollm2" and panel.state().ablated == ()
    assert "type a text and press Run" in panel.note.text() and not panel.grid.has_content()


def test_text_over_512_tokens_is_refused_inline(qtbot, panel):
    run_and_wait(qtbot, panel)  # the model is loaded: the text is counted as typed
    panel.controls.text_edit.setPlainText("word " * 600)
    click(qtbot, panel.controls.run_button)
    assert "602 tokens" in panel.refusal.text() and panel.refusal.isVisible()
    assert panel.state().text == "the cat sat on the mat" and panel.wb.undo_stack.count() == 0
    qtbot.waitUntil(lambda: "602 tokens" in panel.controls.pieces.full, timeout=WAIT_MS)


def test_smollm2_predictions_probe_and_causal_head(qtbot, show_panel):
    p = make_panel(show_panel, RealModelState(model="smollm2", text="One, two, three, four"))
    run_and_wait(qtbot, p)
    assert p.predictions.table.rowCount() == 10
    assert p.predictions.table.item(0, 0).text() == ","
    click(qtbot, p.controls.probe_button)
    # seconds of forward passes: on the workbench's runner, with progress and Cancel
    assert p.busy and p.controls.cancel_button.isEnabled()
    job = p.wb.runner.job(PROBE_JOB)
    assert job is p.probe_job and not job.done and p.controls.progress.isVisibleTo(p)
    qtbot.waitUntil(lambda: p.probe_result is not None, timeout=WAIT_MS)
    assert not p.controls.progress.isVisibleTo(p)
    best = p.probe_view.ranking.item(0, 0).text()
    assert best == "L18H6"
    # the command line's experiment, said in words, and its numbers
    summary = p.probe_view.summary.text()
    assert "4 sequences of 20 random tokens" in summary and "random seed 0" in summary
    table = p.probe_view.ablations
    assert [table.item(i, 1).text() for i in range(3)] == ["3.657", "8.463", "3.750"]
    assert table.item(1, 0).text() == "top 4 induction heads"
    ranking = p.probe_view.ranking
    cell = ranking.visualItemRect(ranking.item(0, 0)).center()
    click(qtbot, ranking.viewport(), cell)
    p.flush()
    assert "L{}H{}".format(*p.state().selected) == best
    click(qtbot, p.controls.open_button)
    assert p.wb.scenario.mask == "causal" and p.wb.scenario.name == f"smollm2-{best}"
    assert p.wb.runner.shutdown(10)


def test_cancel_drops_the_run(qtbot, panel):
    panel.controls.text_edit.setPlainText("word " * 400)  # long enough to still be running
    click(qtbot, panel.controls.run_button)
    assert panel.controls.cancel_button.isEnabled()
    click(qtbot, panel.controls.cancel_button)
    qtbot.wait(300)
    assert panel.result is None and not panel.controls.cancel_button.isEnabled()
    panel.flush()
    assert "press Run" in panel.note.text()


def test_figure_export_runs_the_settings_and_shows_the_grid(qtbot, panel, tmp_path):
    assert panel.result is None  # never run: export runs it rather than draw an empty grid
    parts = panel.figure_widgets()
    assert panel.result is not None and panel.result.key == panel.state().run_key()
    assert panel.grid in parts and panel.controls.pieces in parts and panel.note in parts
    assert panel.controls.run_button not in parts
    path = tmp_path / "real_model.svg"
    export_panel(panel, path)
    svg = path.read_text()
    assert "8 tokens: [CLS]" in svg and "all-MiniLM-L6-v2, 8 tokens" in svg
    assert ">Run<" not in svg  # the figure: maps and captions, no controls
    assert panel.wb.runner.shutdown(10)


def hover(widget, pos: QPoint) -> str:
    """The tool tip a user resting the mouse at ``pos`` sees."""
    QToolTip.hideText()
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos)))
    return QToolTip.text()


def test_hovering_a_grid_map_gives_the_exact_weight_under_the_mouse(qtbot, panel):
    run_and_wait(qtbot, panel)
    r, rect = panel.result, panel.grid.cell_rects()[(2, 5)]
    n = len(r.ids)
    # the middle of the cell of query 3, key 1 in head L2H5's map
    pos = QPoint(
        int(rect.left() + 1.5 * rect.width() / n), int(rect.top() + 3.5 * rect.height() / n)
    )
    tip = hover(panel.grid, pos)
    want = f"{r.labels[3]} (pos 3) → {r.labels[1]} (pos 1): weight "
    assert tip.startswith("L2H5: previous-token ") and want in tip
    assert f"{float(r.weights[2, 5, 3, 1]):.4f}"[:5] in tip
    # the enlarged map of the selected head, cell by cell
    click(qtbot, panel.grid, rect.center().toPoint())
    panel.flush()
    cell = panel.enlarged.cell_center(3, 1).toPoint()
    assert hover(panel.enlarged, cell).startswith(f"{r.labels[3]} (pos 3) → {r.labels[1]} (pos 1)")


def test_mean_ablation_is_an_undoable_choice_and_reruns(qtbot, panel):
    run_and_wait(qtbot, panel)
    click(qtbot, panel.grid, panel.grid.cell_rects()[(1, 2)].center().toPoint())
    click(qtbot, panel.controls.ablate_button)
    panel.flush()
    settle(qtbot, panel)
    zeroed, steps = panel.result, panel.wb.undo_stack.count()
    combo = panel.controls.ablation_combo
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # "zero" -> "mean", as a user picks it
    panel.flush()
    settle(qtbot, panel)
    assert panel.state().ablation == "mean" and panel.wb.undo_stack.count() == steps + 1
    assert panel.result.key == ("minilm", "the cat sat on the mat", ((1, 2),), "mean")
    assert "(mean ablation)" in panel.predictions.summary.text()
    assert not np.allclose(panel.result.weights, zeroed.weights)
    panel.wb.undo_stack.undo()
    panel.flush()
    settle(qtbot, panel)
    assert combo.currentData() == "zero" and panel.result.ablation == "zero"
    np.testing.assert_allclose(panel.result.weights, zeroed.weights, atol=1e-6)


def test_a_check_box_in_the_heads_table_ablates_that_head(qtbot, panel):
    run_and_wait(qtbot, panel)
    panel.tabs.setCurrentWidget(panel.heads)
    panel.split.set_current(1)
    panel.flush()
    table = panel.heads.table
    target = panel.heads.rows[3]
    item = table.item(3, 2)
    click(qtbot, table.viewport(), table.visualItemRect(item).center())
    qtbot.keyClick(table, Qt.Key.Key_Space)  # the check box of the current cell
    panel.flush()
    settle(qtbot, panel)
    assert panel.state().ablated == (target,) and panel.result.ablated == (target,)
    assert panel.wb.undo_stack.count() == 1
    row = panel.heads.rows.index(target)
    assert table.item(row, 2).checkState() == Qt.CheckState.Checked


def test_metric_colours_the_grid_and_sorts_the_table(qtbot, panel):
    run_and_wait(qtbot, panel)
    combo = panel.controls.metric_combo
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_End)  # the last metric: entropy
    panel.flush()
    assert panel.state().metric == "entropy" and panel.grid.metric_key == "entropy"
    assert panel.wb.undo_stack.count() == 1
    values = [panel.result.metrics["entropy"][h] for h in panel.heads.rows]
    assert values == sorted(values)  # sharpest first
    assert panel.grid.tip((0, 0)).startswith("L0H0: entropy ")


def test_a_model_change_cancels_its_run_and_lets_the_old_maps_go(qtbot, panel):
    run_and_wait(qtbot, panel)
    panel.controls.text_edit.setPlainText("word " * 300)
    click(qtbot, panel.controls.run_button)
    job = panel.job
    assert job is not None
    combo = panel.controls.model_combo
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # SmolLM2
    panel.flush()
    assert job.cancelled and panel.job is None and panel.result is None
    assert panel.heads.table.rowCount() == 0 and not panel.grid.has_content()
    assert not panel.controls.cancel_button.isEnabled()


def test_the_grid_fills_its_area_for_each_model(qtbot, show_panel):
    shares = {}
    for model, text in (("minilm", "the cat sat on the mat"), ("smollm2", "one two three")):
        p = make_panel(show_panel, RealModelState(model=model, text=text), size=(1100, 760))
        run_and_wait(qtbot, p)
        rects = list(p.grid.cell_rects().values())
        right = max(r.right() for r in rects)
        bottom = max(r.bottom() for r in rects)
        side = rects[0].width()
        # across the grid's width or down its height, within a map and its band
        assert p.grid.width() - right < side + 120 or p.grid.height() - bottom < side + 40
        assert side >= 14, (model, side)
        sizes = p.split.splitter.sizes()
        shares[model] = sizes[0] / sum(sizes)
        assert p.wb.runner.shutdown(10)
    # side by side, the grid takes the width its maps need and the tables the rest: SmolLM2's
    # thirty layers want more than MiniLM's six
    assert 0.38 <= shares["minilm"] < shares["smollm2"] <= 0.67, shares


def test_in_a_small_dock_a_click_on_a_head_brings_its_map_to_the_front(qtbot, show_panel):
    p = make_panel(show_panel, RealModelState(model="minilm", text="the cat sat"), (420, 330))
    assert p.split.mode() == "tabs"
    run_and_wait(qtbot, p)
    p.tabs.setCurrentWidget(p.predictions)
    assert p.split.tabs.currentIndex() == 0  # the grid in front
    click(qtbot, p.grid, p.grid.cell_rects()[(5, 11)].center().toPoint())
    p.flush()
    assert p.state().selected == (5, 11) and p.wb.undo_stack.count() == 1
    assert p.split.tabs.currentIndex() == 1 and p.tabs.currentWidget() is p.enlarged
    assert p.enlarged.isVisible() and p.enlarged.title.startswith("L5H11")
    assert p.wb.runner.shutdown(10)


def test_running_a_model_leaves_the_document_unmodified(qtbot, panel):
    panel.controls.text_edit.setPlainText("the dog sat on the rug")
    run_and_wait(qtbot, panel)
    click(qtbot, panel.controls.ablate_button)  # an ablation and its rerun too
    settle(qtbot, panel)
    assert panel.result.ablated == ((0, 0),)
    assert not panel.wb.dirty and panel.wb.undo_stack.canUndo()


def test_opening_a_preset_keeps_the_typed_text_and_the_maps_of_the_run_text(qtbot, panel):
    from attnsim.resources import resolve_scenario

    run_and_wait(qtbot, panel)
    panel.controls.text_edit.setPlainText("typed but not run yet")
    panel.wb.load(resolve_scenario("river-bank"))
    panel.flush()
    assert panel.controls.text() == "typed but not run yet"
    state = panel.state()
    # the maps on screen are those of the text the settings name, never another's
    assert state.text == "the cat sat on the mat" == panel.result.key[1]
    assert "Click a head to enlarge it" in panel.note.text()
    assert panel.grid.result is panel.result


def test_sorting_by_induction_uses_the_texts_repeats_and_says_when_there_are_none(qtbot, panel):
    run_and_wait(qtbot, panel)  # "the cat sat on the mat": "the" repeats once
    combo = panel.controls.metric_combo
    combo.setCurrentIndex(combo.findData("induction"))
    panel.flush()
    assert panel.state().metric == "induction" and panel.grid.metric_key == "induction"
    values = [panel.result.metrics["induction"][h] for h in panel.heads.rows]
    assert values == sorted(values, reverse=True) and values[0] > 0
    assert not panel.heads.note.isHidden()  # (the Heads tab itself may be behind another)
    assert "over the 1 position whose token occurred before" in panel.heads.note.text()
    assert panel.grid.tip((0, 0)).startswith("L0H0: induction ")
    panel.controls.text_edit.setPlainText("one two three four")
    run_and_wait(qtbot, panel)
    assert panel.result.repeats == 0
    assert panel.heads.note.text().startswith("No token repeats in this text")
    combo.setCurrentIndex(combo.findData("entropy"))
    panel.flush()
    assert panel.heads.note.isHidden()


def test_the_maps_show_weights_or_contributions_one_undo_step_each(qtbot, panel):
    run_and_wait(qtbot, panel)
    r = panel.result
    weights_picture = panel.grid.grab().toImage()
    combo = panel.controls.maps_combo
    combo.setCurrentIndex(combo.findData("contributions"))
    panel.flush()
    assert panel.state().maps == "contributions" and panel.wb.undo_stack.count() == 1
    assert panel.grid.shows_contributions()
    # each map is the weights times the length of each key's value after W_O, on one scale
    # from 0 to the largest contribution of any head
    m = r.head_map(2, 5, "contributions")
    want = r.weights[2, 5] * r.value_norms[2, 5][None, :]
    np.testing.assert_allclose(m, want, rtol=1e-6)
    scale = panel.grid.map_scale()
    assert scale.lo == 0.0 and scale.hi == pytest.approx(r.contribution_top, rel=1e-9)
    assert r.contribution_top >= float(m.max()) > 1.0  # not weights: those stop at 1
    assert panel.grid.grab().toImage() != weights_picture
    rect = panel.grid.cell_rects()[(2, 5)]
    n = len(r.ids)
    pos = QPoint(
        int(rect.left() + 1.5 * rect.width() / n), int(rect.top() + 3.5 * rect.height() / n)
    )
    tip = hover(panel.grid, pos)
    assert "weight " in tip and f"contribution {float(m[3, 1]):.4f}"[:18] in tip
    click(qtbot, panel.grid, rect.center().toPoint())
    panel.flush()
    assert "contributions" in panel.enlarged.title
    panel.wb.undo_stack.undo()  # the head's selection
    panel.wb.undo_stack.undo()  # the maps
    panel.flush()
    assert panel.state().maps == "weights" and not panel.grid.shows_contributions()
    assert combo.currentData() == "weights" and panel.grid.grab().toImage() == weights_picture


def test_opened_in_steps_the_panel_ends_with_every_page_and_the_split(make_wb):
    # The window opens the panel in steps: the pages on two texts and the split come in parts
    # of their own; once built, the panel has the same pages in the same order as one built
    # at once, and the grid and the tables in its split.
    from attnsim.panels.base import parts_built_later

    wb = make_wb()
    with parts_built_later():
        stepped = RealModelPanel(wb)
    assert stepped.tabs.count() == 4  # the pages on two texts wait for their part
    assert stepped.build_next_part() and stepped.build_next_part()
    assert not stepped.build_next_part()
    whole = RealModelPanel(wb)
    names = [stepped.tabs.tabText(i) for i in range(stepped.tabs.count())]
    assert names == [whole.tabs.tabText(i) for i in range(whole.tabs.count())]
    assert names[-3:] == ["Two texts", "Patching", "Lens and flow"]
    assert stepped.split.isAncestorOf(stepped.grid) and stepped.split.isAncestorOf(stepped.tabs)
    assert stepped.show_tab(stepped.pair_view) is None
    assert stepped.shown_page() is stepped.pair_view
    stepped.deleteLater()
    whole.deleteLater()
