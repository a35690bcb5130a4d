"""The one "put this query/key here" edit: a row of Q/K directly, or the smallest Wq/Wk change."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.engine import edits
from attnsim.engine.scenario import ScenarioError, compute
from attnsim.resources import resolve_scenario

finite = st.floats(-5, 5, allow_nan=False)


def test_direct_scenario_changes_only_that_row():
    sc = resolve_scenario("routing-lab")
    new = edits.place_key(sc, 1, [0.3, 1.2])
    np.testing.assert_array_equal(new.K[1], [0.3, 1.2])
    np.testing.assert_array_equal(np.delete(new.K, 1, 0), np.delete(sc.K, 1, 0))
    np.testing.assert_array_equal(new.Q, sc.Q)
    assert edits.placed_matrix(sc, "key") == "K" and edits.placed_matrix(sc, "query") == "Q"
    assert edits.place_query(sc, 0, [2.0, 0.0]).Q[0].tolist() == [2.0, 0.0]


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, 4, elements=finite), st.sampled_from(["query", "key"]))
def test_token_scenario_lands_exactly_and_minimally(target, kind):
    sc = resolve_scenario("river-bank")
    row = 2
    new = edits.place_vector(sc, kind, row, target)
    tr = compute(new).heads[0]
    got = (tr.Q if kind == "query" else tr.K)[row]
    np.testing.assert_allclose(got, target, atol=1e-9)
    which = edits.placed_matrix(sc, kind)
    other = "Wk" if which == "Wq" else "Wq"
    np.testing.assert_array_equal(getattr(new.heads[0], other), getattr(sc.heads[0], other))
    # minimal: the change is rank one along x (any other change adds a part orthogonal to x)
    delta = getattr(new.heads[0], which) - getattr(sc.heads[0], which)
    x = sc.X[row]
    np.testing.assert_allclose(delta, np.outer(x, x @ delta) / (x @ x), atol=1e-9)


def test_refusals_change_nothing():
    sc = resolve_scenario("river-bank")
    with pytest.raises(ScenarioError, match="head 9"):
        edits.place_query(sc, 0, np.zeros(4), head=9)
    with pytest.raises(ScenarioError, match="token 99"):
        edits.place_key(sc, 99, np.zeros(4))
    with pytest.raises(ValueError, match="non-finite"):
        edits.place_query(sc, 0, [np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="only a query or a key"):
        edits.place_vector(sc, "value", 0, np.zeros(4))
    zero = edits.set_vector(sc, "x", 0, np.zeros(sc.X.shape[1]))
    with pytest.raises(ValueError, match="zero"):
        edits.place_query(zero, 0, np.ones(4))
