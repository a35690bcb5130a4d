"""The tiled kernel: equal to attention() for every block size, mask and n; its trace; memory.

"Relative" here is relative to the largest |v|: the output is a convex combination of the value
rows, so max |v| is its natural scale (an output entry near 0 has no meaningful relative error).
Measured on these inputs (n up to 2048): float32 at most 1.3e-7 of max |v|, float64 2.6e-16.
With large logits the bound grows: a logit x is itself rounded (relative error eps), so exp(x)
carries an error of about |x| eps, and the two kernels round their logits in different orders
(float32, logits up to 54: 1.3e-6 of max |v|). So the tolerance is TOL x (1 + the largest
|logit|), which ``logit_max`` passes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from attnsim import engine
from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.kernels import (
    peak_memory,
    skipped_tiles,
    tiled_attention,
    tiled_block_trace,
)

TOL = {np.float32: 1e-6, np.float64: 1e-12}


def _qkv(n_q, n_k, d, d_v, dtype, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((n_q, d)) * scale).astype(dtype)
    k = (rng.standard_normal((n_k, d)) * scale).astype(dtype)
    v = rng.standard_normal((n_k, d_v)).astype(dtype)
    return q, k, v


def _assert_matches(out, ref, v, dtype, logit_max=0.0):
    tol = TOL[dtype] * (1.0 + logit_max)
    assert out.dtype == ref.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * float(np.abs(v).max()))


def _random_mask(rng, n_q, n_k):
    m = rng.random((n_q, n_k)) < 0.4
    m[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every row keeps a legal key
    return m


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 5, 16, 33, 100])
@pytest.mark.parametrize("blocks", [(1, 1), (3, 7), (16, 16), (8, 64), (256, 512)])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_tiled_equals_attention(dtype, n, blocks, mask_kind):
    q, k, v = _qkv(n, n, 8, 5, dtype, seed=n)
    rng = np.random.default_rng(n + 1)
    mask = {"none": None, "causal": causal_mask(n), "random": _random_mask(rng, n, n)}[mask_kind]
    ref, _ = attention(q, k, v, mask=mask)
    out, tr = tiled_attention(q, k, v, mask=mask, block_q=blocks[0], block_k=blocks[1])
    assert tr is None
    _assert_matches(out, ref, v, dtype)


@given(
    n_q=st.integers(1, 40),
    n_k=st.integers(1, 40),
    block_q=st.integers(1, 50),
    block_k=st.integers(1, 50),
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([np.float32, np.float64]),
    masked=st.booleans(),
    logit_scale=st.sampled_from([0.1, 1.0, 4.0]),
)
# logits up to 54 in float32: 1.3e-6 of max |v| apart, over a bound that ignored the logits
@example(32, 29, 1, 1, 28569, np.float32, False, 4.0)
def test_tiled_equals_attention_property(
    n_q, n_k, block_q, block_k, seed, dtype, masked, logit_scale
):
    q, k, v = _qkv(n_q, n_k, 4, 3, dtype, seed, scale=logit_scale)
    mask = _random_mask(np.random.default_rng(seed), n_q, n_k) if masked else None
    ref, _ = attention(q, k, v, mask=mask)
    out, _ = tiled_attention(q, k, v, mask=mask, block_q=block_q, block_k=block_k)
    logits = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(q.shape[-1])
    _assert_matches(out, ref, v, dtype, logit_max=float(np.abs(logits).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_equals_attention_at_2048_with_default_blocks(dtype):
    q, k, v = _qkv(2048, 2048, 64, 64, dtype, seed=2048)
    ref, _ = attention(q, k, v)
    out, _ = tiled_attention(q, k, v)
    _assert_matches(out, ref, v, dtype)
    causal = causal_mask(2048)
    ref_c, _ = attention(q, k, v, mask=causal)
    out_c, _ = tiled_attention(q, k, v, mask=causal)
    _assert_matches(out_c, ref_c, v, dtype)


def test_leading_dimensions_broadcast_like_attention():
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 3, 9, 4))  # batch 2, heads 3
    k = rng.standard_normal((1, 3, 11, 4))
    v = rng.standard_normal((11, 2))
    mask = _random_mask(rng, 9, 11)
    ref, _ = attention(q, k, v, mask=mask, temperature=0.6, scale=False)
    out, tr = tiled_attention(
        q, k, v, mask=mask, block_q=4, block_k=3, temperature=0.6, scale=False, trace=True
    )
    assert out.shape == (2, 3, 9, 2)
    _assert_matches(out, ref, v, np.float64)
    assert tr.steps[0].m.shape == (2, 3, 4) and tr.steps[0].acc.shape == (2, 3, 4, 2)


def test_a_fully_masked_row_raises_as_attention_does():
    q, k, v = _qkv(4, 6, 3, 2, np.float64, seed=0)
    mask = np.ones((4, 6), dtype=bool)
    mask[2] = False
    with pytest.raises(ValueError, match="no legal key") as ours:
        tiled_attention(q, k, v, mask=mask, block_q=2, block_k=2)
    with pytest.raises(ValueError, match="no legal key") as theirs:
        attention(q, k, v, mask=mask)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"block_q": 0}, "block_q must be a positive integer"),
        ({"block_k": 2.5}, "block_k must be a positive integer"),
        ({"block_k": True}, "block_k must be a positive integer"),
        ({"temperature": -1.0}, "temperature"),
        ({"mask": np.ones((4, 6))}, "mask must be a boolean array"),
    ],
)
def test_bad_arguments_raise_naming_them(kwargs, match):
    q, k, v = _qkv(4, 6, 3, 2, np.float64, seed=0)
    with pytest.raises(ValueError, match=match):
        tiled_attention(q, k, v, **kwargs)


def test_overflowing_logits_raise_instead_of_returning_nan():
    q = np.array([[1e200, 0.0]])
    k = np.array([[1e200, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="overflowed"):
        tiled_attention(q, k, np.eye(2), block_k=1)


def test_the_trace_replays_the_online_softmax():
    n_q, n_k, bq, bk = 7, 10, 3, 4
    q, k, v = _qkv(n_q, n_k, 4, 2, np.float64, seed=11, scale=2.0)
    out, tr = tiled_attention(q, k, v, block_q=bq, block_k=bk, trace=True)
    assert (tr.n_query_blocks, tr.n_key_blocks) == (3, 3)
    assert len(tr.steps) == 9 and tr.computed_tiles == 9
    np.testing.assert_array_equal(tr.output, out)
    logits = q @ k.T / 2.0  # sqrt(d_k) = 2
    for step in tr.steps:
        (qs, qe), (ks, ke) = step.rows, step.cols
        seen = logits[qs:qe, :ke]  # every key up to the end of this tile
        m = seen.max(axis=1)
        e = np.exp(seen - m[:, None])
        np.testing.assert_allclose(step.m, m, rtol=1e-15)
        np.testing.assert_allclose(step.tile_max, logits[qs:qe, ks:ke].max(axis=1), rtol=1e-15)
        np.testing.assert_allclose(step.l, e.sum(axis=1), rtol=1e-13)
        np.testing.assert_allclose(step.acc, e @ v[:ke], rtol=1e-12, atol=1e-14)
        if step.k_block == 0:
            assert np.all(step.alpha == 0.0)  # nothing seen yet: the old l and acc are zero
        else:
            m_prev = logits[qs:qe, :ks].max(axis=1)
            np.testing.assert_allclose(step.alpha, np.exp(m_prev - m), rtol=1e-14)
    last = tr.steps_for(1)[-1]
    np.testing.assert_allclose(last.acc / last.l[:, None], out[3:6], rtol=1e-15)
    with pytest.raises(ValueError, match="q_block"):
        tr.steps_for(3)


def test_a_larger_later_logit_rescales_the_earlier_sum():
    # Key 1 (second tile) beats key 0: the first tile's sum and accumulator are multiplied by
    # exp(m_old - m_new) = exp(0 - 3) when it arrives.
    q = np.array([[1.0]])
    k = np.array([[0.0], [3.0]])
    v = np.array([[1.0], [-1.0]])
    out, tr = tiled_attention(q, k, v, block_q=1, block_k=1, scale=False, trace=True)
    first, second = tr.steps
    assert first.m[0] == 0.0 and first.l[0] == 1.0 and first.acc[0, 0] == 1.0
    assert second.m[0] == 3.0
    np.testing.assert_allclose(second.alpha, [np.exp(-3.0)], rtol=1e-15)
    np.testing.assert_allclose(second.l, [np.exp(-3.0) + 1.0], rtol=1e-15)
    np.testing.assert_allclose(out, attention(q, k, v, scale=False)[0], rtol=1e-15)


def test_causal_tiles_above_the_diagonal_are_skipped():
    n, b = 10, 3
    q, k, v = _qkv(n, n, 4, 2, np.float64, seed=2)
    _, tr = tiled_attention(q, k, v, mask=causal_mask(n), block_q=b, block_k=b, trace=True)
    # a tile (i, j) of a causal mask is empty exactly when its first key comes after its last
    # query: j * b > min(n, (i + 1) * b) - 1
    expected = np.array([[j * b > min(n, (i + 1) * b) - 1 for j in range(4)] for i in range(4)])
    np.testing.assert_array_equal(tr.skipped, expected)
    assert tr.computed_tiles == 10
    for step in tr.steps:
        assert step.skipped == expected[step.q_block, step.k_block]
        if step.skipped:
            prev = tr.steps[tr.steps.index(step) - 1]
            np.testing.assert_array_equal(step.m, prev.m)
            np.testing.assert_array_equal(step.acc, prev.acc)
            assert np.all(np.isneginf(step.tile_max)) and np.all(step.alpha == 1.0)


def test_rows_whose_first_tiles_are_all_masked_start_from_zero_weight():
    # Row 0 may only read the last key: its first two tiles are fully masked for that row but
    # not for the tile (row 1 reads them), so they are computed and must contribute nothing.
    q, k, v = _qkv(2, 6, 3, 2, np.float64, seed=5)
    mask = np.array([[False] * 5 + [True], [True] * 6])
    out, tr = tiled_attention(q, k, v, mask=mask, block_q=2, block_k=2, trace=True)
    assert not tr.skipped.any()
    assert np.isneginf(tr.steps[0].m[0]) and tr.steps[0].l[0] == 0.0
    np.testing.assert_allclose(out[0], v[5], rtol=1e-15)
    np.testing.assert_allclose(out, attention(q, k, v, mask=mask)[0], rtol=1e-14)


def test_peak_memory_counts_the_score_matrix_against_one_tile():
    pm = peak_memory(2048, 2048, 64, 256, 512, np.float32)
    assert pm.plain_bytes == 2 * 2048 * 2048 * 4
    assert pm.tiled_bytes == (256 * 512 + 2 * 256 + 256 * 64) * 4
    assert pm.ratio == pytest.approx(pm.plain_bytes / pm.tiled_bytes)
    # plain grows as n^2, tiled not at all once n exceeds the blocks
    big = peak_memory(4096, 4096, 64, 256, 512, np.float32)
    assert big.plain_bytes == 4 * pm.plain_bytes and big.tiled_bytes == pm.tiled_bytes
    # blocks larger than the sequence are clipped, as the kernel clips them
    small = peak_memory(5, 7, 2, 256, 512, np.float64)
    assert (small.block_q, small.block_k) == (5, 7)
    assert small.tiled_bytes == (35 + 10 + 10) * 8
    for bad, match in (
        ({"n_q": -1}, "n_q"),
        ({"dtype": np.int32}, "dtype"),
        ({"block_k": 0}, "block_k"),
    ):
        args = {"n_q": 4, "n_k": 4, "d": 2} | bad
        with pytest.raises(ValueError, match=match):
            peak_memory(**args)


def test_package_exports():
    assert engine.tiled_attention is tiled_attention
    assert engine.peak_memory is peak_memory


def test_the_benchmark_is_registered_and_compares_with_attention():
    from attnsim.benchmarks import registry

    (row,) = registry()["tiled_attention_n2048"](quick=True)
    assert row["name"] == "tiled_attention_n2048" and row["runs"] >= 5
    assert row["ratio_vs_attention"] == pytest.approx(row["median_ms"] / row["attention_median_ms"])
    assert row["max_abs_diff"] < 1e-6  # |v| <= about 5 here
    assert row["plain_peak_bytes"] == 2 * 2048 * 2048 * 4


def test_a_key_padding_mask_broadcasts_over_the_queries():
    q, k, v = _qkv(9, 12, 4, 3, np.float32, seed=8)
    keep = np.arange(12) < 7  # the last five keys are padding, for every query
    ref, _ = attention(q, k, v, mask=keep)
    out, tr = tiled_attention(q, k, v, mask=keep, block_q=4, block_k=5, trace=True)
    _assert_matches(out, ref, v, np.float32)
    # keys 10-11 form the last tile, padding for every query: skipped in every query block
    assert tr.skipped[:, 2].all() and not tr.skipped[:, :2].any()


@pytest.mark.parametrize("mask_kind", ["none", "causal", "random", "padding"])
@pytest.mark.parametrize("blocks", [(1, 1), (2, 2), (3, 7), (40, 16)])
def test_one_blocks_trace_is_that_block_of_the_whole_trace(mask_kind, blocks):
    n_q = n_k = 23
    q, k, v = _qkv(n_q, n_k, 4, 3, np.float64, seed=11)
    rng = np.random.default_rng(4)
    mask = {"none": None, "causal": causal_mask(n_q), "random": _random_mask(rng, n_q, n_k),
            "padding": np.arange(n_k) < 15}[mask_kind]  # fmt: skip
    bq, bk = blocks
    out, whole = tiled_attention(q, k, v, mask=mask, block_q=bq, block_k=bk, trace=True)
    for qb in range(whole.n_query_blocks):
        part = tiled_block_trace(q, k, v, mask=mask, block_q=bq, block_k=bk, q_block=qb)
        # rows are independent: the same numbers up to the rounding of a differently shaped
        # product (the whole output runs all rows as one block)
        np.testing.assert_allclose(part.output, out, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(part.skipped, whole.skipped)
        mine, want = part.steps_for(qb), whole.steps_for(qb)
        assert len(mine) == len(want) == whole.n_key_blocks and len(part.steps) == len(want)
        for a, b in zip(mine, want, strict=True):
            assert (a.rows, a.cols, a.skipped) == (b.rows, b.cols, b.skipped)
            for name in ("tile_max", "alpha", "m", "l", "acc"):
                np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12)


def test_skipped_tiles_match_the_kernel_and_refuse_a_non_boolean_mask():
    rng = np.random.default_rng(5)
    mask = _random_mask(rng, 17, 30) & (rng.random((17, 30)) < 0.3)
    mask[np.arange(17), 0] = True
    q, k, v = _qkv(17, 30, 4, 3, np.float64, seed=2)
    _, tr = tiled_attention(q, k, v, mask=mask, block_q=4, block_k=3, trace=True)
    assert tr.skipped.any() and not tr.skipped.all()
    np.testing.assert_array_equal(skipped_tiles(mask, 4, 3), tr.skipped)
    with pytest.raises(ValueError, match="mask must be a boolean"):
        skipped_tiles(mask.astype(float), 4, 3)
    with pytest.raises(ValueError, match="q_block must be in \\[0, 5\\), got 5"):
        tiled_block_trace(q, k, v, mask=mask, block_q=4, block_k=3, q_block=5)


@pytest.mark.parametrize("n", [40, 130])  # below and above ONE_THREAD_FROM_CELLS (16,384)
def test_the_skipped_tiles_are_the_same_found_before_the_loop_or_tile_by_tile(n):
    """Small heads find the skipped tiles in one pass before the loop, large ones tile by
    tile: both give the same table, and every skipped step carries the previous state."""
    rng = np.random.default_rng(n)
    mask = causal_mask(n) & (rng.random((n, n)) < 0.6)
    mask[np.arange(n), 0] = True
    q, k, v = _qkv(n, n, 4, 3, np.float64, seed=n)
    out, tr = tiled_attention(q, k, v, mask=mask, block_q=8, block_k=4, trace=True)
    np.testing.assert_array_equal(tr.skipped, skipped_tiles(mask, 8, 4))
    assert tr.skipped.any()
    for prev, step in zip(tr.steps, tr.steps[1:], strict=False):
        if step.skipped and step.q_block == prev.q_block:
            np.testing.assert_array_equal(step.m, prev.m)
            np.testing.assert_array_equal(step.acc, prev.acc)
            assert np.all(step.alpha == 1.0) and np.all(step.tile_max == -np.inf)
    _assert_matches(out, attention(q, k, v, mask=mask)[0], v, np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
@pytest.mark.parametrize("blocks", [(2, 2), (64, 2), (8, 4), (5, 1), (3, 16)])
def test_the_key_blocks_at_once_give_the_loops_output_to_the_bit(dtype, mask_kind, blocks):
    # An untraced small 2-D head takes the batched path; a traced one steps tile by tile.
    rng = np.random.default_rng(7)
    n, d = 64, 8
    q, k, v = (rng.standard_normal((n, d)).astype(dtype) * 2 for _ in range(3))
    mask = {"none": None, "causal": causal_mask(n), "random": rng.random((n, n)) > 0.4}[mask_kind]
    if mask is not None:
        mask[:, 0] = True
    bq, bk = blocks
    fast, _ = tiled_attention(q, k, v, mask=mask, block_q=bq, block_k=bk, temperature=0.7)
    stepped, _ = tiled_attention(
        q, k, v, mask=mask, block_q=bq, block_k=bk, temperature=0.7, trace=True
    )
    assert fast.dtype == stepped.dtype
    assert np.array_equal(fast, stepped)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "random", "padding"])
@pytest.mark.parametrize("blocks", [(1, 1), (2, 2), (3, 4), (5, 8), (24, 24)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_blocks_steps_made_at_once_are_the_loops_steps_to_the_bit(mask_kind, blocks, dtype):
    # n_k a multiple of block_k: the block's tiles are made in one call each (_block_steps)
    n_q = n_k = 24
    q, k, v = _qkv(n_q, n_k, 4, 3, dtype, seed=12)
    rng = np.random.default_rng(6)
    mask = {"none": None, "causal": causal_mask(n_q), "random": _random_mask(rng, n_q, n_k),
            "padding": np.arange(n_k) < 13}[mask_kind]  # fmt: skip
    bq, bk = blocks
    _, whole = tiled_attention(q, k, v, mask=mask, block_q=bq, block_k=bk, trace=True,
                               temperature=0.7)  # fmt: skip
    for qb in range(whole.n_query_blocks):
        part = tiled_block_trace(q, k, v, mask=mask, block_q=bq, block_k=bk, q_block=qb,
                                 temperature=0.7)  # fmt: skip
        np.testing.assert_array_equal(part.skipped, whole.skipped)
        mine, want = part.steps_for(qb), whole.steps_for(qb)
        assert len(mine) == len(want) == whole.n_key_blocks
        for a, b in zip(mine, want, strict=True):
            assert (a.q_block, a.k_block, a.rows, a.cols, a.skipped) == (
                b.q_block, b.k_block, b.rows, b.cols, b.skipped)  # fmt: skip
            for name in ("tile_max", "alpha", "m", "l", "acc"):
                x, y = getattr(a, name), getattr(b, name)
                assert x.dtype == y.dtype and x.shape == y.shape
                np.testing.assert_array_equal(x, y)  # the same operations: the same bits
