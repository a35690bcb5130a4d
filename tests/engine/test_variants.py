"""RoPE, ALiBi, window/sink masks and grouped-query attention against their references.

References: the rotation-matrix form of RoPE (RoFormer, eq. 14-16) and the rotate-half form
written as GPT-NeoX / Llama write it; ALiBi's slopes from the closed form of the paper and the
power-of-two interpolation of its reference implementation; masks by their definition on small
n; sharing K/V heads against repeating them; and ``torch.nn.functional
.scaled_dot_product_attention`` when torch is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import attention, causal_mask, multi_head_counts
from attnsim.engine.variants import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    grouped_query_attention,
    repeat_kv,
    rope_angle,
    rope_angles,
    rope_frequencies,
    rope_permutation,
    sharing_counts,
    sliding_window_mask,
)

rng = np.random.default_rng(13)


def _qkv(h: int, g: int, n: int, d: int, *, batch: tuple[int, ...] = ()):
    return (
        rng.standard_normal((*batch, h, n, d)),
        rng.standard_normal((*batch, g, n, d)),
        rng.standard_normal((*batch, g, n, d)),
    )


# --------------------------------------------------------------------------------------- RoPE


def test_rope_frequencies_follow_base_to_the_minus_2i_over_d():
    # with d = 8 and base 10^4, theta_i = 10^(-4 * 2i / 8) = 10^-i
    np.testing.assert_allclose(rope_frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    theta = rope_frequencies(64, base=500.0)
    np.testing.assert_allclose(theta, 500.0 ** (-np.arange(0, 64, 2) / 64), rtol=1e-15)


def test_rope_angle_is_the_angle_the_pair_is_actually_turned_by():
    d = 16
    for p, i in [(0, 0), (1, 0), (3, 2), (7, 5), (200, 7), (12.5, 3)]:
        assert rope_angle(p, i, d) == pytest.approx(p * 10000.0 ** (-2 * i / d), rel=1e-15)
        assert rope_angle(p, i, d) == pytest.approx(rope_angles([p], d)[0, i], rel=1e-15)
        # the unit vector of the pair's first axis, rotated, points at that angle
        e = np.zeros((1, d))
        e[0, 2 * i] = 1.0
        out = apply_rope(e, [p])[0]
        measured = np.arctan2(out[2 * i + 1], out[2 * i])
        expected = np.angle(np.exp(1j * rope_angle(p, i, d)))  # wrapped to (-pi, pi]
        assert measured == pytest.approx(expected, abs=1e-12)
        # and the other pairs stay zero
        assert np.count_nonzero(np.abs(out) > 1e-15) <= 2


@pytest.mark.parametrize("layout", ["interleaved", "rotate_half"])
def test_rope_scores_depend_only_on_the_offset(layout):
    n, d = 32, 64
    q, k = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    pos = np.arange(n)
    base_scores = apply_rope(q, pos, layout=layout) @ apply_rope(k, pos, layout=layout).T
    worst = 0.0
    for c in (1, 17, 1000, 100_000):
        shifted = apply_rope(q, pos + c, layout=layout) @ apply_rope(k, pos + c, layout=layout).T
        worst = max(worst, float(np.abs(shifted - base_scores).max()))
    # An angle near 1e5 rad is itself rounded by ulp(1e5) ~ 1.5e-11, and each score sums 32
    # such pairs of size ~1: about 1e-10 at c = 1e5 (measured 8e-11), 1e-13 at c <= 1000.
    assert worst < 1e-9, worst
    # shifting only the queries changes the scores (the check can fail)
    moved = apply_rope(q, pos + 3, layout=layout) @ apply_rope(k, pos, layout=layout).T
    assert np.abs(moved - base_scores).max() > 0.1


def test_rope_score_is_the_rotation_by_the_offset_angle():
    # RoFormer: (R_m q) . (R_n k) = q^T R_{n-m} k, R block-diagonal with 2x2 rotations
    d = 8
    theta = rope_frequencies(d)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    for m, n in [(0, 0), (0, 5), (9, 2), (40, 41), (300, 7)]:
        R = np.zeros((d, d))
        for i, a in enumerate((n - m) * theta):
            R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
                [np.cos(a), -np.sin(a)],
                [np.sin(a), np.cos(a)],
            ]
        expected = q @ R @ k
        got = apply_rope(q[None], [m])[0] @ apply_rope(k[None], [n])[0]
        assert got == pytest.approx(expected, abs=1e-12)


def test_interleaved_and_rotate_half_differ_by_a_fixed_permutation():
    d = 12
    perm = rope_permutation(d)
    assert perm.tolist() == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]
    x = rng.standard_normal((3, 7, d))
    pos = rng.uniform(0, 50, size=7)
    inter = apply_rope(x, pos)
    half = apply_rope(x[..., perm], pos, layout="rotate_half")
    # Both layouts do the same IEEE operations on the same operands in another order of
    # coordinates, so this is equal to the bit; the tolerance only spares exotic SIMD paths.
    np.testing.assert_allclose(half, inter[..., perm], rtol=1e-15, atol=0)
    # the layouts are not interchangeable without the permutation
    assert np.abs(apply_rope(x, pos, layout="rotate_half") - inter).max() > 0.1
    # a permutation preserves dot products: both layouts give the same scores
    s_inter = inter @ np.swapaxes(inter, -1, -2)
    s_half = half @ np.swapaxes(half, -1, -2)
    np.testing.assert_allclose(s_half, s_inter, rtol=1e-12, atol=1e-12)


def _llama_rope(x: np.ndarray, pos: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """RoPE as GPT-NeoX / Llama (Hugging Face) write it: x cos + rotate_half(x) sin."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (np.arange(0, d, 2) / d))
    freqs = np.outer(pos, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)

    def rotate_half(t: np.ndarray) -> np.ndarray:
        return np.concatenate([-t[..., d // 2 :], t[..., : d // 2]], axis=-1)

    return x * np.cos(emb) + rotate_half(x) * np.sin(emb)


def test_rotate_half_layout_matches_the_llama_formulation():
    n, d = 20, 32
    x = rng.standard_normal((4, n, d))
    pos = np.arange(n) + 5
    np.testing.assert_allclose(
        apply_rope(x, pos, layout="rotate_half"), _llama_rope(x, pos), rtol=1e-12, atol=1e-13
    )


def test_rope_is_a_rotation_keeps_dtype_and_defaults_positions():
    x = rng.standard_normal((10, 16))
    y = apply_rope(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)
    np.testing.assert_array_equal(y[0], x[0])  # position 0: cos 0 = 1, sin 0 = 0, exactly
    np.testing.assert_allclose(y, apply_rope(x, np.arange(10)), rtol=0, atol=0)
    y32 = apply_rope(x.astype(np.float32))
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: apply_rope(np.ones((3, 5))), "d must be even"),
        (lambda: apply_rope(np.ones((3, 4)), layout="half"), "layout"),
        (lambda: apply_rope(np.ones((3, 4)), [0, 1]), "positions"),
        (lambda: apply_rope(np.ones((3, 4)), np.zeros((2, 3))), r"positions of shape \(2, 3\)"),
        (lambda: apply_rope(np.ones(4)), "x must have shape"),
        (lambda: apply_rope(np.ones((2, 4)), [0, np.nan]), "positions contains a non-finite"),
        (lambda: rope_frequencies(8, base=1.0), "base"),
        (lambda: rope_angle(1, 4, 8), "pair must be < d/2 = 4"),
        (lambda: rope_angle("x", 0, 8), "position must be a number"),
        (lambda: rope_permutation(0), "d must be an integer >= 2"),
    ],
)
def test_rope_refuses_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -------------------------------------------------------------------------------------- ALiBi


def test_alibi_slopes_for_a_power_of_two_are_the_geometric_sequence():
    # the paper: for 8 heads, 1/2, 1/4, ..., 1/256
    np.testing.assert_allclose(alibi_slopes(8), 2.0 ** -np.arange(1, 9), rtol=1e-15)
    np.testing.assert_allclose(alibi_slopes(16), 2.0 ** (-0.5 * np.arange(1, 17)), rtol=1e-15)
    np.testing.assert_allclose(alibi_slopes(1), [2.0**-8], rtol=1e-15)


def test_alibi_slopes_for_12_heads_interleave_the_16_head_sequence():
    # reference implementation: the 8 slopes of 8 heads, then slopes 0, 2, 4, 6 of 16 heads
    # (2^(-(i+1)/2) for i = 0, 2, 4, 6: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5)
    expected = np.concatenate([2.0 ** -np.arange(1, 9), 2.0 ** -(np.arange(4) + 0.5)])
    np.testing.assert_allclose(alibi_slopes(12), expected, rtol=1e-15)
    # 6 heads: the 4 of 4 heads (2^-2, 2^-4, ...), then 2^-1 and 2^-3 from 8 heads
    np.testing.assert_allclose(alibi_slopes(6), 2.0 ** -np.array([2, 4, 6, 8, 1, 3]), rtol=1e-15)


def test_alibi_bias_is_minus_slope_times_distance():
    sl = alibi_slopes(4)
    b = alibi_bias(sl, 5)
    assert b.shape == (4, 5, 5)
    for h in range(4):
        for i in range(5):
            for j in range(i + 1):
                assert b[h, i, j] == -sl[h] * (i - j)
    # one new query at position 4 reading 5 cached keys: the last row
    np.testing.assert_array_equal(alibi_bias(sl, 1, 5, q_offset=4), b[:, -1:])


def test_alibi_matches_the_reference_implementations_per_key_bias_under_causal_masking():
    # The reference code adds slope * j (not -slope * (i - j)): the rows differ by slope * i,
    # a constant per row, which the softmax ignores. Causal masking makes them the same route.
    h, n, d = 8, 12, 16
    q, k, v = _qkv(h, h, n, d)
    sl = alibi_slopes(h)
    ref_bias = sl[:, None, None] * np.arange(n)[None, None, :]
    mask = causal_mask(n)
    out, w = grouped_query_attention(q, k, v, mask=mask, bias=alibi_bias(sl, n))
    out_ref, w_ref = grouped_query_attention(q, k, v, mask=mask, bias=ref_bias)
    np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, out_ref, rtol=1e-12, atol=1e-13)
    # and the bias matters: without it the route differs
    _, w_plain = grouped_query_attention(q, k, v, mask=mask)
    assert np.abs(w_plain - w).max() > 0.01


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: alibi_slopes(0), "h must be an integer >= 1"),
        (lambda: alibi_slopes(2.5), "h must be an integer"),
        (lambda: alibi_bias([], 3), "slopes must be a non-empty 1-D"),
        (lambda: alibi_bias([0.5], 3, q_offset=-1), "q_offset"),
    ],
)
def test_alibi_refuses_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -------------------------------------------------------------------------------------- masks


def test_window_mask_patterns():
    np.testing.assert_array_equal(sliding_window_mask(5), causal_mask(5))
    np.testing.assert_array_equal(sliding_window_mask(5, window=5), causal_mask(5))
    np.testing.assert_array_equal(
        sliding_window_mask(5, window=2).astype(int),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 1, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 0, 1, 1],
        ],
    )
    np.testing.assert_array_equal(sliding_window_mask(4, window=1), np.eye(4, dtype=bool))


def test_window_with_sinks_patterns():
    np.testing.assert_array_equal(
        sliding_window_mask(7, window=2, sinks=2).astype(int),
        [
            [1, 0, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0, 0],
            [1, 1, 1, 1, 0, 0, 0],
            [1, 1, 0, 1, 1, 0, 0],
            [1, 1, 0, 0, 1, 1, 0],
            [1, 1, 0, 0, 0, 1, 1],
        ],
    )
    # sinks never let a query read a later token
    np.testing.assert_array_equal(sliding_window_mask(3, window=1, sinks=5), np.tri(3, dtype=bool))


def test_window_row_counts_and_decode_rows():
    n, w, s = 40, 6, 3
    m = sliding_window_mask(n, window=w, sinks=s)
    p = np.arange(n)
    expected = np.minimum(p + 1, w) + np.minimum(s, np.maximum(0, p + 1 - w))
    np.testing.assert_array_equal(m.sum(axis=1), expected)
    assert m.sum(axis=1).max() == w + s
    # one query at position t over t + 1 keys is row t of the square mask
    for t in (0, 5, 6, 20, 39):
        row = sliding_window_mask(1, t + 1, window=w, sinks=s, q_offset=t)
        np.testing.assert_array_equal(row[0], m[t, : t + 1])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_q": 3, "window": 0}, "window must be an integer >= 1"),
        ({"n_q": 3, "window": True}, "window must be an integer"),
        ({"n_q": 3, "window": 2, "sinks": -1}, "sinks"),
        ({"n_q": -1}, "n_q"),
        ({"n_q": 2, "n_k": 1.5}, "n_k"),
    ],
)
def test_window_mask_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sliding_window_mask(**kwargs)


# ------------------------------------------------------------------------ shared key/value heads


@pytest.mark.parametrize("g", [1, 2, 4, 8])
def test_grouped_query_attention_equals_repeating_kv(g):
    h, n, d = 8, 10, 16
    q, k, v = _qkv(h, g, n, d, batch=(3,))
    mask = sliding_window_mask(n, window=4, sinks=1)
    bias = alibi_bias(alibi_slopes(h), n)
    out, w = grouped_query_attention(q, k, v, mask=mask, bias=bias)
    assert out.shape == (3, h, n, d) and w.shape == (3, h, n, n)
    kr, vr = repeat_kv(k, h), repeat_kv(v, h)
    ref_out, ref_w = grouped_query_attention(q, kr, vr, mask=mask, bias=bias)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
    # without a bias, the engine's plain attention() on the repeated heads is the reference
    out0, w0 = grouped_query_attention(q, k, v, mask=mask)
    ref_out0, ref_w0 = attention(q, kr, vr, mask=mask)
    np.testing.assert_allclose(out0, ref_out0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w0, ref_w0, rtol=1e-12, atol=1e-12)


def test_query_heads_in_a_group_read_the_same_kv_head():
    h, g, n, d = 6, 2, 5, 4
    k = rng.standard_normal((g, n, d))
    rep = repeat_kv(k, h)
    for j in range(h):
        np.testing.assert_array_equal(rep[j], k[j // (h // g)])
    # two query heads of one group given the same query give the same output; across groups not
    q1 = rng.standard_normal((1, n, d))
    q = np.repeat(q1, h, axis=0)
    v = rng.standard_normal((g, n, d))
    out, _ = grouped_query_attention(q, k, v)
    np.testing.assert_allclose(out[0], out[2], rtol=1e-14)
    assert np.abs(out[0] - out[3]).max() > 1e-3


def test_grouped_query_attention_keeps_float32_and_refuses_bad_input():
    q, k, v = (a.astype(np.float32) for a in _qkv(4, 2, 6, 8))
    out, w = grouped_query_attention(q, k, v, bias=np.zeros((4, 6, 6), np.float32))
    assert out.dtype == np.float32 and w.dtype == np.float32
    with pytest.raises(ValueError, match="multiple of the 3 key/value heads"):
        grouped_query_attention(*_qkv(4, 3, 5, 4))
    q, k, v = _qkv(4, 2, 5, 4)
    with pytest.raises(ValueError, match="k has 2 heads but v has 1"):
        grouped_query_attention(q, k, v[:1])
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        grouped_query_attention(q, k, v, bias=np.full((5, 5), np.nan))
    with pytest.raises(ValueError, match="does not broadcast"):
        grouped_query_attention(q, k, v, bias=np.zeros((3, 5, 5)))
    with pytest.raises(ValueError, match="no legal key"):
        grouped_query_attention(q, k, v, mask=np.zeros((5, 5), bool))
    with pytest.raises(ValueError, match="must have shape"):
        grouped_query_attention(q[0], k[0], v[0])
    with pytest.raises(ValueError, match="h must be a multiple"):
        repeat_kv(k, 3)


def test_sharing_counts_of_a_70b_class_model():
    # 64 query heads over 8 key/value heads of width 128, d_model 8192, 80 layers, 16-bit cache
    c = sharing_counts(64, 8, 8192, 128, dtype_bytes=2, layers=80)
    assert c.kind == "GQA"
    assert c.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2  # 327,680 B = 320 KiB per token
    assert c.mha_kv_bytes_per_token == 8 * c.kv_bytes_per_token
    assert c.cache_ratio == 1 / 8
    assert c.kv_cache_bytes(4096) == 4096 * 327_680
    per_layer_q = 8192 * 64 * 128
    per_layer_kv = 8192 * 8 * 128
    assert c.params == 80 * (2 * per_layer_q + 2 * per_layer_kv)


@pytest.mark.parametrize(
    ("h", "d_model", "d_k", "d_v"), [(8, 64, 8, 8), (12, 768, 64, 64), (4, 32, 8, 16)]
)
def test_sharing_counts_agree_with_the_multi_head_count_and_shrink_with_g(h, d_model, d_k, d_v):
    mha = sharing_counts(h, h, d_model, d_k, d_v)
    assert mha.kind == "MHA"
    totals = multi_head_counts(1, h, d_model, d_k, d_v)["totals"]
    assert mha.params == mha.mha_params == totals["parameters"]
    mqa = sharing_counts(h, 1, d_model, d_k, d_v)
    assert mqa.kind == "MQA"
    # multi-query drops h - 1 key and value projections and caches 1/h of the bytes
    assert mqa.params == mha.params - (h - 1) * d_model * (d_k + d_v)
    assert mqa.kv_bytes_per_token * h == mha.kv_bytes_per_token
    for g in (x for x in range(1, h + 1) if h % x == 0):
        c = sharing_counts(h, g, d_model, d_k, d_v, dtype_bytes=4)
        assert c.kv_bytes_per_token == g * (d_k + d_v) * 4
        assert c.mha_params == mha.params


def test_sharing_counts_refuse_bad_input():
    with pytest.raises(ValueError, match="g must divide h = 8"):
        sharing_counts(8, 3, 64, 8)
    with pytest.raises(ValueError, match="d_model"):
        sharing_counts(8, 2, 0, 8)
    with pytest.raises(ValueError, match="n must be"):
        sharing_counts(8, 2, 64, 8).kv_cache_bytes(-1)


# ---------------------------------------------------------------------------------- torch


def _sdpa(torch, q, k, v, *, attn_mask=None):
    """torch's attention on float64 copies; K/V heads shared with enable_gqa when available."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v))
    tm = None if attn_mask is None else torch.from_numpy(np.ascontiguousarray(attn_mask))
    h, g = q.shape[-3], k.shape[-3]
    if h != g:
        try:
            return sdpa(tq, tk, tv, attn_mask=tm, enable_gqa=True).numpy()
        except TypeError:  # torch before 2.5 has no enable_gqa
            pass
        tk = tk.repeat_interleave(h // g, dim=-3)
        tv = tv.repeat_interleave(h // g, dim=-3)
    return sdpa(tq, tk, tv, attn_mask=tm).numpy()


@pytest.mark.parametrize(
    "mask_of",
    [
        lambda n: causal_mask(n),
        lambda n: sliding_window_mask(n, window=3),
        lambda n: sliding_window_mask(n, window=4, sinks=2),
    ],
    ids=["causal", "window", "window+sinks"],
)
def test_masks_match_torch_sdpa(mask_of):
    torch = pytest.importorskip("torch")
    q, k, v = _qkv(4, 4, 11, 8, batch=(2,))
    mask = mask_of(11)
    ours, _ = grouped_query_attention(q, k, v, mask=mask)
    # torch's boolean attn_mask has our semantics: True = the key takes part
    np.testing.assert_allclose(ours, _sdpa(torch, q, k, v, attn_mask=mask), rtol=1e-12, atol=1e-12)


def test_alibi_as_an_additive_float_mask_matches_torch_sdpa():
    torch = pytest.importorskip("torch")
    h, n = 8, 13
    q, k, v = _qkv(h, h, n, 16)
    mask = sliding_window_mask(n, window=5, sinks=1)
    bias = alibi_bias(alibi_slopes(h), n)
    additive = bias + np.where(mask, 0.0, -np.inf)
    ours, _ = grouped_query_attention(q, k, v, mask=mask, bias=bias)
    np.testing.assert_allclose(
        ours, _sdpa(torch, q, k, v, attn_mask=additive), rtol=1e-12, atol=1e-12
    )
    # the same additive mask given to us as a bias alone
    ours_additive, _ = grouped_query_attention(q, k, v, bias=additive)
    np.testing.assert_allclose(ours_additive, ours, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("g", [1, 2, 8])
def test_grouped_query_attention_matches_torch_sdpa(g):
    torch = pytest.importorskip("torch")
    q, k, v = _qkv(8, g, 9, 16, batch=(2,))
    mask = causal_mask(9)
    ours, _ = grouped_query_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ours, _sdpa(torch, q, k, v, attn_mask=mask), rtol=1e-12, atol=1e-12)
