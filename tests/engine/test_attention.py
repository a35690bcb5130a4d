"""softmax, attention() and the traces: shapes, broadcasting, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.engine import (
    attention,
    causal_mask,
    direct_trace,
    entropy_bits,
    head_trace,
    multi_head,
    softmax,
)
from attnsim.engine.attention import route_arrays

rng = np.random.default_rng(7)


def test_softmax_neg_inf_gets_exact_zero():
    w = softmax([1.0, -np.inf, 2.0])
    assert w[1] == 0.0
    assert w.sum() == pytest.approx(1.0)


def test_softmax_all_neg_inf_slice_raises():
    with pytest.raises(ValueError, match="entirely -inf"):
        softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))


def test_softmax_axis_and_inputs_untouched():
    x = rng.normal(size=(3, 4))
    before = x.copy()
    w0 = softmax(x, axis=0)
    np.testing.assert_allclose(w0.sum(axis=0), 1.0)
    np.testing.assert_array_equal(x, before)


def test_softmax_positive_infinity_ties():
    assert softmax([np.inf, 0.0, np.inf]).tolist() == [0.5, 0.0, 0.5]


def test_softmax_nan_raises():
    with pytest.raises(ValueError, match="NaN"):
        softmax([0.0, np.nan])


def test_causal_mask_shape_and_content():
    m = causal_mask(3)
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert causal_mask(2, 4).shape == (2, 4)


def test_attention_matches_naive_formula():
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, w = attention(q, k, v, temperature=0.7)
    logits = q @ k.T / np.sqrt(3) / 0.7
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(w, ref, rtol=1e-13)
    np.testing.assert_allclose(out, ref @ v, rtol=1e-13)


def test_attention_broadcasts_heads_and_batches():
    q = rng.normal(size=(2, 3, 4, 8))  # batch, heads, n_q, d_k
    k = rng.normal(size=(1, 3, 6, 8))
    v = rng.normal(size=(2, 1, 6, 5))
    mask = causal_mask(4, 6)
    out, w = attention(q, k, v, mask=mask)
    assert out.shape == (2, 3, 4, 5) and w.shape == (2, 3, 4, 6)
    for b in range(2):
        for h in range(3):
            o1, w1 = attention(q[b, h], k[0, h], v[b, 0], mask=mask)
            np.testing.assert_allclose(w[b, h], w1, rtol=1e-13)
            np.testing.assert_allclose(out[b, h], o1, rtol=1e-13)


def test_attention_preserves_float32():
    q = rng.normal(size=(4, 8)).astype(np.float32)
    out, w = attention(q, q, q)
    assert out.dtype == np.float32 and w.dtype == np.float32


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": 0.0}, "temperature must be positive"),
        ({"temperature": -1.0}, "temperature must be positive"),
        ({"temperature": float("nan")}, "temperature must be positive"),
        ({"temperature": float("inf")}, "temperature must be positive"),
        ({"mask": np.ones((2, 2), dtype=bool)}, "does not broadcast"),
        ({"mask": np.ones((3, 3))}, "must be a boolean array"),
        ({"mask": np.array([[True, False, False], [False, False, False], [True] * 3])},
         "query row 1 .* no legal key"),
    ],
)  # fmt: skip
def test_attention_errors_name_the_problem(kwargs, message):
    q = k = v = np.eye(3)
    with pytest.raises(ValueError, match=message):
        attention(q, k, v, **kwargs)


def test_attention_shape_errors():
    with pytest.raises(ValueError, match=r"d_k of q \(3\) and k \(2\) differ"):
        attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"key count \(4\) and value count \(3\) differ"):
        attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        attention(np.ones(3), np.ones((4, 3)), np.ones((4, 2)))


@pytest.mark.parametrize("which", ["q", "k", "v"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_attention_refuses_non_finite_inputs(which, bad):
    arrays = {"q": np.ones((2, 3)), "k": np.ones((4, 3)), "v": np.ones((4, 2))}
    arrays[which][1, 0] = bad
    with pytest.raises(ValueError, match=f"{which} contains a non-finite value"):
        attention(arrays["q"], arrays["k"], arrays["v"])


def test_head_trace_has_every_stage():
    X = rng.normal(size=(5, 4))
    Wq, Wk, Wv = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    tr = head_trace(X, Wq, Wk, Wv, mask=causal_mask(5), temperature=2.0)
    np.testing.assert_allclose(tr.Q, X @ Wq)
    np.testing.assert_allclose(tr.scores, (X @ Wq) @ (X @ Wk).T)
    np.testing.assert_allclose(tr.logits, tr.scores / np.sqrt(3) / 2.0)
    assert np.isneginf(tr.masked_logits[0, 1:]).all()
    assert (tr.weights[~causal_mask(5)] == 0).all()
    np.testing.assert_allclose(tr.contributions.sum(axis=1), tr.output, atol=1e-13)
    np.testing.assert_allclose(tr.contribution_norms, np.linalg.norm(tr.contributions, axis=-1))
    np.testing.assert_allclose(tr.entropy, entropy_bits(tr.weights))
    assert tr.entropy[0] == 0.0  # the first token under a causal mask sees only itself
    assert tr.forbidden_weight.tolist() == [0.0] * 5


def test_mask_with_zero_gives_forbidden_keys_weight():
    q = k = v = np.eye(3)
    right = direct_trace(q, k, v, mask=causal_mask(3))
    wrong = direct_trace(q, k, v, mask=causal_mask(3), mask_value=0.0)
    assert right.weights[0, 1] == 0.0
    # row 0: logits [1/sqrt3, 0, 0] with the two forbidden ones filled with exp(0)
    a = np.exp(1 / np.sqrt(3))
    assert wrong.weights[0, 1] == pytest.approx(1 / (a + 2))
    assert wrong.forbidden_weight[0] == pytest.approx(2 / (a + 2))


def test_head_trace_shape_errors():
    with pytest.raises(ValueError, match=r"Wk must have shape \(d, ·\) with d = 4"):
        head_trace(np.ones((3, 4)), np.ones((4, 2)), np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="X contains a non-finite value"):
        head_trace(np.array([[np.nan, 1.0]]), np.eye(2), np.eye(2), np.eye(2))


def test_multi_head_block():
    X = rng.normal(size=(3, 4))
    heads = [tuple(rng.normal(size=(4, 2)) for _ in range(3)) for _ in range(2)]
    Wo = rng.normal(size=(4, 4))
    block = multi_head(X, heads, Wo)
    assert block.concat.shape == (3, 4)
    np.testing.assert_allclose(block.concat[:, :2], block.heads[0].output)
    np.testing.assert_allclose(block.concat[:, 2:], block.heads[1].output)
    np.testing.assert_allclose(block.Y, X + block.concat @ Wo)
    assert block.counts["computed_vectors"] == 18
    with pytest.raises(ValueError, match=r"Wo must have shape \(h\*d_v, d\)"):
        multi_head(X, heads, np.ones((3, 4)))


@pytest.mark.parametrize("mask_value", [-np.inf, 0.0])
@pytest.mark.parametrize("temperature", [0.001, 0.3, 1.0, 50.0, 1000.0])
def test_trace_entropy_equals_the_plain_formula(mask_value, temperature):
    q, k, v = rng.normal(size=(9, 4)) * 3, rng.normal(size=(9, 4)), rng.normal(size=(9, 2))
    tr = direct_trace(q, k, v, mask=causal_mask(9), temperature=temperature, mask_value=mask_value)
    np.testing.assert_allclose(tr.entropy, entropy_bits(tr.weights), atol=1e-9)
    assert (tr.entropy >= 0).all()
    if mask_value == -np.inf:
        assert tr.entropy[0] == 0.0  # one legal key


@pytest.mark.parametrize(
    ("d_k", "temperature", "scale", "mask_value", "masked"),
    [
        (4, 1.0, True, -np.inf, True),  # divisor 2: the scores come back from the logits
        (3, 1.0, True, -np.inf, True),  # divisor √3: q kᵀ again
        (3, 0.7, False, 0.0, True),  # the "mask with 0" mistake
        (3, 1.0, False, -np.inf, False),  # divisor 1, no mask: one array for all three
    ],
)
def test_trace_tables_are_route_arrays_numbers_bit_for_bit(d_k, temperature, scale, mask_value,
                                                           masked):  # fmt: skip
    q, k, v = rng.normal(size=(6, d_k)) * 3, rng.normal(size=(7, d_k)) * 3, rng.normal(size=(7, 2))
    mask = np.tri(6, 7, k=1, dtype=bool) if masked else None
    tr = direct_trace(q, k, v, mask=mask, temperature=temperature, scale=scale,
                      mask_value=mask_value)  # fmt: skip
    scores, logits, full, masked_logits, weights, output = route_arrays(
        q, k, v, mask=mask, temperature=temperature, scale=scale, mask_value=mask_value
    )
    for got, want in ((tr.scores, scores), (tr.logits, logits), (tr.mask, full),
                      (tr.masked_logits, masked_logits), (tr.weights, weights),
                      (tr.output, output)):  # fmt: skip
        np.testing.assert_array_equal(got, want)
        assert not got.flags.writeable
    if tr.divisor == 1.0 and mask is None:
        assert tr.scores is tr.logits and tr.masked_logits is tr.logits
    fresh = direct_trace(q, k, v, mask=mask, temperature=temperature, scale=scale,
                         mask_value=mask_value)  # fmt: skip
    norms = tr.weights * np.linalg.norm(tr.V, axis=-1)[None, :]
    # (without a power-of-two divisor a cell is its own dot product: the same up to the last place)
    exact = math.frexp(tr.divisor)[0] == 0.5
    # a dot product summed in another order: off by at most a few roundings of its terms
    # (relative to the terms' sizes, not to the sum, which may cancel to a small number)
    slack = 4 * d_k * np.finfo(float).eps * (np.abs(q) @ np.abs(k).T)
    for i, j in np.ndindex(*tr.logits.shape):  # one cell, without the whole table
        assert fresh.score(i, j) == (
            scores[i, j] if exact else pytest.approx(scores[i, j], rel=0, abs=slack[i, j])
        )
        assert fresh.masked_logit(i, j) == masked_logits[i, j]
        assert fresh.contribution_norm(i, j) == norms[i, j]
    for i in range(tr.logits.shape[0]):  # one row, likewise
        np.testing.assert_allclose(
            fresh.scores_row(i), scores[i], rtol=0, atol=0 if exact else slack[i].max()
        )
        np.testing.assert_array_equal(fresh.masked_logits_row(i), masked_logits[i])


def test_trace_keeps_two_tables_and_shares_the_others_while_held():
    X = rng.normal(size=(64, 16))
    eye = np.eye(16)
    tr = head_trace(X, eye, eye.copy(), eye, mask=causal_mask(64))
    # equal projections share one product; the caller's arrays stay writable
    assert tr.K is tr.Q and tr.V is tr.Q
    assert eye.flags.writeable and not tr.Q.flags.writeable
    held = tr.masked_logits
    assert tr.masked_logits is held  # shared while someone holds it
    again = tr.scores
    assert tr.scores is again
    del held, again
    # once dropped they are made again, with the same numbers
    np.testing.assert_array_equal(tr.scores, X @ X.T)
    np.testing.assert_array_equal(tr.masked_logits, np.where(causal_mask(64), tr.logits, -np.inf))
    with pytest.raises(ValueError, match="read-only"):
        tr.weights[0, 0] = 1.0


def test_one_head_block_without_wo_copies_no_vector():
    X = rng.normal(size=(5, 4))
    eye = np.eye(4)
    block = multi_head(X, [(eye, eye, eye)], mask=causal_mask(5))
    assert block.concat is block.heads[0].output
    assert block.delta is block.concat  # the identity moves no number
    np.testing.assert_array_equal(block.delta, block.concat @ np.eye(4))
    np.testing.assert_allclose(block.Y, X + block.heads[0].output, rtol=0, atol=0)


def test_scores_that_need_q_k_again_are_kept_for_good():
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    tr = direct_trace(q, k, v)  # divided by √3: the scores cannot come back from the logits
    first = id(tr.scores)
    assert id(tr.scores) == first  # not made again on the next hover
    np.testing.assert_array_equal(tr.scores, q @ k.T)
    cheap = direct_trace(q[:, :2], k[:, :2], v)  # divided by √4 = 2: made when asked
    np.testing.assert_array_equal(cheap.scores, q[:, :2] @ k[:, :2].T)


def test_a_row_of_scores_is_exact_beside_a_subnormal_logit_in_another_row():
    # d_k = 4: the logits are the scores halved, which is exact except where a logit is
    # subnormal; a row is then taken from the logits or its own dot products, row by row
    q = np.array([[3e-300, 0, 0, 0], [1.0, 2.0, 0, 0]])
    k = np.array([[1.1e-9, 0, 0, 0], [0.5, 1.0, 0, 0]])
    tr = direct_trace(q, k, np.ones((2, 1)))
    scores = q @ k.T
    assert tr.logits[0, 0] * tr.divisor != scores[0, 0]  # halving rounded this one
    assert tr.scores_row(0)[0] == scores[0, 0] and tr.score(0, 0) == scores[0, 0]
    np.testing.assert_array_equal(tr.scores_row(1), tr.logits[1] * 2.0)
    np.testing.assert_allclose(tr.scores_row(1), scores[1], rtol=1e-15)
    assert tr.scores[0, 0] == scores[0, 0]  # the whole table falls back to the products
