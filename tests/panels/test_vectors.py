"""The vector editor: table edits, refusals, drags in a plane, token structure, best plane."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from attnsim.engine.scenario import random_scenario
from attnsim.model.workbench import STRUCTURE, VECTORS
from attnsim.panels.vectors import VectorEditorPanel
from attnsim.viewmodels.vectors import fitted_plane


def screen_point(panel: VectorEditorPanel, x: float, y: float):
    """Viewport pixel of plane coordinates (x, y)."""
    view = panel.plane_view
    scene = view.vb.mapViewToScene(QPointF(x, y))
    return view.mapFromScene(scene)


def drag(panel: VectorEditorPanel, start, end, *, steps: int = 8, modifier=None) -> None:
    """Press at plane point ``start``, move in steps to ``end``, release (real mouse events)."""
    QApplication.processEvents()
    vp = panel.plane_view.viewport()
    mod = Qt.KeyboardModifier.NoModifier if modifier is None else modifier
    p0 = screen_point(panel, *start)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, mod, p0)
    for t in np.linspace(0, 1, steps + 1)[1:]:
        x = start[0] + t * (end[0] - start[0])
        y = start[1] + t * (end[1] - start[1])
        QTest.mouseMove(vp, screen_point(panel, x, y))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, mod, screen_point(panel, *end))
    QApplication.processEvents()


def pixel(panel: VectorEditorPanel) -> float:
    px = panel.plane_view.vb.viewPixelSize()
    return max(abs(px[0]), abs(px[1]))


# ---- the table -----------------------------------------------------------------------------------
def test_table_shows_tokens_axes_and_exact_values(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    t = panel.table
    assert t.rowCount() == 3 and t.columnCount() == 5
    assert [t.horizontalHeaderItem(c).text() for c in range(5)] == [
        "token",
        "finance",
        "water",
        "structure",
        "generic",
    ]
    assert [t.item(r, 0).text() for r in range(3)] == ["the", "river", "bank"]
    assert t.item(2, 3).text() == "0.800"
    assert t.item(2, 0).font().bold()  # the receiving token stands out


def test_editing_a_cell_changes_the_workbench_and_undo_restores(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    before = wb.scenario.X.copy()
    changes = record(wb.changed)
    # Type into the cell editor as a user would, then press Enter.
    item = panel.table.item(1, 2)  # river · water
    panel.table.setCurrentItem(item)
    panel.table.editItem(item)
    editor = panel.table.findChild(QLineEdit)
    assert editor is not None
    editor.selectAll()
    QTest.keyClicks(editor, "0.35")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    QApplication.processEvents()
    assert wb.scenario.X[1, 1] == 0.35
    assert np.array_equal(np.delete(wb.scenario.X, 1, axis=0), np.delete(before, 1, axis=0))
    assert wb.scenario.X[1, [0, 2, 3]].tolist() == before[1, [0, 2, 3]].tolist()
    assert len(changes) == 1 and VECTORS in changes[0][0]
    assert wb.undo_stack.count() == 1
    panel.flush()
    assert panel.table.item(1, 2).text() == "0.350"
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.X, before)
    panel.flush()
    assert panel.table.item(1, 2).text() == "1.000"


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-inf", "1,2,3", ""])
def test_bad_cell_input_is_refused_and_nothing_changes(make_wb, text, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    before = wb.scenario
    messages = record(wb.message)
    changes = record(wb.changed)
    panel.table.item(2, 1).setText(text)
    assert wb.scenario is before
    assert wb.undo_stack.count() == 0
    assert changes == []
    assert panel.table.item(2, 1).text() == "0.500"  # the old value is back
    assert panel.message.isVisible() and "Refused" in panel.message.text()
    assert "bank · finance" in panel.message.text()
    assert messages and messages[-1][0].startswith("Refused")


def test_committing_the_shown_rounded_text_keeps_the_exact_value(make_wb, show_panel):
    from attnsim.engine import edits

    wb = make_wb("river-bank")
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.123456, 0, 0, 1]), "exact")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.item(0, 1).setText("0.123")  # what the cell shows: no edit
    assert wb.scenario.X[0, 0] == 0.123456
    assert wb.undo_stack.count() == 1


def test_refresh_never_edits(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    from attnsim.engine import edits

    wb.edit(edits.set_vector(wb.scenario, "x", 2, [0.1, 0.2, 0.3, 0.4]), "elsewhere")
    panel.flush()
    wb.set_receiving(0)
    panel.flush()
    assert wb.undo_stack.count() == 1
    assert panel.table.item(2, 4).text() == "0.400"
    assert panel.table.item(0, 0).font().bold() and not panel.table.item(2, 0).font().bold()


# ---- dragging ------------------------------------------------------------------------------------
def test_dragging_a_tip_moves_the_token_in_the_plane_as_one_undo_step(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (0, 1))  # finance × water
    before = wb.scenario.X.copy()
    changes = record(wb.changed)
    drag(panel, (0.5, 0.5), (0.2, 0.75))
    X = wb.scenario.X
    tol = 3 * pixel(panel)
    assert abs(X[2, 0] - 0.2) < tol and abs(X[2, 1] - 0.75) < tol
    assert X[2, 2] == before[2, 2] and X[2, 3] == before[2, 3]  # other coordinates kept
    assert np.array_equal(X[:2], before[:2])  # other tokens untouched
    assert wb.undo_stack.count() == 1  # the whole drag is one step
    assert changes and all(VECTORS in c[0] for c in changes)
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.X, before)
    panel.flush()
    assert np.allclose(panel.plane_view.tips[2], [0.5, 0.5])


def test_the_drag_follows_the_chosen_axes(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (2, 3))  # structure × generic: bank's tip is at (0.8, 0.2)
    assert np.allclose(panel.plane_view.tips[2], [0.8, 0.2])
    before = wb.scenario.X.copy()
    drag(panel, (0.8, 0.2), (0.4, 0.6))
    X = wb.scenario.X
    tol = 3 * pixel(panel)
    assert abs(X[2, 2] - 0.4) < tol and abs(X[2, 3] - 0.6) < tol
    assert X[2, 0] == before[2, 0] and X[2, 1] == before[2, 1]


def test_shift_snaps_to_the_grid(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (0, 1))
    before = wb.scenario.X.copy()
    drag(panel, (0.5, 0.5), (0.23, 0.71), modifier=Qt.KeyboardModifier.ShiftModifier)
    x = wb.scenario.X[2]
    for v in x[:2]:
        assert abs(v * 20 - round(v * 20)) < 1e-9, v  # a multiple of 0.05
        assert float(f"{v:.2f}") == v  # and exactly that decimal
    assert np.allclose(x[:2], [0.25, 0.7])
    assert x[2] == before[2, 2] and x[3] == before[2, 3]
    assert wb.undo_stack.count() == 1


def test_a_drag_away_from_tips_pans_and_edits_nothing(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (0, 1))
    drag(panel, (0.3, -0.05), (0.1, 0.2))
    assert wb.undo_stack.count() == 0


def test_best_plane_shows_explained_variance_and_moves_within_the_plane(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.mode_combo.setCurrentIndex(panel.mode_combo.findData("best"))
    panel.flush()
    X0 = wb.scenario.X.copy()
    plane, explained = fitted_plane(X0)
    expected = f"plane explains {explained.sum():.0%} of ‖X‖²"
    assert expected in panel.info.text()
    assert not panel.x_combo.isVisible() and panel.refit_button.isVisible()
    assert "PC1" in panel.plane_view.getPlotItem().getAxis("bottom").labelText
    tip = X0[2] @ plane.basis
    assert np.allclose(panel.plane_view.tips[2], tip)
    drag(panel, tuple(tip), (tip[0] - 0.3, tip[1] + 0.2))
    x_new = wb.scenario.X[2]
    B = plane.basis
    off = np.eye(4) - B @ B.T
    assert np.allclose(off @ x_new, off @ X0[2], atol=1e-12)  # only moved within the plane
    tol = 3 * pixel(panel)
    assert np.allclose(x_new @ B, tip + np.array([-0.3, 0.2]), atol=tol)
    assert wb.undo_stack.count() == 1
    # The plane stays put after the drag; Refit recomputes it for the new vectors.
    panel.flush()
    assert panel.plane_view.tips[2] == pytest.approx(x_new @ B)
    assert "refit" in panel.info.text()
    panel.refit_button.click()
    _, explained_new = fitted_plane(wb.scenario.X)
    assert f"plane explains {explained_new.sum():.0%}" in panel.info.text()
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.X, X0)


def test_picking_the_same_axis_twice_swaps_them(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.y_combo.setCurrentIndex(0)  # finance on both: the x combo takes water
    assert (panel.x_combo.currentIndex(), panel.y_combo.currentIndex()) == (1, 0)
    assert np.allclose(panel.plane_view.tips[2], [0.5, 0.5])
    assert np.allclose(panel.plane_view.tips[1], [1.0, 0.0])
    assert wb.undo_stack.count() == 0


# ---- structure -----------------------------------------------------------------------------------
def test_add_remove_rename_and_reorder_are_undoable(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    start = wb.scenario
    panel.table.setCurrentCell(0, 1)
    panel.add_button.click()
    assert wb.scenario.tokens == ("the", "new", "river", "bank")
    assert np.array_equal(wb.scenario.X[1], np.zeros(4))
    assert panel.table.rowCount() == 4 and panel.table.item(1, 0).text() == "new"
    panel.table.item(1, 0).setText("muddy")  # rename in place
    assert wb.scenario.tokens == ("the", "muddy", "river", "bank")
    panel.table.setCurrentCell(1, 0)
    panel.down_button.click()
    assert wb.scenario.tokens == ("the", "river", "muddy", "bank")
    assert np.array_equal(wb.scenario.X[1], start.X[1])
    assert panel.selected_row() == 2
    panel.up_button.click()
    assert wb.scenario.tokens == ("the", "muddy", "river", "bank")
    panel.table.setCurrentCell(0, 0)
    panel.remove_button.click()
    assert wb.scenario.tokens == ("muddy", "river", "bank")
    assert wb.scenario.tokens[wb.receiving] == "bank"
    assert wb.undo_stack.count() == 5
    for _ in range(5):
        wb.undo_stack.undo()
    assert wb.scenario.equals(start)
    panel.flush()
    assert [panel.table.item(r, 0).text() for r in range(3)] == ["the", "river", "bank"]


def test_empty_name_is_refused(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.item(0, 0).setText("   ")
    assert wb.scenario.tokens == ("the", "river", "bank")
    assert panel.table.item(0, 0).text() == "the"
    assert "name" in panel.message.text()
    assert wb.undo_stack.count() == 0


def test_removing_the_last_token_is_refused(make_wb, show_panel):
    from attnsim.engine import edits

    wb = make_wb("river-bank")
    wb.edit(edits.remove_token(edits.remove_token(wb.scenario, 0), 0), "one left")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.setCurrentCell(0, 0)
    panel.remove_button.click()
    assert wb.scenario.tokens == ("bank",)
    assert "last token" in panel.message.text()


def test_context_menu_offers_the_token_actions(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    menu = panel.build_context_menu(1)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert {
        "Make receiving",
        "Rename…",
        "Add token",
        "Remove token",
        "Move earlier",
        "Move later",
    } <= set(actions)
    actions["Make receiving"].trigger()
    assert wb.receiving == 1
    changes = record(wb.changed)
    actions["Move earlier"].trigger()
    assert wb.scenario.tokens == ("river", "the", "bank")
    assert len(changes) == 1 and STRUCTURE in changes[0][0]


def test_receiving_picker(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.receiving_combo.setCurrentIndex(1)
    assert wb.receiving == 1
    panel.flush()
    assert panel.plane_view.highlight_row == 1
    assert wb.undo_stack.count() == 0  # a selection, not an edit


# ---- direct mode ---------------------------------------------------------------------------------
def test_direct_mode_edits_queries_keys_and_values(make_wb, show_panel):
    wb = make_wb("routing-lab")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    assert panel.kind_combo.isVisible()
    assert panel.table.horizontalHeaderItem(0).text() == "query"
    assert panel.table.rowCount() == 1
    assert not panel.add_button.isEnabled()  # queries: structure is edited through the keys
    panel.table.item(0, 2).setText("0.5")
    assert wb.scenario.Q.tolist() == [[1.0, 0.5]]
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("k"))
    assert panel.table.rowCount() == 3 and panel.add_button.isEnabled()
    assert np.allclose(panel.plane_view.tips, wb.scenario.K)
    K_before = wb.scenario.K.copy()
    drag(panel, (0.8, 0.6), (0.5, 0.9))
    K = wb.scenario.K
    tol = 3 * pixel(panel)
    assert abs(K[1, 0] - 0.5) < tol and abs(K[1, 1] - 0.9) < tol
    assert np.array_equal(K[[0, 2]], K_before[[0, 2]])
    assert wb.scenario.Q.tolist() == [[1.0, 0.5]]
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("v"))
    assert [panel.table.horizontalHeaderItem(c).text() for c in range(3)] == ["token", "v1", "v2"]
    panel.table.item(2, 1).setText("-4")
    assert wb.scenario.V[2].tolist() == [-4.0, 5.0]
    panel.table.item(2, 1).setText("nan")
    assert wb.scenario.V[2].tolist() == [-4.0, 5.0]
    assert wb.undo_stack.count() == 3
    for _ in range(3):
        wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.K, K_before)
    assert wb.scenario.Q.tolist() == [[1.0, 0.0]]


def test_direct_mode_add_key_and_rename_query(make_wb, show_panel):
    wb = make_wb("routing-lab")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.item(0, 0).setText("probe")
    assert wb.scenario.query_tokens == ("probe",)
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("k"))
    panel.table.setCurrentCell(2, 0)
    panel.add_button.click()
    assert wb.scenario.tokens == ("A", "B", "C", "new")
    assert wb.scenario.K.shape == (4, 2) and wb.scenario.V.shape == (4, 2)


def test_best_plane_in_twelve_dimensions(make_wb, show_panel):
    wb = make_wb("three-fields")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("k"))
    panel.set_plane("best")
    _, explained = fitted_plane(wb.scenario.K)
    assert f"plane explains {explained.sum():.0%} of ‖K‖²" in panel.info.text()


# ---- export --------------------------------------------------------------------------------------
def test_export_png_and_svg_with_text(make_wb, show_panel, export_png_svg):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    text = export_png_svg(panel.figure_widget())
    assert "<text" in text and "bank" in text and "finance" in text


def test_hovering_a_tip_shows_the_token_and_its_vector(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (0, 1))
    vp = panel.plane_view.viewport()
    QTest.mouseMove(vp, screen_point(panel, 0.2, 0.2))
    QTest.mouseMove(vp, screen_point(panel, 0.5, 0.5))
    QApplication.processEvents()
    tip = panel.plane_view.vb.toolTip()
    assert "bank" in tip and "structure = 0.800" in tip and "finance = 0.500" in tip


def test_projection_and_option_edits_do_not_redraw_the_vectors(make_wb, show_panel):
    from attnsim.engine import edits

    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    count = panel.refresh_count
    wb.edit(edits.set_head_matrix(wb.scenario, 0, "Wq", np.zeros((4, 4))), "Wq")
    wb.edit(wb.scenario.replace(temperature=2.0), "T")
    QApplication.processEvents()
    panel.flush()
    assert panel.refresh_count == count
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [1.0, 0.0, 0.0, 0.0]), "x")
    QApplication.processEvents()
    assert panel.refresh_count == count + 1
    assert panel.table.item(0, 1).text() == "1.000"


def test_loading_other_scenarios_switches_cleanly(make_wb, show_panel):
    from attnsim.resources import resolve_scenario

    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("axes", (2, 3))
    wb.load(resolve_scenario("eiffel-raw"))
    panel.flush()
    assert panel.table.columnCount() == 3 and panel._axes == (0, 1)
    assert not panel.mode_combo.isVisible()  # two axes: no other plane to choose
    wb.load(resolve_scenario("three-fields"))
    panel.flush()
    assert panel.kind_combo.isVisible() and panel.table.rowCount() == 3
    assert panel.plane_view.reference.tips.shape == (12, 2)  # the keys, dashed
    wb.load(resolve_scenario("river-bank"))
    panel.flush()
    assert not panel.kind_combo.isVisible() and panel.table.rowCount() == 3
    assert wb.undo_stack.count() == 0


def test_best_plane_falls_back_to_axes_in_two_dimensions(make_wb, show_panel):
    from attnsim.resources import resolve_scenario

    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.set_plane("best")
    assert panel.refit_button.isVisible()
    wb.load(resolve_scenario("eiffel-raw"))
    panel.flush()
    assert panel.x_combo.isVisible() and not panel.refit_button.isVisible()
    assert np.array_equal(panel.plane_view.tips, wb.scenario.X)  # plain axes, no rotation


# ---- long sequences ------------------------------------------------------------------------------
def long_scenario(n: int = 2048, d: int = 8, seed: int = 0):
    return random_scenario(n, d, seed=seed, mask="causal", receiving=n - 1, name=f"long{n}")


def named_rows(panel: VectorEditorPanel) -> set[str]:
    view = panel.plane_view
    return set(view.main.visible_texts()) | set(view.highlight.visible_texts())


def test_up_to_64_tokens_every_arrow_is_drawn_and_named(make_wb, show_panel):
    wb = make_wb(long_scenario(64))
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    view = panel.plane_view
    assert named_rows(panel) == set(wb.scenario.tokens)
    assert len(view.main.tips) == 63 and len(view.highlight.tips) == 1
    assert not view.cloud.item.isVisible() and len(view.cloud.pos) == 0
    assert sorted(view.grips.rows.tolist()) == list(range(64))  # a grip on every tip


def test_2048_tokens_render_named_arrows_and_a_cloud(make_wb, show_panel):
    from attnsim.viewmodels.vectors import FEATURED

    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    view = panel.plane_view
    X = wb.scenario.X
    assert panel.table.rowCount() == 2048 and panel.table.columnCount() == 9
    assert panel.table.item(2047, 0).text() == "t2047" and panel.table.item(2047, 0).font().bold()
    assert panel.table.item(1500, 3).text() == f"{X[1500, 2]:.3f}".replace("-", "−")
    # The receiving token and at most FEATURED others are named arrows; the rest are dots.
    assert view.highlight.visible_texts() == ["t2047"]
    assert 1 <= len(view.main.tips) <= FEATURED
    assert len(view.main.tips) + 1 + len(view.cloud.pos) == 2048
    assert view.cloud.item.isVisible()
    assert len(view.main.labels) + len(view.highlight.labels) <= FEATURED + 1  # no 2,048 labels
    # The named ones are long arrows: each longer than most dots.
    lengths = np.hypot(view.tips[:, 0], view.tips[:, 1])
    assert lengths[view.featured].min() > np.percentile(lengths, 90)
    # Every tip, arrow or dot, is in the plane where the engine puts it.
    assert np.array_equal(view.tips, X[:, :2])
    dots = np.setdiff1d(np.arange(2048), np.append(view.featured, 2047))
    assert np.array_equal(view.cloud.pos, X[dots, :2])
    assert np.array_equal(view.cloud.rows, dots)
    assert wb.undo_stack.count() == 0


def test_2048_tokens_a_selection_restyles_rows_and_arrows(make_wb, show_panel, record):
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    view = panel.plane_view
    repaints = record(panel.table.array_model.dataChanged)
    resets = record(panel.table.array_model.modelReset)
    wb.set_receiving(200)
    panel.flush()
    t = panel.table
    assert t.item(200, 0).font().bold() and not t.item(2047, 0).font().bold()
    assert view.highlight_row == 200 and view.highlight.visible_texts() == ["t200"]
    assert np.array_equal(view.highlight.tips, wb.scenario.X[[200], :2])
    assert 200 not in view.cloud.rows and 200 not in view.featured
    assert panel.receiving_combo.currentIndex() == 200
    # Only the two names whose style changed are repainted; nothing is rebuilt.
    assert resets == []
    assert sorted((a[0].row(), a[1].row()) for a in repaints) == [(200, 200), (2047, 2047)]
    assert wb.undo_stack.count() == 0


def test_2048_tokens_edit_one_vector_in_the_table(make_wb, show_panel, record):
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    before = wb.scenario.X.copy()
    changes = record(wb.changed)
    panel.table.item(1500, 2).setText("7.5")  # row t1500, axis x2
    assert wb.scenario.X[1500, 1] == 7.5
    assert np.array_equal(np.delete(wb.scenario.X, 1500, 0), np.delete(before, 1500, 0))
    # At this size the edit is in at once and told when its trace (computed apart) is in.
    assert wb.computing and not changes
    wb.finish_trace()
    assert len(changes) == 1 and wb.undo_stack.count() == 1
    repaints = record(panel.table.array_model.dataChanged)
    panel.flush()
    assert panel.table.item(1500, 2).text() == "7.500"
    assert {a[0].row() for a in repaints} == {1500}  # only that row is repainted
    view = panel.plane_view
    assert np.array_equal(view.tips[1500], wb.scenario.X[1500, :2])
    assert 1500 in view.featured  # now the longest: a named arrow
    # A refused edit at this size reads just as at three tokens.
    panel.table.item(1500, 2).setText("nan")
    assert wb.scenario.X[1500, 1] == 7.5 and wb.undo_stack.count() == 1
    assert "t1500 · x2" in panel.message.text()
    assert panel.table.item(1500, 2).text() == "7.500"
    wb.undo_stack.undo()
    panel.flush()
    assert np.array_equal(wb.scenario.X, before)
    assert panel.table.item(1500, 2).text() == f"{before[1500, 1]:.3f}".replace("-", "−")


def test_2048_tokens_drag_a_dot_as_one_undo_step(make_wb, show_panel, record):
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    view = panel.plane_view
    # An unnamed vector well apart from every other tip, so the press grabs that one.
    T = view.tips
    d2 = ((T[:, None, :] - T[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    dots = view.cloud.rows
    row = int(dots[np.argmax(d2[dots].min(axis=1))])
    named_before = set(view.featured.tolist())
    start = np.array(T[row])
    end = start * 0.5 + np.array([0.0, 0.3])
    before = wb.scenario.X.copy()
    changes = record(wb.changed)
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     screen_point(panel, *start))  # fmt: skip
    for t in np.linspace(0, 1, 7)[1:]:
        QTest.mouseMove(vp, screen_point(panel, *(start + t * (end - start))))
        QApplication.processEvents()
        panel.flush()
        # While dragged, the dot is a named arrow; the other names stay put.
        assert set(view.featured.tolist()) == named_before | {row}
        assert row in view.grips.rows.tolist() and row not in view.cloud.rows.tolist()
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       screen_point(panel, *end))  # fmt: skip
    QApplication.processEvents()
    X = wb.scenario.X
    tol = 3 * pixel(panel)
    assert abs(X[row, 0] - end[0]) < tol and abs(X[row, 1] - end[1]) < tol
    assert np.array_equal(X[row, 2:], before[row, 2:])
    assert np.array_equal(np.delete(X, row, 0), np.delete(before, row, 0))
    assert wb.undo_stack.count() == 1 and len(changes) >= 2  # many moves, one undo step
    assert panel.selected_row() == row  # the table follows the dragged token
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.X, before)


def test_2048_tokens_hovering_a_dot_names_it(make_wb, show_panel):
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    view = panel.plane_view
    cloud = view.cloud.item
    k = int(view.cloud.rows[0])
    points = cloud.pointsAt(QPointF(*view.tips[k]))
    assert len(points) >= 1
    rows = {int(p.data()) for p in points}
    assert k in rows
    text = panel._tip_text(k)
    assert text.startswith(f"t{k}  (X row {k + 1})")


def test_direct_scenario_with_2048_keys(make_wb, show_panel):
    from attnsim.engine.scenario import Scenario

    rng = np.random.default_rng(1)
    sc = Scenario(
        name="many-keys",
        mode="direct",
        tokens=tuple(f"k{j}" for j in range(2048)),
        query_tokens=("q",),
        Q=rng.normal(size=(1, 4)),
        K=rng.normal(size=(2048, 4)),
        V=rng.normal(size=(2048, 4)),
    )
    wb = make_wb(sc)
    panel = show_panel(VectorEditorPanel(wb), size=(700, 450))
    view = panel.plane_view
    # The query view: one arrow; the 2,048 keys behind it are dots, not dashed arrows.
    assert len(view.highlight.tips) == 1 and len(view.reference.tips) == 0
    assert len(view.ref_cloud.pos) == 2048 and view.ref_cloud.item.isVisible()
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("k"))
    assert panel.table.rowCount() == 2048
    assert len(view.reference.tips) == 1  # the receiving query, dashed
    assert not view.ref_cloud.item.isVisible()  # the keys' dots of the query view are gone
    assert len(view.main.tips) + len(view.cloud.pos) + len(view.highlight.tips) == 2048
    panel.table.item(10, 1).setText("3")
    assert wb.scenario.K[10, 0] == 3.0 and wb.undo_stack.count() == 1


def _label_scene_rects(view):
    rects = []
    for group in (view.highlight, view.main, view.reference):
        for item in group.labels[: len(group.visible_texts())]:
            r = item.mapRectToScene(item.boundingRect())
            rects.append((r.x(), r.y(), r.width(), r.height()))
    return rects


@pytest.mark.parametrize("size", [(760, 520), (420, 320)])
def test_names_of_tokens_at_the_origin_do_not_overlap(make_wb, show_panel, size):
    from attnsim.engine import edits
    from attnsim.panels.kit.labels import any_overlap, rects_intersect

    wb = make_wb("river-bank")
    sc = wb.scenario
    for i in (0, 2):  # "the" and the receiving "bank" both at the origin of the plane
        sc = edits.set_vector(sc, "x", i, [0.0, 0.0, 0.5, 0.2])
    sc = edits.add_token(sc, "pier")
    wb.edit(sc, "origin")
    panel = show_panel(VectorEditorPanel(wb), size=size)
    QApplication.processEvents()
    view = panel.plane_view
    rects = _label_scene_rects(view)
    assert len(rects) >= 4
    assert not any_overlap(rects), rects
    # the drawn names are where the placer put them
    for drawn, placed in zip(rects, view.label_rects, strict=True):
        assert rects_intersect(drawn, placed)
    box = view.vb.sceneBoundingRect()
    for x, y, w, h in rects:
        assert box.adjusted(-1, -1, 1, 1).contains(QRectF(x, y, w, h))


# ---- the sub-views on their own ----------------------------------------------------------------
def _editor_data(**changes):
    from attnsim.viewmodels.vectors import EditorData

    data = dict(
        direct=False,
        kind="q",
        receiving_labels=("the", "river", "bank"),
        receiving=2,
        structural=True,
        values=np.array([[0.0, 1.0], [0.5, -0.25], [2.0, 0.0]]),
        names=("the", "river", "bank"),
        header=("token", "a", "b"),
        bold_row=2,
    )
    data.update(changes)
    return EditorData(**data)


def test_vector_table_shows_its_data_and_reports_gestures_not_edits(qtbot):
    from attnsim.panels.vectors import VectorTable

    table = VectorTable()
    qtbot.addWidget(table)
    table.resize(420, 360)
    table.show()
    seen = []
    for name in ("kind_picked", "receiving_picked", "cell_edited", "move_clicked"):
        getattr(table, name).connect(lambda *a, n=name: seen.append((n, *a)))
    table.add_clicked.connect(lambda: seen.append(("add",)))
    table.refresh(_editor_data())
    assert seen == []  # showing data is not a gesture
    t = table.table
    assert (t.rowCount(), t.columnCount()) == (3, 3)
    assert t.item(1, 2).text() == "−0.250" and t.item(2, 0).font().bold()
    assert table.receiving_combo.currentIndex() == 2 and table.kind_group.isHidden()
    t.item(1, 2).setText("0.75")
    table.receiving_combo.setCurrentIndex(0)
    table.add_button.click()
    table.up_button.click()
    assert seen == [("cell_edited", 1, 2, "0.75"), ("receiving_picked", 0), ("add",),
                    ("move_clicked", -1)]  # fmt: skip
    assert t.item(1, 2).text() == "−0.250"  # the table shows its data, never its own edit
    table.refresh(_editor_data(direct=True, kind="k", structural=False, bold_row=None))
    assert not table.kind_group.isHidden() and table.kind_combo.currentData() == "k"
    assert not any(b.isEnabled() for b in table.row_buttons)
    assert "one per row of Q" in table.add_button.toolTip()
    table.kind_combo.setCurrentIndex(table.kind_combo.findData("v"))
    assert seen[-1] == ("kind_picked", "v")
    table.select(2, 1)
    assert table.selected_row() == 2 and t.currentColumn() == 1
    # The Q view of a direct scenario: its rows can receive, but not be added or moved.
    table.refresh(_editor_data(direct=True, kind="q", structural=False))
    actions = {x.text(): x for x in table.build_context_menu(1).actions() if x.text()}
    assert table.selected_row() == 1
    assert actions["Make receiving"].isEnabled() and not actions["Add token"].isEnabled()
    assert not actions["Move later"].isEnabled()
    actions["Make receiving"].trigger()
    assert seen[-1] == ("receiving_picked", 1)
    table.refresh(_editor_data(direct=True, kind="k"))
    actions = {x.text(): x for x in table.build_context_menu(0).actions() if x.text()}
    assert "Make receiving" not in actions and not actions["Move earlier"].isEnabled()
    actions["Move later"].trigger()
    assert seen[-1] == ("move_clicked", 1)
    t.item(0, 2).setText("1.000")  # the shown value committed unchanged: not an edit
    assert seen[-1] == ("move_clicked", 1)
    assert table.needed_width() > t.columnWidth(0) + t.columnWidth(1)


def test_vector_table_refits_columns_only_for_a_new_shape_or_document(qtbot):
    from attnsim.panels.vectors import VectorTable

    table = VectorTable()
    qtbot.addWidget(table)
    table.refresh(_editor_data())
    t = table.table
    fitted = t.columnWidth(1)
    t.setColumnWidth(1, fitted + 50)
    table.refresh(_editor_data(values=np.array([[0.0, 1.0], [0.5, -0.25], [2.5, 0.0]])))
    assert t.columnWidth(1) == fitted + 50  # new values of the same shape keep the width
    table.refresh(_editor_data(refit_columns=True))
    assert t.columnWidth(1) == fitted


def test_plane_controls_show_the_choice_and_report_picks(qtbot):
    from attnsim.panels.vectors import PlaneControls
    from attnsim.viewmodels.vectors import plane_controls

    controls = PlaneControls()
    qtbot.addWidget(controls)
    controls.show()
    seen = []
    controls.mode_picked.connect(lambda m: seen.append(("mode", m)))
    controls.axis_picked.connect(lambda w, i: seen.append(("axis", w, i)))
    controls.refit_clicked.connect(lambda: seen.append(("refit",)))
    controls.refresh(plane_controls(("a", "b", "c"), (2, 0), "axes"))
    assert seen == []
    assert controls.x_combo.currentText() == "c" and controls.y_combo.currentText() == "a"
    assert controls.mode_combo.isVisible() and controls.axes_group.isVisible()
    assert not controls.refit_button.isVisible()
    controls.y_combo.setCurrentIndex(1)
    controls.mode_combo.setCurrentIndex(controls.mode_combo.findData("best"))
    assert seen == [("axis", 1, 1), ("mode", "best")]
    controls.refresh(plane_controls(("a", "b", "c"), (2, 0), "best"))
    assert controls.refit_button.isVisible() and not controls.axes_group.isVisible()
    controls.refit_button.click()
    assert seen[-1] == ("refit",)
    controls.refresh(plane_controls(("x",), (0, 0), "best"))  # one axis: nothing else to pick
    assert not controls.mode_combo.isVisible() and not controls.y_combo.isEnabled()
    assert [controls.x_combo.itemText(i) for i in range(controls.x_combo.count())] == ["x"]


def test_plane_view_draws_a_picture_in_the_colours_of_its_kind(qtbot):
    from attnsim.panels.style import KEY, QUERY, TOKEN
    from attnsim.panels.vectors import PlaneView
    from attnsim.panels.vectors.plane_view import style_colors
    from attnsim.viewmodels.vectors import PlanePicture

    view = PlaneView()
    qtbot.addWidget(view)
    view.resize(420, 320)
    view.show()
    tips = np.array([[1.0, 0.0], [0.0, 1.0], [-0.5, 0.5]])
    picture = PlanePicture(
        tips, ("A", "B", "C"), 1, np.array([[0.5, 0.5]]), ("q",), "k", "x", "y", "info"
    )
    view.refresh(picture)
    view.fit(force=True)
    assert np.array_equal(view.tips, tips) and view.highlight_row == 1
    assert view.main.visible_texts() == ["A", "C"] and view.highlight.visible_texts() == ["B"]
    assert view.reference.visible_texts() == ["q"]
    assert view.main.color == KEY and view.reference.color == QUERY
    assert view.getPlotItem().getAxis("bottom").labelText == "x"
    assert style_colors("x") == (TOKEN, QUERY, style_colors("v")[2])
    view.refresh(PlanePicture(tips, ("A", "B", "C"), None, None, (), "x", "u", "w", ""))
    assert view.main.color == TOKEN and view.highlight.visible_texts() == []
    assert view.reference.visible_texts() == [] and len(view.reference.tips) == 0
    assert view.getPlotItem().getAxis("left").labelText == "w"


def test_plane_grid_follows_the_view_with_one_square_step(qtbot):
    from attnsim.panels.vectors import PlaneView

    view = PlaneView()
    qtbot.addWidget(view)
    view.resize(420, 320)
    view.show()
    qtbot.waitExposed(view)
    view.vb.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)
    x, y = view.grid.major.getData()
    vertical = x[0::2][x[0::2] == x[1::2]]
    horizontal = y[0::2][y[0::2] == y[1::2]]
    steps = {round(float(s), 9) for s in np.diff(np.unique(vertical))}
    steps |= {round(float(s), 9) for s in np.diff(np.unique(horizontal))}
    assert len(steps) == 1  # the same step along both axes
    step = steps.pop()
    view.vb.setRange(xRange=(-10, 10), yRange=(-10, 10), padding=0)
    x, _ = view.grid.major.getData()
    assert np.diff(np.unique(x[0::2][x[0::2] == x[1::2]])).min() > 5 * step


def test_label_placer_keeps_names_apart_and_draws_leaders_only_for_moved_names(qtbot):
    from attnsim.panels.kit.labels import any_overlap
    from attnsim.panels.vectors import PlaneView

    view = PlaneView()
    qtbot.addWidget(view)
    view.resize(420, 320)
    view.show()
    qtbot.waitExposed(view)
    # Four tips at one point: their names cannot all sit at the tip.
    view.set_arrows(np.tile([[0.5, 0.5]], (4, 1)), ["alpha", "beta", "gamma", "delta"], 0)
    view.fit(force=True)
    QApplication.processEvents()
    assert len(view.label_rects) == 4 and not any_overlap(view.label_rects)
    x, _ = view.leaders.getData()
    assert x is not None and len(x) >= 2
    view.set_arrows(np.array([[1.0, 0.0]]), ["solo"], 0)
    view.fit(force=True)
    QApplication.processEvents()
    assert len(view.label_rects) == 1
    x, _ = view.leaders.getData()
    assert x is None or len(x) == 0


def test_placed_names_of_non_finite_tips_are_hidden_and_come_back(qtbot):
    from attnsim.panels.vectors import PlaneView

    view = PlaneView()
    qtbot.addWidget(view)
    view.resize(420, 320)
    view.show()
    qtbot.waitExposed(view)
    view.set_arrows(np.array([[0.5, 0.5], [1.0, 0.0]]), ["bad", "ok"], None)
    view.fit(force=True)
    bad, ok = view.main.labels[:2]
    assert bad.isVisible() and ok.isVisible()
    view.set_arrows(np.array([[np.nan, 0.5], [1.0, 0.0]]), ["bad", "ok"], None)
    assert not bad.isVisible() and ok.isVisible() and len(view.label_rects) == 1
    view.set_arrows(np.array([[0.5, 0.5], [1.0, 0.0]]), ["bad", "ok"], None)
    assert bad.isVisible() and len(view.label_rects) == 2


def test_a_right_click_menu_is_not_kept_after_it_closes(make_wb, show_panel, monkeypatch):
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtWidgets import QMenu

    import attnsim.panels.vectors.editor as editor

    class ClosedMenu(QMenu):  # PySide resolves exec() past a patch of QMenu itself
        def exec(self, *args):
            return None

    monkeypatch.setattr(editor, "QMenu", ClosedMenu)
    panel = show_panel(VectorEditorPanel(make_wb("river-bank")), size=(760, 480))
    table = next(t for t in panel.findChildren(QWidget) if hasattr(t, "build_context_menu"))
    for _ in range(3):
        table.table.customContextMenuRequested.emit(QPoint(5, 5))
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the event loop's turn
    assert panel.findChildren(ClosedMenu) == []


def test_points_moved_in_place_draw_as_a_fresh_item_and_keep_their_styles(qtbot):
    # A drag moves one of many tips: the cloud's records are updated in place (no per-point
    # style lookup); the picture must be that of an item given the new places from scratch.
    import pyqtgraph as pg
    from PySide6.QtGui import QImage, QPainter

    from attnsim.panels.vectors.plane_items import Points

    rng = np.random.default_rng(3)
    a = rng.normal(size=(300, 2))
    b = a.copy()
    b[7] = (2.5, -2.5)  # one point moved, out past the old bounds
    rows = np.arange(300)

    def picture(points_at: list[np.ndarray]) -> tuple[QImage, pg.ScatterPlotItem]:
        w = pg.PlotWidget()
        qtbot.addWidget(w)
        w.resize(300, 300)
        item = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush(20, 90, 200))
        w.addItem(item)
        pts = Points(item)
        for p in points_at:
            pts.set(p, rows)
        w.setRange(xRange=(-3, 3), yRange=(-3, 3), padding=0)
        img = QImage(300, 300, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0xFFFFFFFF)
        painter = QPainter(img)
        w.render(painter)
        painter.end()
        return img, item

    moved, item = picture([a, b])
    fresh, fresh_item = picture([b])
    assert moved == fresh
    np.testing.assert_array_equal(np.column_stack(item.getData()), b)
    assert item.dataBounds(0) == fresh_item.dataBounds(0)  # bounds made afresh
    assert list(item.data["data"]) == list(rows)
