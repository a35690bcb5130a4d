"""The 3-D query/key panel: real mouse drags edit honestly, orbit never edits, export keeps text."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits
from attnsim.engine.attention import direct_trace
from attnsim.export import export_widget
from attnsim.panels.space3d import Space3DPanel

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def make_panel(show_panel):
    def make(wb, *, direction: bool | None = None) -> Space3DPanel:
        panel = show_panel(Space3DPanel(wb))
        if direction is not None:
            panel.direction_box.setChecked(direction)
            QApplication.processEvents()
            panel.flush()
        return panel

    return make


def tip_of(panel: Space3DPanel, kind: str, row: int) -> tuple[int, np.ndarray]:
    panel.flush()
    k = panel.scene.index(kind, row)
    assert k is not None, f"no {kind} {row} in the scene"
    g = panel.canvas.geometry_now()
    return k, g.tips[k].copy()


def screen_of(panel: Space3DPanel, frame, camera, vector, kind: str) -> np.ndarray:
    """Where the drawing of an engine vector (d_k,) lands on screen, through a given frame."""
    u = vector * frame.factor if kind == "query" else (vector + frame.shift) / frame.factor
    world = (u @ frame.basis) * frame.scale
    top, height = panel.canvas.view_box()  # the band between the header and the notes
    xy, _ = camera.project(world, panel.canvas.width(), height)
    return xy[0] + (0.0, top)


def drag(canvas, start: np.ndarray, steps: list[tuple[float, float]]) -> QPoint:
    """Press at ``start``, move by each offset in turn (cumulative), release at the end."""
    p0 = QPoint(round(start[0]), round(start[1]))
    QTest.mousePress(canvas, LEFT, NOMOD, p0)
    end = p0
    for dx, dy in steps:
        end = p0 + QPoint(round(dx), round(dy))
        QTest.mouseMove(canvas, end)
    QTest.mouseRelease(canvas, LEFT, NOMOD, end)
    return end


class Listener:
    def __init__(self, wb):
        self.seen: list[frozenset] = []
        wb.changed.connect(self.seen.append)
        self.messages: list[str] = []
        wb.message.connect(self.messages.append)


# ---- direct mode: a key drag edits exactly that key ------------------------------------------
def test_dragging_a_key_tip_in_direct_mode_edits_exactly_that_key(make_wb, make_panel):
    wb = make_wb("routing-lab")
    panel = make_panel(wb)
    before = wb.scenario
    listener = Listener(wb)
    depth0 = wb.undo_stack.count()
    _, tip = tip_of(panel, "key", 1)
    frame, camera = panel.scene.frame, panel.camera
    press = QPoint(round(tip[0]), round(tip[1]))
    end = drag(panel.canvas, tip, [(40, -25)])

    after = wb.scenario
    assert not np.array_equal(after.K[1], before.K[1])
    np.testing.assert_array_equal(after.K[[0, 2]], before.K[[0, 2]])
    np.testing.assert_array_equal(after.Q, before.Q)
    np.testing.assert_array_equal(after.V, before.V)
    # The tip moved with the mouse: it is drawn exactly under the cursor (minus the grab offset).
    want = tip + np.array([end.x() - press.x(), end.y() - press.y()])
    np.testing.assert_allclose(screen_of(panel, frame, camera, after.K[1], "key"), want, atol=1e-6)
    # One undo step; another listener saw the change; undo restores exactly.
    assert wb.undo_stack.count() == depth0 + 1
    assert len(listener.seen) == 1 and "vectors" in listener.seen[0]
    assert any("row 1 of K only" in m for m in listener.messages)
    wb.undo_stack.undo()
    assert wb.scenario.equals(before)
    np.testing.assert_array_equal(wb.scenario.K, before.K)


def test_a_long_drag_is_one_undo_step(make_wb, make_panel):
    wb = make_wb("routing-lab")
    panel = make_panel(wb)
    before = wb.scenario
    depth0 = wb.undo_stack.count()
    _, tip = tip_of(panel, "key", 0)
    drag(panel.canvas, tip, [(8 * s, -5 * s) for s in range(1, 7)])
    assert wb.undo_stack.count() == depth0 + 1
    assert not np.array_equal(wb.scenario.K[0], before.K[0])
    wb.undo_stack.undo()
    np.testing.assert_array_equal(wb.scenario.K, before.K)


def test_dragging_in_a_subspace_view_moves_only_within_the_shown_subspace(make_wb, make_panel):
    wb = make_wb("three-fields")  # d_k = 12: the view opens on the best 3-D subspace
    panel = make_panel(wb)
    assert panel.options.subspace and panel.scene.frame.explained is not None
    before = wb.scenario
    # A key whose tip is well apart from every other tip, so the press picks it.
    g = panel.canvas.geometry_now()
    gaps = np.linalg.norm(g.tips[:, None] - g.tips[None], axis=2) + np.eye(len(g.tips)) * 1e9
    keys = [k for k in range(len(g.tips)) if panel.scene.kind[k] == "key"]
    k = max(keys, key=lambda k: gaps[k].min())
    assert gaps[k].min() > 12
    row = int(panel.scene.row[k])
    B = panel.scene.frame.basis
    drag(panel.canvas, g.tips[k], [(30, 20)])
    delta = wb.scenario.K[row] - before.K[row]
    assert np.linalg.norm(delta) > 1e-3
    np.testing.assert_allclose(B @ (B.T @ delta), delta, atol=1e-12)  # inside span(B)
    np.testing.assert_array_equal(np.delete(wb.scenario.K, row, 0), np.delete(before.K, row, 0))


# ---- token mode: a drag edits the projection minimally and says so -----------------------------
def test_dragging_a_query_in_token_mode_edits_wq_minimally(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb, direction=False)
    listener = Listener(wb)
    before = wb.scenario
    Q0 = wb.trace.Q.copy()
    _, tip = tip_of(panel, "query", 2)  # bank, the receiving token
    frame, camera = panel.scene.frame, panel.camera
    press = QPoint(round(tip[0]), round(tip[1]))
    end = drag(panel.canvas, tip, [(10, 10), (-35, 30)])

    head0, head1 = before.heads[0], wb.scenario.heads[0]
    np.testing.assert_array_equal(head1.Wk, head0.Wk)
    x = before.X[2]
    q_new = wb.trace.Q[2]
    # Smallest change of Wq putting x @ Wq at the new query: a rank-1 update along x.
    expected = head0.Wq + np.outer(x, q_new - Q0[2]) / (x @ x)
    np.testing.assert_allclose(head1.Wq, expected, atol=1e-12)
    # The query lands at the unprojected target: drawn under the cursor, hidden part kept.
    want = tip + np.array([end.x() - press.x(), end.y() - press.y()])
    np.testing.assert_allclose(screen_of(panel, frame, camera, q_new, "query"), want, atol=1e-6)
    assert q_new[3] == pytest.approx(Q0[2, 3])  # "generic" is not shown, so it is kept
    # Every other query moved with it (x_river is not orthogonal to x_bank).
    assert not np.allclose(wb.trace.Q[1], Q0[1])
    assert any("edits Wq: every query moved with it" in m for m in listener.messages)
    assert wb.undo_stack.count() == 1
    wb.undo_stack.undo()
    np.testing.assert_array_equal(wb.scenario.heads[0].Wq, head0.Wq)


def test_dragging_a_key_in_token_mode_edits_wk(make_wb, make_panel):
    wb = make_wb("wq-find-water")
    panel = make_panel(wb)
    listener = Listener(wb)
    before = wb.scenario
    _, tip = tip_of(panel, "key", 1)  # river
    drag(panel.canvas, tip, [(25, -30)])
    np.testing.assert_array_equal(wb.scenario.heads[0].Wq, before.heads[0].Wq)
    assert not np.array_equal(wb.scenario.heads[0].Wk, before.heads[0].Wk)
    np.testing.assert_array_equal(wb.scenario.X, before.X)
    assert any("edits Wk: every key moved with it" in m for m in listener.messages)


def test_direction_only_query_drag_turns_it_and_keeps_its_length(make_wb, make_panel):
    wb = make_wb("routing-lab")
    panel = make_panel(wb)
    assert panel.direction_box.isChecked()  # the default, like the reference widget
    q0 = wb.scenario.Q[0].copy()
    _, tip = tip_of(panel, "query", 0)
    drag(panel.canvas, tip, [(-20, -60)])
    q1 = wb.scenario.Q[0]
    assert np.linalg.norm(q1) == pytest.approx(np.linalg.norm(q0))
    assert not np.allclose(q1, q0)


def test_a_token_whose_x_is_zero_cannot_be_dragged(make_wb, make_panel):
    wb = make_wb("river-bank")
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.0, 0.0, 0.0, 0.0]), "zero the")
    panel = make_panel(wb)
    listener = Listener(wb)
    before = wb.scenario
    depth0 = wb.undo_stack.count()
    _, tip = tip_of(panel, "key", 0)  # the key of "the" sits at the origin
    assert panel.canvas.pick_item(*tip) == panel.scene.index("key", 0)
    drag(panel.canvas, tip, [(30, 30)])
    assert wb.scenario is before and wb.undo_stack.count() == depth0
    assert not listener.seen
    assert any("input vector x is zero" in m for m in listener.messages)
    assert "cannot be dragged" in panel.last_refusal


# ---- view state: orbit, zoom, presets, options never edit ------------------------------------
def test_orbit_and_zoom_change_the_camera_but_never_the_workbench(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    listener = Listener(wb)
    before, depth0, cam0 = wb.scenario, wb.undo_stack.count(), panel.camera
    corner = np.array([30.0, panel.canvas.height() - 60.0])
    assert panel.canvas.pick_item(*corner) is None
    drag(panel.canvas, corner, [(20, 0), (60, 15)])
    cam1 = panel.camera
    assert cam1.yaw_deg != cam0.yaw_deg and cam1.pitch_deg != cam0.pitch_deg
    pos = QPointF(300, 200)
    wheel = QWheelEvent(pos, panel.canvas.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, NOMOD, Qt.ScrollPhase.NoScrollPhase, False)  # fmt: skip
    QApplication.sendEvent(panel.canvas, wheel)
    assert panel.camera.zoom == pytest.approx(cam1.zoom * 1.15**2)
    panel.view_plane(0)
    assert panel.camera.pitch_deg == 90.0
    panel.reset_button.click()
    assert panel.camera == cam0
    for box in (panel.values_box, panel.others_box, panel.layout_box, panel.direction_box):
        box.toggle()
    panel.axis_boxes[0].setCurrentIndex(3)
    panel.flush()
    assert wb.scenario is before and wb.undo_stack.count() == depth0 and not listener.seen


def test_axis_pickers_choose_three_different_axes(make_wb, make_panel):
    wb = make_wb("river-bank")  # d_k = 4
    panel = make_panel(wb)
    assert panel.scene.frame.axis_names == ("finance", "water", "structure")
    texts = [a.text() for a in panel.views_menu.actions()]
    assert "Look along structure: the finance–water plane" in texts
    panel.views_menu.actions()[2].trigger()  # look along water
    assert (panel.camera.yaw_deg, panel.camera.pitch_deg) == (0.0, 0.0)
    panel.axis_boxes[0].setCurrentIndex(3)
    panel.flush()
    assert panel.scene.frame.axis_names == ("generic", "water", "structure")
    panel.axis_boxes[1].setCurrentIndex(3)  # already shown on axis 1: the two swap
    panel.flush()
    assert panel.options.axes == (1, 3, 2)
    assert [b.currentIndex() for b in panel.axis_boxes] == [1, 3, 2]
    panel.view_mode.setCurrentIndex(1)
    panel.flush()
    fr = panel.scene.frame
    assert fr.explained is not None and fr.axis_names[0].startswith("PC1")
    assert any("best 3-D subspace" in n for n in panel.scene.notes)
    assert not panel.axis_boxes[0].isVisible()


def test_clicking_another_query_makes_it_the_receiving_token(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    panel.others_box.setChecked(True)
    _, tip = tip_of(panel, "other_query", 1)
    p = QPoint(round(tip[0]), round(tip[1]))
    QTest.mouseClick(panel.canvas, LEFT, NOMOD, p)
    assert wb.receiving == 1
    _, tip = tip_of(panel, "key", 2)
    QTest.qWait(600)  # not a double click
    QTest.mouseClick(panel.canvas, LEFT, NOMOD, QPoint(round(tip[0]), round(tip[1])))
    assert wb.focused_key == 2
    assert wb.undo_stack.count() == 0


# ---- what the scene shows ----------------------------------------------------------------------
def test_absent_keys_are_faded_and_computed_with_the_focused_heads_wk(make_wb, make_panel):
    wb = make_wb("wq-find-water")
    panel = make_panel(wb)
    scene = panel.scene
    a = scene.index("absent", 0)
    assert a is not None and scene.faded[a] and scene.label[a] == "money (absent)"
    sc = wb.scenario
    k_money = sc.absent["money"] @ sc.heads[0].Wk
    np.testing.assert_allclose(scene.pos[a], k_money @ scene.frame.basis)
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    assert not scene.faded[keys].any()
    # The labels carry the engine's weights for bank's query (62.6% for river).
    assert scene.label[keys[1]] == "river 0.63"
    np.testing.assert_array_equal(scene.weight[keys], wb.trace.weights[wb.receiving])


def test_attentionviz_layout_keeps_the_engines_weights(make_wb, make_panel):
    wb = make_wb("wq-find-water")
    panel = make_panel(wb)
    plain = panel.scene
    panel.layout_box.setChecked(True)
    panel.flush()
    scene = panel.scene
    tr = wb.trace
    assert not np.allclose(scene.K_shown, tr.K)  # the drawing really changed
    assert not panel.direction_box.isEnabled()
    shown = direct_trace(scene.Q_shown, scene.K_shown, tr.V, mask=tr.mask,
                         temperature=tr.temperature, scale=tr.scale)  # fmt: skip
    np.testing.assert_allclose(shown.weights, tr.weights, rtol=1e-12, atol=1e-15)
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    np.testing.assert_array_equal(scene.weight[keys], plain.weight[keys])
    assert [scene.label[k] for k in keys] == [plain.label[k] for k in keys]


def test_a_drag_under_the_layout_edits_the_engines_key(make_wb, make_panel):
    wb = make_wb("routing-lab")
    panel = make_panel(wb)
    panel.layout_box.setChecked(True)
    panel.flush()
    _, tip = tip_of(panel, "key", 2)
    frame, camera = panel.scene.frame, panel.camera
    end = drag(panel.canvas, tip, [(-30, 25)])
    want = tip + np.array([end.x() - round(tip[0]), end.y() - round(tip[1])])
    np.testing.assert_allclose(screen_of(panel, frame, camera, wb.scenario.K[2], "key"), want,
                               atol=1e-6)  # fmt: skip


def test_hover_shows_token_vector_score_and_weight(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    _, tip = tip_of(panel, "key", 1)
    QTest.mouseMove(panel.canvas, QPoint(round(tip[0]), round(tip[1])))
    text = panel.canvas.last_tooltip
    tr = wb.trace
    assert "river — key" in text
    assert "k = [0.000, 1.000, 0.000, 0.200]" in text
    assert f"score q·k = {tr.scores[2, 1]:.4f}" in text
    assert f"weight = {tr.weights[2, 1]:.4f}" in text


def test_point_cloud_from_code(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    pts = np.random.default_rng(0).normal(size=(50, 4))
    panel.set_points(pts)
    panel.flush()
    np.testing.assert_allclose(panel.scene.points, pts @ panel.scene.frame.basis)
    with pytest.raises(ValueError, match=r"\(p, 4\)"):
        panel.set_points(np.zeros((3, 2)))


def test_export_keeps_the_camera_and_writes_labels_as_text(make_wb, tmp_path, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    corner = np.array([30.0, panel.canvas.height() - 60.0])
    drag(panel.canvas, corner, [(50, 20)])
    cam = panel.camera
    svg = export_widget(panel.figure_widget(), tmp_path / "space.svg")
    text = svg.read_text(encoding="utf-8")
    assert "<text" in text and "river 0.31" in text and "structure" in text
    assert panel.camera == cam
    # The figure is the view as the user left it: another camera gives another drawing.
    panel.reset_view()
    other = export_widget(panel.figure_widget(), tmp_path / "default.svg").read_text("utf-8")
    assert other != text
    png = export_widget(panel.figure_widget(), tmp_path / "space.png", scale=1)
    assert png.stat().st_size > 1000


def test_absent_keys_cannot_be_dragged(make_wb, make_panel):
    wb = make_wb("wq-find-water")
    panel = make_panel(wb)
    listener = Listener(wb)
    before = wb.scenario
    _, tip = tip_of(panel, "absent", 0)
    assert panel.canvas.pick_item(*tip) == panel.scene.index("absent", 0)
    drag(panel.canvas, tip, [(20, 20)])
    assert wb.scenario is before and wb.undo_stack.count() == 0 and not listener.seen
    assert any("not in the sentence" in m for m in listener.messages)


def test_pdf_export(make_wb, tmp_path, make_panel):
    wb = make_wb("tired-cat")
    panel = make_panel(wb)
    pdf = export_widget(panel.figure_widget(), tmp_path / "space.pdf")
    assert pdf.read_bytes().startswith(b"%PDF")


# ---- the "mask with 0" mistake, shown with the engine's numbers ---------------------------------
def test_masking_with_zero_shows_forbidden_keys_leaking_weight(make_wb, make_panel):
    from attnsim.resources import resolve_scenario

    wb = make_wb(resolve_scenario("bank-river").replace(mask_value=0.0))
    panel = make_panel(wb)
    i = wb.receiving  # bank: causal, so river (key 2) is forbidden
    tr = wb.trace
    assert not tr.mask[i, 2] and tr.weights[i, 2] > 0.2  # the leak the view must show
    k, tip = tip_of(panel, "key", 2)
    scene = panel.scene
    assert scene.weight[k] == tr.weights[i, 2]
    assert scene.masked[k] and scene.leaks[k]
    assert scene.label[k] == f"river {tr.weights[i, 2]:.2f} (forbidden, leaks)"
    assert scene.width[k] == pytest.approx(1.2 + 4.0 * tr.weights[i, 2])
    assert any("not −∞" in n for n in scene.notes)
    QTest.mouseMove(panel.canvas, QPoint(round(tip[0]), round(tip[1])))
    text = panel.canvas.last_tooltip
    assert f"weight = {tr.weights[i, 2]:.4f}" in text and "leaks" in text
    assert "weight = 0 " not in text
    # Back to -inf (undoable edit elsewhere): the same key now gets exactly nothing.
    wb.edit(wb.scenario.replace(mask_value=-np.inf), "mask with -inf")
    k, tip = tip_of(panel, "key", 2)
    assert wb.trace.weights[i, 2] == 0.0
    assert panel.scene.label[k] == "river 0.00 (masked)" and not panel.scene.leaks[k]
    QTest.mouseMove(panel.canvas, QPoint(round(tip[0]) + 40, round(tip[1]) + 40))
    QTest.mouseMove(panel.canvas, QPoint(round(tip[0]), round(tip[1])))
    assert "weight = 0.0000  (forbidden by the mask)" in panel.canvas.last_tooltip


def test_header_divides_by_the_traces_divisor(make_wb, make_panel):
    wb = make_wb("river-bank")
    panel = make_panel(wb)
    wb.edit(wb.scenario.replace(temperature=2.5), "T")
    panel.flush()
    assert wb.trace.divisor == pytest.approx(2.0 * 2.5)
    assert "softmax(q·k / 5.000)" in panel.canvas.header


# ---- long sequences -----------------------------------------------------------------------------
def long_scenario(n: int, d: int = 8):
    """n tokens of random x in d dimensions, identity projections, causal mask."""
    from attnsim.engine.scenario import Head, Scenario

    rng = np.random.default_rng(n)
    eye = np.eye(d)
    return Scenario(
        name=f"long-{n}",
        tokens=tuple(f"t{j}" for j in range(n)),
        X=rng.standard_normal((n, d)),
        heads=(Head(eye, eye, eye),),
        mask="causal",
        receiving=n - 1,
    )


@pytest.mark.parametrize("preset", ["river-bank", "n2048"])
def test_view_renders_and_exports(make_wb, tmp_path, preset, make_panel):
    from attnsim.viewmodels.space3d import ARROWS_KEPT

    wb = make_wb(long_scenario(2048) if preset == "n2048" else preset)
    panel = make_panel(wb)
    for values, others in ((False, False), (True, True)):
        panel.values_box.setChecked(values)
        panel.others_box.setChecked(others)
        panel.flush()
        scene = panel.scene
        n = wb.scenario.n_tokens
        keys = np.flatnonzero(scene.kinds == "key")
        np.testing.assert_array_equal(scene.weight[keys], wb.trace.weights[wb.receiving])
        if preset == "n2048":
            # The most attended keys (and their values) are arrows, the rest cloud points.
            assert scene.arrow.sum() == 1 + ARROWS_KEPT * (2 if values else 1)
            top = np.argsort(-wb.trace.weights[n - 1])[:ARROWS_KEPT]
            assert set(scene.row[keys[scene.arrow[keys]]].tolist()) == set(top.tolist())
        image = panel.canvas.grab().toImage()
        assert image.width() == panel.canvas.width() and panel.canvas.paint_count > 0
        g = panel.canvas.geometry_now()
        assert g is not None and g.label_visible.any()
        assert not g.label_visible[~scene.arrow].any()  # cloud points carry no label
        assert set(g.order.tolist()) == set(np.flatnonzero(scene.arrow).tolist())
    svg = export_widget(panel.figure_widget(), tmp_path / "space.svg")
    text = svg.read_text(encoding="utf-8")
    best = int(np.argmax(wb.trace.weights[wb.receiving]))
    assert "<text" in text and f"{wb.scenario.tokens[best]} " in text
    # A key drawn as a cloud point still shows its engine weight on hover.
    k = int(np.flatnonzero(~scene.arrow & (scene.kinds == "key"))[0]) if preset == "n2048" else 1
    tip = panel.canvas.geometry_now().tips[k]
    QTest.mouseMove(panel.canvas, QPoint(round(tip[0]), round(tip[1])))
    hovered = panel.canvas.hover
    assert hovered is not None
    row = int(scene.row[hovered])
    if scene.kind[hovered] == "key":
        assert f"weight = {wb.trace.weights[wb.receiving, row]:.4f}" in panel.canvas.last_tooltip


# ---- the sub-views on their own ------------------------------------------------------------------
def _scene_data(preset: str = "river-bank"):
    from attnsim.resources import resolve_scenario
    from attnsim.viewmodels.space3d import ViewOptions, build_scene, scene_input

    sc = resolve_scenario(preset)
    tr = sc.compute().heads[0]
    inp = scene_input(sc, tr, 0, 0)
    return sc, tr, inp, build_scene(inp, ViewOptions())


def test_controls_write_the_model_without_emitting_and_emit_each_choice(qtbot):
    from attnsim.panels.space3d import Space3DControls
    from attnsim.viewmodels.space3d import ViewOptions, controls_data

    _, _, _, scene = _scene_data()
    controls = Space3DControls()
    qtbot.addWidget(controls)
    edited: list = []
    controls.options_edited.connect(edited.append)
    names = ("a", "b", "c", "d", "e")
    opts = ViewOptions(axes=(4, 1, 2), values=True, direction=False)
    fr = dataclasses.replace(scene.frame, axis_names=("e", "b", "c"))
    controls.refresh(controls_data(opts, names, 3, fr))
    assert edited == []  # writing the model's values is not a gesture
    assert [b.currentIndex() for b in controls.axis_boxes] == [4, 1, 2]
    assert controls.values_box.isChecked() and not controls.direction_box.isChecked()
    texts = [a.text() for a in controls.views_menu.actions()]
    assert texts[0] == "Default view" and texts[1] == "Look along c: the e–b plane"
    controls.axis_boxes[1].setCurrentIndex(4)  # shown on axis 0: the two swap
    assert edited[-1].axes == (1, 4, 2) and edited[-1].values
    controls.layout_box.setChecked(True)
    assert edited[-1].layout and edited[-1].axes == (1, 4, 2)
    assert not controls.direction_box.isEnabled()
    controls.view_mode.setCurrentIndex(1)
    assert edited[-1].subspace and len(edited) == 3
    planes: list[int] = []
    resets: list[bool] = []
    controls.plane_requested.connect(planes.append)
    controls.reset_requested.connect(lambda: resets.append(True))
    controls.views_menu.actions()[3].trigger()
    controls.views_menu.actions()[0].trigger()
    controls.reset_button.click()
    assert planes == [2] and resets == [True, True]


def test_canvas_draws_given_data_and_reports_gestures_as_signals(qtbot):
    from attnsim.panels.space3d import SpaceCanvas
    from attnsim.viewmodels.space3d import CanvasData

    _, _, inp, scene = _scene_data()
    canvas = SpaceCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(640, 420)
    canvas.show()
    qtbot.waitExposed(canvas)
    k = scene.index("key", 1)
    canvas.refresh(CanvasData(scene, inp, "the header", focused=k, tokens_mode=True))
    assert canvas.scene is scene and canvas.header == "the header"
    g = canvas.geometry_now()
    assert g is canvas.geometry_now()  # cached until the camera, size or scene changes
    canvas.set_camera(canvas.camera.orbit(10.0, 0.0))
    assert canvas.geometry_now() is not g
    image = canvas.grab().toImage()
    assert image.width() == canvas.width() and canvas.paint_count > 0
    pressed, moved, released, resets = [], [], [], []
    canvas.pressed.connect(pressed.append)
    canvas.dragged.connect(moved.append)
    canvas.released.connect(released.append)
    canvas.reset_requested.connect(lambda: resets.append(True))
    tip = canvas.geometry_now().tips[k]
    p = QPoint(round(tip[0]), round(tip[1]))
    QTest.mousePress(canvas, LEFT, NOMOD, p)
    QTest.mouseMove(canvas, p + QPoint(5, 5))
    QTest.mouseRelease(canvas, LEFT, NOMOD, p + QPoint(5, 5))
    assert len(pressed) == 1 and len(released) == 1 and len(moved) >= 1
    assert pressed[0].toPoint() == p
    QTest.mouseMove(canvas, p)  # hovering shows the engine's numbers
    assert canvas.hover == k and canvas.last_tooltip.startswith(f"{inp.key_labels[1]} — key")
    QTest.mouseDClick(canvas, LEFT, NOMOD, QPoint(20, canvas.height() - 50))
    assert resets == [True]


def test_texts_describe_the_edit_a_drag_makes():
    from attnsim.engine.scenario import Scenario
    from attnsim.panels.space3d.texts import drag_texts, header_text, not_draggable, zero_input

    sc, tr, _, _ = _scene_data()
    assert header_text(sc, tr, 0, 0).startswith(f"{sc.query_labels[0]}'s query · weights = ")
    message, text = drag_texts(sc, "key", 2, 0, False)
    assert text == f"Drag {sc.tokens[2]}'s key (edits Wk)"
    assert "every key moved with it and the absent keys" in message
    message, _ = drag_texts(sc, "query", 0, 0, True)
    assert message.endswith("; direction only, its length is kept")
    direct = Scenario(name="d", mode="direct", tokens=("a", "b"), query_tokens=("q",),
                      Q=np.ones((1, 5)), K=np.eye(2, 5), V=np.eye(2, 5))  # fmt: skip
    message, text = drag_texts(direct, "key", 1, 0, False)
    assert text == "Drag b's key" and "row 1 of K only (only the shown part" in message
    assert zero_input(direct, "key", 0) is None
    assert "money is not in the sentence" in not_draggable("absent", "money")
    assert "vectors panel" in not_draggable("value", "v a")
    X = np.array(sc.X, float)
    X[1] = 0.0
    zeroed = sc.replace(X=X)
    assert f"{sc.tokens[1]}'s input vector x is zero" in zero_input(zeroed, "key", 1)
    assert "every Wk: it cannot be dragged" in zero_input(zeroed, "key", 1)
    assert "every Wq" in zero_input(zeroed, "query", 1)
    assert zero_input(zeroed, "key", 0) is None


def test_projection_keeps_labels_off_the_colour_bar_and_inside_the_band():
    from attnsim.engine.geometry import Camera
    from attnsim.panels.space3d.projection import TextMetrics, colorbar_rect, project_scene

    _, _, _, scene = _scene_data()
    metrics = TextMetrics(lambda s: 7.0 * len(s), 14.0, 11.0)
    w, h = 640.0, 420.0
    g = project_scene(scene, Camera(), w, h, (20.0, 370.0), metrics)
    m = len(scene.kind)
    assert g.tips.shape == (m, 2) and g.order[-1] == 0  # the receiving query on top
    cb = colorbar_rect(w, h)
    shown = np.flatnonzero(g.label_visible)
    assert shown.size >= 4
    for k in shown:
        x, y = g.label_pos[k]
        bw, bh = g.label_size[k]
        assert bw == pytest.approx(7.0 * len(scene.label[k]) + 6.0) and bh == 16.0
        assert y >= 20.0 and y + bh <= 390.0 + 1e-9
        assert x + bw <= cb.left() - 12 or y >= cb.bottom() + 8 or y + bh <= cb.top() - 16
    assert colorbar_rect(640.0, 100.0) is None


# ---- a wide matching space: the frame is made off the window's thread -------------------------
@pytest.fixture
def held_frames(monkeypatch):
    """Wide spaces from 16 numbers on; frames made on the runner wait for the returned gate."""
    import threading

    from attnsim.panels.space3d import frames

    monkeypatch.setattr(frames, "LARGE_VALUES", 16)
    gate = threading.Event()
    made = frames.make_frame

    def held(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            gate.wait(10)
        return made(*args, **kwargs)

    monkeypatch.setattr(frames, "make_frame", held)
    return gate


def test_a_wide_space_keeps_its_picture_while_its_axes_are_computed(
    make_wb, make_panel, held_frames, qtbot
):
    from PySide6.QtWidgets import QLabel

    from attnsim.panels.base import COMPUTING
    from attnsim.viewmodels.space3d import make_frame

    wb = make_wb(long_scenario(24, d=6))  # six coordinates: the best subspace is shown
    panel = make_panel(wb)
    assert panel.scene is None  # nothing drawn yet: the frame is on its way
    note = panel.findChild(QLabel, "computing-note")
    assert note is not None and note.isVisible() and note.text() == COMPUTING
    held_frames.set()
    qtbot.waitUntil(lambda: panel.scene is not None, timeout=5000)
    assert not note.isVisible()
    want = make_frame(panel.scene_input(), panel.options)
    np.testing.assert_allclose(panel.scene.frame.basis, want.basis, atol=1e-12)
    # an edit: the old picture stays until the new frame is in
    held_frames.clear()
    before = panel.scene
    X = np.array(wb.scenario.X)
    X[3] *= 2.0
    wb.edit(wb.scenario.replace(X=X), "longer")
    panel.flush()
    assert panel.scene is before and note.isVisible()
    held_frames.set()
    qtbot.waitUntil(lambda: panel.scene is not before, timeout=5000)
    want = make_frame(panel.scene_input(), panel.options)
    np.testing.assert_allclose(panel.scene.frame.basis, want.basis, atol=1e-12)


def test_a_figure_of_a_wide_space_is_made_at_once_and_a_press_waits(
    make_wb, make_panel, held_frames, tmp_path
):
    wb = make_wb(long_scenario(24, d=6))
    panel = make_panel(wb)
    assert panel.scene is None
    messages = Listener(wb).messages
    corner = np.array([panel.canvas.width() / 2, panel.canvas.height() / 2])
    drag(panel.canvas, corner, [(30, 10)])  # an orbit: a press while the axes are computed
    assert wb.undo_stack.count() == 0
    export_widget(panel.figure_widget(), tmp_path / "wide.png", scale=1)
    assert panel.scene is not None  # the figure's frame was made on the spot
    assert panel.scene.frame.explained is not None
    del messages


def test_the_kept_backdrop_draws_what_a_full_paint_draws_and_a_drag_reuses_it(
    make_wb, make_panel, monkeypatch
):
    from PySide6.QtGui import QColor, QImage, QPainter

    import attnsim.panels.space3d.canvas as canvas_mod

    wb = make_wb("wq-find-water")
    panel = make_panel(wb)
    canvas = panel.canvas

    def painted() -> QImage:
        image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor("black"))
        p = QPainter(image)
        canvas.paint(p)
        p.end()
        return image

    kept = painted()
    assert canvas._backdrop_image is not None
    monkeypatch.setattr(canvas_mod, "_layer_scale", lambda _p: None)  # everything drawn anew
    full = painted()
    monkeypatch.undo()
    a = np.frombuffer(kept.constBits(), np.uint8).astype(int)
    b = np.frombuffer(full.constBits(), np.uint8).astype(int)
    assert a.shape == b.shape and np.abs(a - b).max() <= 2  # antialiasing rounding only
    # A drag keeps its frame: every move draws over the same kept backdrop.
    backdrop = canvas._backdrop_image[1]
    _, tip = tip_of(panel, "key", 0)
    p0 = QPoint(round(tip[0]), round(tip[1]))
    QTest.mousePress(canvas, LEFT, NOMOD, p0)
    for s in range(1, 4):
        QTest.mouseMove(canvas, p0 + QPoint(6 * s, -4 * s))
        panel.flush()
        painted()
        assert canvas._backdrop_image[1] is backdrop
    QTest.mouseRelease(canvas, LEFT, NOMOD, p0 + QPoint(18, -12))
    # Another view of the space draws a new one.
    canvas.set_camera(canvas.camera.orbit(20.0, 0.0))
    painted()
    assert canvas._backdrop_image[1] is not backdrop


def test_projection_keeps_the_frame_points_it_shares_between_scenes(qapp):
    from attnsim.engine.geometry import Camera
    from attnsim.panels.space3d.projection import TextMetrics, _frame_points, project_scene

    _, _, _, scene = _scene_data()
    metrics = TextMetrics(lambda s: 7.0 * len(s), 14.0, 11.0)
    fr = scene.frame
    fixed, n_grid = _frame_points(float(fr.extent), float(fr.scale))
    kept = fixed.copy()
    assert not fixed.flags.writeable  # shared by every scene of the frame: never written
    pos = scene.pos.copy()
    pos[1] = np.inf  # an overflowing vector: collapsed to the origin in the projection's copy
    for sc in (scene, dataclasses.replace(scene, pos=pos)):
        g = project_scene(sc, Camera(), 640.0, 420.0, (20.0, 370.0), metrics)
        assert g.grid.shape == (n_grid // 2, 2, 2)
        assert np.isfinite(g.tips).all()
    np.testing.assert_array_equal(g.tips[1], g.origin)
    np.testing.assert_array_equal(fixed, kept)


def test_label_widths_keep_the_bold_name_apart_from_the_regular_one(qapp):
    from attnsim.panels.space3d.painting import SceneLayers

    layers = SceneLayers()
    name = "Wednesday"
    regular, bold = layers.text_width(name), layers.bold_width(name)
    assert bold == layers.fm_bold.horizontalAdvance(name) > regular  # bold is wider
    assert layers.bold_width(name) == bold and layers.text_width(name) == regular  # cached


@pytest.mark.parametrize("band", [(20.0, 370.0), (20.0, 90.0), (20.0, 40.0)])
def test_the_axis_names_stay_inside_the_cameras_band(band):
    # A short dock (a 1,024 x 768 window) put the name of the upward axis ("structure") past
    # the band's top, over the header's formula.
    from attnsim.engine.geometry import Camera
    from attnsim.panels.space3d.projection import TextMetrics, project_scene

    _, _, _, scene = _scene_data()
    metrics = TextMetrics(lambda s: 7.0 * len(s), 14.0, 11.0)
    top, view_h = band
    w = 640.0
    g = project_scene(scene, Camera(), w, top + view_h + 10.0, band, metrics)
    for a, name in enumerate(scene.frame.axis_names):
        if not name:
            continue
        x, baseline = g.axis_text[a]
        centre = baseline - 11.0 / 2 + 1  # (the name's middle, from where it is written)
        assert top <= centre - 7.0 + 1e-9 and centre + 7.0 <= top + view_h + 1e-9, (name, band)
        assert x >= 0.0 and x + 7.0 * len(name) <= w
