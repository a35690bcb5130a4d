"""The kernel lab: Step / Back / Reset / To end and tile clicks are one undo step each and show
the engine's m, ℓ and accumulator; block sizes that do not divide n work; a block size of 0 is
refused inline; the scaling run works in the background with progress and can be cancelled."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine.attention import attention
from attnsim.engine.kernel_scaling import METHODS
from attnsim.engine.kernels import peak_memory, tiled_attention
from attnsim.panels.base import CONTROL_TYPES
from attnsim.panels.kernel_lab import SCALING, KernelLabPanel, KernelLabState
from attnsim.viewmodels.kernel_lab import fmt_floats
from tests.panels.lab_helpers import settle, type_into

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(KernelLabPanel(make_wb("tired-cat")), size=(760, 560))


def state(wb) -> KernelLabState:
    return wb.lab_state(KernelLabState)


def click(panel, how: str) -> None:
    QTest.mouseClick(panel.controls.buttons[how], LEFT)
    settle(panel)


def test_step_folds_one_key_block_and_shows_the_engines_trace(panel):
    wb = panel.wb
    tr = wb.trace
    assert panel.data.step == 0 and not panel.controls.buttons["back"].isEnabled()
    click(panel, "step")
    assert state(wb).step == 1 and wb.undo_stack.count() == 1
    _, trace = tiled_attention(tr.Q, tr.K, tr.V, mask=tr.mask, block_q=2, block_k=2, trace=True)
    first = trace.steps_for(0)[0]
    np.testing.assert_allclose([r.m for r in panel.data.row_steps], first.m, rtol=0, atol=0)
    np.testing.assert_allclose([r.l for r in panel.data.row_steps], first.l, rtol=0, atol=0)
    text = panel.table.text()
    assert panel.table.rows[1][0] == wb.scenario.query_labels[0]
    assert panel.table.rows[1][4] in text and "key block 1 of 3 folded in" in text
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb).step == 0 and panel.data.step == 0 and panel.data.cols is None


def test_walking_to_the_end_gives_the_reference_output_one_step_per_click(panel):
    wb = panel.wb
    tr = wb.trace
    n_kb = panel.data.n_key_blocks
    for _ in range(n_kb):
        click(panel, "step")
    assert wb.undo_stack.count() == n_kb and panel.data.done
    ref, _ = attention(tr.Q, tr.K, tr.V, mask=tr.mask)
    np.testing.assert_allclose(panel.output.tiled.values, ref[0:2], rtol=1e-12)
    np.testing.assert_allclose(panel.output.reference.values, ref[0:2], rtol=0, atol=0)
    assert "Done" in panel.output.caption.text()
    assert not panel.controls.buttons["end"].isEnabled()
    click(panel, "step")  # on to the next query block, at its start
    assert (state(wb).q_block, state(wb).step) == (1, 0)
    click(panel, "back")  # and back to the end of the first
    assert (state(wb).q_block, state(wb).step) == (0, n_kb)
    click(panel, "reset")
    assert state(wb).step == 0 and wb.undo_stack.count() == n_kb + 3
    click(panel, "end")
    assert state(wb).step == n_kb and wb.undo_stack.count() == n_kb + 4


def test_block_size_that_does_not_divide_n_is_one_undo_step(panel):
    wb = panel.wb
    type_into(panel.controls.boxes["block_k"], "3")
    settle(panel)
    assert state(wb).block_k == 3 and wb.undo_stack.count() == 1
    assert panel.data.n_key_blocks == 2  # 5 keys: a tile of 3 and one of 2
    click(panel, "end")
    assert panel.data.max_diff < 1e-12
    tr = wb.trace
    pm = peak_memory(5, 5, tr.V.shape[1], 2, 3, np.float64)
    assert (panel.memory.plain, panel.memory.tiled) == (pm.plain_bytes // 8, pm.tiled_bytes // 8)
    assert fmt_floats(pm.tiled_bytes // 8) in panel.memory.toolTip()


def test_block_size_zero_is_refused_inline_naming_the_field(panel):
    wb = panel.wb
    box = panel.controls.boxes["block_q"]
    type_into(box, "0")
    settle(panel)
    assert state(wb).block_q == 2 and wb.undo_stack.count() == 0
    assert panel.refusal.isVisibleTo(panel)
    assert "block_q" in panel.refusal.text() and "got 0" in panel.refusal.text()
    assert box.value() == 2  # the box shows the stored value again
    type_into(box, "4")
    settle(panel)
    assert state(wb).block_q == 4 and not panel.refusal.isVisibleTo(panel)


def test_a_typed_text_that_is_no_number_is_refused_naming_the_box(panel):
    wb = panel.wb
    type_into(panel.controls.boxes["block_k"], "2.5")
    settle(panel)
    assert state(wb).block_k == 2 and wb.undo_stack.count() == 0
    assert "block_k: 2.5 is not a whole number" in panel.refusal.text()


def test_clicking_a_tile_folds_up_to_it(panel):
    wb = panel.wb
    canvas = panel.tiles
    point = canvas.cell_center(3, 3).toPoint()  # query block 2, key block 2
    QTest.mouseClick(canvas, LEFT, Qt.KeyboardModifier.NoModifier, point)
    settle(panel)
    assert (state(wb).q_block, state(wb).step) == (1, 2) and wb.undo_stack.count() == 1
    assert panel.data.rows == (2, 4) and panel.data.cols == (2, 4)
    # the query block box follows (1-based)
    assert panel.controls.boxes["q_block"].value() == 2


def test_choosing_a_query_block_starts_it_from_nothing(panel):
    wb = panel.wb
    click(panel, "step")
    type_into(panel.controls.boxes["q_block"], "3")
    settle(panel)
    assert (state(wb).q_block, state(wb).step) == (2, 0) and wb.undo_stack.count() == 2
    assert panel.data.rows == (4, 5)


def test_causal_mask_tiles_are_skipped(make_wb, show_panel):
    panel = show_panel(KernelLabPanel(make_wb("code-definition")), size=(760, 560))
    assert panel.data.skipped.any()
    for _ in range(panel.data.n_key_blocks):
        click(panel, "step")
    assert "skipped by the mask" in panel.output.caption.text()


def test_the_figure_has_no_controls(panel):
    for part in panel.figure_widgets():
        assert not isinstance(part, CONTROL_TYPES)
    assert panel.tiles in panel.figure_widgets()


def wait_for(job, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while not job.done and time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)
    assert job.done


def test_scaling_runs_in_the_background_with_progress(panel, qtbot):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    sc = panel.scaling_controls
    sc.n_combo.setCurrentIndex(0)  # n up to 128
    type_into(sc.boxes["repeats"], "1")
    type_into(sc.boxes["d"], "8")
    settle(panel)
    assert (state(wb).n_max, state(wb).repeats, state(wb).d) == (128, 1, 8)
    assert wb.undo_stack.count() == 3
    assert panel.shown.n.size == 0 and "Run" in panel.plots.caption.text()
    fractions = []
    QTest.mouseClick(sc.run_button, LEFT)
    job = panel.job
    job.progress.connect(fractions.append)
    wait_for(job)
    settle(panel)
    assert fractions and fractions[-1] == pytest.approx(1.0)
    assert sc.progress.value() == 100 and "done" in sc.status.text()
    assert sc.run_button.isEnabled() and not sc.cancel_button.isEnabled()
    result = wb.runner.recall(SCALING, (128, 1, 8))
    assert result is not None and result.n.tolist() == [64, 128]
    for i, m in enumerate(METHODS):
        x, y = panel.plots.curves[("memory", m)].getData()  # log10 of the data: log axes
        np.testing.assert_allclose(10**x, [64, 128], rtol=1e-12)
        np.testing.assert_allclose(10**y, result.memory_bytes[i] / 2**20, rtol=1e-12)
    assert wb.undo_stack.count() == 3  # running is not an edit
    # Undo a setting and redo it: the measurement for those settings comes back at once.
    wb.undo_stack.undo()
    settle(panel)
    assert panel.shown.n.size == 0
    wb.undo_stack.redo()
    settle(panel)
    assert panel.shown.n.tolist() == [64, 128]


def test_cancel_stops_the_run_and_keeps_no_result(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    sc = panel.scaling_controls
    QTest.mouseClick(sc.run_button, LEFT)  # the default n up to 2048: long enough to cancel
    job = panel.job
    assert panel.running() and sc.cancel_button.isEnabled() and not sc.run_button.isEnabled()
    QTest.mouseClick(sc.cancel_button, LEFT)
    settle(panel)
    assert job.cancelled and "cancelled" in sc.status.text()
    assert sc.run_button.isEnabled() and not sc.cancel_button.isEnabled()
    assert job.wait(60)
    settle(panel)
    assert wb.runner.recall(SCALING, (2048, 3, 64)) is None
    assert panel.shown.n.size == 0


def test_scaling_settings_out_of_range_are_refused(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    type_into(panel.scaling_controls.boxes["repeats"], "0")
    settle(panel)
    assert state(wb).repeats == 3 and wb.undo_stack.count() == 0
    assert "repeats" in panel.refusal.text() and "got 0" in panel.refusal.text()


def test_step_position_is_redrawn_on_undo_of_many_steps(panel):
    wb = panel.wb
    for how in ("step", "step", "end"):
        click(panel, how)
    seen = [panel.data.step]
    for _ in range(3):
        wb.undo_stack.undo()
        settle(panel)
        seen.append(panel.data.step)
    assert seen == [3, 2, 1, 0]


def test_with_several_heads_the_focused_head_is_named_and_stepped(make_wb, show_panel):
    panel = show_panel(KernelLabPanel(make_wb("two-heads")), size=(760, 560))
    wb = panel.wb
    assert "head 1" in panel.tiles.title
    np.testing.assert_allclose(panel.tiles.values, wb.trace.logits, rtol=0, atol=0)
    click(panel, "end")
    ref, _ = attention(wb.trace.Q, wb.trace.K, wb.trace.V, mask=wb.trace.mask)
    np.testing.assert_allclose(panel.output.tiled.values, ref[0:2], rtol=1e-12)


def test_before_the_first_step_acc_over_l_shows_no_number(panel):
    settle(panel)
    assert panel.data is not None and panel.data.step == 0
    canvas = panel.output.tiled
    # 0 / 0 is drawn hatched with the value it has (NaN), not as a made-up 0.00
    assert np.isnan(canvas.values).all() and canvas.forbidden is not None
    assert canvas.forbidden.all()


def test_the_kernel_run_is_derived_once_and_kept_while_stepping(panel):
    from attnsim.panels.kernel_lab.panel import stepper_view

    wb = panel.wb
    first = panel.kernel()
    assert panel.data is wb.derived(stepper_view, lab=KernelLabState)
    click(panel, "step")
    assert state(wb).step == 1 and panel.kernel() is first  # the step is not the run's
    assert panel.data is wb.derived(stepper_view, lab=KernelLabState) and panel.data.step == 1
    type_into(panel.controls.boxes["block_k"], "1")
    settle(panel)
    assert state(wb).block_k == 1 and panel.kernel() is not first
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb).block_k == 2 and panel.kernel() is not first
    assert panel.data.step == 1


def test_at_large_n_the_stepper_is_made_in_the_background(show_panel, qtbot):
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench

    n = 300  # 90,000 weights: the kernel's run goes to the runner
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = show_panel(KernelLabPanel(wb), size=(900, 600))
    qtbot.waitUntil(lambda: panel.data is not None and panel.busy_line.isHidden(), timeout=60000)
    first = panel.data
    click(panel, "step")  # an undoable edit, made at once; its picture follows
    assert state(wb).step == 1 and wb.undo_stack.count() == 1
    assert panel.data is first and not panel.busy_line.isHidden()
    qtbot.waitUntil(lambda: panel.busy_line.isHidden(), timeout=60000)
    assert panel.data is not first and panel.data.step == 1
    widgets = panel.figure_widgets()  # a figure computes at once, with no busy line
    assert widgets and panel.busy_line.isHidden()


def test_a_large_head_steps_on_the_runner_and_its_tiles_fit_the_canvas(
    show_panel, qtbot, monkeypatch
):
    """Large (threshold lowered): the stepper's data, the tiles' colour scale with it, is made
    on the runner; the scale is the largest |logit| over the allowed cells, and the tiles are
    pooled into the canvas rather than one pixel a cell."""
    import attnsim.panels.lab as lab
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.kernel_lab.panel import stepper_view

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    n = 600
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = KernelLabPanel(wb)
    panel.flush()
    assert panel.data is None and not panel.busy_line.isHidden()
    assert wb.derived_pending(stepper_view)
    panel = show_panel(panel, size=(800, 560))
    qtbot.waitUntil(lambda: panel.data is not None and panel.busy_line.isHidden(), timeout=60000)
    d, tiles = panel.data, panel.tiles
    ok = np.isfinite(d.logits) & ~d.forbidden
    top = float(np.abs(d.logits[ok]).max())
    assert d.logit_top == top and (tiles.scale.lo, tiles.scale.hi) == (-top, top)
    tiles.grab()
    grid = tiles.grid_rect()
    assert grid.width() <= tiles.width() and grid.height() <= tiles.height()


def test_the_scaling_tab_is_made_when_first_raised(panel):
    """The first show builds only the stepper; raising the scaling tab makes its controls and
    plots, which then show the lab's settings and say how to start a run."""
    assert not hasattr(panel, "plots") and panel.tabs.count() == 2
    panel.tabs.setCurrentIndex(1)
    QApplication.processEvents()
    panel.flush()
    assert panel.plots.isVisibleTo(panel) and panel.scaling_controls.isVisibleTo(panel)
    assert "Run" in panel.plots.caption.text()
    from attnsim.viewmodels.kernel_lab import N_CHOICES

    assert panel.scaling_controls.n_combo.currentIndex() == N_CHOICES.index(panel.state().n_max)
    made = panel.plots
    panel.tabs.setCurrentIndex(0)
    panel.tabs.setCurrentIndex(1)
    assert panel.plots is made  # made once


def test_a_large_heads_tiles_overlay_uses_the_runs_found_on_the_runner(
    show_panel, qtbot, monkeypatch
):
    """Large (threshold lowered): the skipped tiles' runs come with the stepper's data (made on
    the runner), one run per tile row above the diagonal, and the canvas draws them."""
    import attnsim.panels.lab as lab
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.viewmodels.kernel_lab import skipped_runs

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    n = 300
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = show_panel(KernelLabPanel(wb), size=(800, 560))
    qtbot.waitUntil(lambda: panel.data is not None and panel.busy_line.isHidden(), timeout=60000)
    d = panel.data
    np.testing.assert_array_equal(d.skipped_runs, skipped_runs(d.skipped))
    assert len(d.skipped_runs) == d.n_query_blocks - 1  # the last tile row skips nothing
    panel.tiles.grab()
    # Tiles under two pixels: the skipped ones are one image of the grid's pixels (shaded above
    # the diagonal, clear below it), and only the grid's edges are drawn as boundaries (4,098
    # bars of 1.5 px covered every cell at n = 4,096).
    (image, arr), bars = panel.tiles._overlay
    h, w = arr.shape
    assert (image.width(), image.height()) == (w, h)
    assert arr[h // 4, 3 * w // 4] != 0 and arr[3 * h // 4, w // 4] == 0
    assert len(bars) == 4


def test_a_large_heads_pooled_logits_are_made_on_the_runner_as_the_paint_makes_them(
    show_panel, qtbot, monkeypatch
):
    """Large (thresholds lowered): painted on screen, the tiles ask the runner for the logits'
    image pooled to the grid's pixels and say they are drawing meanwhile; the image kept in the
    end is the one the kit's paint makes at once (a grab, an export)."""
    import attnsim.panels.lab as lab
    import attnsim.panels.pool_later as pool_module
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.kit.matrix_canvas import HATCH, MASKED_BG
    from attnsim.viewmodels.heatmap_pixels import render_pixels

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    monkeypatch.setattr(pool_module, "POOL_LATER_CELLS", 64 * 64)
    n = 300
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = KernelLabPanel(wb)
    asked: list[object] = []
    pool = panel._pool_later
    panel.tiles.pool_later = lambda work, done: (asked.append(work), pool(work, done))
    panel = show_panel(panel, size=(800, 560))
    tiles = panel.tiles
    qtbot.waitUntil(lambda: panel.data is not None and panel.busy_line.isHidden(), timeout=60000)
    tiles.repaint()
    qtbot.waitUntil(lambda: bool(tiles.cache.images) and tiles._pooling is None, timeout=60000)
    assert asked  # made on the runner, not at the paint
    ((w_px, h_px), (_, arr, block)) = next(iter(tiles.cache.images.items()))
    ppx = tiles.devicePixelRatioF()
    want, want_block = render_pixels(
        tiles.values, ~tiles.forbidden, tiles.scale.lo, tiles.scale.hi, tiles.scale.lut, h_px,
        w_px, hatch=HATCH.rgba(), background=MASKED_BG.rgba(), period=max(4, round(6 * ppx)),
    )  # fmt: skip
    np.testing.assert_array_equal(arr, want)
    assert block == want_block


def test_an_edit_the_active_rows_do_not_read_copies_their_kept_pictures(make_wb, show_panel):
    from attnsim.engine import edits

    panel = show_panel(KernelLabPanel(make_wb("bank-river")), size=(760, 560))
    wb, out = panel.wb, panel.output
    panel.grab()  # every part painted once
    counts = (out.tiled.picture.paints, out.reference.picture.paints,
              panel.memory.raster.paints, panel.table.cells.raster.paints)  # fmt: skip
    last = len(wb.scenario.tokens) - 1  # under the causal mask, query block 1 never reads it
    wb.edit(edits.set_vector(wb.scenario, "x", last, np.array(wb.scenario.X[last]) + 0.5), "t")
    settle(panel)
    panel.grab()
    assert (out.tiled.picture.paints, out.reference.picture.paints,
            panel.memory.raster.paints, panel.table.cells.raster.paints) == counts  # fmt: skip
    ref, _ = attention(wb.trace.Q, wb.trace.K, wb.trace.V, mask=wb.trace.mask)
    np.testing.assert_allclose(out.reference.values, ref[0:2], rtol=0, atol=1e-15)
    # an edit of the first token moves the rows shown: their pictures are painted afresh
    wb.edit(edits.set_vector(wb.scenario, "x", 0, np.array(wb.scenario.X[0]) + 0.5), "t")
    settle(panel)
    click(panel, "step")
    panel.grab()
    assert out.reference.picture.paints > counts[1] and out.tiled.picture.paints > counts[0]
    assert panel.table.cells.raster.paints > counts[3]
    ref, _ = attention(wb.trace.Q, wb.trace.K, wb.trace.V, mask=wb.trace.mask)
    np.testing.assert_allclose(out.reference.values, ref[0:2], rtol=0, atol=1e-15)
    assert panel.table.rows[1][0] == wb.scenario.query_labels[0]


def _tiles_pixels(tiles) -> np.ndarray:
    from PySide6.QtGui import QImage

    image = QImage(tiles.width(), tiles.height(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0xFFFFFFFF)
    tiles.render(image)
    return np.frombuffer(image.constBits(), np.uint32, image.width() * image.height()).copy()


@pytest.mark.parametrize("blocks", [(2, 2), (1, 1), (3, 2)])
def test_an_edit_copies_the_tiles_marks_which_match_a_fresh_paint(
    make_wb, show_panel, monkeypatch, blocks
):
    from dataclasses import replace

    from attnsim.engine import edits
    from attnsim.panels.kit.matrix_widget import KeptRaster

    panel = show_panel(KernelLabPanel(make_wb("bank-river")), size=(760, 560))
    wb, tiles = panel.wb, panel.tiles
    st = replace(state(wb), block_q=blocks[0], block_k=blocks[1], step=1)
    wb.set_lab_state(st, "t")
    settle(panel)
    tiles.repaint()  # on screen, as the window paints it
    counts = (tiles.under_raster.paints, tiles.over_raster.paints)
    wb.edit(edits.set_vector(wb.scenario, "x", 1, np.array(wb.scenario.X[1]) + 0.5), "t")
    settle(panel)
    tiles.repaint()
    assert (tiles.under_raster.paints, tiles.over_raster.paints) == counts  # copied
    np.testing.assert_allclose(tiles.values, wb.trace.logits, rtol=0, atol=0)
    fresh = _tiles_pixels(tiles)  # into an image: the marks painted afresh for it, then copied
    assert (tiles.under_raster.paints, tiles.over_raster.paints) == (counts[0] + 1, counts[1] + 1)
    assert (_tiles_pixels(tiles) == fresh).all()  # copied again
    with monkeypatch.context() as m:  # the marks painted straight onto the tiles, not kept
        m.setattr(KeptRaster, "paint", lambda _self, p, _rect, _key, paint: paint(p))
        assert (_tiles_pixels(tiles) == fresh).all()  # the copy is the painting, pixel for pixel
    assert (tiles.under_raster.paints, tiles.over_raster.paints) == (counts[0] + 1, counts[1] + 1)
    wb.set_lab_state(replace(state(wb), block_k=blocks[1] + 1), "t")  # a new tiling
    settle(panel)
    tiles.repaint()
    assert tiles.over_raster.paints > counts[1] + 1
