"""Q, K, V of one head without the rest of the trace: the same numbers as the engine's trace."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import head_trace
from attnsim.viewmodels.projections import head_products


def test_head_products_equal_the_traces_q_k_v_exactly():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(37, 5))
    Wq, Wk, Wv = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    out = head_products(X, Wq, Wk, Wv)
    tr = head_trace(X, Wq, Wk, Wv, mask=np.tril(np.ones((37, 37), bool)))
    assert np.array_equal(out["Wq"], tr.Q)
    assert np.array_equal(out["Wk"], tr.K)
    assert np.array_equal(out["Wv"], tr.V)
    assert out["Wv"].shape == (37, 4)


def test_head_products_of_integers_are_floats():
    out = head_products([[1, 2]], [[1], [1]], [[0], [1]], [[2], [0]])
    assert out["Wq"].tolist() == [[3.0]] and out["Wv"].dtype.kind == "f"


def test_head_products_refuse_a_matrix_that_does_not_fit():
    with pytest.raises(ValueError, match="Wk"):
        head_products(np.ones((3, 4)), np.ones((4, 2)), np.ones((3, 2)), np.ones((4, 2)))


# ---- presets, change marks, grid data ------------------------------------------------------------
def test_preset_names_and_entries():
    from attnsim.viewmodels.projections import preset_entries, preset_names

    assert preset_names(np.eye(3), "Wk", {}) == ("identity",)
    assert preset_names(np.eye(2)[:, ::-1], "Wk", {}) == ("swap",)
    assert preset_names(np.zeros((2, 3)), "Wv", {}) == ("zero",)
    W = np.array([[0.5, 1.0], [2.0, 0.0]])
    assert preset_names(W, "Wq", {"mine": W.copy(), "other": np.eye(2)}) == ("mine",)
    assert preset_names(W, "Wk", {"mine": W.copy()}) == ()  # scenario presets are Wq's only
    assert preset_names(W, "Wk", {}, (7, W.copy())) == ("random, seed 7",)
    assert preset_names(W, "Wk", {}, (7, np.eye(2))) == ()
    assert preset_entries((3, 3), 5) == ("identity", "swap", "zero", "random (seed 5)")
    assert preset_entries((3, 2), 0) == ("zero", "random (seed 0)")


def test_update_marks_keeps_marks_over_a_pure_redraw_and_drops_them_elsewhere():
    from attnsim.viewmodels.projections import describe_marks, update_marks

    a = {m: np.zeros((2, 2)) for m in ("Wq", "Wk", "Wv")}
    snap, marks, summary = update_marks(None, {}, "", "k", a)
    assert marks == {} and summary == ""
    b = dict(a, Wq=np.array([[0.0, 1.0], [0.0, 0.0]]))
    snap, marks, summary = update_marks(snap, marks, summary, "k", b)
    assert marks["Wq"].tolist() == [[False, True], [False, False]]
    assert not marks["Wk"].any() and summary == "Q changed; K, V unchanged"
    assert summary == describe_marks(marks)
    b["Wq"][0, 0] = 9.0  # the snapshot is a copy, not the caller's array
    snap, marks2, summary2 = update_marks(snap, marks, summary, "k", snap[1])
    assert marks2 is marks and summary2 == summary  # nothing changed: the marks stay
    snap, marks3, summary3 = update_marks(snap, marks2, summary2, "other head", b)
    assert marks3 == {} and summary3 == ""


def test_grids_data_of_a_token_scenario():
    from attnsim.resources import resolve_scenario
    from attnsim.viewmodels.projections import grids_data

    sc = resolve_scenario("river-bank")
    h = sc.heads[0]
    products = head_products(sc.X, h.Wq, h.Wk, h.Wv)
    data = grids_data(sc, 0, products, {}, "", {}, 3)
    assert [m.name for m in data.matrices] == ["Wq", "Wk", "Wv"]
    assert [p.name for p in data.products] == ["Q", "K", "V"]
    assert all(p.marks is None and p.n_changed == 0 for p in data.products)
    assert not data.any_marks and data.summary.startswith("Double-click")
    np.testing.assert_array_equal(data.products[0].P, products["Wq"])
    assert data.products[0].rows == tuple(sc.tokens)
    assert data.matrices[0].rows == tuple(sc.axes)
    assert data.matrices[2].cols == tuple(sc.v_axes)
    assert data.matrices[0].presets[-1] == "random (seed 3)"
    assert data.matrices[0].scenario_presets == tuple(sc.wq_presets)
    assert data.matrices[1].scenario_presets == ()
    assert (data.wo is None) == (sc.Wo is None)
    assert data.of_head == ("" if len(sc.heads) == 1 else f" of {h.name or 'head 1'}")
    marks = {m: np.zeros(products[m].shape, dtype=bool) for m in products}
    marks["Wv"][0, 0] = True
    data = grids_data(sc, 0, products, marks, "V changed; Q, K unchanged", {}, 3)
    assert data.any_marks and [p.n_changed for p in data.products] == [0, 0, 1]
    assert data.summary.startswith("Last edit: V changed; Q, K unchanged. ")


def test_products_are_read_only_shared_when_equal_and_kept_without_copies():
    from attnsim.viewmodels.projections import update_marks

    rng = np.random.default_rng(2)
    X, eye, W = rng.normal(size=(6, 3)), np.eye(3), rng.normal(size=(3, 3))
    p = head_products(X, eye, eye.copy(), W)
    assert p["Wk"] is p["Wq"] and p["Wv"] is not p["Wq"]  # equal projections share a product
    np.testing.assert_array_equal(p["Wq"], X)
    np.testing.assert_array_equal(p["Wv"], X @ W)
    assert not any(a.flags.writeable for a in p.values())
    snap, _, _ = update_marks(None, {}, "", "k", p)
    assert all(snap[1][m] is p[m] for m in p)  # nothing to copy: they cannot change
    writable = {m: a.copy() for m, a in p.items()}
    snap, _, _ = update_marks(None, {}, "", "k", writable)
    assert all(snap[1][m] is not writable[m] for m in p)  # a writable one is copied
