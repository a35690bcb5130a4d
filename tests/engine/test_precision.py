"""Mask semantics, float16 / bfloat16 emulation and dropout on the weights."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim import engine
from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.precision import (
    BFLOAT16_MAX,
    DTYPES,
    MASK_LABELS,
    additive_to_bool,
    bool_to_additive,
    dropout_attention,
    dropout_weights,
    dtype_min,
    left_padded_causal_mask,
    low_precision_attention,
    mask_value_for,
    precision_table,
    round_bfloat16,
    round_to,
)


def _qkv(n=6, d=4, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d)) * scale for _ in range(3))


# ---- masks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", MASK_LABELS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_and_additive_masks_convert_both_ways(label, dtype):
    rng = np.random.default_rng(1)
    m = rng.random((5, 7)) < 0.5
    value = mask_value_for(label, dtype)
    add = bool_to_additive(m, value)
    assert np.all(add[m] == 0.0) and np.all(add[~m] == value)
    np.testing.assert_array_equal(additive_to_bool(add), m)


def test_additive_to_bool_keeps_small_biases_allowed_and_refuses_nonsense():
    add = np.array([[0.0, -3.5, -1e4, -np.inf, -9999.0]])  # -3.5: an ALiBi-style distance bias
    assert additive_to_bool(add).tolist() == [[True, True, False, False, True]]
    assert additive_to_bool(add, forbidden_at=-1.0).tolist() == [[True, False, False, False, False]]
    with pytest.raises(ValueError, match="additive"):
        additive_to_bool([0.0, np.nan])
    with pytest.raises(ValueError, match="forbidden_at"):
        additive_to_bool([0.0], forbidden_at=1.0)
    with pytest.raises(ValueError, match="value must be -inf or a finite negative"):
        bool_to_additive(np.ones(2, dtype=bool), 1e4)
    with pytest.raises(ValueError, match="mask must be a boolean"):
        bool_to_additive(np.ones(2), -1e4)


def test_the_additive_mask_with_minus_inf_reproduces_boolean_attention():
    q, k, v = _qkv()
    m = causal_mask(6)
    route = low_precision_attention(q, k, v, mask=m, mask_value=-np.inf, dtype="float64")
    out, w = attention(q, k, v, mask=m)
    np.testing.assert_allclose(route.weights, w, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(route.output, out, rtol=1e-13)
    assert np.all(route.weights[~m] == 0.0)


def test_left_padding_leaves_the_padded_queries_without_a_legal_key():
    m = left_padded_causal_mask(5, 2)
    assert m[:2].any(axis=1).tolist() == [False, False]
    assert m[4].tolist() == [False, False, True, True, True]
    with pytest.raises(ValueError, match="pad"):
        left_padded_causal_mask(3, 4)


# ---- rounding ---------------------------------------------------------------------------------


def test_bfloat16_rounds_to_nearest_even_with_eight_significant_bits():
    ulp = 2.0**-7  # at 1.0: 7 stored fraction bits
    x = [1.0, 1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + 2**-20, -1 - 3 * ulp / 2, 3.0e38, 3.4e38]
    got = round_bfloat16(x)
    assert got.dtype == np.float32
    # ties go to the even neighbour (1.0 and 1 + 2 ulp); just above a tie goes up
    assert got[:5].tolist() == [1.0, 1.0, 1 + 2 * ulp, 1 + ulp, -1 - 2 * ulp]
    assert got[5] <= BFLOAT16_MAX and np.isposinf(got[6])
    assert np.isnan(round_bfloat16([np.nan]))[0] and np.isneginf(round_bfloat16([-np.inf]))[0]


@given(arrays(np.float32, 20, elements=st.floats(-(2.0**100), 2.0**100, width=32)))
def test_bfloat16_values_are_fixed_points_with_bounded_error(x):
    r = round_bfloat16(x)
    np.testing.assert_array_equal(round_bfloat16(r), r)  # rounding is idempotent
    assert np.all(r.view(np.uint32) & 0xFFFF == 0)  # only the high 16 bits survive
    # round to nearest: the error is at most half a unit in the 8th significant bit
    tiny = np.abs(x) < 1e-37  # subnormal range: absolute spacing instead
    rel = np.abs(r.astype(float) - x) / np.where(tiny, 1.0, np.abs(x.astype(float)))
    assert np.all(rel[~tiny] <= 2.0**-8)


def test_bfloat16_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal(1000).astype(np.float32) * 1e3
    x[:6] = [1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -1e9, 1e-40, -3e-39]  # ties, overflow, subnormals
    ref = torch.from_numpy(x).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(round_bfloat16(x), ref)  # both are exact roundings


def test_round_to_and_dtype_minimum():
    assert dtype_min("float16") == -65504.0
    assert dtype_min("bfloat16") == -BFLOAT16_MAX == pytest.approx(-3.3895313892515355e38)
    assert dtype_min(np.float32) == float(np.finfo(np.float32).min)
    assert np.isneginf(round_to(-1e9, "float16"))  # -1e9 is past float16's range
    assert round_to(-1e9, "bfloat16") == pytest.approx(-1e9, rel=2**-8)
    # -65504 - 20 is past float16's last rounding boundary (65520): the minimum overflows
    assert np.isneginf(round_to(dtype_min("float16") - 20.0, "float16"))
    with pytest.raises(ValueError, match="dtype must be one of"):
        round_to(1.0, "int8")


# ---- the precision table ----------------------------------------------------------------------


def _table():
    q, k, v = _qkv()
    return {
        (r.dtype, r.mask_label): r
        for r in precision_table(q, k, v, mask=left_padded_causal_mask(6, 1))
    }


def test_precision_table_minus_inf_masks_make_the_padded_row_nan():
    table = _table()
    assert len(table) == len(DTYPES) * len(MASK_LABELS)
    for dtype in DTYPES:
        row = table[(dtype, "-inf")]
        assert row.nan_rows == 1 and row.silent_rows == 0
        assert row.leaked_weight == 0.0
        assert not row.probe_route_finite and row.probe_leak == 0.0


def test_precision_table_finite_masks_give_silent_rows_and_a_live_route_for_large_logits():
    table = _table()
    for dtype in DTYPES:
        row = table[(dtype, "-1e4")]
        # the padded row becomes a finite route over forbidden keys instead of an error
        assert row.nan_rows == 0 and row.silent_rows == 1
        # a logit of 2e4 beats the -1e4 mask: the forbidden key takes essentially all weight
        assert row.probe_route_finite and row.probe_leak > 0.99
        # the dtype minimum keeps the route finite yet weightless at this logit
        low = table[(dtype, "min")]
        assert low.probe_route_finite and low.probe_leak == 0.0


def test_precision_table_minus_1e9_overflows_to_minus_inf_only_in_float16():
    table = _table()
    assert np.isneginf(table[("float16", "-1e9")].stored_mask_value)
    assert table[("float16", "-1e9")].nan_rows == 1
    for dtype in ("float64", "float32", "bfloat16"):
        row = table[(dtype, "-1e9")]
        assert np.isfinite(row.stored_mask_value) and row.nan_rows == 0


def test_a_float16_minimum_mask_turns_negative_logits_into_minus_inf():
    # float16's minimum plus any logit below -16 rounds past -65520 to -inf. Query 0 has no
    # legal key and logits -30 and -60, so both masked logits overflow and the "safe" finite
    # mask gives the NaN row that -inf would; in float32 min + logit rounds back to min.
    q = np.array([[-30.0, 0.0]])
    k = np.array([[1.0, 0.0], [2.0, 0.0]])
    v = np.eye(2)
    mask = np.zeros((1, 2), dtype=bool)
    r16 = low_precision_attention(
        q, k, v, mask=mask, mask_value=dtype_min("float16"), dtype="float16", scale=False
    )
    assert r16.nan_rows.tolist() == [True]
    r32 = low_precision_attention(
        q, k, v, mask=mask, mask_value=dtype_min("float32"), dtype="float32", scale=False
    )
    assert r32.nan_rows.tolist() == [False]
    np.testing.assert_allclose(r32.weights, [[0.5, 0.5]])  # min + logit rounds back to min


def test_low_precision_weights_are_close_to_float64_on_legal_rows():
    q, k, v = _qkv(n=8, seed=5)
    m = causal_mask(8)
    ref = low_precision_attention(q, k, v, mask=m, dtype="float64")
    # float16 has 11 significant bits, bfloat16 8: rounding errors of a few units in the last
    # place of logits of size ~5 move weights by a few parts in 10^3 and 10^2
    for dtype, tol in (("float32", 1e-6), ("float16", 2e-2), ("bfloat16", 1e-1)):
        got = low_precision_attention(q, k, v, mask=m, dtype=dtype)
        assert not got.nan_rows.any()
        np.testing.assert_allclose(got.weights, ref.weights, atol=tol)
        assert np.all(got.weights[~m] == 0.0)
        np.testing.assert_array_equal(round_to(got.weights, dtype), got.weights)


def test_low_precision_attention_rejects_bad_input():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="mask must be a boolean array of shape"):
        low_precision_attention(q, k, v, mask=np.ones((6, 5), dtype=bool))
    with pytest.raises(ValueError, match="dtype must be one of"):
        low_precision_attention(q, k, v, mask=causal_mask(6), dtype="float8")
    with pytest.raises(ValueError, match="large_logit"):
        precision_table(q, k, v, mask=causal_mask(6), large_logit=-1.0)
    with pytest.raises(ValueError, match="mask label"):
        mask_value_for("-1e3", "float32")


# ---- dropout ----------------------------------------------------------------------------------


def test_dropout_realises_a_different_mixture_reproducibly():
    q, k, v = _qkv(seed=2)
    a = dropout_attention(q, k, v, p=0.3, seed=7)
    b = dropout_attention(q, k, v, p=0.3, seed=7)
    c = dropout_attention(q, k, v, p=0.3, seed=8)
    np.testing.assert_array_equal(a.output, b.output)
    assert not np.array_equal(a.kept, c.kept)
    assert not np.allclose(a.output, a.expected_output)
    np.testing.assert_allclose(a.dropped_weights, np.where(a.kept, a.weights / 0.7, 0.0))
    np.testing.assert_allclose(a.output, a.dropped_weights @ v, rtol=1e-14)
    assert not np.allclose(a.dropped_weights.sum(axis=1), 1.0)  # rows no longer sum to one


def test_dropout_expectation_is_the_mixture_without_dropout():
    q, k, v = _qkv(seed=4)
    p, seeds = 0.25, 4000
    route = dropout_attention(q, k, v, p=p, seed=0)
    mean = np.mean([dropout_attention(q, k, v, p=p, seed=s).output for s in range(seeds)], axis=0)
    # each output entry is sum_j w_ij v_jc B_ij / (1 - p), B_ij ~ Bernoulli(1 - p) independent:
    # its variance is sum_j (w_ij v_jc)^2 p / (1 - p); allow 5 standard errors of the mean
    var = (route.weights**2) @ (v**2) * p / (1 - p)
    tol = 5 * np.sqrt(var / seeds)
    assert np.all(np.abs(mean - route.expected_output) <= tol + 1e-12)
    np.testing.assert_allclose(route.expected_output, attention(q, k, v)[0], rtol=1e-15)


def test_dropout_is_off_in_evaluation():
    q, k, v = _qkv(seed=6)
    route = dropout_attention(q, k, v, p=0.5, seed=3, train=False)
    np.testing.assert_array_equal(route.dropped_weights, route.weights)
    np.testing.assert_array_equal(route.output, route.weights @ v)
    assert route.kept.all()
    w = attention(q, k, v)[1]
    same, kept = dropout_weights(w, 0.9, seed=1, train=False)
    np.testing.assert_array_equal(same, w)
    assert same is not w and kept.all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": 1.0}, "p must be"),
        ({"p": -0.1}, "p must be"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_dropout_rejects_bad_arguments(kwargs, match):
    args = {"p": 0.1, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        dropout_weights(np.full((2, 2), 0.5), **args)


def test_package_exports():
    assert engine.precision_table is precision_table
    assert engine.low_precision_attention is low_precision_attention
    assert engine.dropout_attention is dropout_attention


def test_precision_table_in_row_blocks_is_each_cells_whole_computation(monkeypatch):
    from attnsim.engine import precision

    gen = np.random.default_rng(3)
    n = 23
    q, k, v = gen.normal(size=(n, 4)) * 4, gen.normal(size=(n, 4)) * 4, gen.normal(size=(n, 2))
    m = left_padded_causal_mask(n, 2)
    q[5, 0], k[9, 0] = 150.0, 150.0  # a large logit on a forbidden key of row 5
    monkeypatch.setattr(precision, "ROW_BLOCK", 5)  # five blocks, the last one short
    table = precision_table(q, k, v, mask=m)
    assert len(table) == len(DTYPES) * len(MASK_LABELS)
    for row in table:
        whole = low_precision_attention(q, k, v, mask=m, mask_value=row.mask_value, dtype=row.dtype)
        legal = ~whole.no_legal_key & ~whole.nan_rows
        assert row.nan_rows == int(whole.nan_rows.sum())
        assert row.silent_rows == int((whole.no_legal_key & ~whole.nan_rows).sum())
        assert row.leaked_weight == float(whole.leaked[legal].max())
        assert row.stored_mask_value == whole.stored_mask_value


def test_bfloat16_rounding_in_chunks_is_the_same_bits(monkeypatch):
    from attnsim.engine import precision

    x = np.random.default_rng(8).normal(size=(37, 11)) * 10.0 ** np.arange(-5, 6)
    x[3, 4], x[20, 1], x[36, 10] = np.nan, np.inf, -0.0
    whole = round_bfloat16(x)
    monkeypatch.setattr(precision, "_BF16_CHUNK", 50)  # nine chunks, the last one short
    chunked = round_bfloat16(x)
    assert chunked.shape == x.shape and chunked.dtype == np.float32
    np.testing.assert_array_equal(chunked.view(np.uint32)[~np.isnan(x)],
                                  whole.view(np.uint32)[~np.isnan(x)])  # fmt: skip
    assert np.isnan(chunked[3, 4]) and np.isposinf(chunked[20, 1])
