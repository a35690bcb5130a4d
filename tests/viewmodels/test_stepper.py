"""The stepper's view-model: snapshots, the dataset text parser, stage arrows, the plane."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.training import (
    MODELS,
    SENSE_PAIR,
    Trainer,
    forward,
)
from attnsim.viewmodels.stepper import (
    N_STAGES,
    STAGES,
    DatasetError,
    build_stage,
    controls_state,
    dataset_text,
    make_snapshot,
    nice_extent,
    parse_dataset,
    plane_basis,
    stage_arrows,
    trained_scenario,
)


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


# ---- what each stage shows, and the controls ---------------------------------------------------
def _tagged(x: float) -> str:
    return f"<{x:.2f}>"


@pytest.mark.parametrize("stage", range(1, N_STAGES + 1))
def test_every_stage_formats_its_numbers_with_the_given_format(stage):
    t = Trainer(MODELS["sense-2d"])
    t.train(1)
    c = build_stage(make_snapshot(t), stage, fmt=_tagged)
    assert c.stage == stage and c.title.startswith(f"{stage}. {STAGES[stage - 1]} — ")
    assert c.lines and c.legend and c.blocks
    keys = [b.key for b in c.blocks]
    assert len(set(keys)) == len(keys)
    for b in c.blocks:
        assert len(b.texts) == len(b.row_labels) == len(b.row_state) == b.values.shape[0]
        assert all(len(row) == len(b.col_labels) == b.values.shape[1] for row in b.texts)
        if b.key == "loss":
            assert b.texts == [[f"{b.values[0, 0]:.4f}"]]
        elif b.integer:
            assert b.texts == [[str(int(x)) for x in row] for row in b.values.tolist()]
        else:
            assert b.texts == [[_tagged(x) for x in row] for row in b.values.tolist()]


def test_update_stage_shows_old_new_and_delta_of_each_group_in_turn():
    snap = make_snapshot(Trainer(MODELS["sense-2d"]))
    c = build_stage(snap, N_STAGES, fmt=_tagged)
    groups = [b.key.split(":")[0] for b in c.blocks]
    assert groups == ["old", "new", "delta"] * (len(c.blocks) // 3)
    assert [b.break_before for b in c.blocks] == [True, False, False] * (len(c.blocks) // 3)
    np.testing.assert_array_equal(
        c.block("delta:emb").values, snap.new_params["emb"] - snap.params["emb"]
    )
    assert "Preview of the update" in c.lines[0] and c.lines[0].endswith("Δ = new − old.")
    with pytest.raises(KeyError, match="grad:emb"):
        c.block("grad:emb")


@pytest.mark.parametrize("stage", [0, N_STAGES + 1])
def test_build_stage_refuses_a_stage_out_of_range(stage):
    with pytest.raises(ValueError, match=f"1..{N_STAGES}"):
        build_stage(make_snapshot(Trainer(MODELS["sense-2d"])), stage, fmt=_tagged)


def _state(**changes):
    values = dict(stage=1, example=0, lr=0.5, speed=10, applied=False, running=False,
                  steps=0, last_loss=None, optimizer="sgd", d=2, divergence=None,
                  lr_warning="")  # fmt: skip
    return controls_state(**{**values, **changes})


def test_controls_state_enables_what_can_be_done():
    s = _state()
    assert not s.can_previous and s.can_next and s.can_apply
    assert s.play_text == "▶ Play" and s.status == "0 updates"
    assert s.status_tip == "SGD, lr 0.5, 2 coordinates"
    assert not s.show_alert and s.lr_tip == "Learning rate of the following steps"
    s = _state(stage=N_STAGES, applied=True, running=True, steps=20, last_loss=0.123456,
               optimizer="adam")  # fmt: skip
    assert s.can_previous and not s.can_next and not s.can_apply
    assert s.play_text == "❚❚ Pause" and s.status == "20 updates · loss 0.1235"
    assert s.status_tip.startswith("Adam,")


def test_controls_state_warns_until_training_diverges():
    s = _state(lr_warning="lr 10 is likely to diverge")
    assert s.show_alert and s.show_lr_warning and s.divergence == ""
    assert s.lr_tip.endswith("\nlr 10 is likely to diverge")
    s = _state(lr_warning="lr 10 is likely to diverge", divergence="diverged at step 4")
    assert s.divergence == "Training diverged at step 4." and s.show_alert
    assert not s.show_lr_warning  # the divergence says it all
