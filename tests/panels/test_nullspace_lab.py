"""The null-space lab: a null-space move leaves query and weights alone, a row-space move does
not; real mouse drags slide the input along the line; M edits are validated and undoable."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine.attention import direct_trace
from attnsim.export import export_widget
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.nullspace_lab import DEFAULT_T, NullSpaceLabPanel, NullSpaceLabState
from attnsim.viewmodels.nullspace_lab import DEFAULT_E, DEFAULT_KEYS, DEFAULT_M, query_probe

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def panel(make_wb, show_panel):
    return show_panel(NullSpaceLabPanel(make_wb("river-bank")), size=(760, 480))


class Seen:
    def __init__(self, wb):
        self.keys: list[str] = []  # the lab's fields that changed, per lab change
        self.changed: list[frozenset] = []
        wb.lab_changed.connect(self._lab)
        wb.changed.connect(self.changed.append)

    def _lab(self, change) -> None:
        for f in dataclasses.fields(change.kind):
            if getattr(change.before, f.name) != getattr(change.after, f.name):
                self.keys.append(f.name)


def state(wb) -> NullSpaceLabState:
    return wb.lab_state(NullSpaceLabState)


def shown_row(panel, j) -> list[str]:
    return [panel.key_table.item(j, c).text() for c in range(3)]


def test_defaults_show_the_reference_example_with_the_engine_numbers(panel):
    probe = panel.probe
    np.testing.assert_allclose(probe.query, [4.0, 5.0], atol=1e-14)
    np.testing.assert_allclose(probe.x, [2.0, 3.0, 2.0], atol=1e-15)  # e + n
    np.testing.assert_allclose(probe.base_query, [4.0, 5.0])
    K = np.array(DEFAULT_KEYS)
    tr = direct_trace(probe.query[None, :], K, K, scale=True)
    for j in range(3):
        assert shown_row(panel, j)[1:] == [
            fmt_fixed(tr.scores[0, j], 3),
            fmt_fixed(tr.weights[0, j], 4),
        ]
    assert "[4.000, 5.000]" in panel.readout.text()
    assert "same query" in panel.readout.text()
    assert [panel.m_table.item(r, c).text() for r in range(2) for c in range(3)] == [
        "1", "0", "1", "0", "1", "1",
    ]  # fmt: skip
    assert [s.value() for s in panel.e_spins] == list(DEFAULT_E)
    assert panel.t_slider.value() == 100 and panel.s_slider.value() == 0
    assert "[1.00, 1.00, −1.00]" in panel.t_slider.property("name_label").text()
    assert panel.wb.undo_stack.count() == 0


def test_null_space_slider_keeps_query_and_weights_row_slider_changes_them(panel):
    wb = panel.wb
    base = query_probe(DEFAULT_M, DEFAULT_E, 0.0)
    seen = Seen(wb)
    # A slider drag: many moves, one undo step.
    panel.t_slider.setSliderDown(True)
    for v in (120, 180, 250, -260):
        panel.t_slider.setValue(v)
        panel.flush()
        np.testing.assert_allclose(panel.probe.query, base.query, rtol=0, atol=1e-12)
        np.testing.assert_allclose(panel.probe.weights, base.weights, rtol=0, atol=1e-12)
        np.testing.assert_allclose(panel.probe.scores, base.scores, rtol=0, atol=1e-12)
    panel.t_slider.setSliderDown(False)
    assert state(wb).t == -2.6
    assert wb.undo_stack.count() == 1
    np.testing.assert_allclose(panel.probe.x, np.array(DEFAULT_E) - 2.6 * np.array([1, 1, -1]))
    assert seen.changed == []  # the scenario itself is untouched
    shown = [shown_row(panel, j) for j in range(3)]
    panel.s_slider.setValue(50)  # a click on the slider track: its own undo step
    panel.flush()
    assert wb.undo_stack.count() == 2 and state(wb).s == 0.5
    dq = panel.probe.query - base.query
    assert np.abs(dq).max() > 0.5
    assert np.abs(panel.probe.weights - base.weights).max() > 1e-3
    assert [shown_row(panel, j) for j in range(3)] != shown
    assert "same query" not in panel.readout.text()
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    panel.flush()
    assert state(wb).t == DEFAULT_T and state(wb).s == 0.0 and panel.t() == 1.0
    assert panel.t_slider.value() == 100 and panel.s_slider.value() == 0


def screen(panel, world) -> QPoint:
    xy, _ = panel.view3d.project(np.asarray(world, dtype=float)[None, :])
    return QPoint(round(xy[0, 0]), round(xy[0, 1]))


def drag(widget, start: QPoint, end: QPoint, modifier=NOMOD, steps: int = 6) -> None:
    QTest.mousePress(widget, LEFT, modifier, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(widget, start + (end - start) * (k / steps))
    QTest.mouseRelease(widget, LEFT, modifier, end)


def test_dragging_x_along_the_null_line_with_the_mouse(panel):
    wb = panel.wb
    view = panel.view3d
    n = np.array([1.0, 1.0, -1.0])
    e = np.array(DEFAULT_E)
    base = query_probe(DEFAULT_M, DEFAULT_E, 0.0)
    seen = Seen(wb)
    start = screen(panel, e + 1.0 * n)
    end = screen(panel, e + 2.0 * n)
    assert (end - start).manhattanLength() > 20
    drag(view, start, end)
    panel.flush()
    t = state(wb).t
    assert t == pytest.approx(2.0, abs=0.05)
    assert wb.undo_stack.count() == 1  # the whole drag is one step
    assert set(seen.keys) == {"t"}
    np.testing.assert_allclose(panel.probe.query, base.query, rtol=0, atol=1e-12)
    np.testing.assert_allclose(panel.probe.weights, base.weights, rtol=0, atol=1e-12)
    wb.undo_stack.undo()
    panel.flush()
    assert state(wb) == NullSpaceLabState() and panel.t() == 1.0


def test_shift_drag_moves_x_along_the_row_space_and_changes_the_query(panel):
    wb = panel.wb
    r = panel.probe.spaces.row_dir
    x = panel.probe.x
    drag(panel.view3d, screen(panel, x), screen(panel, x + 1.0 * r), SHIFT)
    panel.flush()
    assert state(wb).s == pytest.approx(1.0, abs=0.05)
    assert state(wb).t == DEFAULT_T  # t untouched
    assert np.abs(panel.probe.query - [4.0, 5.0]).max() > 0.5
    assert wb.undo_stack.count() == 1


def test_dragging_empty_space_orbits_and_never_edits(panel):
    wb = panel.wb
    view = panel.view3d
    cam = view.camera
    corner = QPoint(12, view.height() - 30)
    drag(view, corner, corner + QPoint(60, -20))
    assert view.camera != cam
    assert wb.undo_stack.count() == 0


def test_matrix_edits_are_validated_and_undoable(panel):
    wb = panel.wb
    messages: list[str] = []
    wb.message.connect(messages.append)
    panel.m_table.item(0, 0).setText("2")  # as if typed into the cell
    np.testing.assert_array_equal(state(wb).M, [[2, 0, 1], [0, 1, 1]])
    assert wb.undo_stack.count() == 1
    panel.flush()
    # New map, new null space: (1, 2, -2)/2 scaled to a largest entry of 1.
    np.testing.assert_allclose(panel.probe.spaces.null_dir, [0.5, 1.0, -1.0], atol=1e-12)
    for bad, word in (("abc", "not a number"), ("inf", "not a finite"), ("1e9", "outside")):
        panel.m_table.item(1, 2).setText(bad)
        assert word in panel.refusal.text() and panel.refusal.isVisibleTo(panel)
        assert "M[2,3]" in panel.refusal.text()
        assert any(word in m for m in messages)
        np.testing.assert_array_equal(state(wb).M, [[2, 0, 1], [0, 1, 1]])
        panel.flush()
        assert panel.m_table.item(1, 2).text() == "1"  # the stored value is back
    assert wb.undo_stack.count() == 1
    panel.m_table.item(1, 2).setText("−0.5")  # a typographic minus is fine
    assert state(wb).M[1][2] == -0.5 and not panel.refusal.isVisibleTo(panel)
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    panel.flush()
    assert state(wb).M == DEFAULT_M
    assert panel.m_table.item(0, 0).text() == "1"


def test_input_e_edit_and_example_reset_are_single_undo_steps(panel):
    wb = panel.wb
    panel.e_spins[2].setValue(-1.5)
    np.testing.assert_array_equal(state(wb).e, [1.0, 2.0, -1.5])
    panel.flush()
    np.testing.assert_allclose(panel.probe.base_query, [-0.5, 0.5])
    panel.t_slider.setValue(-150)
    panel.m_table.item(0, 1).setText("3")
    assert wb.undo_stack.count() == 3
    panel.reset_button.click()
    assert wb.undo_stack.count() == 4
    panel.flush()
    np.testing.assert_allclose(panel.probe.query, [4.0, 5.0], atol=1e-14)
    assert state(wb).t == 1.0
    wb.undo_stack.undo()  # the reset comes back as one step
    panel.flush()
    assert state(wb).t == -1.5 and state(wb).M[0][1] == 3.0
    assert state(wb).e[2] == -1.5


@pytest.mark.parametrize(
    "M, rank",
    [([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], 1), ([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], 0)],
)
def test_rank_deficient_maps_draw_and_keep_the_invariance(panel, M, rank):
    wb = panel.wb
    wb.set_lab_state(NullSpaceLabState(M=tuple(map(tuple, M))), "M")
    panel.flush()
    assert panel.probe.spaces.rank == rank
    before = panel.probe.weights.copy()
    panel.t_slider.setValue(-220)
    panel.flush()
    np.testing.assert_allclose(panel.probe.weights, before, rtol=0, atol=1e-12)
    assert panel.s_slider.isEnabled() == (rank > 0)
    image = panel.view3d.grab().toImage()
    assert not image.isNull()


def test_the_figure_exports_as_png_and_svg_with_text(panel, tmp_path):
    png = export_widget(panel.figure_widget(), tmp_path / "null.png", scale=1.0)
    svg = export_widget(panel.figure_widget(), tmp_path / "null.svg")
    assert png.stat().st_size > 10_000
    text = svg.read_text()
    assert text.count("<text") > 15
    for word in ("null space", "row space", "q = M x"):
        assert word in text


def test_the_view_keeps_its_scale_during_a_drag_and_refits_after(panel):
    view = panel.view3d
    n = np.array([1.0, 1.0, -1.0])
    e = np.array(DEFAULT_E)
    extent = view.extent
    start, end = screen(panel, e + n), screen(panel, e + 2.9 * n)
    QTest.mousePress(view, LEFT, NOMOD, start)
    for k in range(1, 7):
        QTest.mouseMove(view, start + (end - start) * (k / 6))
        panel.flush()
        assert view.extent == extent  # the point moves, the scene does not zoom
    assert state(panel.wb).t == pytest.approx(2.9, abs=0.05)
    QTest.mouseRelease(view, LEFT, NOMOD, end)
    panel.flush()
    x = panel.probe.x
    assert view.extent == pytest.approx(max(3.0, 1.5 * np.linalg.norm(e), 1.15 * np.linalg.norm(x)))
    assert view.extent > extent  # x went far out: the view refits to keep it in sight


def test_workbench_edits_elsewhere_do_not_redraw_the_lab(panel):
    from attnsim.engine import edits
    from attnsim.resources import resolve_scenario

    wb = panel.wb
    panel.flush()
    before = panel.refresh_count
    # Scenario edits, a drag elsewhere and selection changes: the lab draws none of them.
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.5, 0.1, 0.0, 0.2]), "elsewhere")
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    wb.set_receiving(0)
    wb.set_focused_key(1)
    QApplication.processEvents()
    panel.flush()
    assert panel.refresh_count == before and not panel._pending
    # Its own sandbox still redraws it.
    panel.set_param("t", 0.5)
    QApplication.processEvents()
    panel.flush()
    assert panel.refresh_count == before + 1
    np.testing.assert_allclose(panel.probe.x, np.array(DEFAULT_E) + 0.5 * np.array([1, 1, -1]))
    # Opening another document clears the sandbox: the lab shows the example again.
    wb.load(resolve_scenario("bank-river"))
    QApplication.processEvents()
    panel.flush()
    assert panel.refresh_count == before + 2
    assert panel.t() == 1.0
    np.testing.assert_allclose(panel.probe.x, [2.0, 3.0, 2.0], atol=1e-14)


@pytest.mark.parametrize("size", [(760, 480), (420, 320)])
def test_query_space_names_do_not_overlap(make_wb, show_panel, size):
    from PySide6.QtWidgets import QApplication

    from attnsim.panels.kit.labels import any_overlap

    lab = show_panel(NullSpaceLabPanel(make_wb("river-bank")), size=size)
    lab.qview.repaint()
    lab.view3d.repaint()
    QApplication.processEvents()
    rects = lab.qview.label_rects
    assert len(rects) == 4  # k1, k2, k3 and q = M x
    assert not any_overlap(rects), rects
    names = lab.view3d.label_rects  # the input space: points, subspaces and axes
    assert len(names) >= 6
    assert not any_overlap(names), names
    for x, y, w, h in rects:
        assert x >= 0 and y >= 0
        assert x + w <= lab.qview.width() and y + h <= lab.qview.height()


# ---- the sub-views on their own -----------------------------------------------------------------
def test_the_map_editor_shows_values_and_reports_edits(qtbot, record):
    from attnsim.panels.nullspace_lab.controls import MapEditor

    editor = MapEditor()
    qtbot.addWidget(editor)
    cells, es = record(editor.cell_edited), record(editor.e_edited)
    editor.refresh(np.array([[1.0, 0.0, 1.5], [0.0, -2.0, 1.0]]), np.array([1.0, 2.0, 3.0]))
    assert [editor.m_table.item(0, c).text() for c in range(3)] == ["1", "0", "1.5"]
    assert editor.m_table.item(1, 1).text() == "-2"
    assert [sp.value() for sp in editor.e_spins] == [1.0, 2.0, 3.0]
    cells.clear()
    es.clear()
    editor.refresh(np.array([[1.0, 0.0, 1.5], [0.0, -2.0, 1.0]]), np.array([1.0, 2.0, 3.0]))
    assert cells == [] and es == []  # what already shows is left alone
    editor.m_table.item(0, 2).setText("4")
    assert cells == [(0, 2, "4")]
    editor.e_spins[1].setValue(-1.5)
    assert es == [(1, -1.5)]


def test_the_param_sliders_show_rows_and_keep_a_held_slider(qtbot, record):
    from attnsim.panels.nullspace_lab.controls import ParamSliders
    from attnsim.viewmodels.nullspace_lab import ParamRow

    view = ParamSliders()
    qtbot.addWidget(view)
    moved = record(view.moved)
    rows = (ParamRow("t", 1.25, "t along n", "t = 1.25", True),
            ParamRow("s", -0.5, "s: only 0", "s = −0.50", False))  # fmt: skip
    view.refresh(rows)
    assert view.sliders["t"].value() == 125 and view.sliders["s"].value() == -50
    assert view.values["t"].text() == "t = 1.25" and view.names["s"].text() == "s: only 0"
    assert view.sliders["t"].isEnabled() and not view.sliders["s"].isEnabled()
    assert moved == [("t", 1.25), ("s", -0.5)]
    view.refresh((ParamRow("t", 2.0, "t along n", "t = 2.00", True),), frozenset({"t"}))
    assert view.sliders["t"].value() == 125 and view.values["t"].text() == "t = 2.00"
    assert not view.any_down()


def test_the_key_table_and_the_views_show_the_lab_view(qtbot, make_wb, show_panel):
    from attnsim.panels.nullspace_lab.controls import KeyTable
    from attnsim.viewmodels.nullspace_lab import input_scene, lab_view

    view = lab_view(NullSpaceLabState(t=-2.0, s=0.5))
    table = KeyTable()
    qtbot.addWidget(table)
    table.refresh(view)
    for j, cells in enumerate(view.key_cells):
        assert [table.item(j, c).text() for c in range(3)] == list(cells)
        assert table.item(j, 0).toolTip() == view.key_tips[j]
    panel = show_panel(NullSpaceLabPanel(make_wb()), size=(700, 450))
    panel.qview.refresh(view.query_plane)
    np.testing.assert_array_equal(panel.qview.query, view.probe.query)
    assert panel.qview.extent == view.query_plane.extent
    panel.view3d.refresh(input_scene(view, 4.0))
    assert panel.view3d.extent == 4.0 and (panel.view3d.t, panel.view3d.s) == (-2.0, 0.5)
    np.testing.assert_array_equal(panel.view3d.x, view.probe.x)
