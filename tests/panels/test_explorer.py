"""The dot-product explorer: real mouse drags, hold modes, engine numbers, linked pair, softmax."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits, geometry
from attnsim.panels.explorer import (
    A_DEFAULT,
    B_DEFAULT,
    ChoiceRow,
    ExplorerPanel,
    ExplorerState,
    ProductPlane,
    ReadoutsView,
    SoftmaxBars,
    StripControls,
    VectorSliders,
)
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.viewmodels import explorer as em


def settle(panel: ExplorerPanel) -> None:
    for _ in range(3):
        QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


@pytest.fixture
def panel_on(show_panel, make_wb):
    def build(name: str = "river-bank", mode: str = "free", hold: str = "free"):
        wb = make_wb(name)
        panel = ExplorerPanel(wb)
        panel.set_mode(mode)
        panel.set_hold(hold)
        show_panel(panel, size=(700, 450))
        settle(panel)  # a few more event rounds: the plot settles its range
        return wb, panel

    return build


def to_pixel(panel: ExplorerPanel, xy) -> QPoint:
    """Data coordinates of the plane -> a point on the plot's viewport."""
    QApplication.processEvents()
    scene = panel.view_box.mapViewToScene(QPointF(float(xy[0]), float(xy[1])))
    return panel.plot.mapFromScene(scene)


def drag(panel: ExplorerPanel, path) -> None:
    """Press at path[0], move through the rest, release at the end: real mouse events."""
    viewport = panel.plot.viewport()
    pixels = [to_pixel(panel, p) for p in path]
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pixels[0])
    for p in pixels[1:]:
        QTest.mouseMove(viewport, p)
    QTest.mouseRelease(
        viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pixels[-1]
    )
    settle(panel)


def stored(wb, name: str) -> np.ndarray:
    return np.asarray(getattr(wb.lab_state(ExplorerState), name), float)


def changed_fields(change) -> set[str]:
    return {
        f.name
        for f in dataclasses.fields(change.kind)
        if getattr(change.before, f.name) != getattr(change.after, f.name)
    }


def test_the_twenty_degree_example_shows_9_40(panel_on):
    _, panel = panel_on()
    v = panel.values
    assert v["len_a"] == "10.00" and v["len_b"] == "1.00"
    assert v["angle"] == "20.00°"
    assert v["dot"] == "9.40" and v["projection"] == "9.40"
    assert v["projection_vector"] == "(9.40, 0.00)"
    assert v["cosine"] == fmt_fixed(math.cos(math.radians(20)), 3)
    assert v["scaled"] == fmt_fixed(geometry.scaled_dot(A_DEFAULT, B_DEFAULT, 4), 2)
    assert panel._rows["dot"][1].text() == "9.40"  # the label on screen, not just the dict


def test_dragging_a_tip_is_one_undo_step_with_engine_numbers(panel_on, record):
    wb, panel = panel_on()
    scenario_changes = record(wb.changed)
    labs = record(wb.lab_changed)
    target = np.array([3.0, 4.0])
    drag(panel, [A_DEFAULT, A_DEFAULT + np.array([-1.0, 0.2]), (A_DEFAULT + target) / 2, target])
    a, b = stored(wb, "a"), stored(wb, "b")
    assert np.allclose(a, target, atol=0.15)  # where the mouse let go, to a pixel
    assert wb.undo_stack.count() == 1  # the whole drag merged into one step
    assert labs and set().union(*(changed_fields(c) for (c,) in labs)) == {"a"}
    assert scenario_changes == []  # sandbox vectors never touch the scenario
    v = panel.values
    assert v["len_a"] == fmt_fixed(float(np.linalg.norm(a)), 2)
    assert v["dot"] == fmt_fixed(geometry.dot(a, b), 2)
    assert v["projection"] == fmt_fixed(geometry.projection(a, b), 2)
    assert v["cosine"] == fmt_fixed(geometry.cosine(a, b), 3)
    assert v["angle"] == f"{geometry.angle(a, b, degrees=True):.2f}°"
    assert v["scaled"] == fmt_fixed(geometry.scaled_dot(a, b, 4), 2)
    wb.undo_stack.undo()
    settle(panel)
    assert np.array_equal(stored(wb, "a"), A_DEFAULT)
    assert panel.values["dot"] == "9.40"


def test_a_press_away_from_the_tips_moves_nothing(panel_on):
    wb, panel = panel_on()
    drag(panel, [[5.0, -2.0], [6.0, -1.0], [7.0, 0.0]])
    assert wb.undo_stack.count() == 0
    assert np.array_equal(stored(wb, "a"), A_DEFAULT)


def test_hold_lengths_keeps_lengths_while_the_angle_changes(panel_on):
    wb, panel = panel_on(hold="lengths")
    drag(panel, [A_DEFAULT, [8.0, 5.0], [2.0, 9.0]])
    a = stored(wb, "a")
    assert np.linalg.norm(a) == pytest.approx(10.0)
    assert geometry.angle(a, B_DEFAULT, degrees=True) > 60.0  # it turned a lot
    # b's tip, dragged to the other side: on its circle too
    drag(panel, [B_DEFAULT, [0.0, -1.5], [-0.2, -2.0]])
    b = stored(wb, "b")
    assert np.linalg.norm(b) == pytest.approx(1.0)
    assert b[1] < -0.9
    assert wb.undo_stack.count() == 2


def test_hold_angle_keeps_the_angle_while_the_length_changes(panel_on):
    wb, panel = panel_on(hold="angle")
    before = geometry.angle(A_DEFAULT, B_DEFAULT, degrees=True)
    drag(panel, [A_DEFAULT, [6.0, 1.0], [4.0, 3.0]])  # the mouse wanders off the ray
    a = stored(wb, "a")
    assert geometry.angle(a, B_DEFAULT, degrees=True) == pytest.approx(before)
    assert 3.0 < np.linalg.norm(a) < 6.0
    assert panel.values["angle"] == "20.00°"
    assert panel.values["len_a"] == fmt_fixed(float(np.linalg.norm(a)), 2)


def test_sliders_follow_the_hold_mode_and_a_slider_drag_is_one_step(panel_on, qtbot):
    wb, panel = panel_on(hold="angle")
    assert not panel.sliders["angle"].isEnabled() and panel.sliders["len_a"].isEnabled()
    panel.set_hold("lengths")
    settle(panel)
    assert panel.sliders["angle"].isEnabled() and not panel.sliders["len_a"].isEnabled()
    slider = panel.sliders["angle"]
    slider.sliderPressed.emit()
    for deg in (30, 45, 60):
        slider.setValue(deg * 2)
    slider.sliderReleased.emit()
    settle(panel)
    a = stored(wb, "a")
    assert wb.undo_stack.count() == 1
    assert np.linalg.norm(a) == pytest.approx(10.0)
    assert geometry.angle(a, B_DEFAULT, degrees=True) == pytest.approx(60.0)
    assert panel.values["dot"] == fmt_fixed(geometry.dot(a, B_DEFAULT), 2) == "5.00"


def test_length_slider_holds_the_angle(panel_on):
    wb, panel = panel_on(hold="angle")
    panel.sliders["len_a"].setValue(100)  # 100 / 400 of 20 = 5
    settle(panel)
    a = stored(wb, "a")
    assert np.linalg.norm(a) == pytest.approx(5.0)
    assert geometry.angle(a, B_DEFAULT, degrees=True) == pytest.approx(20.0)
    assert panel.values["dot"] == fmt_fixed(5 * math.cos(math.radians(20)), 2)


def test_a_zero_vector_shows_undefined_and_no_nan(panel_on):
    wb, panel = panel_on()
    panel.sliders["len_a"].setValue(0)
    settle(panel)
    assert not np.any(stored(wb, "a"))
    v = panel.values
    assert v["cosine"] == "undefined" and v["angle"] == "undefined"
    assert v["dot"] == "0.00" and v["projection"] == "0.00"
    wb.set_lab_state(dataclasses.replace(wb.lab_state(ExplorerState), b=(0.0, 0.0)), "zero b")
    settle(panel)
    v = panel.values
    assert v["projection"] == "undefined" and v["projection_vector"] == "undefined"
    texts = [w.text() for row in panel._rows.values() for w in row]
    texts += [w.text() for w in panel.slider_values.values()]
    texts += [panel.angle_text.toPlainText(), panel.shadow_text.toPlainText()]
    assert not any("nan" in t.lower() for t in texts)
    for item in panel.plot.getPlotItem().listDataItems():
        x, y = item.getData()
        assert x is None or (np.isfinite(x).all() and np.isfinite(y).all())
    # the length slider brings a back along its old direction
    panel.sliders["len_a"].setValue(200)
    settle(panel)
    assert np.allclose(stored(wb, "a"), A_DEFAULT)


def test_linked_pair_shows_the_heatmap_cell(panel_on):
    wb, panel = panel_on(mode="linked")
    bank, river = 2, 1
    assert panel.pair()[0] == bank  # the receiving token by default
    wb.set_focused_key(river)
    settle(panel)
    tr = wb.trace
    v = panel.values
    assert v["weight"] == "0.3105" == fmt_fixed(float(tr.weights[bank, river]), 4)
    assert v["dot"] == fmt_fixed(float(tr.scores[bank, river]))
    assert v["dot"] == fmt_fixed(geometry.dot(tr.Q[bank], tr.K[river]))
    assert v["scaled"] == "2" and tr.divisor == 2.0  # √4, T = 1
    assert v["logit"] == fmt_fixed(float(tr.logits[bank, river]))
    assert v["logit"] == fmt_fixed(geometry.scaled_dot(tr.Q[bank], tr.K[river], tr.d_k))
    assert v["cosine"] == fmt_fixed(geometry.cosine(tr.Q[bank], tr.K[river]))
    # the plane is an isometry: lengths and the dot survive the change of basis
    a, b = panel.vectors()
    assert float(a @ b) == pytest.approx(float(tr.scores[bank, river]))
    assert np.linalg.norm(a) == pytest.approx(np.linalg.norm(tr.Q[bank]))
    assert panel.key_combo.currentText() == "river"
    # token scenarios compute q and k: no tip can be grabbed, and the panel says why
    assert panel.pick(panel.view_box.mapViewToScene(QPointF(*a))) is None
    assert "cannot be dragged" in panel.hint.text()


def test_linked_pair_follows_workbench_edits(panel_on):
    wb, panel = panel_on(mode="linked")
    wb.set_focused_key(1)
    settle(panel)
    before = panel.values["weight"]
    wb.edit(edits.set_vector(wb.scenario, "x", 1, [0.0, 2.0, 0.0, 0.2]), "move river")
    settle(panel)
    tr = wb.trace
    assert panel.values["weight"] == fmt_fixed(float(tr.weights[2, 1]), 4) != before
    assert panel.values["dot"] == fmt_fixed(float(tr.scores[2, 1]))


def test_linked_default_key_is_the_top_weighted(panel_on):
    wb, panel = panel_on(mode="linked")
    i = wb.receiving
    assert panel.pair() == (i, int(np.argmax(wb.trace.weights[i])))
    panel.key_combo.setCurrentIndex(0)  # picking a key focuses it for every panel
    assert wb.focused_key == 0


def test_direct_mode_drag_edits_q_through_the_workbench(panel_on, record):
    wb, panel = panel_on("routing-lab", mode="linked")
    wb.set_focused_key(1)  # q = (1, 0), k_B = (0.8, 0.6)
    settle(panel)
    q0, k0 = np.array(wb.trace.Q[0]), np.array(wb.trace.K[1])
    changes = record(wb.changed)
    a, b = panel.vectors()
    assert np.linalg.norm(a) == pytest.approx(1.0) and float(a @ b) == pytest.approx(0.8)
    assert "edits this scenario" in panel.hint.text()
    target = np.array([0.3, 1.2])
    drag(panel, [a, (a + target) / 2, target])
    tr = wb.trace
    assert wb.undo_stack.count() == 1 and changes
    assert np.array_equal(tr.K[1], k0) and not np.allclose(tr.Q[0], q0)
    a2, _ = panel.vectors()
    assert np.allclose(a2, target, atol=0.05)
    assert panel.values["dot"] == fmt_fixed(float(tr.scores[0, 1]))
    assert panel.values["dot"] == fmt_fixed(geometry.dot(tr.Q[0], tr.K[1]))
    assert panel.values["weight"] == fmt_fixed(float(tr.weights[0, 1]), 4)
    wb.undo_stack.undo()
    assert np.array_equal(wb.trace.Q[0], q0)


def test_dragging_the_top_key_pins_the_pair(panel_on):
    wb, panel = panel_on("routing-lab", mode="linked", hold="angle")
    wb.edit(edits.set_vector(wb.scenario, "q", 0, [0.6, 0.8]), "turn q")  # B now wins
    settle(panel)
    assert wb.focused_key is None
    i, j = panel.pair()
    assert j == 1
    _, b = panel.vectors()
    drag(panel, [b, b * 0.7, b * 0.2])  # shrink the top key: another key would win
    assert wb.focused_key == j and panel.pair() == (i, j)
    tr = wb.trace
    assert int(np.argmax(tr.weights[i])) != j  # it lost the top spot, the view stayed on it
    assert panel.values["weight"] == fmt_fixed(float(tr.weights[i, j]), 4)
    assert geometry.angle(tr.K[j], [0.8, 0.6]) == pytest.approx(0.0, abs=1e-7)  # angle held
    assert np.linalg.norm(tr.K[j]) < 0.5


def test_softmax_strip_reproduces_the_reference_rows(panel_on):
    wb, panel = panel_on()
    assert panel.bars.texts == [["86.7%", "11.7%", "1.6%"], ["66.5%", "24.5%", "9.0%"]]
    panel.scale_check.setChecked(False)
    settle(panel)
    assert panel.bars.texts[1] == ["86.7%", "11.7%", "1.6%"]
    assert wb.undo_stack.count() == 1
    wb.undo_stack.undo()
    settle(panel)
    assert panel.scale_check.isChecked() and panel.bars.texts[1][0] == "66.5%"


def test_temperature_and_scores_edit_the_strip(panel_on):
    wb, panel = panel_on()
    panel.scale_check.setChecked(False)
    panel.temp_slider.show_value(2.0)
    settle(panel)
    t = float(wb.lab_state(ExplorerState).temperature)
    from attnsim.engine.attention import softmax

    want = softmax(np.array([4.0, 2.0, 0.0]) / t)
    assert panel.bars.texts[1] == [f"{100 * w:.1f}%" for w in want]
    panel.set_scores_text("1, 1, 1, 1")
    settle(panel)
    assert panel.bars.texts[0] == ["25.0%"] * 4


def test_bad_scores_are_refused_and_nothing_changes(panel_on):
    wb, panel = panel_on()
    panel.set_scores_text("4, two, 0")
    settle(panel)
    assert "'two' is not a number" in panel.strip_error.text()
    assert panel.last_refusal and wb.undo_stack.count() == 0
    assert panel.bars.texts[0] == ["86.7%", "11.7%", "1.6%"]
    panel.set_scores_text("7")
    assert "at least two" in panel.strip_error.text()


def test_redraw_pushes_nothing(panel_on):
    wb, panel = panel_on(mode="linked")
    for mode in ("free", "linked", "free"):
        panel.set_mode(mode)
        settle(panel)
        panel.schedule_refresh()
        settle(panel)
    assert wb.undo_stack.count() == 0


def test_export_png_and_svg_with_text(panel_on, tmp_path):
    from attnsim.export import export_widget

    _, panel = panel_on()
    png = export_widget(panel.figure_widget(), tmp_path / "explorer.png")
    svg = export_widget(panel.figure_widget(), tmp_path / "explorer.svg")
    pdf = export_widget(panel.figure_widget(), tmp_path / "explorer.pdf")
    assert png.stat().st_size > 5000 and pdf.stat().st_size > 1000
    text = svg.read_text()
    assert "<text" in text and "9.40" in text and "86.7%" in text


def test_hovering_a_tip_shows_a_grab_cursor(panel_on):
    _, panel = panel_on()
    viewport = panel.plot.viewport()
    QTest.mouseMove(viewport, to_pixel(panel, [5.0, -2.0]))
    assert viewport.cursor().shape() == Qt.CursorShape.ArrowCursor
    QTest.mouseMove(viewport, to_pixel(panel, A_DEFAULT))
    assert viewport.cursor().shape() == Qt.CursorShape.OpenHandCursor


def test_a_masked_pair_says_so(panel_on):
    wb, panel = panel_on("bank-river", mode="linked")
    wb.set_receiving(0)
    wb.set_focused_key(2)  # causal: "the" cannot read "river"
    settle(panel)
    assert panel.values["weight"] == "0.0000"
    assert "masked" in panel._rows["logit"][2].text()


def test_narrow_panel_moves_the_notes_into_tool_tips(panel_on):
    wb, panel = panel_on()
    name, value, note = panel._rows["dot"]
    assert note.isVisible() and note.text() == "= ‖a‖ ‖b‖ cos θ"
    assert note.width() >= note.sizeHint().width()  # room for the whole note, not cut off
    panel.resize(480, 400)
    settle(panel)
    assert panel.width() == 480  # the panel may be that narrow
    assert not note.isVisible()
    assert value.toolTip() == name.toolTip() == "= ‖a‖ ‖b‖ cos θ"
    assert panel.plot.width() >= 200  # the plane keeps a usable size beside the readouts
    wb.set_lab_state(dataclasses.replace(wb.lab_state(ExplorerState), d_k=9), "d_k")
    settle(panel)
    assert not panel._rows["scaled"][2].isVisible()
    assert panel._rows["scaled"][1].toolTip() == "d_k = 9"
    panel.resize(800, 450)
    settle(panel)
    assert note.isVisible() and panel._rows["scaled"][2].isVisible()
    assert panel.minimumSizeHint().width() <= 480  # wide or narrow, the minimum stays small


def test_linked_readout_uses_the_traces_divisor_at_any_temperature(panel_on):
    wb, panel = panel_on(mode="linked")
    wb.edit(wb.scenario.replace(temperature=0.002), "T")
    settle(panel)
    tr = wb.trace
    i, j = panel.pair()
    assert tr.divisor == pytest.approx(0.004)
    assert panel.values["scaled"] == "0.004"
    assert panel._rows["scaled"][2].text() == "= √4 × T, T = 0.002"
    assert panel.values["logit"] == fmt_fixed(float(tr.logits[i, j]))
    wb.edit(wb.scenario.replace(scale=False), "no scaling")
    settle(panel)
    assert panel.values["scaled"] == "0.002" and "scaling off" in panel._rows["scaled"][2].text()


def test_linked_mode_keeps_its_combos_while_only_numbers_change(panel_on):
    wb, panel = panel_on(mode="linked")
    combo = panel.key_combo
    rebuilt = []
    combo.model().modelReset.connect(lambda: rebuilt.append(1))
    combo.model().rowsInserted.connect(lambda *a: rebuilt.append(1))
    wb.edit(wb.scenario.replace(temperature=2.0), "T")
    settle(panel)
    assert not rebuilt and combo.count() == wb.scenario.n_tokens
    wb.edit(wb.scenario.replace(tokens=("a", "b", "c")), "rename")
    settle(panel)
    assert rebuilt and [combo.itemText(r) for r in range(combo.count())] == ["a", "b", "c"]


def test_readout_title_shows_all_its_lines_beside_a_laptop_plot(make_wb, show_panel):
    from PySide6.QtCore import QPoint, QRect

    # the explorer's size in its dock at 1024 x 768 and 1280 x 800
    panel = show_panel(ExplorerPanel(make_wb("river-bank")), size=(579, 346))
    QApplication.processEvents()
    title = panel.readout_title
    assert title.height() >= title.heightForWidth(title.width())
    first = next(iter(panel._rows.values()))[0]

    def rect(w):
        return QRect(w.mapTo(panel, QPoint(0, 0)), w.size())

    assert not rect(title).intersects(rect(first))
    for slider in panel.sliders.values():
        assert not rect(panel.plot).intersects(rect(slider))


# ---- each sub-view shows what its view-model computed ------------------------------------------


def shown(qtbot, widget, size=(420, 320)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    QApplication.processEvents()
    return widget


def test_readouts_view_writes_the_view_models_numbers(qtbot):
    view = shown(qtbot, ReadoutsView())
    a = np.array([3.0, -4.0])
    data = em.free_readouts(a, B_DEFAULT, 9)
    view.refresh(data)
    assert view.title.text() == data.title
    r = em.pair_readout(a, B_DEFAULT, 9)
    assert view.values["len_a"] == "5.00" and view.rows["len_a"][1].text() == "5.00"
    assert view.values["dot"] == fmt_fixed(r.dot, 2) == "3.00"
    assert view.values["angle"] == f"{r.angle_deg:.2f}°"
    assert view.values["projection_vector"] == "(3.00, 0.00)"
    assert view.values["cosine"] == fmt_fixed(r.cosine, 3) == "0.600"
    assert view.values["scaled"] == "1.00" and view.rows["scaled"][2].text() == "d_k = 9"
    assert view.rows["dot"][0].toolTip() == "= ‖a‖ ‖b‖ cos θ"
    assert not view.rows["logit"][1].isVisible() and "logit" not in view.values
    view.refresh(em.free_readouts([0.0, 0.0], B_DEFAULT, 1))
    assert view.values["cosine"] == view.values["angle"] == "undefined"
    view.show_notes(False)
    assert not view.rows["dot"][2].isVisible() and view.rows["dot"][1].isVisible()


def test_readouts_view_writes_significant_digits_and_masks(qtbot, make_wb):
    wb = make_wb("bank-river")
    sc = wb.scenario.replace(temperature=0.002)
    wb.edit(sc, "T")
    tr = wb.trace
    view = shown(qtbot, ReadoutsView())
    view.refresh(em.linked_readouts(wb.scenario, tr, 0, 0, 2))
    assert view.values["scaled"] == "0.004"
    assert view.rows["scaled"][2].text() == "= √4 × T, T = 0.002"
    assert "masked → " in view.rows["logit"][2].text()
    assert view.values["weight"] == fmt_fixed(float(tr.weights[0, 2]), 4) == "0.0000"
    assert not view.rows["projection_vector"][1].isVisible()


def test_plane_draws_the_picture_and_picks_only_when_draggable(qtbot, record):
    plane = shown(qtbot, ProductPlane(), size=(400, 400))
    a, b = np.array([3.0, 4.0]), np.array([2.0, 0.0])
    pic = em.plane_picture(a, b, hold="lengths")
    plane.refresh(pic)
    QApplication.processEvents()
    x, y = plane.shaft["a"].getData()
    assert list(x) == [0.0, 3.0] and list(y) == [0.0, 4.0]
    x, y = plane.shadow_item.getData()
    assert np.allclose(np.column_stack([x, y]), pic.shadow.shadow)
    x, y = plane.guides[0].getData()
    assert np.allclose(np.hypot(x, y), 5.0)  # a's circle
    assert plane.shadow_text.toPlainText() == "shadow 3.00"
    assert plane.tip_text["b"].toPlainText() == "b" and plane.angle_text.isVisible()
    tip = plane.view_box.mapViewToScene(QPointF(3.0, 4.0))
    assert plane.pick(tip) == "a"
    assert plane.pick(plane.view_box.mapViewToScene(QPointF(-3.0, -3.0))) is None
    locked = em.plane_picture(a, b, names=("q", "k"), draggable=False, linked=True)
    plane.refresh(locked)
    assert plane.pick(tip) is None and plane.handles.getData()[0].size == 0
    assert plane.tip_text["a"].toPlainText() == "q"
    assert plane.getPlotItem().getAxis("bottom").labelText == "along k"


def test_plane_reports_a_drag_on_a_tip(qtbot, record):
    plane = shown(qtbot, ProductPlane(), size=(400, 400))
    plane.refresh(em.plane_picture(A_DEFAULT, B_DEFAULT))
    QApplication.processEvents()
    started, moved, finished = (
        record(plane.drag_started),
        record(plane.drag_moved),
        record(plane.drag_finished),
    )

    def px(xy):
        return plane.mapFromScene(plane.view_box.mapViewToScene(QPointF(*xy)))

    vp = plane.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, px(A_DEFAULT))
    for p in ([8.0, 2.0], [5.0, 1.0]):
        QTest.mouseMove(vp, px(p))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, px([5, 1]))
    QApplication.processEvents()
    assert [s[0] for s in started] == ["a"] and len(finished) == 1
    assert moved and np.allclose(moved[-1], [5.0, 1.0], atol=0.2)


def test_sliders_show_the_rows_and_report_moves(qtbot, record):
    view = shown(qtbot, VectorSliders(), size=(600, 40))
    rows = em.slider_view(A_DEFAULT, B_DEFAULT, names=("q", "k"), hold="angle")
    moves = record(view.moved)
    view.refresh(rows)
    assert view.sliders["len_a"].value() == 200 and view.sliders["angle"].value() == 40
    assert view.names["len_b"].text() == "‖k‖" and view.values["len_a"].text() == "10.00"
    assert view.values["angle"].text() == "20.00°" and not view.sliders["angle"].isEnabled()
    assert ("len_a", 200) in moves  # a refresh moves handles too: the panel ignores those
    moves.clear()
    view.sliders["len_b"].setValue(37)
    assert moves == [("len_b", 37)]
    view.refresh(em.slider_view([0.0, 0.0], B_DEFAULT))
    assert view.values["angle"].text() == "—" and view.sliders["angle"].value() == 40


def test_choice_row_lists_the_pair_and_hides_it_when_free(qtbot, record):
    row = shown(qtbot, ChoiceRow(), size=(600, 60))
    keys = record(row.key_picked)
    row.refresh(em.PairChoice(("q1", "q2"), ("a", "b", "c"), 1, 2))
    assert row.pair_group.isVisible()
    assert [row.key_combo.itemText(i) for i in range(3)] == ["a", "b", "c"]
    assert row.query_combo.currentIndex() == 1 and row.key_combo.currentText() == "c"
    keys.clear()
    row.key_combo.setCurrentIndex(0)
    assert keys == [(0,)]
    row.refresh(None)
    assert not row.pair_group.isVisible()
    modes = record(row.mode_picked)
    row.set_mode("linked")
    assert row.mode == "linked" and modes == [("linked",)]


def test_strip_controls_and_bars_show_the_strip(qtbot, record):
    controls = shown(qtbot, StripControls(), size=(600, 80))
    bars = shown(qtbot, SoftmaxBars(), size=(500, 70))
    pic = em.strip_picture(ExplorerState(scores=(1.0, 0.0), temperature=0.5, d_k=16))
    controls.refresh(pic)
    bars.refresh(pic)
    assert controls.scores_edit.text() == "1, 0"
    assert controls.temp_value.text() == "0.50" and controls.scale_check.isChecked()
    assert controls.dk_spin.value() == 16
    assert bars.texts == [[f"{100 * w:.1f}%" for w in r] for r in (pic.raw, pic.weights)]
    assert bars.row_labels == ["softmax(s)", "softmax(s / (√16×0.50))"]
    assert bars.toolTip() == "divisor = 2.000000"
    entered = record(controls.scores_entered)
    controls.scores_edit.setText("3, 1")
    controls.scores_edit.editingFinished.emit()
    assert entered == [("3, 1",)]


def test_opened_in_steps_the_panel_shows_the_same_numbers(show_panel, make_wb):
    # The window opens the panel in steps (the plane, its arrows, then the sliders and the
    # strip, each in a part of its own); the finished panel shows what one built at once
    # shows.
    from attnsim.panels.base import parts_built_later

    wb = make_wb("river-bank")
    with parts_built_later():
        stepped = ExplorerPanel(wb)
    assert not hasattr(stepped, "plane") and not hasattr(stepped, "bars")
    assert stepped.build_next_part() and not hasattr(stepped.plane, "shaft")
    assert stepped.build_next_part() and stepped.build_next_part()
    assert not stepped.build_next_part()
    stepped.opening = False
    whole = ExplorerPanel(wb)
    for p in (stepped, whole):
        show_panel(p, size=(700, 450))
        settle(p)
    assert stepped.values and stepped.values == whole.values
    assert stepped.plane.parent() is stepped and stepped.bars.isVisible()
    layout_order = [stepped._middle.itemAt(i).widget() for i in range(2)]
    assert layout_order == [stepped.plane, stepped.readouts]
