"""The invariants and metamorphic relations of attention, as property tests."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.engine import attention, causal_mask, softmax

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def qkv(draw, max_n=6, max_d=5):
    n_q = draw(st.integers(1, max_n))
    n_k = draw(st.integers(1, max_n))
    d_k = draw(st.integers(1, max_d))
    d_v = draw(st.integers(1, max_d))
    q = draw(arrays(np.float64, (n_q, d_k), elements=finite))
    k = draw(arrays(np.float64, (n_k, d_k), elements=finite))
    v = draw(arrays(np.float64, (n_k, d_v), elements=finite))
    return q, k, v


@st.composite
def legal_mask(draw, n_q, n_k):
    m = draw(arrays(np.bool_, (n_q, n_k)))
    for i in range(n_q):
        if not m[i].any():
            m[i, draw(st.integers(0, n_k - 1))] = True
    return m


temperatures = st.floats(0.05, 20.0)


@given(qkv(), temperatures, st.booleans(), st.data())
def test_weights_sum_to_one_and_masked_keys_get_zero(t, temp, scale, data):
    q, k, v = t
    mask = data.draw(legal_mask(q.shape[0], k.shape[0]))
    _, w = attention(q, k, v, mask=mask, temperature=temp, scale=scale)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    assert (w[~mask] == 0.0).all()
    assert (w >= 0).all()


@given(qkv(), st.data())
def test_permuting_keys_and_values_together(t, data):
    q, k, v = t
    perm = np.array(data.draw(st.permutations(range(k.shape[0]))))
    out, w = attention(q, k, v)
    out_p, w_p = attention(q, k[perm], v[perm])
    np.testing.assert_allclose(w_p, w[:, perm], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out_p, out, rtol=1e-9, atol=1e-9)


@given(qkv(), st.data())
def test_swapping_values_alone_keeps_the_weights(t, data):
    q, k, v = t
    perm = np.array(data.draw(st.permutations(range(v.shape[0]))))
    _, w = attention(q, k, v)
    _, w_s = attention(q, k, v[perm])
    np.testing.assert_array_equal(w, w_s)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 7)), elements=finite),
       st.floats(-1e3, 1e3))  # fmt: skip
def test_constant_shift_keeps_the_weights(logits, c):
    np.testing.assert_allclose(softmax(logits + c), softmax(logits), rtol=1e-9, atol=1e-15)


@given(qkv(), temperatures, temperatures)
def test_temperature_keeps_the_ranking(t, t1, t2):
    q, k, v = t
    _, w1 = attention(q, k, v, temperature=t1)
    _, w2 = attention(q, k, v, temperature=t2)
    logits = q @ k.T
    for i in range(q.shape[0]):
        order = np.argsort(-logits[i], kind="stable")
        # weights never reverse an order of logits (ties may merge)
        assert (np.diff(w1[i][order]) <= 1e-15).all()
        assert (np.diff(w2[i][order]) <= 1e-15).all()


@given(qkv(), st.floats(0.1, 10.0))
def test_scaling_q_by_c_equals_temperature_one_over_c(t, c):
    q, k, v = t
    _, w_scaled = attention(q * c, k, v)
    _, w_temp = attention(q, k, v, temperature=1.0 / c)
    np.testing.assert_allclose(w_scaled, w_temp, rtol=1e-9, atol=1e-12)


@given(qkv())
def test_last_causal_row_equals_unmasked_last_row(t):
    q, k, v = t
    n = min(q.shape[0], k.shape[0])
    q, k, v = q[:n], k[:n], v[:n]
    out_c, w_c = attention(q, k, v, mask=causal_mask(n))
    out_f, w_f = attention(q, k, v)
    np.testing.assert_array_equal(w_c[-1], w_f[-1])
    np.testing.assert_allclose(out_c[-1], out_f[-1], rtol=1e-14)


@settings(max_examples=50)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 7)),
              elements=st.floats(-1, 1, allow_nan=False)))  # fmt: skip
def test_logits_scaled_to_1e300_give_no_nan(logits):
    w = softmax(logits * 1e300)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


def test_huge_query_and_key_give_no_nan():
    q = np.array([[1e200, 1e200]])
    k = np.array([[1e200, 0.0], [0.0, -1e200], [1.0, 1.0]])
    _, w = attention(q, k, np.eye(3), scale=True)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(), 1.0)
