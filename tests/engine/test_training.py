"""The sense classifier: gradients, optimizers, trainer and the trained models' behaviour."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from attnsim.engine.experiments import train_model
from attnsim.engine.training import (
    MODELS,
    PARAM_NAMES,
    SENSE,
    SGD,
    Adam,
    Dataset,
    Trainer,
    forward,
    init_params,
    loss_and_grads,
)

DATA = Path(__file__).parent / "data"


def numeric_grads(params, ids, label, eps=1e-6, **kw):
    out = {}
    for name in PARAM_NAMES:
        g = np.zeros_like(params[name])
        for idx in np.ndindex(params[name].shape):
            old = params[name][idx]
            params[name][idx] = old + eps
            up = forward(params, ids, label, **kw).loss
            params[name][idx] = old - eps
            down = forward(params, ids, label, **kw).loss
            params[name][idx] = old
            g[idx] = (up - down) / (2 * eps)
        out[name] = g
    return out


@pytest.mark.parametrize(
    ("causal", "position", "d"),
    [(False, -1, 2), (False, -1, 8), (True, -1, 8), (True, 1, 8), (False, 1, 3)],
)
def test_gradients_match_central_differences(causal, position, d):
    params = init_params(5, d, 3, seed=11, zero_bias=False)
    ids = np.array([0, 3, 1, 3])  # word 2 and 4 absent, word 3 repeated
    loss, grads = loss_and_grads(params, ids, 2, causal=causal, position=position)
    num = numeric_grads(params, ids, 2, causal=causal, position=position)
    for name in PARAM_NAMES:
        assert grads[name].shape == params[name].shape
        err = np.linalg.norm(grads[name] - num[name])
        scale = max(np.linalg.norm(num[name]), 1e-3)
        assert err / scale < 1e-6, (name, err / scale)
    assert (grads["emb"][[2, 4]] == 0.0).all()  # exactly zero, not just small
    assert loss == forward(params, ids, 2, causal=causal, position=position).loss


def test_causal_mask_changes_gradients_of_a_middle_readout():
    params = init_params(4, 4, 2, seed=3)
    ids = [0, 1, 3]
    _, g_free = loss_and_grads(params, ids, 1, position=1)
    _, g_causal = loss_and_grads(params, ids, 1, position=1, causal=True)
    # Under the mask, the token after the readout cannot influence it at all.
    assert not np.allclose(g_free["emb"][3], 0.0)
    assert (g_causal["emb"][3] == 0.0).all()


def test_sgd_step_in_place():
    params = init_params(4, 2, 2, seed=0)
    before = {k: v.copy() for k, v in params.items()}
    _, grads = loss_and_grads(params, [0, 1, 3], 0)
    SGD(0.3).step(params, grads)
    for k in PARAM_NAMES:
        np.testing.assert_array_equal(params[k], before[k] - 0.3 * grads[k])


def test_adam_follows_the_recorded_torch_trajectory():
    rec = json.loads((DATA / "adam_torch_reference.json").read_text())
    trainer = Trainer(MODELS["sense-8d"])
    for k, v in rec["initial"].items():
        np.testing.assert_array_equal(trainer.params[k], np.array(v))
    history = trainer.train(rec["steps"])
    np.testing.assert_allclose([h.loss for h in history], rec["losses"], rtol=1e-9, atol=1e-12)
    for k, v in rec["final"].items():
        np.testing.assert_allclose(trainer.params[k], np.array(v), rtol=1e-9, atol=1e-12)


def test_adam_first_step_moves_each_weight_by_about_lr():
    params = {"w": np.array([1.0, -2.0, 3.0])}
    grads = {"w": np.array([0.5, -4.0, 1e-3])}
    Adam(0.1).step(params, grads)
    np.testing.assert_allclose(params["w"], [0.9, -1.9, 2.9], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_in_one_buffer_or_per_parameter_is_the_textbook_update_bit_for_bit(dtype) -> None:
    rng = np.random.default_rng(0)
    shapes = {"a": (3, 4), "b": (5,), "c": (2, 1, 3)}
    start = {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items()}
    steps = [{k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items()} for _ in range(6)]
    flat, per_key = ({k: v.copy() for k, v in start.items()} for _ in range(2))
    want = {k: v.copy() for k, v in start.items()}
    opt_flat, opt_key = Adam(0.01), Adam(0.01)
    m = {k: np.zeros_like(v) for k, v in start.items()}
    v = {k: np.zeros_like(x) for k, x in start.items()}
    for t, grads in enumerate(steps, 1):
        opt_flat.step(flat, grads)
        # the keys in another order than the first step's: each parameter on its own
        opt_key.step(per_key, dict(reversed(grads.items())) if t > 1 else grads)
        for k, g in grads.items():
            m[k] += (1.0 - 0.9) * (g - m[k])
            v[k] *= 0.999
            v[k] += (1.0 - 0.999) * g * g
            denom = np.sqrt(v[k]) / math.sqrt(1.0 - 0.999**t) + 1e-8
            want[k] -= 0.01 / (1.0 - 0.9**t) * (m[k] / denom)
    for k in shapes:
        np.testing.assert_array_equal(flat[k], want[k])
        np.testing.assert_array_equal(per_key[k], want[k])
        np.testing.assert_array_equal(opt_flat.m[k], m[k])
    assert opt_flat.state_dict()["m"].keys() == shapes.keys()


def test_optimizer_arguments_are_checked():
    with pytest.raises(ValueError, match="learning rate"):
        SGD(0.0)
    with pytest.raises(ValueError, match="betas"):
        Adam(0.1, betas=(1.0, 0.9))


def test_trainer_reset_is_bit_for_bit():
    t = Trainer(MODELS["sense-2d"])
    start = {k: v.copy() for k, v in t.params.items()}
    t.train(7)
    assert not np.array_equal(t.params["Wq"], start["Wq"])
    t.reset()
    for k in PARAM_NAMES:
        np.testing.assert_array_equal(t.params[k], start[k])
    assert t.steps == 0 and t.example == 0 and t.history == []


def test_trainer_steps_equal_manual_engine_steps():
    t = Trainer(MODELS["sense-2d"])
    params = {k: v.copy() for k, v in t.params.items()}
    opt = SGD(0.3)
    t.train(20)
    for step in range(20):
        tokens, label = SENSE.sentences[step % 2]
        _, g = loss_and_grads(params, SENSE.encode(tokens), label)
        opt.step(params, g)
    for k in PARAM_NAMES:
        np.testing.assert_array_equal(t.params[k], params[k])


def test_two_d_stepper_run_learns_both_sentences():
    r = train_model("sense-2d", 100)
    assert r["all_correct"]
    assert r["loss_history"][-1] < r["loss_history"][0] / 10
    # recorded values (seed 0, 100 epochs of the two sentences), for the record:
    assert r["final_loss"] < 0.01


def test_eight_d_model_classifies_all_four_and_routes_to_the_clue():
    r = train_model("sense-8d", 300)
    assert r["all_correct"]
    river, money = r["sentences"][0], r["sentences"][1]
    assert (river["prediction"], money["prediction"]) == ("water", "finance")
    # bank's attention lands on the clue word, as in the reference run (rounded 1.0 there)
    assert dict(river["attention"])["river"] > 0.95
    assert dict(money["attention"])["money"] > 0.95


def test_biased_dataset_is_fitted():
    r = train_model("biased", 300)
    assert r["all_correct"]
    assert [s["prediction"] for s in r["sentences"]] == [
        "water", "finance", "water", "finance", "water", "finance",
    ]  # fmt: skip
    assert r["final_loss"] < 0.01


def test_dataset_validation_names_the_problem():
    with pytest.raises(ValueError, match="sentence 2 uses 'cat'"):
        Dataset("d", ("a", "b"), ("x", "y"), ((("a",), 0), (("cat",), 1)))
    with pytest.raises(ValueError, match="sentence 1 has label 5"):
        Dataset("d", ("a",), ("x", "y"), ((("a",), 5),))
    assert SENSE.clue_words() == frozenset({"river", "money"})


def test_forward_rejects_bad_ids():
    params = init_params(4, 2, 2)
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 4\)"):
        forward(params, [0, 7])


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_a_copied_adam_steps_on_its_own_state(how):
    import copy

    from attnsim.engine.optimizers import Adam

    rng = np.random.default_rng(5)
    grads = [{"a": rng.standard_normal((3, 2)), "b": rng.standard_normal(4)} for _ in range(3)]
    opt, params = Adam(0.01), {"a": np.ones((3, 2)), "b": np.zeros(4)}
    opt.step(params, grads[0])
    twin = opt.copy() if how == "copy" else copy.deepcopy(opt)
    twin_params = {k: v.copy() for k, v in params.items()}
    before = {k: v.copy() for k, v in opt.m.items()}
    twin.step(twin_params, grads[1])  # must leave the original's moments alone
    for k in before:
        np.testing.assert_array_equal(opt.m[k], before[k])
    opt.step(params, grads[1])  # the same step on the original lands on the same numbers
    for k in params:
        np.testing.assert_array_equal(params[k], twin_params[k])
