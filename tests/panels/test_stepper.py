"""The training stepper panel: every stage shows the engine's numbers, buttons train exactly as
the engine does, the dataset editor refuses bad lines, and Send to workbench is one undo step."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine.geometry import best_subspace
from attnsim.engine.training import (
    MODELS,
    PARAM_NAMES,
    SENSE_PAIR,
    Trainer,
    backward,
    forward,
    loss_and_grads,
)
from attnsim.panels.stepper import StepperPanel, build_stage, fmt_num, parse_num


@pytest.fixture
def panel(make_wb, show_panel):
    p = show_panel(StepperPanel(make_wb("river-bank")), size=(900, 600))
    yield p
    p.session.pause()


def click(button):
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def shown(panel):
    panel.flush()
    return panel.content


def assert_block_shows(block, expected, digits_tol=6e-4):
    """The block's values are the engine's array and its texts are those values, formatted."""
    expected = np.atleast_2d(np.asarray(expected, dtype=float))
    np.testing.assert_array_equal(block.values, expected)
    texts = np.array([[parse_num(t) for t in row] for row in block.texts])
    np.testing.assert_allclose(texts, expected, atol=digits_tol, rtol=2e-2)
    assert block.texts == [[fmt_num(x) for x in row] for row in expected.tolist()]


def test_eight_stages_show_the_engines_arrays(panel, params_copy, assert_params_equal):
    s = panel.session
    trainer = Trainer(MODELS["sense-2d"])  # an independent run, same seed
    tr = trainer.trace()
    grads = backward(trainer.params, tr)
    initial = params_copy(s.trainer.params)
    c = shown(panel)
    assert c.stage == 1 and "the river bank" in c.title and "water" in c.title
    assert c.block("ids").texts == [["0", "1", "3"]]
    assert c.block("target").texts == [["1", "0"]]
    click(panel.next_button)
    c = shown(panel)
    assert c.stage == 2
    assert_block_shows(c.block("emb"), trainer.params["emb"])
    assert c.block("emb").row_state == ["used", "used", "absent", "used"]
    assert_block_shows(c.block("X"), tr.X)
    click(panel.next_button)
    c = shown(panel)
    for name in ("Wq", "Wk", "Wv"):
        assert_block_shows(c.block(name), trainer.params[name])
    for name in ("Q", "K", "V"):
        assert_block_shows(c.block(name), getattr(tr, name))
    click(panel.next_button)
    c = shown(panel)
    assert_block_shows(c.block("scores"), tr.scores)
    assert_block_shows(c.block("weights"), tr.weights)
    assert_block_shows(c.block("mixture"), tr.mixture)
    assert c.block("weights").row_state[2] == "read"
    click(panel.next_button)
    c = shown(panel)
    assert_block_shows(c.block("logits"), tr.class_logits)
    assert_block_shows(c.block("probs"), tr.probs)
    assert_block_shows(c.block("cls_b"), [0.0, 0.0])
    click(panel.next_button)
    c = shown(panel)
    assert c.block("loss").texts == [[f"{tr.loss:.4f}"]]
    assert f"{tr.loss:.4f}" in c.lines[0]
    click(panel.next_button)
    c = shown(panel)
    assert c.stage == 7 and "not changed yet" in c.lines[0]
    for k in PARAM_NAMES:
        assert_block_shows(c.block(f"grad:{k}"), np.atleast_2d(grads[k]))
    click(panel.next_button)
    c = shown(panel)
    assert c.stage == 8 and "Preview" in c.lines[0]
    assert not panel.next_button.isEnabled()
    # seven clicks and the preview: the live parameters never moved
    assert_params_equal(s.trainer.params, initial)
    trainer.apply_update()
    for k in PARAM_NAMES:
        assert_block_shows(c.block(f"old:{k}"), np.atleast_2d(initial[k]))
        assert_block_shows(c.block(f"new:{k}"), np.atleast_2d(trainer.params[k]))
        assert_block_shows(c.block(f"delta:{k}"), np.atleast_2d(trainer.params[k] - initial[k]))
    click(panel.prev_button)
    assert shown(panel).stage == 7


def test_absent_word_gradient_is_zero_and_marked(panel):
    panel.session.set_stage(7)
    c = shown(panel)
    emb = c.block("grad:emb")
    money = list(SENSE_PAIR.vocab).index("money")
    assert np.all(emb.values[money] == 0.0)
    assert emb.texts[money] == ["0", "0"]
    assert emb.row_notes[money] == "0 (absent: money)"
    assert emb.row_state[money] == "absent"
    assert [n for i, n in enumerate(emb.row_notes) if i != money] == ["", "", ""]
    assert "money" in c.lines[0] and "exactly 0" in c.lines[0]
    # the other sentence: river is the absent one
    panel.sentence_box.setCurrentIndex(1)
    emb = shown(panel).block("grad:emb")
    assert emb.row_notes[1] == "0 (absent: river)" and emb.row_notes[2] == ""


def test_apply_update_equals_an_independent_sgd_step(panel, params_copy, assert_params_equal):
    s = panel.session
    before = params_copy(s.trainer.params)
    for _ in range(6):
        click(panel.next_button)
        assert_params_equal(s.trainer.params, before)
    tokens, label = SENSE_PAIR.sentences[0]
    _, grads = loss_and_grads(params_copy(before), SENSE_PAIR.encode(tokens), label)
    click(panel.apply_button)
    c = shown(panel)
    assert c.stage == 8 and "applied" in c.lines[0]
    for k in PARAM_NAMES:
        np.testing.assert_array_equal(s.trainer.params[k], before[k] - 0.3 * grads[k])
    assert not panel.apply_button.isEnabled()
    click(panel.prev_button)  # looking back shows the pass that led to the update
    c = shown(panel)
    assert "already applied" in c.lines[-1]
    np.testing.assert_array_equal(c.block("grad:Wq").values, grads["Wq"])
    click(panel.next_sentence_button)
    c = shown(panel)
    assert c.stage == 1 and "the money bank" in c.title and s.steps == 1
    assert panel.apply_button.isEnabled()


def test_train_20_reset_and_curves(panel, params_copy, assert_params_equal):
    s = panel.session
    initial = params_copy(s.trainer.params)
    notes = panel.curves.notes  # an empty plot says why it is empty, on screen and in figures
    assert len(notes) == 2 and all(n.shown() for n in notes)
    assert notes[0].text() == "No training steps yet"
    click(panel.train_button)
    shown(panel)
    assert not any(n.shown() for n in notes)
    ref = Trainer(MODELS["sense-2d"])
    records = ref.train(20)
    assert_params_equal(s.trainer.params, ref.params)
    xs, ys = panel._loss_items[0].getData()
    np.testing.assert_array_equal(xs, [r.step for r in records if r.sentence == 0])
    np.testing.assert_array_equal(ys, [r.loss for r in records if r.sentence == 0])
    xs, ys = panel._clue_items[1].getData()
    np.testing.assert_array_equal(ys, [r.clue_attention for r in records if r.sentence == 1])
    assert panel.status.text().startswith("20 updates")
    click(panel.reset_button)
    shown(panel)
    assert_params_equal(s.trainer.params, initial)
    assert s.steps == 0 and all(n.shown() for n in notes)
    xs, _ = panel._loss_items[0].getData()
    assert xs is None or len(xs) == 0
    assert panel.status.text() == "0 updates"
    # nothing the stepper does is a workbench edit
    assert panel.wb.undo_stack.count() == 0


def test_learning_rate_and_play_controls(panel, qtbot):
    s = panel.session
    panel.lr_box.setValue(0.05)
    assert s.lr == 0.05
    panel.speed_box.setCurrentIndex(panel.speed_box.findData(120))
    assert s.speed == 120
    click(panel.play_button)
    assert s.running
    qtbot.waitUntil(lambda: s.steps >= 5, timeout=5000)
    panel.flush()
    assert "Pause" in panel.play_button.text()
    click(panel.play_button)
    assert not s.running
    panel.flush()
    assert "Play" in panel.play_button.text()


def test_models_and_the_pca_plane(panel):
    panel.model_box.setCurrentIndex(panel.model_box.findData("sense-8d"))
    panel.flush()
    s = panel.session
    assert s.snapshot.d == 8 and panel.lr_box.value() == 0.05
    assert panel.sentence_box.count() == 4 and panel.plane_box.isEnabled()
    s.train(8)
    s.set_stage(3)
    c = shown(panel)
    assert "first two of 8" in c.plane
    q = {a.label: a.head for a in c.arrows if a.role == "q"}
    np.testing.assert_allclose(q["q bank"], s.snapshot.trace.Q[-1, :2])
    panel.plane_box.setCurrentIndex(panel.plane_box.findData("pca"))
    c = shown(panel)
    tr = s.snapshot.trace
    basis, _ = best_subspace(np.vstack([tr.Q, tr.K, tr.V]), 2)
    q = {a.label: a.head for a in c.arrows if a.role == "q"}
    np.testing.assert_allclose(q["q bank"], tr.Q[-1] @ basis)
    assert "PCA" in c.plane
    panel.model_box.setCurrentIndex(panel.model_box.findData("biased"))
    panel.flush()
    assert panel.sentence_box.count() == 6 and len(panel._loss_items) == 6


def test_dataset_editor_refuses_bad_lines(panel):
    s = panel.session
    messages = []
    panel.wb.message.connect(messages.append)
    s.train(3)
    panel.dataset_edit.setPlainText("the river bank = water\nthe money bank finance\n")
    click(panel.use_dataset_button)
    assert "line 2" in panel.dataset_message.text() and "no '='" in panel.dataset_message.text()
    assert messages and messages[-1].startswith("Refused: line 2")
    assert s.dataset is SENSE_PAIR and s.steps == 3  # state as it was
    panel.dataset_edit.setPlainText(
        "the river bank = water\nthe money bank = finance\nthe fish bank = water\n"
    )
    click(panel.use_dataset_button)
    panel.flush()
    assert s.dataset.vocab == ("the", "river", "bank", "money", "fish")
    assert s.steps == 0 and s.snapshot.d == 2 and s.spec.optimizer == "sgd"
    assert panel.sentence_box.count() == 3 and "fish" in panel.sentence_box.itemText(2)
    assert "3 sentences" in panel.dataset_message.text()
    click(panel.restore_dataset_button)
    panel.flush()
    assert s.dataset is SENSE_PAIR


def test_send_to_workbench_is_one_undoable_edit(panel):
    wb = panel.wb
    original = wb.scenario
    s = panel.session
    s.train(40)
    s.choose_sentence(1)
    changes = []
    wb.changed.connect(changes.append)
    click(panel.send_button)
    assert wb.undo_stack.count() == 1 and len(changes) == 1
    sc = wb.scenario
    assert sc.tokens == ("the", "money", "bank") and sc.axes == ("e1", "e2")
    tr = forward(s.trainer.params, SENSE_PAIR.encode(sc.tokens))
    np.testing.assert_allclose(wb.trace.weights, tr.weights, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(sc.heads[0].Wq, s.trainer.params["Wq"])
    assert wb.receiving == 2
    wb.undo_stack.undo()
    assert wb.scenario is original


def test_send_to_workbench_is_a_new_untitled_document(panel, tmp_path):
    wb = panel.wb
    mine = tmp_path / "mine.json"
    wb.path = mine
    click(panel.send_button)
    assert wb.scenario.tokens == ("the", "river", "bank") and wb.undo_stack.count() == 1
    assert wb.scenario.heads[0].Wq.shape == panel.session.trainer.params["Wq"].shape
    assert wb.path is None  # File > Save cannot write the trained head over mine.json
    wb.undo_stack.undo()
    assert wb.path == mine
    assert wb.scenario.name == "river-bank"


def test_stage_figure_exports_with_text(panel, tmp_path):
    from attnsim.export import export_widget

    panel.session.set_stage(3)
    panel.flush()
    assert panel.figure_widget() is panel.stage_view
    svg = export_widget(panel.figure_widget(), tmp_path / "stage.svg").read_text()
    assert "<text" in svg and "Q / K / V" in svg
    png = export_widget(panel.figure_widget(), tmp_path / "stage.png", scale=1)
    assert png.stat().st_size > 5000


def test_redraw_cost_does_not_rebuild_curves(panel):
    items = list(panel._loss_items)
    for _ in range(5):
        panel.session.train(1)
        panel.flush()
    assert panel._loss_items == items  # data updated in place
    assert panel.refresh_count >= 5


def test_build_stage_refuses_bad_stage(panel):
    with pytest.raises(ValueError, match="stage"):
        build_stage(panel.session.snapshot, 0)


def test_hovering_a_cell_finds_its_exact_value(panel):
    panel.session.set_stage(2)
    panel.flush()
    view = panel.stage_view
    pl = next(p for p in view._placed if p.block.key == "X")
    # the centre of row 3 (bank), column 2 (e2): below the title and the column labels
    rh = QFontMetrics(view.num_font).height() + 3
    top = pl.y + QFontMetrics(view.head_font).height() + 2 + rh
    x = pl.x + pl.label_w + 1.5 * pl.cell_w
    y = top + 2.5 * rh
    block, i, j = view.cell_at(x, y)
    assert (block.key, i, j) == ("X", 2, 1)
    assert block.values[i, j] == panel.session.snapshot.trace.X[2, 1]
    assert view.cell_at(pl.x - 5, y) is None


def test_stage_and_curves_share_the_dock_the_way_its_size_allows(panel):
    assert panel.split.mode() == "side"  # 900 x 600
    assert panel.scroll.isVisible() and panel.loss_plot.isVisible()
    panel.resize(520, 420)
    QApplication.processEvents()
    assert panel.split.mode() == "tabs"
    assert panel.scroll.isVisible() and not panel.loss_plot.isVisible()
    assert panel.scroll.width() > 480  # the stage gets the whole width
    panel.split.set_current(1)
    assert panel.loss_plot.isVisible()
    panel.resize(600, 800)
    QApplication.processEvents()
    assert panel.split.mode() == "stack"
    assert panel.scroll.isVisible() and panel.loss_plot.isVisible()
    assert panel.minimumSizeHint().width() <= 480
    assert panel.figure_widget() is panel.stage_view


@pytest.mark.parametrize("size", [(900, 600), (520, 420)])
def test_stage_three_names_do_not_overlap(make_wb, show_panel, size):
    from PySide6.QtWidgets import QApplication

    from attnsim.panels.kit.labels import any_overlap

    panel = show_panel(StepperPanel(make_wb("river-bank")), size=size)
    try:
        for stage in (3, 4, 5):
            panel.session.set_stage(stage)
            panel.flush()
            panel.stage_view.repaint()
            QApplication.processEvents()
            view = panel.stage_view
            names = [a.label for a in view.content.arrows if a.label]
            assert len(view.label_rects) == len(names)
            assert not any_overlap(view.label_rects), (stage, names, view.label_rects)
            box = view._box
            for x, y, w, h in view.label_rects:
                assert box.left() <= x and x + w <= box.right()
                assert box.top() <= y and y + h <= box.bottom()
    finally:
        panel.session.pause()


def test_divergence_stops_play_and_offers_reset(panel, qtbot):
    box = panel.lr_box
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), "10")
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert panel.session.lr == 10.0
    panel.flush()
    assert panel.lr_warning.isVisible() and "diverge" in panel.lr_warning.text()
    panel.session.set_speed(300)
    click(panel.play_button)
    qtbot.waitUntil(lambda: not panel.session.running, timeout=5000)
    panel.flush()
    assert not panel.play_button.isChecked() and panel.play_button.text() == "▶ Play"
    assert panel.divergence_label.isVisible()
    assert panel.divergence_label.text().startswith("Training diverged at step 4 (")
    assert panel.divergence_reset.isVisible()
    # Every stage of the last good state still draws; more steps do not raise.
    for stage in range(1, 9):
        panel.session.set_stage(stage)
        panel.flush()
        panel.grab()
    click(panel.train_button)
    panel.flush()
    assert panel.session.steps == 3
    click(panel.divergence_reset)
    panel.flush()
    assert panel.session.steps == 0 and panel.session.divergence is None
    assert not panel.divergence_label.isVisible() and not panel.divergence_reset.isVisible()


def test_the_weight_axis_labels_its_ends(panel):
    # 0 and 1 of a weight are what a reader looks for; with the grid on, pyqtgraph drops an
    # end's label that reaches past the axis, so the range leaves room for them.
    from PySide6.QtGui import QImage, QPainter

    image = QImage(panel.size(), QImage.Format.Format_ARGB32)
    for plot in (panel.curves.loss_plot, panel.curves.clue_plot):
        painter = QPainter(image)
        texts = [spec[2] for spec in plot.getAxis("left").generateDrawSpecs(painter)[2]]
        painter.end()
        assert texts[0] == "0" and texts[-1] == "1.0", texts
