"""The position lab: sliders and tip drags move the positions (one undo step per drag), shifting
both keeps the score the engine computes, the mask modes recompute the heatmap, and a g that
does not divide h is refused inline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.engine.variants import apply_rope
from attnsim.panels.base import CONTROL_TYPES
from attnsim.panels.kit.numbers import fmt_number
from attnsim.panels.position_lab import PositionLabPanel, PositionLabState
from tests.panels.lab_helpers import drag, settle, type_into

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(PositionLabPanel(make_wb("three-fields")), size=(760, 520))


def state(wb) -> PositionLabState:
    return wb.lab_state(PositionLabState)


def test_the_plane_shows_the_engine_rotation_of_the_receiving_query_and_key(panel):
    wb = panel.wb
    r = panel.rotation
    tr = wb.trace
    d = r.d
    assert d == tr.Q.shape[1] - tr.Q.shape[1] % 2
    q_rot = apply_rope(tr.Q[wb.receiving, :d][None], [r.q_at])[0]
    k_rot = apply_rope(tr.K[0, :d][None], [r.k_at])[0]
    np.testing.assert_allclose(r.q_rot, q_rot[:2], atol=1e-12)
    assert r.score == pytest.approx(float(q_rot @ k_rot), abs=1e-12)
    text = panel.rope_text.text()
    assert fmt_number(r.score, 4) in text and "receiving query" in text
    assert wb.scenario.query_labels[wb.receiving] in text


def test_dragging_the_query_slider_is_one_undo_step(panel, handle_center):
    wb = panel.wb
    slider = panel.rope_controls.sliders["q_pos"]
    start = handle_center(slider)
    drag(slider, [start + QPoint(dx, 0) for dx in (0, 10, 30, 60, 90)])
    settle(panel)
    moved = state(wb).q_pos
    assert moved > PositionLabState().q_pos + 5
    assert wb.undo_stack.count() == 1
    assert panel.rotation.q_at == moved and slider.value() == moved
    assert panel.rope_controls.values["q_pos"].text() == str(moved)
    wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == PositionLabState() and slider.value() == PositionLabState().q_pos


def test_shift_both_changes_the_angles_and_keeps_the_score(panel, handle_center):
    wb = panel.wb
    before = panel.rotation
    slider = panel.rope_controls.sliders["shift"]
    start = handle_center(slider)
    drag(slider, [start, start + QPoint(20, 0), start + QPoint(120, 0)])
    settle(panel)
    after = panel.rotation
    c = state(wb).shift
    assert c > 20 and wb.undo_stack.count() == 1
    assert (after.q_at, after.k_at) == (before.q_at + c, before.k_at + c)
    assert abs(after.q_angle - before.q_angle) > 1.0
    assert after.score == pytest.approx(before.score, abs=1e-9)
    text = panel.rope_text.text()
    assert f"c = {c}" in text and fmt_number(after.score, 6) in text


def tip(panel, name: str) -> QPoint:
    r = panel.rotation
    p = panel.plane.tip_px(r.q_rot if name == "q" else r.k_rot, name)
    return QPoint(round(p.x()), round(p.y()))


def test_dragging_the_key_tip_round_the_origin_moves_the_key(panel):
    wb = panel.wb
    plane = panel.plane
    start_pos = state(wb).k_pos
    theta = panel.rotation.theta
    c, _ = plane.frame()
    t = tip(panel, "k")
    radius = math.hypot(t.x() - c.x(), t.y() - c.y())
    phi = math.atan2(c.y() - t.y(), t.x() - c.x())
    # turn the tip counter-clockwise by about three steps of theta, in small moves
    points = [t]
    for k in range(1, 7):
        a = phi + 3 * theta * k / 6
        points.append(
            QPoint(round(c.x() + radius * math.cos(a)), round(c.y() - radius * math.sin(a)))
        )
    drag(plane, points)
    settle(panel)
    assert state(wb).k_pos == start_pos + 3
    assert state(wb).q_pos == PositionLabState().q_pos
    assert wb.undo_stack.count() == 1
    # the rotated tip now points where the mouse let go
    end = tip(panel, "k")
    assert math.hypot(end.x() - points[-1].x(), end.y() - points[-1].y()) < 6


def test_a_press_away_from_the_tips_never_edits(panel):
    plane = panel.plane
    drag(plane, [QPoint(5, plane.height() // 2), QPoint(40, plane.height() // 2)])
    assert panel.wb.undo_stack.count() == 0


def test_changing_the_receiving_query_redraws_the_plane_from_its_vector(panel):
    wb = panel.wb
    wb.set_receiving(2)
    settle(panel)
    assert panel.rotation.q_label == wb.scenario.query_labels[2]
    np.testing.assert_allclose(panel.rotation.q_pair, wb.trace.Q[2, :2])


def test_window_mode_hatches_the_forbidden_keys_and_recomputes_the_weights(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    settle(panel)
    combo = panel.mask_controls.mode_combo
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)  # "ALiBi"
    QTest.keyClick(combo, Qt.Key.Key_Down)  # "sliding window + sinks"
    settle(panel)
    assert state(wb).mode == "window" and wb.undo_stack.count() == 2
    after = panel.mask_view.after
    n_q, n_k = wb.trace.weights.shape
    i, j = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
    allowed = wb.trace.mask & (j <= i) & ((i - j < 3) | (j < 1))
    np.testing.assert_array_equal(after.forbidden, ~allowed)
    np.testing.assert_allclose(after.values.sum(axis=1), 1.0, atol=1e-12)
    assert (after.values[~allowed] == 0).all()
    assert panel.mask_view.before.isVisibleTo(panel)
    np.testing.assert_array_equal(panel.mask_view.before.values, wb.trace.weights)
    # the window box only shows in window mode; typing 1 keeps only the diagonal and the sink
    box = panel.mask_controls.boxes["window"]
    assert box.isVisibleTo(panel) and not panel.mask_controls.boxes["alibi_heads"].isVisibleTo(
        panel
    )
    type_into(box, "1")
    settle(panel)
    assert state(wb).window == 1 and wb.undo_stack.count() == 3
    assert after.values[2, 2] > 0 and after.values[2, 1] == 0 and after.values[2, 0] > 0
    for _ in range(3):
        wb.undo_stack.undo()
    settle(panel)
    assert state(wb) == PositionLabState() and combo.currentIndex() == 0
    assert not panel.mask_view.before.isVisibleTo(panel)


def test_alibi_head_box_is_one_based_and_changes_the_slope(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(1)
    panel.set_setting("mode", "alibi")
    settle(panel)
    type_into(panel.mask_controls.boxes["alibi_head"], "3")
    settle(panel)
    assert state(wb).alibi_head == 2
    assert "head 3 of 8" in panel.mask_view.after.title
    assert fmt_number(2.0 ** (-8 * 3 / 8), 4) in panel.mask_view.after.title


def test_g_that_does_not_divide_h_is_refused_inline(panel):
    wb = panel.wb
    panel.tabs.setCurrentIndex(2)
    settle(panel)
    g_box = panel.sharing_controls.boxes["g"]
    type_into(g_box, "3")
    settle(panel)
    assert state(wb).g == 8 and wb.undo_stack.count() == 0
    assert panel.refusal.isVisibleTo(panel)
    assert "g = 3 does not divide h = 32" in panel.refusal.text()
    assert g_box.value() == 8  # the stored value is back in the box
    type_into(g_box, "4")
    settle(panel)
    assert state(wb).g == 4 and not panel.refusal.isVisibleTo(panel)
    counts = panel.sharing.counts
    assert counts.kv_bytes_per_token == 4 * 256 * 2
    assert "8 per group" in panel.sharing_view.caption.text()
    assert "16 MiB" in panel.sharing_view.table.text()  # 8192 tokens · 2 KiB
    assert list(panel.sharing_view.diagram.data.group[:9]) == [0] * 8 + [1]


def test_every_setting_undoes_in_order(panel):
    wb = panel.wb
    edits = [("pair", 3), ("key", 2), ("h", 16), ("dtype_bytes", 4), ("n", 100), ("sinks", 0)]
    for name, value in edits:
        assert panel.set_setting(name, value)
    assert wb.undo_stack.count() == len(edits)
    for name, value in reversed(edits):
        assert getattr(state(wb), name) == value
        wb.undo_stack.undo()
    assert state(wb) == PositionLabState()
    wb.undo_stack.redo()
    settle(panel)
    assert panel.rotation.pair == 3 and panel.rope_controls.pair_box.value() == 3


def test_a_narrower_d_keeps_the_pair_inside_it(panel):
    panel.set_setting("pair", 5)
    panel.set_setting("width", 4)
    settle(panel)
    assert state(panel.wb).pair == 1 and panel.rotation.pair == 1 and panel.rotation.d == 4


@pytest.mark.parametrize("tab", [0, 1, 2])
def test_each_tab_exports_content_without_controls(panel, tab, export_png_svg):
    panel.tabs.setCurrentIndex(tab)
    settle(panel)
    parts = panel.figure_widgets()
    assert parts
    for w in parts:
        assert not isinstance(w, CONTROL_TYPES)
        assert not any(isinstance(c, CONTROL_TYPES) for c in w.findChildren(QWidget))
    assert "<svg" in export_png_svg(parts[0])


def test_a_one_dimensional_scenario_says_why_there_is_no_plane(make_wb, show_panel):
    from attnsim.engine.scenario import Scenario

    sc = Scenario(
        name="one-d", tokens=("a", "b"), mode="direct", query_tokens=("q",), Q=np.array([[1.0]]),
        K=np.array([[1.0], [2.0]]), V=np.array([[1.0], [0.0]]), qk_axes=("x",), v_axes=("v",),
    )  # fmt: skip
    panel = show_panel(PositionLabPanel(make_wb(sc)))
    assert "fewer than two" in panel.rope_text.text()
    assert not panel.rope_controls.width_box.isEnabled()
    assert panel.plane.data is not None and panel.plane.data.message
    image = panel.plane.grab().toImage()  # paints the message, no arrows, no error
    assert not image.isNull()


def n64_scenario():
    from attnsim.engine.scenario import Scenario

    n, d = 64, 8
    rng = np.random.default_rng(3)
    return Scenario(
        name="n64", tokens=tuple(f"t{j}" for j in range(n)), mode="direct",
        query_tokens=tuple(f"q{i}" for i in range(n)), Q=rng.normal(size=(n, d)),
        K=rng.normal(size=(n, d)), V=rng.normal(size=(n, d)), mask="causal",
        qk_axes=tuple(f"x{i}" for i in range(d)), v_axes=tuple(f"v{i}" for i in range(d)),
    )  # fmt: skip


def test_a_long_scenario_labels_rows_by_position_and_keeps_the_unchanged_picture(
    make_wb, show_panel
):
    panel = show_panel(PositionLabPanel(make_wb(n64_scenario())), size=(640, 480))
    panel.tabs.setCurrentIndex(1)
    panel.set_setting("mode", "window")
    settle(panel)
    before, after = panel.mask_view.before, panel.mask_view.after
    assert after.row_labels == [str(i) for i in range(64)] and after.col_labels == []
    # the whole grid and its colour bar fit inside the canvas
    lay = after.canvas_layout()
    assert lay.bar is not None and lay.bar[0] + lay.bar[2] < after.width()
    cache = before.cache
    panel.set_setting("window", 5)
    settle(panel)
    assert before.cache is cache  # the scenario's weights were not recoloured
    assert after.forbidden[63, 58] and not after.forbidden[63, 59]


def test_many_query_heads_are_drawn_as_bands(panel):
    panel.tabs.setCurrentIndex(2)
    panel.set_setting("h", 128)
    panel.set_setting("g", 4)
    settle(panel)
    diagram = panel.sharing_view.diagram
    assert diagram.data.h == 128 and diagram.data.g == 4
    assert not diagram.grab().toImage().isNull()
    assert "3.1 %" in panel.sharing_view.caption.text()
    assert "512 MiB" in panel.sharing_view.table.text()  # MHA: 8192 · 128 · 256 · 2 bytes


def test_the_rope_tab_opens_on_a_key_whose_pair_turns(make_wb, show_panel):
    # river-bank's first key, "the", is (0, 0) in pair 0: nothing to see turn
    p = show_panel(PositionLabPanel(make_wb("river-bank")), size=(666, 429))
    r = p.rotation
    assert r.k_label == "river" and np.abs(r.k_pair).max() > 0.5
    assert p.rope_controls.key_combo.currentText() == "river"
    assert "the key “river”" in p.rope_text.text()
    assert p.wb.undo_stack.count() == 0  # chosen on show, not by an edit


@pytest.mark.parametrize("width", [220, 600])
def test_the_rope_legend_is_whole_on_one_line_or_a_part_a_line(panel, width):
    # A figure at 1,024 x 768 showed "directions only · dashed: before RoPE · sol…".
    from PySide6.QtGui import QFontMetricsF

    from attnsim.panels.position_lab.rope_view import LEGEND, LEGEND_PARTS

    plane = panel.plane
    plane.setFixedWidth(width)
    QApplication.processEvents()
    lines = plane.legend_lines()
    fm = QFontMetricsF(plane.font())
    assert lines == ([LEGEND] if width == 600 else list(LEGEND_PARTS))
    assert all(fm.horizontalAdvance(line) <= plane.width() - 8 for line in lines)
    c, radius = plane.frame()  # the circle stays above the legend
    assert c.y() + radius <= plane.height() - len(lines) * fm.height() - 2
