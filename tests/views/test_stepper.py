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
