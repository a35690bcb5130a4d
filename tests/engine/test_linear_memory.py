"""Linear attention as a memory: the recurrence equals the sum, the feature map and normaliser,
the comparison with softmax attention, and memory sizes against a KV cache."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim import engine
from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.linear import (
    elu_plus_one,
    linear_attention_recurrent,
    linear_attention_sum,
    linear_memory,
    linear_vs_softmax,
    memory_sizes,
)


def _qkv(n, d_k=3, d_v=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))


def test_elu_plus_one_is_positive_and_matches_its_definition():
    x = np.array([-50.0, -1.0, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(elu_plus_one(x), [np.exp(-50.0), np.exp(-1.0), 1.0, 1.5, 4.0])
    assert np.all(elu_plus_one(np.linspace(-700, 700, 101)) > 0)


@given(
    n=st.integers(1, 12),
    seed=st.integers(0, 2**16),
    feature_map=st.sampled_from([None, "elu+1"]),
)
def test_the_memory_step_by_step_equals_the_explicit_sum(n, seed, feature_map):
    Q, K, V = _qkv(n, seed=seed)
    tr = linear_memory(Q, K, V, feature_map=feature_map)
    np.testing.assert_allclose(
        tr.output, linear_attention_sum(Q, K, V, feature_map=feature_map), rtol=1e-10, atol=1e-12
    )
    fk = K if feature_map is None else elu_plus_one(K)
    for i in range(n):
        # S_i is the explicit sum of v_j phi(k_j)^T over j <= i, z_i of phi(k_j)
        np.testing.assert_allclose(tr.S[i], V[: i + 1].T @ fk[: i + 1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(tr.z[i], fk[: i + 1].sum(axis=0), rtol=1e-12)
    if feature_map is None:
        Y, S = linear_attention_recurrent(Q, K, V)
        np.testing.assert_allclose(tr.output, Y, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(tr.S, S, rtol=1e-12, atol=1e-14)


@given(n=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_normalised_memory_is_a_convex_mixture_equal_to_the_sum(n, seed):
    Q, K, V = _qkv(n, seed=seed)
    tr = linear_memory(Q, K, V, feature_map="elu+1", normalise=True)
    ref = linear_attention_sum(Q, K, V, feature_map="elu+1", normalise=True)
    np.testing.assert_allclose(tr.output, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.output, tr.numerators / tr.denominators[:, None], rtol=1e-15)
    # positive weights summing to one: each output lies within the range of the values so far
    for i in range(n):
        assert np.all(tr.output[i] <= V[: i + 1].max(axis=0) + 1e-12)
        assert np.all(tr.output[i] >= V[: i + 1].min(axis=0) - 1e-12)
    assert tr.memory_numbers == 2 * 3 + 3


def test_normalising_without_a_positive_feature_map_raises():
    Q = np.array([[1.0, 0.0], [-1.0, 0.0]])
    K = np.array([[1.0, 0.0], [1.0, 0.0]])
    V = np.ones((2, 1))
    with pytest.raises(ValueError, match=r"normaliser .* position 1"):
        linear_memory(Q, K, V, normalise=True)
    with pytest.raises(ValueError, match="normaliser"):
        linear_attention_sum(Q, K, V, normalise=True)
    with pytest.raises(ValueError, match="feature_map"):
        linear_memory(Q, K, V, feature_map="relu")
    with pytest.raises(ValueError, match="same shape"):
        linear_memory(Q, K[:1], V)


def test_linear_and_softmax_attention_differ_on_a_generic_input():
    Q, K, V = _qkv(8, seed=3)
    cmp = linear_vs_softmax(Q, K, V)
    np.testing.assert_allclose(cmp.softmax, attention(Q, K, V, mask=causal_mask(8))[0])
    np.testing.assert_allclose(cmp.difference, cmp.linear - cmp.softmax, rtol=1e-15)
    np.testing.assert_allclose(cmp.max_abs_difference, np.abs(cmp.difference).max(axis=1))
    # Position 0 reads one key, so both return v_0; later positions differ (measured 0.15-0.91)
    assert cmp.max_abs_difference[0] < 1e-15
    assert np.all(cmp.max_abs_difference[1:] > 1e-3)


@pytest.mark.parametrize("scale", [True, False])
def test_linear_and_softmax_attention_coincide_when_all_keys_are_equal(scale):
    # With k_j = k for all j, softmax gives exp(q·k) / (i+1) exp(q·k) = 1/(i+1) to every key and
    # the linear form phi(q)·phi(k) / (i+1) phi(q)·phi(k) = 1/(i+1): both are the running mean.
    rng = np.random.default_rng(9)
    n = 7
    Q = rng.normal(size=(n, 4))
    K = np.tile(rng.normal(size=4), (n, 1))
    V = rng.normal(size=(n, 3))
    cmp = linear_vs_softmax(Q, K, V, scale=scale)
    running_mean = np.cumsum(V, axis=0) / np.arange(1, n + 1)[:, None]
    np.testing.assert_allclose(cmp.linear, running_mean, rtol=1e-12)
    np.testing.assert_allclose(cmp.softmax, running_mean, rtol=1e-12)
    assert cmp.max_abs_difference.max() < 1e-12


def test_the_temperature_reaches_the_softmax_side_only():
    # Dividing the softmax logits by T is the same as dividing q by T there; the linear side
    # has no temperature, so it is the same at every T.
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    hot = linear_vs_softmax(Q, K, V, temperature=2.5)
    plain = linear_vs_softmax(Q, K, V)
    soft, _ = attention(Q / 2.5, K, V, mask=causal_mask(6))
    np.testing.assert_allclose(hot.softmax, soft, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(hot.linear, plain.linear)
    assert np.abs(hot.softmax - plain.softmax).max() > 1e-3


def test_memory_sizes_against_a_kv_cache():
    ms = memory_sizes(np.array([0, 1, 8, 9, 100]), d_k=4, d_v=3)
    assert ms.linear_numbers.tolist() == [16] * 5  # S 3 x 4 plus z 4, whatever n
    assert ms.kv_cache_numbers.tolist() == [0, 7, 56, 63, 700]
    assert ms.crossover == 3  # the cache (7 per token) passes 16 numbers at n = 3
    assert ms.kv_cache_numbers[ms.n == 100][0] > ms.linear_numbers[0]
    raw = memory_sizes(5, d_k=64, d_v=64, normalised=False)
    assert raw.linear_numbers.tolist() == [4096] and raw.crossover == 33
    # the crossover is the first n at which the cache holds more
    for d_k, d_v, norm in ((1, 1, False), (3, 5, True), (64, 64, True)):
        m = memory_sizes(np.arange(0, 200), d_k, d_v, normalised=norm)
        first = int(np.argmax(m.kv_cache_numbers > m.linear_numbers))
        assert m.crossover == first
    for bad, match in (({"n": -1}, "n must"), ({"n": 2.5}, "n must"), ({"d_k": 0}, "d_k")):
        args = {"n": 4, "d_k": 2, "d_v": 2} | bad
        with pytest.raises(ValueError, match=match):
            memory_sizes(**args)


def test_package_exports():
    assert engine.linear_memory is linear_memory
    assert engine.linear_vs_softmax is linear_vs_softmax
    assert engine.memory_sizes is memory_sizes
