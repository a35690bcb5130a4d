"""Attention variants beside attention: causal linear attention and the softmax Jacobian."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim import engine
from attnsim.engine import geometry
from attnsim.engine.attention import softmax
from attnsim.engine.jacobian import softmax_jacobian
from attnsim.engine.linear import linear_attention_recurrent, linear_attention_sum

rng = np.random.default_rng(3)


@given(arrays(np.float64, st.integers(2, 6), elements=st.floats(-5, 5)), st.floats(0.2, 5))
def test_softmax_jacobian_matches_finite_differences(z, t):
    w = softmax(z / t)
    J = softmax_jacobian(w, t)
    eps = 1e-6
    num = np.empty_like(J)
    for j in range(z.size):
        dz = np.zeros_like(z)
        dz[j] = eps
        num[:, j] = (softmax((z + dz) / t) - softmax((z - dz) / t)) / (2 * eps)
    np.testing.assert_allclose(J, num, atol=1e-7)


def test_causal_linear_attention_sum_equals_running_memory():
    Q, K, V = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    Y1 = linear_attention_sum(Q, K, V)
    Y2, S = linear_attention_recurrent(Q, K, V)
    np.testing.assert_allclose(Y1, Y2, rtol=1e-12)
    np.testing.assert_allclose(S[-1], V.T @ K, rtol=1e-12)  # S_n = sum v_j k_j^T
    assert S.shape == (6, 2, 3)


@pytest.mark.parametrize("normalise", [False, True])
def test_the_explicit_sum_in_row_blocks_is_the_written_out_sum(monkeypatch, normalise):
    from attnsim.engine import linear

    Q, K, V = rng.normal(size=(11, 3)), rng.normal(size=(11, 3)), rng.normal(size=(11, 2))
    monkeypatch.setattr(linear, "SUM_ROWS", 4)  # blocks of 4, 4 and 3 queries
    got = linear_attention_sum(Q, K, V, feature_map="elu+1", normalise=normalise)
    fq, fk = linear.elu_plus_one(Q), linear.elu_plus_one(K)
    want = np.zeros((11, 2))
    for i in range(11):
        w = np.array([fq[i] @ fk[j] for j in range(i + 1)])
        want[i] = (w @ V[: i + 1]) / (w.sum() if normalise else 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_the_package_exports_them_and_geometry_no_longer_does():
    # one home each: a second definition in geometry would drift from this one
    assert engine.softmax_jacobian is softmax_jacobian
    assert engine.linear_attention_sum is linear_attention_sum
    assert not hasattr(geometry, "softmax_jacobian")
    assert not hasattr(geometry, "linear_attention_sum")
