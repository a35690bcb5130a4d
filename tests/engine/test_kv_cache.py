"""Token-by-token generation through a key/value cache equals full causal attention.

Tolerance, float64: rtol 1e-12, atol 1e-14 per number. It is not bit-exact: the full
computation takes q k^T for all rows in one matrix product and sums each softmax row over n
entries (exact zeros on masked keys included), the cache one row over t + 1 entries, and
BLAS and NumPy's pairwise summation group the additions differently for different lengths.
The measured difference is a few ulps (about 1e-16 on outputs of size 1).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.kv_cache import KVCache, kv_cache_generate
from attnsim.engine.variants import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    grouped_query_attention,
    sliding_window_mask,
)

rng = np.random.default_rng(2)
RTOL, ATOL = 1e-12, 1e-14


@pytest.mark.parametrize("n", [1, 2, 17, 64])
def test_each_step_is_the_row_of_full_causal_attention(n):
    d = 16
    q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
    run = kv_cache_generate(q, k, v)
    ref_out, ref_w = attention(q, k, v, mask=causal_mask(n))
    assert run.output.shape == (n, d)
    np.testing.assert_allclose(run.output, ref_out, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(run.weights[0], ref_w, rtol=RTOL, atol=ATOL)
    for t, st in enumerate(run.steps):
        np.testing.assert_allclose(st.output[0], ref_out[t], rtol=RTOL, atol=ATOL)


def test_the_cache_grows_one_token_per_step_and_holds_the_keys_given():
    n, d_k, d_v = 9, 4, 3
    q, k = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k))
    v = rng.standard_normal((n, d_v))
    run = kv_cache_generate(q, k, v)
    for t, st in enumerate(run.steps):
        assert st.position == t and st.tokens == t + 1 and st.resident == t + 1
        assert st.keys.shape == (1, t + 1, d_k) and st.values.shape == (1, t + 1, d_v)
        # stored, not computed: the cache holds the inputs exactly
        np.testing.assert_array_equal(st.keys[0], k[: t + 1])
        np.testing.assert_array_equal(st.values[0], v[: t + 1])
        np.testing.assert_array_equal(st.key_positions, np.arange(t + 1))
        assert st.weights.shape == (1, t + 1)
        assert st.weights.sum() == pytest.approx(1.0, rel=1e-14)
        assert st.cache_bytes == (t + 1) * (d_k + d_v) * 8
    assert run.peak_cache_bytes == n * (d_k + d_v) * 8


def test_earlier_steps_stay_inspectable_while_the_buffer_grows():
    d = 3
    cache = KVCache(1, 1, d, capacity=1)  # grows at tokens 1, 2, 4, 8
    k = rng.standard_normal((12, d))
    steps = [cache.step(rng.standard_normal(d), k[t], rng.standard_normal(d)) for t in range(12)]
    assert cache.length == 12
    np.testing.assert_array_equal(cache.keys[0], k)
    for t, st in enumerate(steps):
        np.testing.assert_array_equal(st.keys[0], k[: t + 1])
    st = steps[3]
    with pytest.raises(ValueError, match="read-only"):
        st.keys[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        cache.values[0, 0, 0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.position = 0  # type: ignore[misc]


def test_grouped_heads_window_sinks_and_alibi_match_the_full_computation():
    h, g, n, d = 8, 2, 40, 8
    q = rng.standard_normal((h, n, d))
    k, v = rng.standard_normal((g, n, d)), rng.standard_normal((g, n, d))
    slopes = alibi_slopes(h)
    for window, sinks, alibi in [(None, 0, True), (5, 0, False), (5, 2, True), (1, 3, False)]:
        kw = {"alibi_slopes": slopes} if alibi else {}
        run = kv_cache_generate(q, k, v, window=window, sinks=sinks, **kw)
        mask = sliding_window_mask(n, window=window, sinks=sinks)
        bias = alibi_bias(slopes, n) if alibi else None
        ref_out, ref_w = grouped_query_attention(q, k, v, mask=mask, bias=bias)
        assert run.output.shape == (h, n, d)
        np.testing.assert_allclose(run.output, ref_out, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(run.weights, ref_w, rtol=RTOL, atol=ATOL)
        for st in run.steps:
            np.testing.assert_array_equal(st.key_positions, np.flatnonzero(mask[st.position]))
            if window is not None:
                assert st.resident <= window + sinks
    # the window bounds what a step reads: the peak no longer grows with n
    small = kv_cache_generate(q, k, v, window=5, sinks=2)
    assert small.peak_cache_bytes == g * 7 * 2 * d * 8


@settings(max_examples=60)
@given(
    n=hs.integers(1, 24),
    heads=hs.sampled_from([(1, 1), (2, 1), (4, 2), (3, 3)]),
    window=hs.none() | hs.integers(1, 10),
    sinks=hs.integers(0, 4),
    alibi=hs.booleans(),
    seed=hs.integers(0, 2**32 - 1),
)
def test_any_mask_and_sharing_matches_the_full_computation(n, heads, window, sinks, alibi, seed):
    h, g = heads
    r = np.random.default_rng(seed)
    q = r.standard_normal((h, n, 4)) * 3
    k, v = r.standard_normal((g, n, 4)) * 3, r.standard_normal((g, n, 5))
    slopes = alibi_slopes(h) if alibi else None
    run = kv_cache_generate(q, k, v, window=window, sinks=sinks, alibi_slopes=slopes)
    bias = None if slopes is None else alibi_bias(slopes, n)
    mask = sliding_window_mask(n, window=window, sinks=sinks)
    ref_out, ref_w = grouped_query_attention(q, k, v, mask=mask, bias=bias)
    np.testing.assert_allclose(run.output, ref_out, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(run.weights, ref_w, rtol=RTOL, atol=ATOL)


def test_rope_applied_per_token_equals_rope_on_the_sequence():
    n, d = 24, 16
    q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
    q_seq, k_seq = apply_rope(q), apply_rope(k)
    cache = KVCache(1, 1, d)
    outs = []
    for t in range(n):
        # a decoder rotates each new token at its own position before caching it
        q_t, k_t = apply_rope(q[t : t + 1], [t])[0], apply_rope(k[t : t + 1], [t])[0]
        np.testing.assert_allclose(q_t, q_seq[t], rtol=1e-15, atol=1e-15)
        outs.append(cache.step(q_t, k_t, v[t]).output[0])
    ref, _ = attention(q_seq, k_seq, v, mask=causal_mask(n))
    np.testing.assert_allclose(np.array(outs), ref, rtol=RTOL, atol=ATOL)


def test_float32_stays_float32():
    q, k, v = (rng.standard_normal((10, 8)).astype(np.float32) for _ in range(3))
    run = kv_cache_generate(q, k, v)
    assert run.output.dtype == np.float32 and run.steps[-1].keys.dtype == np.float32
    ref, _ = attention(q, k, v, mask=causal_mask(10))
    np.testing.assert_allclose(run.output, ref, rtol=1e-5, atol=1e-6)


def test_the_cache_matches_torch_causal_attention():
    torch = pytest.importorskip("torch")
    n, d = 30, 8
    q, k, v = (rng.standard_normal((2, n, d)) for _ in range(3))
    run = kv_cache_generate(q, k, v)
    with torch.no_grad():
        ref = torch.nn.functional.scaled_dot_product_attention(
            *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True
        ).numpy()
    np.testing.assert_allclose(run.output, ref, rtol=RTOL, atol=1e-13)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: KVCache(4, 3, 8), "g must divide h = 4"),
        (lambda: KVCache(2, 1, 8, window=0), "window"),
        (lambda: KVCache(2, 1, 8, alibi_slopes=[0.5]), r"alibi_slopes must have shape \(2,\)"),
        (lambda: KVCache(1, 1, 8, dtype=np.int32), "floating"),
        (
            lambda: KVCache(2, 1, 4).step(np.ones(4), np.ones(4), np.ones(4)),
            r"q must have shape \(2, 4\)",
        ),
        (
            lambda: KVCache(1, 1, 4).step(np.ones(4), np.ones(3), np.ones(4)),
            r"k must have shape \(1, 4\)",
        ),
        (
            lambda: KVCache(1, 1, 4).step(np.ones(4), np.ones(4), [np.nan] * 4),
            "v contains a non-finite",
        ),
        (
            lambda: kv_cache_generate(np.ones((3, 4)), np.ones((2, 4)), np.ones((2, 4))),
            "same 3 tokens",
        ),
        (
            lambda: kv_cache_generate(np.ones((3, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4))),
            "multiple",
        ),
        (lambda: kv_cache_generate(np.ones((3, 4)), np.ones((1, 3, 4)), np.ones((3, 4))), "all"),
    ],
)
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
