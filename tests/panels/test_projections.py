"""The projections panel: editable Wq/Wk/Wv/Wo grids, presets, heads, and what each one moves."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from attnsim.engine import edits
from attnsim.engine.scenario import random_scenario
from attnsim.model.workbench import MATRICES
from attnsim.panels.projections import CHANGED, ProjectionsPanel, changed_cells, preset_matrix


def menu_action(panel: ProjectionsPanel, which: str, prefix: str):
    menu = panel.blocks[which].presets.menu()
    found = [a for a in menu.actions() if a.text().startswith(prefix)]
    assert found, [a.text() for a in menu.actions()]
    return found[0]


def menu_texts(panel: ProjectionsPanel, which: str) -> list[str]:
    return [a.text() for a in panel.blocks[which].presets.menu().actions() if a.text()]


# ---- pure helpers -------------------------------------------------------------------------------
def test_preset_matrices():
    assert np.array_equal(preset_matrix("identity", (3, 3)), np.eye(3))
    assert np.array_equal(preset_matrix("swap", (2, 2)), [[0.0, 1.0], [1.0, 0.0]])
    assert np.array_equal(preset_matrix("zero", (4, 3)), np.zeros((4, 3)))
    a, b = preset_matrix("random", (4, 3), 7), preset_matrix("random", (4, 3), 7)
    assert np.array_equal(a, b) and a.any()
    assert not np.array_equal(a, preset_matrix("random", (4, 3), 8))
    assert np.array_equal(a, np.round(a, 2))  # exactly what the grid shows
    with pytest.raises(ValueError, match="square"):
        preset_matrix("identity", (4, 3))
    with pytest.raises(ValueError, match="unknown"):
        preset_matrix("rotate", (2, 2))


def test_changed_cells():
    a = np.zeros((2, 2))
    b = a.copy()
    b[1, 0] = 1
    assert changed_cells(a, b).tolist() == [[False, False], [True, False]]
    assert not changed_cells(None, b).any() and not changed_cells(np.zeros(3), b).any()


# ---- grids --------------------------------------------------------------------------------------
def test_grids_show_the_focused_heads_matrices_with_axis_labels(make_wb, show_panel):
    wb = make_wb("wq-find-water")
    panel = show_panel(ProjectionsPanel(wb))
    g = panel.blocks["Wq"].grid
    sc = wb.scenario
    assert (g.rowCount(), g.columnCount()) == sc.heads[0].Wq.shape
    assert [g.verticalHeaderItem(r).text() for r in range(4)] == list(sc.axes)
    assert [g.horizontalHeaderItem(c).text() for c in range(3)] == list(sc.qk_axes)
    assert g.item(2, 1).text() == "3.75"
    assert "find water evidence" in panel.blocks["Wq"].title.text()
    q = panel.products["Wq"].grid
    assert [q.verticalHeaderItem(r).text() for r in range(3)] == list(sc.tokens)
    assert q.item(2, 1).text() == f"{wb.trace.Q[2, 1]:.2f}"
    assert not panel.blocks["Wo"].isVisible()


def test_editing_wq_changes_only_the_queries(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    tr0 = wb.trace
    Q0, K0, V0 = tr0.Q.copy(), tr0.K.copy(), tr0.V.copy()
    changes = record(wb.changed)
    # Type into the cell as a user would.
    g = panel.blocks["Wq"].grid
    item = g.item(1, 0)  # water -> finance
    g.setCurrentItem(item)
    g.editItem(item)
    editor = g.findChild(QLineEdit)
    assert editor is not None
    editor.selectAll()
    QTest.keyClicks(editor, "0.7")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    QApplication.processEvents()
    assert wb.scenario.heads[0].Wq[1, 0] == 0.7
    assert len(changes) == 1 and changes[0][0] == frozenset({MATRICES})
    tr = wb.trace
    assert np.array_equal(tr.K, K0) and np.array_equal(tr.V, V0)
    assert not np.array_equal(tr.Q, Q0)
    assert np.allclose(tr.Q, wb.scenario.X @ wb.scenario.heads[0].Wq)
    panel.flush()
    # The readout marks the changed query cells, and no key or value cell.
    marks = panel._marks
    assert marks["Wq"].any() and not marks["Wk"].any() and not marks["Wv"].any()
    qgrid = panel.products["Wq"].grid
    r, c = np.argwhere(marks["Wq"])[0]
    assert qgrid.item(int(r), int(c)).background().color() == CHANGED
    assert panel.products["Wk"].grid.item(0, 0).background().color() != CHANGED
    assert "Q changed; K, V unchanged" in panel.summary.text()
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.heads[0].Wq, np.eye(4))
    assert np.array_equal(wb.trace.Q, Q0)


def test_editing_wv_changes_only_the_values(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    tr0 = wb.trace
    Q0, K0, V0, W0 = tr0.Q.copy(), tr0.K.copy(), tr0.V.copy(), tr0.weights.copy()
    panel.blocks["Wv"].grid.item(0, 3).setText("-2")
    assert wb.scenario.heads[0].Wv[0, 3] == -2.0
    tr = wb.trace
    assert np.array_equal(tr.Q, Q0) and np.array_equal(tr.K, K0)
    assert np.array_equal(tr.weights, W0)  # the route is untouched
    assert not np.array_equal(tr.V, V0)
    panel.flush()
    assert "V changed; Q, K unchanged" in panel.summary.text()


def test_editing_x_elsewhere_marks_all_three(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    wb.edit(edits.set_vector(wb.scenario, "x", 1, [0.0, 0.5, 0.0, 0.2]), "move river")
    panel.flush()
    assert all(panel._marks[m].any() for m in ("Wq", "Wk", "Wv"))
    assert wb.undo_stack.count() == 1  # the redraw pushed nothing


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "", "1/2"])
def test_bad_input_is_refused(make_wb, text, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    before = wb.scenario
    changes = record(wb.changed)
    messages = record(wb.message)
    panel.blocks["Wk"].grid.item(2, 2).setText(text)
    assert wb.scenario is before and wb.undo_stack.count() == 0 and changes == []
    assert panel.blocks["Wk"].grid.item(2, 2).text() == "1.00"
    assert panel.message.isVisible() and "Wk[3, 3]" in panel.message.text()
    assert messages and messages[-1][0].startswith("Refused")


# ---- presets ------------------------------------------------------------------------------------
def test_presets_set_exact_matrices(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    assert menu_texts(panel, "Wq")[:3] == ["identity", "swap", "zero"]
    menu_action(panel, "Wq", "swap").trigger()
    assert np.array_equal(wb.scenario.heads[0].Wq, np.eye(4)[:, ::-1])
    panel.flush()
    assert "= swap" in panel.blocks["Wq"].title.text()
    menu_action(panel, "Wk", "zero").trigger()
    assert np.array_equal(wb.scenario.heads[0].Wk, np.zeros((4, 4)))
    assert np.array_equal(wb.scenario.heads[0].Wq, np.eye(4)[:, ::-1])
    menu_action(panel, "Wq", "identity").trigger()
    assert np.array_equal(wb.scenario.heads[0].Wq, np.eye(4))
    assert wb.undo_stack.count() == 3
    wb.undo_stack.undo()
    assert np.array_equal(wb.scenario.heads[0].Wq, np.eye(4)[:, ::-1])


def test_scenario_wq_presets(make_wb, show_panel):
    wb = make_wb("wq-find-finance")
    panel = show_panel(ProjectionsPanel(wb))
    texts = menu_texts(panel, "Wq")
    assert "identity" not in texts  # Wq is 4×3: no identity, no swap
    assert "“find water evidence”" in texts
    assert not any("evidence" in t for t in menu_texts(panel, "Wk"))
    K0 = wb.trace.K.copy()
    menu_action(panel, "Wq", "“find water evidence”").trigger()
    expected = np.zeros((4, 3))
    expected[2, 1] = 3.75
    assert np.array_equal(wb.scenario.heads[0].Wq, expected)
    assert np.array_equal(wb.trace.K, K0)
    panel.flush()
    assert "find water evidence" in panel.blocks["Wq"].title.text()


def test_random_preset_is_seeded_and_shows_its_seed(make_wb, show_panel, record):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    panel.seed.setValue(42)
    panel.flush()
    assert "random (seed 42)" in menu_texts(panel, "Wv")
    messages = record(wb.message)
    menu_action(panel, "Wv", "random").trigger()
    assert np.array_equal(wb.scenario.heads[0].Wv, preset_matrix("random", (4, 4), 42))
    assert any("seed 42" in m[0] for m in messages)
    panel.flush()
    assert "random, seed 42" in panel.blocks["Wv"].title.text()
    assert wb.undo_stack.text(0).endswith("(seed 42)")


# ---- heads and Wo -------------------------------------------------------------------------------
def test_head_selector_edits_the_focused_head_only(make_wb, show_panel):
    wb = make_wb("two-heads")
    panel = show_panel(ProjectionsPanel(wb))
    assert panel.head_combo.isVisible() and panel.head_combo.count() == 2
    h0 = wb.scenario.heads[0]
    panel.head_combo.setCurrentIndex(1)
    assert wb.focused_head == 1 and wb.undo_stack.count() == 0
    panel.flush()
    g = panel.blocks["Wq"].grid
    W1 = wb.scenario.heads[1].Wq
    assert g.item(0, 0).text() == f"{W1[0, 0]:.2f}".replace("-", "−")
    g.item(3, 1).setText("0.25")
    assert wb.scenario.heads[1].Wq[3, 1] == 0.25
    assert wb.scenario.heads[0].equals(h0)
    assert "head 2" in wb.undo_stack.text(0)


def test_wo_is_editable_when_present(make_wb, show_panel):
    wb = make_wb("two-heads")
    panel = show_panel(ProjectionsPanel(wb))
    block = panel.blocks["Wo"]
    assert not block.isHidden()
    assert (block.grid.rowCount(), block.grid.columnCount()) == wb.scenario.Wo.shape
    block.grid.item(0, 1).setText("0.5")
    assert wb.scenario.Wo[0, 1] == 0.5
    block.grid.item(0, 1).setText("inf")
    assert wb.scenario.Wo[0, 1] == 0.5 and wb.undo_stack.count() == 1
    menu_action(panel, "Wo", "zero").trigger()
    assert not wb.scenario.Wo.any()


def test_direct_mode_explains_there_are_no_projections(make_wb, show_panel):
    wb = make_wb("routing-lab")
    panel = show_panel(ProjectionsPanel(wb))
    assert panel.stack.currentIndex() == 1
    assert "No projections" in panel.direct_note.text()
    assert "Vectors" in panel.direct_note.text()
    panel.apply_preset("Wq", "identity")
    assert wb.undo_stack.count() == 0 and "direct" in panel.message.text()


def test_export_png_and_svg_with_text(make_wb, show_panel, export_png_svg):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    text = export_png_svg(panel.figure_widget())
    assert "<text" in text and "finance" in text and "Wq" in text


def test_loading_other_scenarios_switches_cleanly(make_wb, show_panel):
    from attnsim.resources import resolve_scenario

    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    panel.blocks["Wq"].grid.item(0, 0).setText("2")  # leaves marks on Q
    panel.flush()
    assert panel._marks["Wq"].any()
    wb.load(resolve_scenario("wq-find-water"))  # same tokens, other shapes
    panel.flush()
    assert panel._marks == {} and "Last edit" not in panel.summary.text()
    assert panel.blocks["Wq"].grid.columnCount() == 3
    wb.load(resolve_scenario("routing-lab"))
    panel.flush()
    assert panel.stack.currentIndex() == 1
    wb.load(resolve_scenario("two-heads"))
    panel.flush()
    assert panel.stack.currentIndex() == 0 and panel.head_combo.isVisible()
    assert not panel.blocks["Wo"].isHidden()


# ---- long sequences -----------------------------------------------------------------------------
def long_scenario(n: int = 2048, d: int = 8, seed: int = 0):
    return random_scenario(n, d, seed=seed, mask="causal", receiving=n - 1, name=f"long{n}")


def test_2048_tokens_render_every_row_of_q_k_v(make_wb, show_panel):
    wb = make_wb(long_scenario())
    panel = show_panel(ProjectionsPanel(wb), size=(700, 450))
    q = panel.products["Wq"].grid
    assert (q.rowCount(), q.columnCount()) == (2048, 8)
    assert q.verticalHeaderItem(2047).text() == "t2047"
    tr = wb.trace  # the engine's numbers, shown exactly (rounded to 2 decimals)
    for r in (0, 1024, 2047):
        assert q.item(r, 3).text() == f"{tr.Q[r, 3]:.2f}".replace("-", "−")
        assert q.item(r, 3).toolTip() == f"Q[t{r}, k4] = {float(tr.Q[r, 3])!r}"
    assert panel.products["Wv"].grid.item(2047, 7).text() == f"{tr.V[2047, 7]:.2f}".replace(
        "-", "−"
    )
    # A grid holds a few rows and scrolls: it does not grow with the sentence.
    assert q.height() < 300
    assert wb.undo_stack.count() == 0


def test_2048_tokens_edit_wq_marks_every_query_and_no_key(make_wb, show_panel, record):
    wb = make_wb(long_scenario())
    panel = show_panel(ProjectionsPanel(wb), size=(700, 450))
    changes = record(wb.changed)
    panel.blocks["Wq"].grid.item(0, 1).setText("0.5")
    # At this size the edit is in at once and told when its trace (computed apart) is in.
    assert wb.scenario.heads[0].Wq[0, 1] == 0.5 and wb.computing and not changes
    wb.finish_trace()
    assert len(changes) == 1
    panel.flush()
    marks = panel._marks
    X = wb.scenario.X
    assert np.array_equal(marks["Wq"][:, 1], X[:, 0] != 0) and not marks["Wq"][:, 0].any()
    assert not marks["Wk"].any() and not marks["Wv"].any()
    q = panel.products["Wq"].grid
    assert q.item(2047, 1).background().color() == CHANGED
    assert q.item(2047, 0).background().color() != CHANGED
    assert q.item(2047, 1).text() == f"{(X @ wb.scenario.heads[0].Wq)[2047, 1]:.2f}".replace(
        "-", "−"
    )
    assert "Q changed; K, V unchanged" in panel.summary.text()
    # A refusal at this size reads as at three tokens.
    panel.blocks["Wq"].grid.item(0, 1).setText("abc")
    assert wb.undo_stack.count() == 1 and "Wq[1, 2]" in panel.message.text()
    assert panel.blocks["Wq"].grid.item(0, 1).text() == "0.50"


def test_2048_tokens_edit_one_x_repaints_one_row(make_wb, show_panel, record):
    wb = make_wb(long_scenario())
    panel = show_panel(ProjectionsPanel(wb), size=(700, 450))
    q = panel.products["Wq"].grid
    repaints = record(q.array_model.dataChanged)
    resets = record(q.array_model.modelReset)
    wb.edit(edits.set_vector(wb.scenario, "x", 700, np.arange(8.0)), "x")
    panel.flush()
    assert resets == [] and {a[0].row() for a in repaints} == {700}
    assert np.flatnonzero(panel._marks["Wq"].any(axis=1)).tolist() == [700]
    assert q.item(700, 5).text() == "5.00" and q.item(700, 5).background().color() == CHANGED
    # A selection is not an edit: the marks of the last edit stay, nothing is redrawn.
    repaints.clear()
    wb.set_receiving(3)
    panel.flush()
    assert repaints == [] and panel._marks["Wq"][700].all()


def test_array_delegate_paints_like_the_stock_delegate(qapp):
    from PySide6.QtWidgets import QStyledItemDelegate

    from attnsim.panels.array_table import ArrayTable

    tables = []
    for stock in (False, True):
        t = ArrayTable(editable=True)
        if stock:
            t.setItemDelegate(QStyledItemDelegate(t))  # styles each cell from data()
        M = np.array([[1.0, -2.5, 0.125], [3.0, 0.0, -0.004]])
        marks = np.array([[False, True, False], [True, False, False]])
        t.array_model.white = True
        t.show_array(M, ("1", "2"), ("name", "a", "b", "c"), names=("x", "yy"), marks=marks,
                     bold_row=1)  # fmt: skip
        t.resize(420, 120)
        t.show()
        tables.append(t)
    QApplication.processEvents()
    ours, stock = (t.grab().toImage() for t in tables)
    assert ours == stock
    for t in tables:
        t.close()


# ---- the grids sub-view on its own ---------------------------------------------------------------
def test_the_grids_show_their_data_and_report_gestures(qtbot, make_wb, record):
    from attnsim.panels.projections.grids import ProjectionGrids
    from attnsim.viewmodels.projections import grids_data, head_products

    sc = make_wb("wq-find-water").scenario
    h = sc.heads[0]
    products = head_products(sc.X, h.Wq, h.Wk, h.Wv)
    marks = {m: np.zeros(products[m].shape, dtype=bool) for m in products}
    marks["Wk"][1, 0] = True
    view = ProjectionGrids()
    qtbot.addWidget(view)
    edited, picked = record(view.cell_edited), record(view.preset_picked)
    view.refresh(grids_data(sc, 0, products, marks, "K changed", {}, 11))
    assert edited == [] and picked == []  # a redraw is no gesture
    assert view.objectName() == "projections-content"
    assert view.blocks["Wq"].grid.item(2, 1).text() == "3.75"
    assert "find water evidence" in view.blocks["Wq"].title.text()
    assert "1 changed" in view.products["Wk"].title.text()
    assert "unchanged" in view.products["Wq"].title.text()
    assert view.products["Wk"].grid.item(1, 0).background().color() == CHANGED
    menu = view.blocks["Wv"].presets.menu()
    assert [a.text() for a in menu.actions() if a.text()][-1] == "random (seed 11)"
    next(a for a in menu.actions() if a.text() == "zero").trigger()
    assert picked == [("Wv", "zero")]
    wq_menu = view.blocks["Wq"].presets.menu()
    next(a for a in wq_menu.actions() if a.text() == "“find water evidence”").trigger()
    assert picked[-1] == ("Wq", "find water evidence")
    view.blocks["Wk"].grid.item(0, 0).setText("0.5")
    assert edited == [("Wk", 0, 0, "0.5")]
    assert view.blocks["Wo"].isHidden() == (sc.Wo is None)


def test_a_preset_menu_is_rebuilt_only_when_its_entries_change(qtbot):
    from attnsim.panels.projections.grid import Block

    block = Block("Wq", editable=True)
    qtbot.addWidget(block)
    block.set_presets("Wq", ("zero", "random (seed 1)"), ())
    actions = block.presets.menu().actions()
    block.set_presets("Wq", ("zero", "random (seed 1)"), ())
    assert block.presets.menu().actions() == actions
    block.set_presets("Wq", ("zero", "random (seed 2)"), ("mine",))
    texts = [a.text() for a in block.presets.menu().actions() if a.text()]
    assert texts == ["zero", "random (seed 2)", "“mine”"]
    assert block.presets.toolTip() == "Fill Wq with a preset: zero, random (seed 2), “mine”"


def test_opened_in_steps_the_grids_show_the_engines_numbers(make_wb, show_panel):
    # The window opens the panel in steps: the grids come in parts of their own (a row of
    # them a part: Wq → Q, Wk → K, Wv → V, Wo), put in the panel in the last, and the finished
    # panel shows the engine's Q as one built at once does.
    from attnsim.panels.base import parts_built_later

    wb = make_wb("wq-find-water")
    with parts_built_later():
        stepped = ProjectionsPanel(wb)
    assert not hasattr(stepped, "grids")  # waiting for its part
    assert stepped.build_next_part() and not stepped.grids.blocks  # the grids' frame
    made = []
    while stepped.build_next_part():
        made.append((list(stepped.grids.blocks), stepped.scroll.widget() is stepped.grids))
    assert made == [
        (["Wq"], False),
        (["Wq", "Wk"], False),
        (["Wq", "Wk", "Wv"], False),
        (["Wq", "Wk", "Wv", "Wo"], False),
        (["Wq", "Wk", "Wv", "Wo"], True),  # in the panel
    ]
    stepped.opening = False
    show_panel(stepped)
    q = stepped.products["Wq"].grid
    assert stepped.scroll.widget() is stepped.grids and stepped.stack.currentIndex() == 0
    assert q.item(2, 1).text() == f"{wb.trace.Q[2, 1]:.2f}"
    assert stepped.blocks["Wq"].grid.item(2, 1).text() == "3.75"


def test_a_grids_column_names_keep_their_fixed_height_and_the_grids_width(qtbot):
    # The names row is HEAD_PX high and as long as the columns, without Qt measuring every
    # name at each change of geometry; the names are the ones given.
    from PySide6.QtCore import QSize

    from attnsim.panels.projections.grid import HEAD_PX, MatrixGrid

    g = MatrixGrid(editable=False)
    qtbot.addWidget(g)
    rows, cols = tuple(f"t{i}" for i in range(300)), tuple(f"q{j + 1}" for j in range(12))
    g.show_matrix(np.arange(300 * 12.0).reshape(300, 12), rows, cols, name="Q", max_rows=8)
    g.show()
    qtbot.waitExposed(g)
    h = g.horizontalHeader()
    assert h.sizeHint() == QSize(sum(g.columnWidth(c) for c in range(12)), HEAD_PX)
    assert h.height() == HEAD_PX and h.sectionsClickable()
    assert [g.horizontalHeaderItem(c).text() for c in range(12)] == list(cols)
    assert g.item(299, 11).text() == f"{299 * 12 + 11.0:.2f}"


def test_the_products_are_the_traces_own_once_it_is_in(make_wb, show_panel, monkeypatch):
    from attnsim.panels.projections import panel as panel_module

    made = []
    real = panel_module.head_products
    monkeypatch.setattr(panel_module, "head_products", lambda *a: made.append(1) or real(*a))
    wb = make_wb(long_scenario())
    tr = wb.result.heads[0]  # the trace made (in the window, the panels beside it make it)
    panel = show_panel(ProjectionsPanel(wb), size=(700, 450))
    assert made == [] and panel._last_products[1]["Wq"] is tr.Q  # not made again
    assert panel._last_products[1]["Wk"] is tr.K and panel._last_products[1]["Wv"] is tr.V
    # an edit whose trace is still being computed: the products are made here meanwhile
    X = np.array(wb.scenario.X)
    X[5, 0] += 1.0
    wb.edit(wb.scenario.replace(X=X), "edit")
    assert wb.computing
    panel.refresh()
    assert made == [1]
    np.testing.assert_array_equal(panel._last_products[1]["Wq"], X @ wb.scenario.heads[0].Wq)
    wb.finish_trace()
    panel.flush()
    assert panel._last_products[1]["Wq"] is wb.result.heads[0].Q
