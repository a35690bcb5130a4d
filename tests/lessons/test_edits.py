"""Each edit kind changes what it should, and nothing of the scenario it was applied to."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.scenario import ScenarioError
from attnsim.lessons.edits import EDIT_KINDS, LAB_EDITS, Edit, apply_edit, apply_edits
from attnsim.resources import resolve_scenario

BANK = 2


def snapshot(sc) -> dict:
    """Everything an edit could change, copied (so a change in place is seen)."""
    out = {
        "tokens": sc.tokens,
        "temperature": sc.temperature,
        "scale": sc.scale,
        "mask": sc.mask if isinstance(sc.mask, str) else np.array(sc.mask),
        "mask_value": sc.mask_value,
    }
    for name in ("X", "Q", "K", "V"):
        value = getattr(sc, name, None)
        out[name] = None if value is None else np.array(value, dtype=float)
    for h, head in enumerate(sc.heads):
        for name in ("Wq", "Wk", "Wv"):
            out[f"{name}{h}"] = np.array(getattr(head, name), dtype=float)
    return out


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert a[key] == b[key], key


def changed(a: dict, b: dict) -> set[str]:
    out = set()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            same = (
                isinstance(x, np.ndarray)
                and isinstance(y, np.ndarray)
                and x.shape == y.shape
                and np.array_equal(x, y)
            )
        else:
            same = x == y
        if not same:
            out.add(key)
    return out


@pytest.fixture
def river_bank():
    return resolve_scenario("river-bank")


def apply_checked(sc, edit):
    """``edit`` applied; the original compared before and after; what changed."""
    before = snapshot(sc)
    new = apply_edit(sc, edit)
    assert_same(snapshot(sc), before)
    return new, changed(before, snapshot(new))


def test_every_kind_has_a_test_here():
    assert set(EDIT_KINDS) == {
        "temperature", "scale", "mask", "mask_value", "vector", "query", "key", "Wq", "Wk", "Wv",
    } | LAB_EDITS  # fmt: skip
    # the lab edits have theirs in test_labs.py
    assert {"induction_preset", "ablate", "ablation_mode", "train", "reset_training"} == LAB_EDITS


def test_temperature(river_bank):
    new, what = apply_checked(river_bank, Edit("temperature", 0.3))
    assert what == {"temperature"}
    assert new.temperature == pytest.approx(0.3, abs=1e-15)
    # an integer is taken as a number
    assert apply_edit(river_bank, Edit("temperature", 2)).temperature == 2.0


def test_scale(river_bank):
    new, what = apply_checked(river_bank, Edit("scale", False))
    assert what == {"scale"} and new.scale is False
    w = new.compute().heads[0].weights[BANK]
    assert w[BANK] > river_bank.compute().heads[0].weights[BANK, BANK]


def test_mask(river_bank):
    new, what = apply_checked(river_bank, Edit("mask", "causal"))
    assert what == {"mask"}
    w = new.compute().heads[0].weights
    assert w[0, 0] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(np.triu(w, 1), 0.0, atol=1e-15)
    back, what = apply_checked(new, Edit("mask", "none"))
    assert what == {"mask"} and back.mask == "none"


def test_mask_value(river_bank):
    causal = apply_edit(river_bank, Edit("mask", "causal"))
    new, what = apply_checked(causal, Edit("mask_value", 0))
    assert what == {"mask_value"} and new.mask_value == 0.0
    assert new.compute().heads[0].weights[0, 1] > 0.1  # the masking mistake leaks
    again = apply_edit(new, Edit("mask_value", "-inf"))
    assert again.mask_value == -np.inf


def test_vector(river_bank):
    new, what = apply_checked(river_bank, Edit("vector", [1, 0, 0, 0], token="river"))
    assert what == {"X"}
    np.testing.assert_array_equal(new.X[1], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.delete(new.X, 1, axis=0), np.delete(river_bank.X, 1, 0))


def test_vector_by_position(river_bank):
    new = apply_edit(river_bank, Edit("vector", [0, 0, 1, 0], token=1))
    np.testing.assert_array_equal(new.X[0], [0.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize(("kind", "matrix"), [("query", "Wq0"), ("key", "Wk0")])
def test_query_and_key(river_bank, kind, matrix):
    target = [0.0, 5.0, 0.0, -1.0]
    new, what = apply_checked(river_bank, Edit(kind, target, token="bank"))
    assert what == {matrix}  # the smallest change of Wq (Wk), nothing else
    tr = new.compute().heads[0]
    np.testing.assert_allclose((tr.Q if kind == "query" else tr.K)[BANK], target, atol=1e-9)
    other = tr.K if kind == "query" else tr.Q
    np.testing.assert_allclose(other, river_bank.compute().heads[0].Q, atol=1e-12)


def test_the_mixing_solution_moves_bank_to_river(river_bank):
    new = apply_edit(river_bank, Edit("query", [0, 5, 0, -1], token="bank"))
    assert new.compute().heads[0].weights[BANK, 1] >= 0.7
    assert river_bank.compute().heads[0].weights[BANK, 1] < 0.7


@pytest.mark.parametrize("kind", ["Wq", "Wk", "Wv"])
def test_a_matrix(river_bank, kind):
    W = np.arange(16, dtype=float).reshape(4, 4) / 10
    new, what = apply_checked(river_bank, Edit(kind, W.tolist()))
    assert what == {f"{kind}0"}
    np.testing.assert_array_equal(getattr(new.heads[0], kind), W)


def test_a_named_wq():
    sc = resolve_scenario("wq-find-finance")
    name = "find water evidence"
    new, what = apply_checked(sc, Edit("Wq", preset=name))
    assert what == {"Wq0"}
    np.testing.assert_array_equal(new.heads[0].Wq, sc.wq_presets[name])


def test_head_two_only():
    sc = resolve_scenario("two-heads")
    assert sc.heads[1].Wk.shape == (4, 2)
    W = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [0.0, 0.0]])
    new, what = apply_checked(sc, Edit("Wk", W.tolist(), head=2))
    assert what == {"Wk1"}
    np.testing.assert_array_equal(new.heads[1].Wk, W)
    new, what = apply_checked(sc, Edit("query", [1, 2], token="bank", head=2))
    assert what == {"Wq1"}
    np.testing.assert_allclose(new.compute().heads[1].Q[BANK], [1, 2], atol=1e-9)


def test_direct_query_and_key():
    sc = resolve_scenario("routing-lab")
    new, what = apply_checked(sc, Edit("query", [0.0, 1.0], token=1))
    assert what == {"Q"}
    np.testing.assert_array_equal(new.Q[0], [0.0, 1.0])
    new, what = apply_checked(sc, Edit("key", [0.5, 0.5], token="C"))
    assert what == {"K"}
    np.testing.assert_array_equal(new.K[2], [0.5, 0.5])


def test_apply_edits_in_order(river_bank):
    before = snapshot(river_bank)
    edits = (Edit("temperature", 0.5), Edit("temperature", 0.25), Edit("scale", False))
    new = apply_edits(river_bank, edits)
    assert new.temperature == 0.25 and new.scale is False
    assert_same(snapshot(river_bank), before)
    assert_same(snapshot(apply_edits(river_bank, ())), before)


@pytest.mark.parametrize(
    ("scenario", "edit", "problem"),
    [
        ("river-bank", Edit("temperature", "hot"), "the temperature is a number"),
        ("river-bank", Edit("temperature", True), "the temperature is a number"),
        ("river-bank", Edit("scale", 1), "scale is true or false"),
        ("river-bank", Edit("mask", "future"), 'a mask is "none" or "causal"'),
        ("river-bank", Edit("mask_value", -1), 'mask_value is "-inf" or 0'),
        ("river-bank", Edit("vector", [1, 2, 3], token="bank"), "vector needs 4 numbers"),
        ("river-bank", Edit("vector", [1, 2, 3, 4], token="money"), "there is no token 'money'"),
        ("river-bank", Edit("query", [1, 2], token="bank"), "query needs 4 numbers"),
        ("river-bank", Edit("key", [1, 2, 3, 4], token=5), "no token at position 5"),
        ("river-bank", Edit("Wq", [[1, 0], [0, 1]]), "Wq needs 4 × 4 numbers"),
        ("river-bank", Edit("Wq", preset="swap"), "has no Wq named 'swap' (it has none)"),
        ("river-bank", Edit("Wk", preset="swap"), "'preset' names a Wq of the scenario"),
        ("river-bank", Edit("Wv"), "setting Wv needs 'value'"),
        ("river-bank", Edit("Wq", np.eye(4).tolist(), head=2), "there is no head 2"),
        ("routing-lab", Edit("vector", [1, 0], token="A"), "has no input vectors"),
        ("routing-lab", Edit("Wq", np.eye(2).tolist()), "a scenario of queries and keys has no"),
    ],
)
def test_refusals(scenario, edit, problem):
    sc = resolve_scenario(scenario)
    before = snapshot(sc)
    with pytest.raises((ValueError, ScenarioError)) as info:
        apply_edit(sc, edit)
    assert problem in str(info.value)
    assert_same(snapshot(sc), before)
