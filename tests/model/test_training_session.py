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
from attnsim.views.stepper import (
    DatasetError,
    dataset_text,
    make_snapshot,
    nice_extent,
    parse_dataset,
    plane_basis,
    stage_arrows,
    trained_scenario,
)


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
    loaded = modules_loaded_by("attnsim.views.stepper")
    bad = [m for m in loaded if m.split(".")[0] in ("PySide6", "pyqtgraph")]
    assert not bad, f"the engine module pulled in Qt: {bad}"


# ---- engine helpers (attnsim.views.stepper) ----------------------------------------------
def test_snapshot_does_not_touch_the_trainer(params_copy, assert_params_equal):
    t = Trainer(MODELS["sense-8d"])
    t.train(2)
    before = params_copy(t.params)
    m_before = {k: v.copy() for k, v in t.optimizer.m.items()}
    snap = make_snapshot(t)
    assert_params_equal(t.params, before)
    for k in m_before:
        np.testing.assert_array_equal(t.optimizer.m[k], m_before[k])
    assert t.optimizer.t == 2
    assert not snap.params["emb"].flags.writeable


def test_absent_word_gradient_is_exactly_zero():
    snap = make_snapshot(Trainer(MODELS["sense-2d"]))
    assert snap.absent() == ["money"]
    assert np.all(snap.grads["emb"][2] == 0.0)
    assert np.all(snap.delta["emb"][2] == 0.0)
    assert np.any(snap.grads["emb"][1] != 0.0)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("the river bank = water\nthe money bank finance", 2, "no '='"),
        ("the river bank = water\n\n = finance", 3, "sentence before '=' is empty"),
        ("the river bank =", 1, "label after '=' is empty"),
        ("a = b = c\nx = y", 1, "more than one '='"),
        ("the river bank = water\nthe money bank = big money", 2, "one word"),
    ],
)
def test_parse_dataset_refuses_bad_lines(text, line, words):
    with pytest.raises(DatasetError, match=words) as info:
        parse_dataset(text)
    assert info.value.line == line
    assert str(info.value).startswith(f"line {line}:")


def test_parse_dataset_whole_text_problems():
    with pytest.raises(DatasetError, match="no sentences"):
        parse_dataset("\n# only a comment\n")
    with pytest.raises(DatasetError, match="at least two labels"):
        parse_dataset("a b = x\nc d = x")


def test_parse_dataset_round_trip():
    ds = parse_dataset("# comment\nthe river bank = water\n  the money bank = finance  \n")
    assert ds.vocab == ("the", "river", "bank", "money")
    assert ds.classes == ("water", "finance")
    assert ds.sentences == ((("the", "river", "bank"), 0), (("the", "money", "bank"), 1))
    assert parse_dataset(dataset_text(SENSE_PAIR)).sentences == SENSE_PAIR.sentences


def test_stage_arrows_are_the_engines_vectors():
    t = Trainer(MODELS["sense-2d"])
    snap = make_snapshot(t)
    arrows, desc = stage_arrows(snap, 3)
    assert desc == "e1, e2"
    heads = {a.label: a.head for a in arrows}
    tr = snap.trace
    for j, tok in enumerate(snap.tokens):
        np.testing.assert_allclose(heads[f"q {tok}"], tr.Q[j])
        np.testing.assert_allclose(heads[f"k {tok}"], tr.K[j])
        np.testing.assert_allclose(heads[f"v {tok}"], tr.V[j])
    mix = [a for a in stage_arrows(snap, 4)[0] if a.role == "mix"]
    np.testing.assert_allclose(mix[0].head, tr.mixture)
    arrows7, desc7 = stage_arrows(snap, 7)
    steps = [a for a in arrows7 if a.role == "step"]
    assert len(steps) == 3  # one per word in the sentence; money (absent) has none
    k = float(desc7.split("×")[1]) if "×" in desc7 else 1.0
    word_at = {b.head: b.label for b in arrows7 if b.role == "x"}
    for a in steps:
        i = snap.vocab.index(word_at[a.tail])  # each step starts at its word's tip
        np.testing.assert_allclose(a.tail, snap.params["emb"][i])
        np.testing.assert_allclose(np.subtract(a.head, a.tail), -k * snap.lr * snap.grads["emb"][i])
    new = [a for a in stage_arrows(snap, 8)[0] if a.role in ("new", "absent")]
    np.testing.assert_allclose([a.head for a in new], snap.new_params["emb"])
    with pytest.raises(ValueError, match="stage"):
        stage_arrows(snap, 9)


def test_plane_basis_for_wide_vectors():
    basis, desc = plane_basis(8, "first")
    np.testing.assert_array_equal(basis, np.eye(8)[:, :2])
    assert "first two of 8" in desc
    rng = np.random.default_rng(1)
    pts = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 8))  # lies in a plane
    basis, desc = plane_basis(8, "pca", pts)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(pts @ basis @ basis.T, pts, atol=1e-10)
    assert "100%" in desc
    assert [nice_extent(x) for x in (0.3, 0.9, 1.0, 1.3, 4.0, 7.0)] == [0.5, 1, 1, 2, 5, 10]


def test_trained_scenario_matches_forward():
    t = Trainer(MODELS["biased"])
    t.train(30)
    tokens = t.dataset.sentences[3][0]
    sc = trained_scenario(t.params, t.dataset, tokens, "biased", t.steps)
    tr = forward(t.params, t.dataset.encode(tokens))
    np.testing.assert_allclose(sc.compute().heads[0].weights, tr.weights, rtol=0, atol=1e-14)
    assert len(sc.axes) == 8 and set(sc.absent) == set(t.dataset.vocab) - set(tokens)


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
    assert session.steps == 3 and session.history.n == 3 and len(session.trainer.history) == 3
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
