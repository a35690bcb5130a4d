"""The precision lab: the dtype and mask pickers recompute the heatmap with the engine, a click
puts the large logit on a cell, padding makes NaN rows, a bad padding is refused inline, the p
slider's drag is one undo step, and evaluation gives the reference output exactly."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.engine.precision import low_precision_attention
from attnsim.panels.base import CONTROL_TYPES
from attnsim.panels.precision_lab import PrecisionLabPanel, PrecisionLabState
from tests.panels.lab_helpers import settle, type_into

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(PrecisionLabPanel(make_wb("river-bank")), size=(760, 520))


def state(wb) -> PrecisionLabState:
    return wb.lab_state(PrecisionLabState)


def click_cell(canvas, i: int, j: int) -> None:
    c = canvas.cell_center(i, j)
    QTest.mouseClick(canvas, LEFT, NOMOD, QPoint(round(c.x()), round(c.y())))


def engine_weights(wb, dtype: str, value: float, mask=None) -> np.ndarray:
    tr = wb.trace
    route = low_precision_attention(
        tr.Q / tr.divisor, tr.K, tr.V, mask=tr.mask if mask is None else mask,
        mask_value=value, dtype=dtype, scale=False,
    )  # fmt: skip
    return route.weights


def test_picking_dtype_and_mask_redraws_the_engine_weights(panel):
    wb = panel.wb
    combo = panel.mask_controls.dtype_combo
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)  # float16 -> bfloat16
    settle(panel)
    assert state(wb).dtype == "bfloat16" and wb.undo_stack.count() == 1
    style = panel.mask_controls.style_combo
    style.setFocus()
    QTest.keyClick(style, Qt.Key.Key_Up)  # -1e4 -> -inf
    settle(panel)
    assert state(wb).style == "-inf" and wb.undo_stack.count() == 2
    canvas = panel.view.canvas
    np.testing.assert_array_equal(canvas.values, engine_weights(wb, "bfloat16", -np.inf))
    assert "bfloat16" in canvas.title and "−∞" in canvas.title
    table = panel.view.table
    assert table.data.keys[table.data.current] == ("bfloat16", "-inf")
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == PrecisionLabState() and combo.currentText() == "float16"


def test_clicking_a_cell_puts_the_large_logit_there_and_outlines_the_leak(panel):
    wb = panel.wb
    panel.set_setting("pad", 1)  # causal, position 1 padding: bank may not read "the"
    settle(panel)
    canvas = panel.view.canvas
    assert canvas.forbidden[2, 0] and not canvas.leaked_cells[1:].any()
    assert canvas.leaked_cells[0].all()  # "the" has no legal key: -1e4 spreads it silently
    click_cell(canvas, 2, 0)
    settle(panel)
    st = state(wb)
    assert (st.boost, st.boost_row, st.boost_key) == (True, 2, 0)
    assert wb.undo_stack.count() == 2 and panel.mask_controls.boost_check.isChecked()
    d = panel.precision
    # float16, -1e4 + 20000: the forbidden key wins the row
    assert d.weights[2, 0] == pytest.approx(1.0, abs=1e-3)
    assert canvas.leaked_cells[2, 0] and canvas.boost == (2, 0)
    assert "Leaked weight on forbidden keys: 2" in panel.view.summary.text()  # + row "the"
    assert panel.view.summary.text().count("<br>") == 2  # a phrase a line, as a rich text
    # the same cell with -inf stays closed
    panel.set_setting("style", "-inf")
    settle(panel)
    assert panel.precision.weights[2, 0] == 0 and not canvas.leaked_cells[2, 0]
    assert canvas.nan_rows.tolist() == [True, False, False]
    image = canvas.grab().toImage()  # the NaN row and the marks paint without error
    assert not image.isNull()


def test_padding_makes_nan_rows_and_too_much_padding_is_refused_inline(panel):
    wb = panel.wb
    panel.set_setting("style", "-inf")
    box = panel.mask_controls.pad_box
    type_into(box, "2")
    settle(panel)
    assert state(wb).pad == 2 and wb.undo_stack.count() == 2
    assert panel.view.canvas.nan_rows.tolist() == [True, True, False]
    assert "NaN rows: 2" in panel.view.summary.text()
    type_into(box, "7")
    settle(panel)
    assert state(wb).pad == 2 and wb.undo_stack.count() == 2
    assert panel.refusal.isVisibleTo(panel)
    assert "left padding" in panel.refusal.text() and "7" in panel.refusal.text()
    assert box.value() == 2
    assert not panel.set_setting("pad", 9)  # past the box, the state check names it too
    assert "the left padding 9 is more than the scenario's 3 keys" in panel.refusal.text()
    assert state(wb).pad == 2


def test_dragging_p_is_one_undo_step_and_eval_gives_the_reference(panel, handle_center):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    slider = panel.dropout_controls.p_slider
    start = handle_center(slider)
    QTest.mousePress(slider, LEFT, NOMOD, start)
    for dx in (10, 30, 60):
        QTest.mouseMove(slider, start + QPoint(dx, 0))
        settle(panel)
    QTest.mouseRelease(slider, LEFT, NOMOD, start + QPoint(60, 0))
    settle(panel)
    p = state(wb).p
    assert p > PrecisionLabState().p + 0.1 and wb.undo_stack.count() == 1
    d = panel.dropout
    assert d.p == p and d.max_diff > 0
    np.testing.assert_allclose(panel.dropout_view.expected.values, wb.trace.weights, atol=1e-12)
    QTest.mouseClick(panel.dropout_controls.eval_radio, LEFT)
    settle(panel)
    assert state(wb).train is False and wb.undo_stack.count() == 2
    np.testing.assert_array_equal(panel.dropout_view.realised.values, wb.trace.weights)
    assert panel.dropout.max_diff == 0.0 and "(exactly)" in panel.dropout_view.summary.text()
    assert not panel.dropout_controls.p_slider.isEnabled()
    wb.undo_stack.undo()
    settle(panel)
    assert panel.dropout_controls.train_radio.isChecked() and panel.dropout.max_diff > 0


def test_new_seed_draws_another_mixture(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    panel.set_setting("p", 0.5)
    settle(panel)
    before = panel.dropout.realised.copy()
    QTest.mouseClick(panel.dropout_controls.next_seed, LEFT)
    settle(panel)
    assert state(wb).seed == 1 and wb.undo_stack.count() == 2
    assert panel.dropout_controls.seed_box.value() == 1
    assert not np.array_equal(before, panel.dropout.realised)
    QTest.mouseClick(panel.dropout_controls.on_check, LEFT)
    settle(panel)
    assert state(wb).dropout is False and panel.dropout.max_diff == 0.0


def test_every_setting_undoes_in_order(panel):
    wb = panel.wb
    edits = [("dtype", "float32"), ("style", "min"), ("pad", 1), ("boost", True),
             ("logit", 5000.0), ("p", 0.25), ("seed", 9), ("train", False)]  # fmt: skip
    for name, value in edits:
        assert panel.set_setting(name, value)
    assert wb.undo_stack.count() == len(edits)
    for name, value in reversed(edits):
        assert getattr(state(wb), name) == value
        wb.undo_stack.undo()
    assert state(wb) == PrecisionLabState()


@pytest.mark.parametrize("tab", [0, 1])
def test_each_tab_exports_content_without_controls(panel, tab, export_png_svg):
    panel.tabs.setCurrentIndex(tab)
    settle(panel)
    parts = panel.figure_widgets()
    assert parts
    for w in parts:
        assert not isinstance(w, CONTROL_TYPES)
        assert not any(isinstance(c, CONTROL_TYPES) for c in w.findChildren(QWidget))
    assert "<svg" in export_png_svg(parts[0])


def causal_64():
    """64 tokens, causal: the size the repaint budget is measured at."""
    from attnsim.engine.scenario import Scenario

    rng = np.random.default_rng(5)
    names = [f"t{j}" for j in range(64)]
    q, k, v = (rng.normal(size=(64, 8)) for _ in range(3))
    axes = [f"x{i}" for i in range(8)]
    return Scenario(
        name="n64", tokens=tuple(names), mode="direct", query_tokens=tuple(names), Q=q, K=k,
        V=v, mask="causal", qk_axes=tuple(axes), v_axes=tuple(a.upper() for a in axes),
    )  # fmt: skip


def test_a_long_scenario_marks_nan_rows_and_reuses_the_table(make_wb, show_panel):
    panel = show_panel(PrecisionLabPanel(make_wb(causal_64())), size=(640, 480))
    panel.set_setting("style", "-inf")
    panel.set_setting("pad", 5)
    settle(panel)
    canvas = panel.view.canvas
    assert canvas.row_labels[:3] == ["1", "2", "3"] and canvas.col_labels == []
    assert canvas.nan_rows[:5].all() and not canvas.nan_rows[5:].any()
    from attnsim.panels.precision_lab.panel import INPUT_FIELDS, lab_table

    def table():
        return panel.wb.derived(lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS)

    rows = table()
    panel.set_setting("dtype", "float32")  # the table does not depend on the dtype
    settle(panel)
    assert panel.wb.derived_ready(lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS)
    assert table() is rows
    assert panel.table.keys[panel.table.current] == ("float32", "-inf")
    assert not canvas.grab().toImage().isNull()


def test_leaking_cells_are_outlined_in_runs_along_each_row():
    from attnsim.panels.precision_lab.mask_view import leak_runs

    cells = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)
    assert leak_runs(cells) == [(0, 0, 2), (0, 3, 4), (2, 0, 4)]
    assert leak_runs(np.zeros((2, 3), dtype=bool)) == []


def test_the_table_follows_the_heatmap_a_pass_later_and_figures_wait_for_it(panel):
    table = panel.view.table
    panel.set_setting("pad", 2)
    panel.flush()  # the heatmap is redrawn at once ...
    assert panel.view.canvas.forbidden[:2].all() and table.stale
    assert table.data.rows[0][4] == "0"  # ... the table still shows no NaN rows, greyed
    QApplication.processEvents()
    assert not table.stale
    assert table.data.keys[0] == ("float64", "-inf") and table.data.rows[0][4] == "2"
    panel.set_setting("pad", 1)
    panel.flush()
    assert table.stale
    panel.figure_widgets()
    assert not table.stale and table.data.rows[0][4] == "1"


def test_at_large_n_the_table_is_made_in_the_background_and_then_shown(show_panel, qtbot):
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.precision_lab.panel import COMPUTING, INPUT_FIELDS, lab_table

    n = 300  # 90,000 weights: past BACKGROUND_CELLS
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = show_panel(PrecisionLabPanel(wb), size=(760, 520))
    table = panel.view.table
    qtbot.waitUntil(lambda: table.data is not None and not table.stale, timeout=60000)
    panel.set_setting("pad", 3)
    panel.flush()
    # both views are made in the background: the old ones stay, said to be the previous ones
    assert not panel.view.canvas.forbidden[:3].all() and not panel.busy_line.isHidden()
    assert table.stale and panel.view.table_caption.text() == COMPUTING
    assert wb.derived_pending(lab_table)
    qtbot.waitUntil(lambda: not table.stale and panel.busy_line.isHidden(), timeout=60000)
    assert panel.view.canvas.forbidden[:3].all()
    assert table.data.rows[0][4] == "3"  # three padded rows: NaN rows in float64, -inf
    assert wb.derived_ready(lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS)
    assert panel.view.table_caption.text() != COMPUTING


def test_the_table_kept_as_a_picture_repaints_when_its_numbers_or_greying_change(panel):
    """The painted table is reused while nothing it shows changed; after new numbers, or the
    greying on and off, it looks exactly like a table freshly painted with the same."""
    from PySide6.QtGui import QImage

    from attnsim.panels.precision_lab.mask_view import PrecisionTable

    table = panel.view.table

    def shown():
        return table.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)

    def fresh():
        other = PrecisionTable()
        other.setFont(table.font())
        other.refresh(table.data)
        other.set_stale(table.stale)
        other.resize(table.size())
        return other.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)

    first = shown()
    assert first == fresh()
    panel.set_setting("pad", 2)
    panel.flush()
    assert table.stale and shown() == fresh() != first  # greyed
    QApplication.processEvents()
    assert not table.stale and shown() == fresh() != first  # new numbers


def test_a_large_head_is_made_on_the_runner_and_pooled_to_the_pixels_on_screen(
    show_panel, qtbot, monkeypatch
):
    """Large (threshold lowered): the weights come from the runner, the busy line shown
    meanwhile; the heatmap then fits the canvas (cells under a pixel, pooled into one image of
    the canvas's size at most), each pixel the engine's weight of a cell under it."""
    import attnsim.panels.lab as lab
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.precision_lab.panel import precision_shown

    monkeypatch.setattr(lab, "BACKGROUND_CELLS", 64 * 64)
    n = 600  # more cells than the canvas has pixels
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = PrecisionLabPanel(wb)
    panel.flush()
    assert panel.precision is None and not panel.busy_line.isHidden()
    assert wb.derived_pending(precision_shown)
    panel = show_panel(panel, size=(760, 520))
    qtbot.waitUntil(
        lambda: panel.precision is not None and panel.busy_line.isHidden(), timeout=60000
    )
    canvas = panel.view.canvas
    canvas.grab()
    grid = canvas.grid_rect()
    assert grid.width() <= canvas.width() and grid.height() <= canvas.height()
    _, pixels, block = next(iter(canvas.cache.images.values()))
    assert pixels.shape[0] <= canvas.height() and pixels.shape[1] <= canvas.width()
    assert block[0] > 1 and block[1] > 1  # several cells a pixel: every cell still read
    np.testing.assert_array_equal(canvas.values, panel.precision.weights)
    # the leaked cells' runs come found from the runner with the weights
    from attnsim.panels.precision_lab.mask_view import leak_runs

    panel.set_setting("pad", 3)  # -1e4 on three padded keys: every row leaks a little
    panel.flush()
    qtbot.waitUntil(lambda: panel.busy_line.isHidden(), timeout=60000)
    assert panel.precision.leaked_cells[:, :3].any()
    assert canvas._runs == leak_runs(panel.precision.leaked_cells) != []


def test_a_large_heads_pooled_weights_are_made_on_the_runner_as_the_paint_makes_them(
    show_panel, qtbot, monkeypatch
):
    """Large (thresholds lowered): painted on screen, the heatmap asks the runner for the
    weights' image pooled to the grid's pixels and says it is drawing meanwhile; the image kept
    in the end is the one the kit's paint makes at once (a grab, an export)."""
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
    panel = PrecisionLabPanel(wb)
    asked: list[object] = []
    pool = panel._pool_later
    panel.view.canvas.pool_later = lambda work, done: (asked.append(work), pool(work, done))
    panel = show_panel(panel, size=(760, 520))
    canvas = panel.view.canvas
    qtbot.waitUntil(
        lambda: panel.precision is not None and panel.busy_line.isHidden(), timeout=60000
    )
    canvas.repaint()
    qtbot.waitUntil(lambda: bool(canvas.cache.images) and canvas._pooling is None, timeout=60000)
    assert asked  # made on the runner, not at the paint
    ((w_px, h_px), (_, arr, block)) = next(iter(canvas.cache.images.items()))
    ppx = canvas.devicePixelRatioF()
    want, want_block = render_pixels(
        canvas.values, ~canvas.forbidden, canvas.scale.lo, canvas.scale.hi, canvas.scale.lut,
        h_px, w_px, hatch=HATCH.rgba(), background=MASKED_BG.rgba(),
        period=max(4, round(6 * ppx)),
    )  # fmt: skip
    np.testing.assert_array_equal(arr, want)
    assert block == want_block
    np.testing.assert_array_equal(canvas.values, panel.precision.weights)
