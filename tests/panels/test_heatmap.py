"""The score/weight heatmap panel: drawn arrays, mask editing, selection, controls, export."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QFont, QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip

from attnsim.engine.attention import causal_mask, softmax
from attnsim.engine.head_trace import HeadTrace
from attnsim.engine.scenario import compute, random_scenario
from attnsim.export import export_widget
from attnsim.panels.heatmap import HeatmapPanel
from attnsim.panels.heatmap.in_turns import StagesInTurns
from attnsim.panels.heatmap.parts import stage_scale
from attnsim.panels.kit.log_slider import TEMPERATURE
from attnsim.panels.kit.matrix_canvas import HATCH, MASKED_BG
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.heatmap_pixels import render_pixels

WEIGHTS = 2  # tile index of the weights in the default three-stage view


def click(widget, point: QPointF | QPoint) -> None:
    p = point.toPoint() if isinstance(point, QPointF) else point
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, p)
    QApplication.processEvents()


def settle(panel: HeatmapPanel) -> None:
    QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


def test_masked_weights_are_exactly_zero_in_the_drawn_data(make_wb, show_panel):
    wb = make_wb(resolve_scenario("river-bank").replace(mask="causal"))
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    canvas = panel.canvas
    canvas.grab()  # paint once, as on screen
    stages = canvas.content.stages
    assert [s.stage for s in stages] == ["scores", "masked", "weights"]
    w = stages[WEIGHTS]
    assert w.values is wb.trace.weights
    forbidden = w.forbidden
    assert forbidden is not None and forbidden.tolist() == (~causal_mask(3)).tolist()
    assert (w.values[forbidden] == 0.0).all()
    prep = canvas.prepared[WEIGHTS]
    assert prep.texts is not None  # the cell numbers were drawn
    assert [prep.texts[0][1], prep.texts[0][2], prep.texts[1][2]] == ["0.00"] * 3
    assert canvas.prepared[1].texts[0][1] == "−∞"
    assert prep.texts[2] == [f"{x:.2f}" for x in wb.trace.weights[2]]


def test_mask_with_zero_switch_gives_forbidden_cells_the_predicted_weight(
    make_wb, show_panel, record
):
    wb = make_wb(resolve_scenario("river-bank").replace(mask="causal"))
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    changes = record(wb.changed)
    click(panel.zero_box, panel.zero_box.rect().center())
    assert wb.scenario.mask_value == 0.0
    assert wb.undo_stack.count() == 1 and len(changes) == 1
    settle(panel)
    X = wb.scenario.X
    predicted = softmax(np.where(causal_mask(3), X @ X.T / 2.0, 0.0))
    w = panel.canvas.content.stages[WEIGHTS]
    np.testing.assert_allclose(w.values, predicted, rtol=1e-12)
    assert (w.values[w.forbidden] > 0.2).all()  # the mistake: forbidden keys get weight
    worst = wb.trace.forbidden_weight[0]
    assert worst == pytest.approx(predicted[0, 1] + predicted[0, 2])
    text = panel.note.text()
    assert "Masked with 0 instead of −∞" in text and fmt_fixed(float(worst), 3) in text
    # The entropy ceiling follows the engine: under a 0 mask every key takes weight, so the
    # receiving row may spread over all 3 keys (log2 3), not only its 1 legal key (0 bits).
    wb.set_receiving(0)
    settle(panel)
    text = panel.note.text()
    i = wb.receiving
    tr = wb.trace
    assert tr.entropy[i] > 1.0 and tr.max_entropy[i] == pytest.approx(math.log2(3))
    assert (
        f"entropy {fmt_fixed(float(tr.entropy[i]), 3)} bits (at most {fmt_fixed(math.log2(3), 3)})"
        in text
    )
    assert panel.canvas.content.entropy is tr.entropy  # the trace's cached array, no copy
    pt = panel.canvas.cell_center(WEIGHTS, i, 1)
    assert f"(at most {fmt_fixed(math.log2(3), 3)})" in panel.canvas.tooltip_at(pt.x(), pt.y())
    wb.undo_stack.undo()
    settle(panel)
    assert math.isinf(wb.scenario.mask_value) and not panel.zero_box.isChecked()
    assert "instead of" not in panel.note.text()
    ceiling = math.log2(i + 1)  # causal, -inf: the keys up to and including the query
    assert f"(at most {fmt_fixed(ceiling, 3)})" in panel.note.text()


def test_custom_mask_cells_toggle_on_click_and_the_last_key_is_kept(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    panel.mask_box.setCurrentIndex(panel.mask_box.findData("custom"))
    assert wb.scenario.mask_kind == "custom" and wb.scenario.mask.all()
    settle(panel)
    canvas = panel.canvas
    changes = record(wb.changed)
    click(canvas, canvas.cell_center(WEIGHTS, 0, 1))
    assert wb.scenario.mask[0, 1] == False  # noqa: E712 (numpy bool)
    assert int(wb.scenario.mask.sum()) == 8 and len(changes) == 1
    settle(panel)
    assert panel.canvas.content.stages[WEIGHTS].values[0, 1] == 0.0
    wb.undo_stack.undo()
    assert wb.scenario.mask.all()
    wb.undo_stack.redo()
    settle(panel)
    click(canvas, canvas.cell_center(0, 0, 2))  # any stage's cell toggles
    assert wb.scenario.mask[0].tolist() == [True, False, False]
    before, count = wb.scenario, wb.undo_stack.count()
    settle(panel)
    click(canvas, canvas.cell_center(WEIGHTS, 0, 0))  # the row's last legal key
    assert wb.scenario is before and wb.undo_stack.count() == count
    assert "no key left" in panel.last_refusal
    assert panel.refusal.isVisibleTo(panel) and "the" in panel.refusal.text()


def test_clicking_a_row_label_or_a_cell_selects_the_receiving_token(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    assert wb.receiving == 2
    selections = record(wb.selection_changed)
    click(panel.canvas, panel.canvas.row_label_center(0))
    assert wb.receiving == 0 and len(selections) == 1
    settle(panel)
    assert panel.canvas.content.receiving == 0
    click(panel.canvas, panel.canvas.cell_center(WEIGHTS, 1, 2))
    assert wb.receiving == 1 and wb.focused_key == 2
    assert wb.undo_stack.count() == 0  # selection is not an edit


def test_temperature_slider_drag_is_one_undoable_step(make_wb, show_panel, record, handle_center):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    slider = panel.t_slider
    assert slider.value() == TEMPERATURE.position(1.0) == TEMPERATURE.steps // 2
    start = handle_center(slider)
    changes = record(wb.changed)
    QTest.mousePress(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for dx in range(10, 130, 10):
        QTest.mouseMove(slider, start + QPoint(dx, 0))
        QApplication.processEvents()
    QTest.mouseRelease(
        slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + QPoint(120, 0)
    )
    settle(panel)
    t = wb.scenario.temperature
    assert t > 1.5 and t == TEMPERATURE.value(slider.value())
    assert len(changes) > 2  # every panel followed the drag live ...
    assert wb.undo_stack.count() == 1  # ... and the whole drag is one undo step
    assert panel.t_spin.value() == pytest.approx(t)
    assert f"T = {t:.3g}" in panel.canvas.content.stages[0].title
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.temperature == 1.0 and slider.value() == TEMPERATURE.steps // 2


def test_temperature_spin_and_scale_switch_edit_the_scenario(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    spin = panel.t_spin
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), "0.5")
    QTest.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert wb.scenario.temperature == 0.5 and wb.undo_stack.count() == 1
    settle(panel)
    scores = panel.canvas.content.stages[0]
    assert scores.title == "Logits q·k/(√4·T), T = 0.5"
    np.testing.assert_allclose(scores.values, wb.scenario.X @ wb.scenario.X.T)  # /(2 * 0.5)
    click(panel.scale_box, panel.scale_box.rect().center())
    assert wb.scenario.scale is False and wb.undo_stack.count() == 2
    settle(panel)
    assert panel.canvas.content.stages[0].title.startswith("Logits q·k/T (not scaled)")
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.scale is True and wb.scenario.temperature == 1.0
    assert panel.canvas.content.stages[0].title == "Scores q·k/√4"


def test_temperature_box_covers_the_scenarios_range_and_shows_its_value(make_wb, show_panel):
    from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE

    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    spin = panel.t_spin
    assert (spin.minimum(), spin.maximum()) == (MIN_TEMPERATURE, MAX_TEMPERATURE)
    for t, text in ((MIN_TEMPERATURE, "0.001"), (0.0025, "0.0025"), (0.01234, "0.01234"),
                    (750.0, "750"), (MAX_TEMPERATURE, "1000")):  # fmt: skip
        wb.load(wb.scenario.replace(temperature=t))
        settle(panel)
        assert spin.text() == text and spin.value() == pytest.approx(t)
    assert wb.undo_stack.count() == 0  # showing a value never edits
    # Typing a small temperature sets exactly that value.
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), "0.0042")
    QTest.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert wb.scenario.temperature == pytest.approx(0.0042) and wb.undo_stack.count() == 1


def test_redraw_never_edits_and_controls_follow_the_scenario(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    sc = wb.scenario.replace(temperature=2.0, mask="causal", mask_value=0.0, scale=False)
    wb.load(sc)
    settle(panel)
    assert wb.undo_stack.count() == 0
    assert panel.t_spin.value() == 2.0 and panel.t_slider.value() == TEMPERATURE.position(2.0)
    assert panel.zero_box.isChecked() and not panel.scale_box.isChecked()
    assert panel.mask_box.currentData() == "causal"


def test_mask_modes_switch_and_undo(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    panel.mask_box.setCurrentIndex(panel.mask_box.findData("causal"))
    assert wb.scenario.mask == "causal"
    panel.mask_box.setCurrentIndex(panel.mask_box.findData("custom"))
    assert wb.scenario.mask_kind == "custom"
    assert wb.scenario.mask.tolist() == causal_mask(3).tolist()  # starts from the causal mask
    wb.undo_stack.undo()
    settle(panel)
    assert wb.scenario.mask == "causal" and panel.mask_box.currentData() == "causal"


def test_multi_head_grid_focuses_a_head_on_click(make_wb, show_panel):
    wb = make_wb("two-heads")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    grid = panel.heads
    assert grid.isVisibleTo(panel) and len(grid.thumbs) == 2
    assert grid.thumbs[1].weights.values is wb.result.heads[1].weights
    click(grid, grid.thumb_rect(1).center())
    assert wb.focused_head == 1
    settle(panel)
    assert panel.canvas.content.trace is wb.result.heads[1]
    assert "Head 2 of 2" in panel.note.text() and grid.focused == 1
    single = show_panel(HeatmapPanel(make_wb("river-bank")), size=(700, 450))
    assert not single.heads.isVisibleTo(single)


def test_views_and_the_contribution_view(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    panel.view_box.setCurrentIndex(panel.view_box.findData("weights-contributions"))
    settle(panel)
    stages = panel.canvas.content.stages
    assert [s.stage for s in stages] == ["weights", "contributions"]
    np.testing.assert_allclose(stages[1].values, wb.trace.contribution_norms)
    assert wb.undo_stack.count() == 0  # a view is not an edit


def test_tooltip_names_the_pair_and_the_engines_numbers(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    pt = panel.canvas.cell_center(WEIGHTS, 2, 1)
    text = panel.canvas.tooltip_at(pt.x(), pt.y())
    tr = wb.trace
    assert text.startswith("bank → river")
    assert f"weight = {fmt_fixed(float(tr.weights[2, 1]), 4)}" in text
    assert f"logit = {fmt_fixed(float(tr.logits[2, 1]), 4)}" in text
    row = panel.canvas.row_label_center(0)
    assert "query the" in panel.canvas.tooltip_at(row.x(), row.y())
    # A real hover (the ToolTip help event) shows that text.
    p = pt.toPoint()
    QApplication.sendEvent(
        panel.canvas, QHelpEvent(QEvent.Type.ToolTip, p, panel.canvas.mapToGlobal(p))
    )
    assert QToolTip.text() == text


def test_a_2048_token_scenario_renders_as_a_pooled_image(make_wb, show_panel):
    n, d = 2048, 16
    sc = random_scenario(n, d, seed=5, mask="causal")
    wb = make_wb(sc)
    panel = show_panel(HeatmapPanel(wb), size=(700, 500))
    image = panel.canvas.grab().toImage()
    canvas = panel.canvas
    assert all(b[0] > 1 and b[1] > 1 for b in canvas.blocks)  # pooled, not 4M rectangles
    drawn = [next(iter(p.images.values()))[1] for p in canvas.prepared]
    assert all(a.ndim == 2 and a.shape[0] < n for a in drawn)
    assert len(np.unique(drawn[WEIGHTS])) > 10
    assert image.pixelColor(image.width() // 2, image.height() // 2).isValid()
    tiles, _, _ = canvas.layout_tiles()
    x, y, w, h = tiles[WEIGHTS].matrix
    tip = canvas.tooltip_at(x + w * 0.25, y + h * 0.75)
    i, j = int(0.75 * n), int(0.25 * n)
    assert tip.startswith(f"t{i} → t{j}") or tip.startswith(f"t{i - 1} → t{j}")
    prepared = canvas.prepared[WEIGHTS]
    click(canvas, QPointF(x + 3, y + h * 0.5))  # a row of the big matrix
    assert abs(wb.receiving - n // 2) <= n // (h / 1.0)
    settle(panel)
    canvas.grab()
    # Only the selection moved: the pooled images were not recomputed.
    assert canvas.prepared[WEIGHTS] is prepared and canvas.content.receiving == wb.receiving


def test_svg_export_of_river_bank_has_the_weights_as_text(make_wb, tmp_path, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    svg = export_widget(panel.figure_widget(), tmp_path / "heatmap.svg").read_text("utf-8")
    for number in ("0.43", "0.31", "0.26", "1.55"):
        assert f">{number}</text>" in svg
    assert ">bank</text>" in svg and "Weights (row softmax)" in svg
    for fmt_ in ("png", "pdf"):
        assert export_widget(panel.figure_widget(), tmp_path / f"h.{fmt_}").stat().st_size > 1000


def test_direct_scenario_with_separate_query_labels(make_wb, show_panel):
    wb = make_wb("routing-lab")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    sc = wb.scenario
    content = panel.canvas.content
    assert content.row_labels == sc.query_labels and content.col_labels == sc.tokens
    assert content.stages[0].shape == (sc.n_queries, sc.n_tokens)
    panel.canvas.grab()


def test_tooltips_count_tokens_from_one_like_the_tables(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(700, 450))
    pt = panel.canvas.cell_center(WEIGHTS, 2, 1)
    assert "(query 3, key 2)" in panel.canvas.tooltip_at(pt.x(), pt.y())
    row = panel.canvas.row_label_center(0)
    assert "(row 1)" in panel.canvas.tooltip_at(row.x(), row.y())


def _matrix(panel, tile=0):
    tiles, _, _ = panel.canvas.layout_tiles()
    return tiles[tile].matrix


def test_cells_fill_the_area_and_a_fourth_token_does_not_shrink_them(make_wb, show_panel):
    from attnsim.engine import edits

    wb = make_wb("two-heads")
    panel = show_panel(HeatmapPanel(wb), size=(728, 400))
    _, _, w3, h3 = _matrix(panel)
    canvas_w = panel.canvas.width()
    assert 3 * w3 >= 0.7 * canvas_w  # the three stages use the width, not a square in it
    assert not panel.canvas.numbers_hidden
    assert all(prep.numbers_drawn for prep in panel.canvas.prepared)
    wb.edit(edits.add_token(wb.scenario, "pier"), "add a token")
    settle(panel)
    _, _, w4, h4 = _matrix(panel)
    assert w4 * h4 >= 0.95 * w3 * h3  # the same room, shared by four rows and columns
    assert not panel.canvas.numbers_hidden
    assert not panel.canvas.layout_tiles()[2]  # key labels stay horizontal


def test_three_fields_labels_stay_distinct_and_missing_numbers_are_explained(make_wb, show_panel):
    wb = make_wb("three-fields")
    panel = show_panel(HeatmapPanel(wb), size=(728, 450))
    canvas = panel.canvas
    assert len(set(canvas.col_texts)) == len(set(wb.scenario.tokens))
    assert len(set(canvas.row_texts)) == len(canvas.row_texts)
    assert "control theo…" not in canvas.col_texts
    h = _matrix(panel)[3]
    assert h >= 0.35 * canvas.height()  # was 44 px of 353: the rows now use the height
    # 36 columns in 728 px cannot hold numbers: the canvas says so instead of dropping them
    assert canvas.numbers_hidden and canvas.notice_line
    wide = show_panel(HeatmapPanel(make_wb("three-fields")), size=(1500, 450))
    assert not wide.canvas.numbers_hidden
    assert all(prep.numbers_drawn for prep in wide.canvas.prepared)


def test_figure_parts_do_not_overlap_in_a_short_dock(make_wb, show_panel):
    panel = show_panel(HeatmapPanel(make_wb("two-heads")), size=(728, 250))
    parts = [w for w in (panel.heads, panel.canvas, panel.note) if w.isVisible()]
    for a in range(len(parts)):
        for b in range(a + 1, len(parts)):
            assert not parts[a].geometry().intersects(parts[b].geometry())
    _, y, _, h = _matrix(panel)
    assert y + h <= panel.canvas.height()


def test_fit_tile_layout_sizes_width_and_height_separately():
    from functools import partial

    from attnsim.viewmodels.heatmap import MAX_CELL_ASPECT, tile_layout

    fit_tile_layout = partial(tile_layout, max_aspect=MAX_CELL_ASPECT)

    common = dict(row_label_w=60.0, col_label_h=16.0, title_h=18.0, bar_h=40.0,
                  entropy_w=(0.0, 0.0, 46.0))  # fmt: skip
    tiles, _ = fit_tile_layout(700, 200, 3, 3, 3, **common)
    cw, ch = tiles[0].matrix[2] / 3, tiles[0].matrix[3] / 3
    assert cw > ch and cw <= 4 * ch + 1e-9
    assert ch == pytest.approx((200 - 12 - 18 - 16 - 40) / 3)
    tall, _ = fit_tile_layout(200, 900, 3, 3, 3, **common)
    assert tall[0].matrix[3] / 3 <= 4 * tall[0].matrix[2] / 3 + 1e-9
    with pytest.raises(ValueError, match="entropy_w"):
        fit_tile_layout(700, 200, 3, 3, 2, **common)


# ---- the sub-views on their own ------------------------------------------------------------------
def test_controls_show_settings_silently_and_turn_gestures_into_signals(qtbot, record):
    from attnsim.panels.heatmap import HeatmapControls
    from attnsim.viewmodels.heatmap import ControlsData

    c = HeatmapControls()
    qtbot.addWidget(c)
    signals = [c.view_picked, c.mask_picked, c.zero_toggled, c.scale_toggled, c.temperature_set]
    seen = [record(s) for s in signals]
    c.refresh(ControlsData("weights", "causal", True, 0.25, False, 16))
    assert not any(seen)  # showing the model emits nothing
    assert c.view_box.currentData() == "weights" and c.mask_box.currentData() == "causal"
    assert c.zero_box.isChecked() and not c.scale_box.isChecked()
    assert c.t_spin.value() == pytest.approx(0.25) and c.scale_box.text() == "÷ √d_k (√16)"
    c.mask_box.setCurrentIndex(c.mask_box.findData("custom"))
    c.zero_box.setChecked(False)
    c.scale_box.setChecked(True)
    c.t_spin.setValue(2.0)
    assert seen[1] == [("custom",)] and seen[2] == [(False,)] and seen[3] == [(True,)]
    assert seen[4] == [(2.0, None)]  # typed: no drag id, its own undo step


def test_head_grid_keeps_its_drawn_thumbnails_for_the_same_arrays(make_wb, qtbot):
    from attnsim.panels.heatmap import HeadGrid, Thumb
    from attnsim.viewmodels.heatmap import stage_data

    wb = make_wb("two-heads")
    grid = HeadGrid()
    qtbot.addWidget(grid)
    grid.resize(400, 100)
    thumbs = [Thumb(f"head {h + 1}", stage_data(tr, "weights")) for h, tr in
              enumerate(wb.result.heads)]  # fmt: skip
    grid.refresh(thumbs, 0, 1)
    grid.grab()
    caches = list(grid.prepared)
    assert all(c.colors is not None for c in caches)  # drawn once
    grid.refresh(list(thumbs), 1, 0)  # a new focus or receiving row: the same arrays
    assert all(a is b for a, b in zip(grid.prepared, caches, strict=True))
    assert (
        grid.head_at(grid.thumb_rect(1).center().x(), grid.thumb_rect(1).center().y())
        == (0, 1)  # (layer, head)
    )


def test_note_says_how_much_weight_a_zero_mask_leaks(make_wb):
    from attnsim.panels.heatmap.note import heatmap_note

    wb = make_wb(resolve_scenario("river-bank").replace(mask="causal", mask_value=0.0))
    text = heatmap_note(wb.scenario, wb.trace, wb.result.heads, 0, 0)
    assert "Masked with 0 instead of −∞" in text and "<b>the</b>" in text
    wb2 = make_wb(resolve_scenario("river-bank").replace(mask_value=0.0))
    assert "no key is forbidden" in heatmap_note(wb2.scenario, wb2.trace, wb2.result.heads, 0, 0)


def test_canvas_layout_rotates_crowded_key_labels_and_keeps_every_label_distinct(make_wb, qtbot):
    from PySide6.QtGui import QFont

    from attnsim.panels.heatmap.layout import Fonts, fit_canvas
    from attnsim.viewmodels.heatmap import canvas_content

    wb = make_wb(random_scenario(12, 4, seed=2))
    tr, labels = wb.trace, tuple(f"token number {i}" for i in range(12))
    c = canvas_content(tr, ("scores", "masked", "weights"), labels, labels, 0)
    geo = fit_canvas(c, 500.0, 400.0, Fonts.of(QFont()))
    assert geo.rotated and len(set(geo.col_texts)) == 12 and len(set(geo.row_texts)) == 12
    wide = fit_canvas(c, 4000.0, 400.0, Fonts.of(QFont()))
    assert not wide.rotated
    assert wide.tiles[0].matrix[2] > geo.tiles[0].matrix[2]


def test_head_thumbnails_go_beside_the_heatmaps_in_a_short_wide_dock(make_wb, show_panel):
    panel = show_panel(HeatmapPanel(make_wb("two-heads")), size=(600, 270))
    grid, canvas = panel.heads, panel.canvas
    assert grid.column_w is not None and grid.isVisibleTo(panel)
    assert grid.geometry().right() < canvas.geometry().left()
    # The heatmaps keep the figure's whole height (the note is hidden in so short a dock).
    assert canvas.height() >= panel.figure.height() - 4
    canvas.grab()
    assert not canvas.numbers_hidden
    click(grid, grid.thumb_rect(1).center())
    assert panel.wb.focused_head == 1
    panel.resize(600, 450)
    settle(panel)
    assert grid.column_w is None and grid.geometry().bottom() < canvas.geometry().top()


# ---- the cached layer of what stays while the numbers change ---------------------------------
def _paint(canvas, *, layer: bool = True) -> np.ndarray:
    """The canvas painted into an image: through its cached layer, or every part drawn (as
    vector output is)."""
    from PySide6.QtGui import QColor, QImage, QPainter

    import attnsim.panels.heatmap.canvas as cv

    img = QImage(canvas.width(), canvas.height(), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor("white"))
    saved = cv._layer_scale
    if not layer:
        cv._layer_scale = lambda p: None
    try:
        p = QPainter(img)
        canvas.paint_content(p)
        p.end()
    finally:
        cv._layer_scale = saved
    return np.frombuffer(img.constBits(), np.uint32).reshape(img.height(), -1).copy()


@pytest.mark.parametrize(("n", "focus"), [(16, None), (16, 3), (40, 7)])
def test_the_cached_layer_paints_exactly_what_direct_painting_does(make_wb, show_panel, n, focus):
    wb = make_wb(random_scenario(n, 4, seed=3, mask="causal", receiving=2))
    panel = show_panel(HeatmapPanel(wb), size=(860, 420))
    wb.set_focused_key(focus)
    settle(panel)
    canvas = panel.canvas
    np.testing.assert_array_equal(_paint(canvas), _paint(canvas, layer=False))
    # A new trace of the same scenario keeps the layer, and it still matches.
    kept = canvas._layer
    sc = wb.scenario
    tr = wb.trace
    new = dataclasses.replace(tr, logits=tr.logits * 1.5, weights=tr.weights[::-1].copy())
    panel.show_trace(new, sc.query_labels, sc.tokens, 2, focus)
    assert canvas.content.trace is new
    assert canvas._layer is kept
    np.testing.assert_array_equal(_paint(canvas), _paint(canvas, layer=False))


@pytest.mark.parametrize("ppx", [1.0, 2.0])
def test_the_cached_layer_covers_the_canvas_so_the_screen_skips_the_white_fill(
    make_wb, show_panel, ppx
):
    from PySide6.QtGui import QColor, QImage, QPainter

    wb = make_wb(random_scenario(16, 4, seed=3, mask="causal", receiving=2))
    panel = show_panel(HeatmapPanel(wb), size=(860, 420))
    settle(panel)
    canvas = panel.canvas
    img = QImage(round(canvas.width() * ppx), round(canvas.height() * ppx),
                 QImage.Format.Format_ARGB32_Premultiplied)  # fmt: skip
    img.setDevicePixelRatio(ppx)
    img.fill(QColor("magenta"))  # what a skipped fill would leave showing
    p = QPainter(img)
    assert canvas._layer_covers(p)
    canvas.paint_content(p)
    p.end()
    if ppx == 1.0:
        np.testing.assert_array_equal(
            np.frombuffer(img.constBits(), np.uint32).reshape(img.height(), -1), _paint(canvas)
        )
    pixels = np.frombuffer(img.constBits(), np.uint32)
    assert not (pixels == QColor("magenta").rgba()).any()
    # the screen's own paint (grab renders it through paintEvent) is that picture too
    grabbed = canvas.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    if ppx == 1.0:
        np.testing.assert_array_equal(
            np.frombuffer(grabbed.constBits(), np.uint32).reshape(grabbed.height(), -1),
            _paint(canvas),
        )


def test_the_cached_layer_is_redrawn_when_size_labels_font_or_selection_change(make_wb, show_panel):
    wb = make_wb(random_scenario(12, 4, seed=4, mask="causal"))
    panel = show_panel(HeatmapPanel(wb), size=(760, 420))
    canvas = panel.canvas
    _paint(canvas)
    changes = [
        lambda: canvas.setFixedSize(700, 380),
        lambda: canvas.setFont(QFont("Sans", 13)),
        lambda: wb.set_receiving(5),
        lambda: wb.set_focused_key(1),
        lambda: wb.edit(wb.scenario.replace(tokens=tuple(f"w{i}" for i in range(12))), "names"),
    ]
    for change in changes:
        before = canvas._layer
        change()
        settle(panel)
        drawn = _paint(canvas)
        assert canvas._layer is not before
        np.testing.assert_array_equal(drawn, _paint(canvas, layer=False))


def test_a_new_trace_draws_the_pooled_image_a_fresh_panel_draws(make_wb, show_panel):
    # The pooled images reuse work arrays from one update to the next: none may leak.
    sc = random_scenario(300, 8, seed=11, mask="causal", receiving=299)
    wb = make_wb(sc)
    panel = show_panel(HeatmapPanel(wb), size=(700, 500))
    first = _paint(panel.canvas)
    kept = [a for p in panel.canvas.prepared for a in p.pooled_arrays()]
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    settle(panel)
    updated = _paint(panel.canvas)
    reused = [a for p in panel.canvas.prepared for a in p.pooled_arrays()]
    assert len(reused) == 3 and all(a is b for a, b in zip(reused, kept, strict=True))
    fresh = show_panel(HeatmapPanel(make_wb(wb.scenario)), size=(700, 500))
    assert fresh.canvas.size() == panel.canvas.size()
    np.testing.assert_array_equal(updated, _paint(fresh.canvas))
    assert (updated != first).any()
    for a, b in zip(panel.canvas.prepared, fresh.canvas.prepared, strict=True):
        np.testing.assert_array_equal(
            next(iter(a.images.values()))[1], next(iter(b.images.values()))[1]
        )


def test_the_pooled_masked_stage_is_drawn_without_making_the_masked_table(
    make_wb, show_panel, monkeypatch
):
    # At n = 2,048 the masked logits are one more 32 MB table on every refresh; the pooled
    # image reads the logits over the allowed cells instead, with the same pixels.
    made = []
    make = HeadTrace._make_masked
    monkeypatch.setattr(HeadTrace, "_make_masked", lambda tr: made.append(1) or make(tr))
    wb = make_wb(random_scenario(300, 8, seed=4, mask="causal", receiving=299))
    panel = show_panel(HeatmapPanel(wb), size=(700, 500))
    canvas = panel.canvas
    _paint(canvas)
    masked = canvas.content.stages[1]
    assert masked.stage == "masked" and canvas.blocks[1] != (1, 1) and made == []
    drawn = next(iter(canvas.prepared[1].images.values()))[1]
    h, w = drawn.shape
    scale = stage_scale(masked)
    want, _ = render_pixels(
        wb.trace.masked_logits, masked.allowed, scale.lo, scale.hi, scale.lut, h, w,
        hatch=HATCH.rgba(), background=MASKED_BG.rgba(), period=6,  # _paint: 1 px a unit
    )  # fmt: skip
    np.testing.assert_array_equal(drawn, want)


def test_a_note_of_the_same_height_repaints_without_a_layout_pass_of_the_panel(make_wb, show_panel):
    from PySide6.QtCore import QObject

    panel = show_panel(HeatmapPanel(make_wb("river-bank")), size=(760, 520))
    note, figure = panel.note, panel.figure

    class Requests(QObject):
        count = 0

        def eventFilter(self, watched, event):  # Qt's name
            if event.type() == QEvent.Type.LayoutRequest:
                self.count += 1
            return False

    seen = Requests()
    figure.installEventFilter(seen)
    old = note.text()
    # Another number in the same place (as every step of a drag gives): no layout pass.
    same = old.replace("entropy", "entropi", 1)
    assert same != old
    note.set_texts(same, same)
    QApplication.processEvents()
    assert seen.count == 0 and note.text() == same
    digits = "".join("7" if c.isdigit() else c for c in same)  # new numbers only
    note.set_texts(digits, digits)
    QApplication.processEvents()
    assert seen.count == 0 and note.text() == digits
    h = note.height()
    # A note that needs more lines: the figure lays out again and the note gets its height.
    long = " ".join([old] * 4)
    note.set_texts(long, long)
    QApplication.processEvents()
    QApplication.processEvents()
    assert seen.count > 0
    assert note.height() > h
    assert note.height() >= note.heightForWidth(note.width())
    assert note.label.geometry() == note.rect()


def test_an_edit_of_the_vectors_repaints_the_matrices_but_not_the_controls(make_wb, show_panel):
    from PySide6.QtCore import QObject

    wb = make_wb("river-bank")
    panel = show_panel(HeatmapPanel(wb), size=(760, 520))

    class Paints(QObject):
        def __init__(self):
            super().__init__()
            self.seen: set[str] = set()

        def eventFilter(self, watched, event):  # Qt's name
            if event.type() == QEvent.Type.Paint:
                self.seen.add(type(watched).__name__)
            return False

    def nudge():
        sc = wb.scenario
        X = sc.X.copy()
        X[1, 0] += 0.25
        wb.edit(sc.replace(X=X), "nudge")
        settle(panel)
        QApplication.processEvents()

    nudge()
    paints = Paints()
    for w in (panel, panel.controls, panel.t_spin, panel.canvas):
        w.installEventFilter(paints)
    nudge()
    # The canvas covers itself: neither the panel under it nor the unchanged controls repaint.
    assert paints.seen == {"HeatmapCanvas"}


def test_weights_scale_limits_are_kept_with_the_fixed_layer(make_wb, show_panel, monkeypatch):
    """The weights' colour bar reads 0 … 1 whatever the numbers: its limits are drawn once
    with the kept layer, a score bar's (which follow the scores) on every repaint."""
    from PySide6.QtGui import QImage, QPainter

    from attnsim.panels.heatmap import canvas as heatmap_canvas

    panel = show_panel(HeatmapPanel(make_wb("river-bank")), size=(700, 450))
    canvas = panel.canvas
    calls: list[tuple[str, str]] = []
    real = heatmap_canvas.paint_stage_bar

    def spy(p, rect, sd, fm, part="all"):
        calls.append((sd.kind, part))
        real(p, rect, sd, fm, part)

    monkeypatch.setattr(heatmap_canvas, "paint_stage_bar", spy)
    canvas._layer = None
    for _ in range(2):
        image = QImage(canvas.width(), canvas.height(), QImage.Format.Format_RGB32)
        p = QPainter(image)
        canvas.paint_content(p)
        p.end()
    kinds = [sd.kind for sd in canvas.content.stages]
    assert "unit" in kinds and "signed" in kinds
    assert calls.count(("unit", "all")) == kinds.count("unit")  # once, into the layer
    assert ("unit", "numbers") not in calls
    assert calls.count(("signed", "numbers")) == 2 * kinds.count("signed")


def _large_stages_drawn(make_wb, show_panel, qtbot) -> HeatmapPanel:
    """A heatmap of 300 tokens (its stages drawn as pooled images) on screen, drawn whole."""
    wb = make_wb(random_scenario(300, 8, seed=11, mask="causal", receiving=299))
    panel = show_panel(HeatmapPanel(wb), size=(700, 500))
    canvas = panel.canvas
    qtbot.waitUntil(
        lambda: canvas.in_turns.token is None and canvas.in_turns.drawn_size is not None
    )
    return panel


def test_large_stages_are_pooled_one_a_turn_and_then_drawn_in_one_paint(
    make_wb, show_panel, qtbot, monkeypatch
):
    # A 4,096-token head's three stages took 60 ms to pool in one paint. After an edit the
    # event loop's redraw pools one stage a turn, the picture before staying on screen, and
    # then one paint draws them all from their images.
    import attnsim.panels.kit.matrix_canvas as mc

    panel = _large_stages_drawn(make_wb, show_panel, qtbot)
    wb, canvas = panel.wb, panel.canvas
    shown_before = canvas.grab().toImage()
    pooled: list[int] = []  # the turn (a call of pool_next) each pooling happened in
    turns: list[int] = []
    pool, step = mc.pool_cells, StagesInTurns.pool_next
    monkeypatch.setattr(
        mc, "pool_cells", lambda *a, **k: pooled.append(len(turns)) or pool(*a, **k)
    )

    def counted(self, token, t):
        if token is self.token:  # (not a run of stages replaced since)
            turns.append(t)
        step(self, token, t)

    monkeypatch.setattr(StagesInTurns, "pool_next", counted)
    seen: list[tuple] = []  # at the event loop's redraw: what was pooled, what is shown
    panel.refreshed.connect(
        lambda: seen.append((list(pooled), canvas.in_turns.token, canvas.grab().toImage()))
    )
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    qtbot.waitUntil(lambda: bool(seen) and canvas.in_turns.token is None)
    assert seen[0][0] == [] and seen[0][1] is not None
    assert seen[0][2] == shown_before  # the picture before, meanwhile
    assert turns == [0, 1, 2] and pooled == [1, 2, 3]  # one stage in each turn
    updated = canvas.grab().toImage()
    assert pooled == [1, 2, 3] and updated != shown_before  # drawn from the images
    fresh = show_panel(HeatmapPanel(make_wb(wb.scenario)), size=(700, 500))
    fresh.flush()
    np.testing.assert_array_equal(_paint(canvas), _paint(fresh.canvas))


def test_a_flush_draws_the_new_large_stages_at_once(make_wb, show_panel, qtbot):
    # tests and exports flush, then paint: they get the state as it is, never the one before
    panel = _large_stages_drawn(make_wb, show_panel, qtbot)
    wb, canvas = panel.wb, panel.canvas
    canvas.grab()  # drawn whole at the size it has now
    staged: list[bool] = []

    def flushed() -> None:  # at the event loop's redraw, a flush (an export, say)
        staged.append(canvas.in_turns.token is not None)
        panel.flush()
        staged.append(canvas.in_turns.token is not None)

    panel.refreshed.connect(flushed)
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    qtbot.waitUntil(lambda: len(staged) >= 2)
    assert staged[:2] == [True, False]
    fresh = show_panel(HeatmapPanel(make_wb(wb.scenario)), size=(700, 500))
    fresh.flush()
    assert canvas.grab().toImage() == fresh.canvas.grab().toImage()


def test_the_first_large_stages_are_pooled_one_a_turn_on_white(qtbot):
    from PySide6.QtGui import QColor

    from attnsim.panels.heatmap.canvas import HeatmapCanvas
    from attnsim.viewmodels.heatmap import VIEWS, canvas_content

    sc = random_scenario(300, 8, seed=11, mask="causal", receiving=299)
    trace = compute(sc).heads[0]
    canvas = HeatmapCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(700, 420)
    canvas.show()
    qtbot.waitExposed(canvas)
    labels = tuple(sc.tokens)
    canvas.refresh(canvas_content(trace, VIEWS["stages"][1], labels, labels, 299))
    assert canvas.in_turns.token is not None
    blank = canvas.grab().toImage()
    assert {
        blank.pixelColor(x, y).name() for x in range(0, 700, 50) for y in range(0, 420, 50)
    } == {QColor("white").name()}
    qtbot.waitUntil(lambda: canvas.in_turns.token is None)
    drawn = canvas.grab().toImage()
    assert drawn != blank and all(c.images for c in canvas.prepared)


def test_after_a_trace_the_stages_take_the_turns_before_the_next_panels_redraw(
    make_wb, show_panel, qtbot, monkeypatch
):
    # After a large trace the panels redraw one a turn (panels.base._refresh_next). The
    # heatmap's stages then take the queue's next turns, one each, before the next panel: a
    # timer of their own would be due with the next panel's turn and run in the same pass.
    from attnsim.panels import base

    panel = _large_stages_drawn(make_wb, show_panel, qtbot)
    wb, canvas = panel.wb, panel.canvas
    canvas.grab()
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    wb.finish_trace()
    monkeypatch.setattr(panel, "_pending", True)
    monkeypatch.setattr(base, "_after_trace", [])
    events: list[object] = []
    step = StagesInTurns.pool_next
    monkeypatch.setattr(
        StagesInTurns, "pool_next", lambda self, token, t: events.append(t) or step(self, token, t)
    )

    class Next:  # the next panel in the queue, as far as the queue can tell
        def _refresh_if_seen(self) -> None:
            events.append("next panel")

    base._after_trace.extend([panel, Next()])
    monkeypatch.setattr(base.shiboken6, "isValid", lambda w: True)
    turns = 0
    while base._after_trace:  # each call is one turn
        base._refresh_next()
        turns += 1
    assert events == [0, 1, 2, "next panel"] and turns == 5
    assert canvas.in_turns.token is None  # the new stages are drawn from the next paint on
    fresh = show_panel(HeatmapPanel(make_wb(wb.scenario)), size=(700, 500))
    fresh.flush()
    np.testing.assert_array_equal(_paint(canvas), _paint(fresh.canvas))


@pytest.mark.parametrize("width", [580, 700, 1000])
def test_the_chosen_view_and_mask_are_shown_whole_at_any_dock_width(make_wb, show_panel, width):
    # On a 1,024-pixel screen the dock is about 580 wide: the combos were squeezed to
    # "Scores → masked → weigh" and "none (bidirectiona"; the row now wraps first.
    panel = show_panel(HeatmapPanel(make_wb()), size=(width, 520))
    c = panel.controls
    for box in (c.view_box, c.mask_box):
        whole = box.fontMetrics().horizontalAdvance(box.currentText())
        assert box.width() >= box.sizeHint().width() > whole, (box.currentText(), box.width())
    wrapped = c.zero_box.geometry().top() > c.view_box.parentWidget().geometry().bottom()
    if width in (580, 1000):  # (between them it depends on the font)
        assert wrapped == (width == 580)
    assert c.view_box.minimumSizeHint().width() < 150  # a narrower dock can still shrink it
