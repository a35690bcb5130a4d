"""The training session: stages never change parameters, updates equal the engine's, reset is
exact, continuous training runs on a timer; the dataset text parser names bad lines."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.training import (
    MODELS,
    PARAM_NAMES,
    SENSE_PAIR,
    Adam,
    Trainer,
    forward,
    init_params,
    loss_and_grads,
)
from attnsim.model.training_session import TrainingSession


@pytest.fixture
def session(qapp):
    s = TrainingSession("sense-2d")
    yield s
    s.pause()


def test_sense_2d_setup(session, assert_params_equal):
    spec = session.spec
    assert (spec.d, spec.optimizer, session.lr) == (2, "sgd", 0.3)
    assert session.dataset.vocab == ("the", "river", "money", "bank")
    assert session.dataset.classes == ("water", "finance")
    assert_params_equal(session.trainer.params, init_params(4, 2, 2, seed=0))
    assert np.all(session.trainer.params["cls_b"] == 0.0)
    assert session.stage == 1 and session.example == 0


def test_stages_do_not_change_parameters_and_apply_equals_sgd(
    session, qtbot, params_copy, assert_params_equal
):
    before = params_copy(session.trainer.params)
    seen = []
    session.stage_changed.connect(seen.append)
    for _ in range(7):
        session.next_stage()
        assert_params_equal(session.trainer.params, before)
    assert seen == [2, 3, 4, 5, 6, 7, 8]
    session.next_stage()  # at the last stage: stays, no signal
    assert seen[-1] == 8 and len(seen) == 7
    # the preview at stage 8 changed nothing either
    snap = session.snapshot
    assert not snap.applied
    assert_params_equal(session.trainer.params, before)
    # independent SGD on a copy
    tokens, label = SENSE_PAIR.sentences[0]
    loss, grads = loss_and_grads(params_copy(before), SENSE_PAIR.encode(tokens), label)
    expected = {k: before[k] - 0.3 * grads[k] for k in PARAM_NAMES}
    with qtbot.waitSignal(session.params_changed, timeout=1000):
        rec = session.apply_update()
    assert rec is not None and rec.loss == loss
    assert_params_equal(session.trainer.params, expected)
    assert_params_equal(session.snapshot.new_params, expected)  # preview == applied
    assert_params_equal(session.snapshot.params, before)
    assert session.snapshot.applied and session.steps == 1
    assert session.apply_update() is None  # once per sentence
    assert session.steps == 1


def test_adam_preview_equals_applied_step(qapp, assert_params_equal):
    s = TrainingSession("sense-8d")
    s.train(3)
    preview = s.snapshot.new_params
    optimizer_t = s.trainer.optimizer.t
    s.apply_update()
    assert isinstance(s.trainer.optimizer, Adam) and s.trainer.optimizer.t == optimizer_t + 1
    assert_params_equal(s.trainer.params, preview)


def test_next_sentence_continues_with_updated_parameters(session, params_copy, assert_params_equal):
    session.apply_update()
    after = params_copy(session.trainer.params)
    assert session.example == 0  # still showing the sentence just trained
    session.next_sentence()
    assert session.example == 1 and session.stage == 1
    assert_params_equal(session.trainer.params, after)
    assert session.snapshot.tokens == ("the", "money", "bank")
    assert_params_equal(session.snapshot.params, after)
    # without an update, Next sentence just moves on
    session.next_sentence()
    assert session.example == 0
    assert_params_equal(session.trainer.params, after)


def test_train_20_equals_20_engine_steps_and_reset_is_exact(
    session, params_copy, assert_params_equal
):
    initial = params_copy(session.trainer.params)
    records = session.train(20)
    ref = Trainer(MODELS["sense-2d"])
    ref_records = ref.train(20)
    assert_params_equal(session.trainer.params, ref.params)
    assert [r.loss for r in records] == [r.loss for r in ref_records]
    h = session.history
    assert h.n == 20
    np.testing.assert_array_equal(h.loss, [r.loss for r in ref_records])
    np.testing.assert_array_equal(h.step, np.arange(1, 21))
    np.testing.assert_array_equal(h.sentence, [i % 2 for i in range(20)])
    np.testing.assert_array_equal(h.clue, [r.clue_attention for r in ref_records])
    session.set_stage(5)
    session.reset()
    assert_params_equal(session.trainer.params, initial)
    assert session.steps == 0 and session.history.n == 0
    assert session.stage == 1 and session.example == 0
    # a reset run retraces the same path bit for bit
    session.train(20)
    assert_params_equal(session.trainer.params, ref.params)


def test_learning_rate(session, params_copy):
    session.set_lr(0.1)
    assert session.trainer.optimizer.lr == 0.1
    before = params_copy(session.trainer.params)
    tokens, label = SENSE_PAIR.sentences[0]
    _, grads = loss_and_grads(params_copy(before), SENSE_PAIR.encode(tokens), label)
    np.testing.assert_array_equal(
        session.snapshot.new_params["Wq"], before["Wq"] - 0.1 * grads["Wq"]
    )
    with pytest.raises(ValueError, match="positive"):
        session.set_lr(-1.0)
    assert session.lr == 0.1


def test_models_switch(session):
    seen = []
    session.model_changed.connect(seen.append)
    session.train(4)
    session.set_model("sense-8d")
    assert seen == ["sense-8d"]
    assert session.snapshot.d == 8 and session.spec.optimizer == "adam" and session.lr == 0.05
    assert session.steps == 0 and session.history.n == 0
    session.set_model("biased")
    assert len(session.dataset.sentences) == 6 and "vault" in session.dataset.vocab
    with pytest.raises(ValueError, match="unknown model"):
        session.set_model("nope")


def test_choose_sentence(session, params_copy):
    session.set_stage(4)
    session.choose_sentence(1)
    assert session.example == 1 and session.stage == 4
    assert session.snapshot.tokens == ("the", "money", "bank")
    before = params_copy(session.trainer.params)
    session.apply_update()
    tokens, label = SENSE_PAIR.sentences[1]
    _, grads = loss_and_grads(params_copy(before), SENSE_PAIR.encode(tokens), label)
    np.testing.assert_array_equal(session.trainer.params["emb"], before["emb"] - 0.3 * grads["emb"])
    with pytest.raises(ValueError, match="no sentence 3"):
        session.choose_sentence(2)


def test_play_trains_on_a_timer_and_pause_stops(session, qtbot, assert_params_equal):
    session.set_speed(60)
    assert session.steps_per_tick() == (17, 1)
    session.set_speed(300)
    assert session.steps_per_tick()[1] >= 4
    with qtbot.waitSignal(session.running_changed, timeout=1000) as blocker:
        session.play()
    assert blocker.args == [True]
    qtbot.waitUntil(lambda: session.steps >= 8, timeout=5000)
    session.pause()
    assert not session.running
    n = session.steps
    qtbot.wait(80)
    assert session.steps == n
    ref = Trainer(MODELS["sense-2d"])
    ref.train(n)
    assert_params_equal(session.trainer.params, ref.params)


def test_scenario_for_the_workbench(session):
    session.train(12)
    sc = session.scenario()
    tr = forward(session.trainer.params, SENSE_PAIR.encode(SENSE_PAIR.sentences[0][0]))
    assert sc.tokens == ("the", "river", "bank") and sc.axes == ("e1", "e2")
    np.testing.assert_array_equal(sc.X, tr.X)
    np.testing.assert_allclose(sc.compute().heads[0].weights, tr.weights, rtol=0, atol=1e-14)
    assert sc.receiving == 2
    np.testing.assert_array_equal(sc.absent["money"], session.trainer.params["emb"][2])


def test_model_layer_imports_no_widgets(modules_loaded_by):
    loaded = modules_loaded_by("attnsim.model.training_session")
    bad = [m for m in loaded if m.startswith(("PySide6.QtWidgets", "pyqtgraph"))]
    assert not bad, bad
    loaded = modules_loaded_by("attnsim.viewmodels.stepper")
    bad = [m for m in loaded if m.split(".")[0] in ("PySide6", "pyqtgraph")]
    assert not bad, f"the stepper view-model pulled in Qt: {bad}"


# ---- divergence is a lesson, not an error loop ----------------------------------------------------
def test_lr_10_on_sense_2d_stops_at_the_diverging_step_and_keeps_the_last_good_state(
    session, qtbot
):
    from attnsim.engine.scenario import MAX_ABS_VALUE

    session.set_lr(10.0)  # the box's maximum: NaN at step 9 and an error every step after
    with qtbot.waitSignal(session.diverged_changed, timeout=1000):
        records = session.train(50)
    div = session.divergence
    assert div is not None and div.step == 4 and len(records) == 3
    assert div.text().startswith("diverged at step 4 (parameters → ")
    # The update that diverged is undone: the state is the last good one, and drawable.
    assert session.steps == 3 and session.history.n == 3
    assert session.trainer.history[-1].step == 3  # the diverged step's record is gone too
    for v in session.trainer.params.values():
        assert np.isfinite(v).all() and np.abs(v).max() <= MAX_ABS_VALUE
    assert np.isfinite(session.history.loss).all()
    session.snapshot  # noqa: B018  (computing the shown sentence's numbers does not raise)
    assert session.train(5) == [] and session.apply_update() is None  # no error loop
    assert session.steps == 3


def test_non_finite_loss_is_reported_as_such(session):
    t = session.trainer
    t.params["cls_b"] = np.full_like(t.params["cls_b"], np.inf)  # logits overflow
    before = {k: v.copy() for k, v in t.params.items()}
    assert session.train(3) == []
    div = session.divergence
    assert div is not None and div.step == 1 and div.loss in ("inf", "nan")
    assert div.text() == f"diverged at step 1 (loss → {div.loss})"
    for k, v in before.items():
        np.testing.assert_array_equal(t.params[k], v)


def test_play_stops_when_training_diverges(session, qtbot):
    session.set_lr(10.0)
    session.set_speed(300)
    with qtbot.waitSignal(session.running_changed, timeout=1000):
        session.play()
    qtbot.waitUntil(lambda: not session.running, timeout=5000)
    assert session.divergence is not None and session.steps == 3


def test_reset_or_a_new_model_clears_the_divergence(session, qtbot):
    session.set_lr(10.0)
    session.train(10)
    assert session.divergence is not None
    with qtbot.waitSignal(session.diverged_changed, timeout=1000):
        session.reset()
    assert session.divergence is None and session.steps == 0
    session.train(10)
    session.set_model("sense-8d")
    assert session.divergence is None


def test_a_good_step_at_a_lower_rate_clears_the_divergence(session):
    session.set_lr(3.0)
    session.train(50)
    assert session.divergence is not None and session.divergence.step == 10
    session.reset()
    session.set_lr(0.3)
    assert len(session.train(50)) == 50 and session.divergence is None


@pytest.mark.parametrize(
    ("model", "lr", "warned"),
    [("sense-2d", 10.0, True), ("sense-2d", 3.0, True), ("sense-2d", 2.0, False),
     ("sense-2d", 0.3, False), ("sense-8d", 1.0, True), ("sense-8d", 0.05, False)],
)  # fmt: skip
def test_learning_rates_that_diverge_are_warned_about(qapp, model, lr, warned):
    s = TrainingSession(model)
    s.set_lr(lr)
    assert bool(s.lr_warning()) is warned
    if warned:
        assert f"lr {lr:g} is above" in s.lr_warning() and "diverge" in s.lr_warning()


# ---- memory stays bounded while Play runs ---------------------------------------------------------
def test_history_memory_is_bounded_and_keeps_the_curve_ends(session, monkeypatch):
    from attnsim.model import training_session as ts

    monkeypatch.setattr(ts, "MAX_HISTORY_POINTS", 64)
    for _ in range(10):
        session.train(20)
    h = session.history
    assert session.steps == 200
    assert h.n <= 64  # thinned, not grown to 200
    assert h.step[0] == 1 and h.step[-1] == 200  # first and last steps still drawn
    assert np.all(np.diff(h.step) > 0)  # still in order, no duplicates
    # the last 20 steps (the newest half's tail) are all there, one point each
    np.testing.assert_array_equal(h.step[-20:], np.arange(181, 201))
    # the trainer keeps only its latest record object; the columns hold the history
    assert len(session.trainer.history) == 1 and session.trainer.history[0].step == 200
