"""Q, K, V of one head without the rest of the trace: the same numbers as the engine's trace."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import head_trace
from attnsim.views.projections import head_products


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
