"""Attention's invariants at 1,000 examples each, over the whole range the app accepts.

Inputs include ties and near-ties, magnitudes from 1e-300 up to the scenario bound
(MAX_ABS_VALUE = 1e6), and temperatures from 1e-6 to 1e6 (wider than the app's range: these
are properties of the engine function). Tolerances are stated per property and grow with the
size of the logits, because two correct computations of one logit in a different order differ
by rounding in proportion to sum |q_c k_c|.

The examples are derandomized (the same 1,000 on every machine, so a red run reproduces) and
the count can be raised for a deeper search: ATTNSIM_PROPERTY_EXAMPLES=20000.
"""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnsim.engine import attention, direct_trace, entropy_bits, softmax
from attnsim.engine.audit import ranking_reversals
from attnsim.engine.scenario import MAX_ABS_VALUE

EXAMPLES = int(os.environ.get("ATTNSIM_PROPERTY_EXAMPLES", "1000"))
INVARIANT = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
EPS = np.finfo(float).eps

# Magnitudes from tiny to the bound, and values that make ties: exact zeros, the bound itself,
# the smallest subnormal. Hypothesis picks the shapes, the magnitude and a seed; NumPy fills
# the arrays (drawing each float through Hypothesis costs ~15 ms an example, this ~1 ms).
MAGNITUDES = [1e-300, 1e-6, 1e-2, 1.0, 10.0, 1e3, 1e6]
SPECIAL = np.array([0.0, 1.0, -1.0, 0.5, MAX_ABS_VALUE, -MAX_ABS_VALUE, 5e-324, -1e-300])
temperatures = st.floats(-6.0, 6.0).map(lambda e: 10.0**e)


def _fill(rng: np.random.Generator, shape: tuple[int, int], magnitude: float) -> np.ndarray:
    a = np.clip(rng.standard_normal(shape) * magnitude, -MAX_ABS_VALUE, MAX_ABS_VALUE)
    special = rng.random(shape) < 0.2
    a[special] = rng.choice(SPECIAL, size=int(special.sum()))
    rounded = rng.random(shape) < 0.3  # short decimals: many exact and near ties
    a[rounded] = np.round(a[rounded], 1)
    return a


@st.composite
def qkv(draw, max_n=6, max_d=4):
    n_q, n_k = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    magnitude = draw(st.sampled_from(MAGNITUDES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = _fill(rng, (n_q, d_k), magnitude)
    k = _fill(rng, (n_k, d_k), draw(st.sampled_from(MAGNITUDES)))
    v = _fill(rng, (n_k, d_v), magnitude)
    if n_k > 1 and draw(st.booleans()):
        # a tie (an exact copy of a key) or a near-tie (the copy nudged by one ulp)
        i, j = draw(st.integers(0, n_k - 1)), draw(st.integers(0, n_k - 1))
        k[j] = k[i] if draw(st.booleans()) else np.nextafter(k[i], np.inf)
    return q, k, v


@st.composite
def legal_mask(draw, n_q, n_k):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = rng.random((n_q, n_k)) < draw(st.sampled_from([0.2, 0.5, 0.9]))
    m[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every query keeps a legal key
    return m


def logit_noise(q, k, divisor):
    """Rounding bound of one logit computed in two different orders (see module docstring)."""
    d = q.shape[1]
    return 4.0 * d * EPS * float(np.max(np.abs(q) @ np.abs(k).T)) / divisor


@st.composite
def logits_rows(draw, finite=False):
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 8)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape) * draw(st.sampled_from([1e-300, 1.0, 50.0, 1e6, 1e100, 1e290]))
    if draw(st.booleans()):
        x = np.round(x, 0)  # ties
    if not finite:
        x[rng.random(shape) < 0.2] = -np.inf
    return x


@INVARIANT
@given(logits_rows())
def test_softmax_rows_sum_to_one_and_minus_inf_gets_exactly_zero(x):
    x[:, 0] = np.where(np.isneginf(x[:, 0]), 0.0, x[:, 0])  # every row has a finite entry
    w = softmax(x)
    assert np.isfinite(w).all() and (w >= 0).all() and (w <= 1).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=8 * x.shape[1] * EPS)
    assert (w[np.isneginf(x)] == 0.0).all()


@INVARIANT
@given(logits_rows(finite=True), st.floats(-1e6, 1e6, allow_nan=False))
def test_softmax_ignores_a_constant_added_to_a_row(x, c):
    w, ws = softmax(x), softmax(x + c)
    # x + c is rounded: each logit moves by up to an ulp of |x| + |c|
    tol = 4 * EPS * (np.abs(x).max() + abs(c)) + 4 * EPS
    np.testing.assert_allclose(ws, w, rtol=0, atol=tol)


@INVARIANT
@given(qkv(), temperatures, st.booleans(), st.data())
def test_masked_keys_get_exactly_zero_and_rows_sum_to_one(t, temp, scale, data):
    q, k, v = t
    mask = data.draw(legal_mask(q.shape[0], k.shape[0]))
    out, w = attention(q, k, v, mask=mask, temperature=temp, scale=scale)
    assert (w[~mask] == 0.0).all()
    assert (w >= 0).all() and np.isfinite(out).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=8 * k.shape[0] * EPS)


@INVARIANT
@given(qkv(), temperatures, st.booleans(), st.data())
def test_permutation_equivariance(t, temp, scale, data):
    q, k, v = t
    pk = np.array(data.draw(st.permutations(range(k.shape[0]))))
    pq = np.array(data.draw(st.permutations(range(q.shape[0]))))
    out, w = attention(q, k, v, temperature=temp, scale=scale)
    out_p, w_p = attention(q[pq], k[pk], v[pk], temperature=temp, scale=scale)
    divisor = (math.sqrt(q.shape[1]) if scale else 1.0) * temp
    tol = 4 * logit_noise(q, k, divisor) + 1e-14
    np.testing.assert_allclose(w_p, w[pq][:, pk], rtol=0, atol=tol)
    vmax = float(np.abs(v).max())
    np.testing.assert_allclose(out_p, out[pq], rtol=0, atol=(tol * k.shape[0] + 1e-12) * vmax)


@INVARIANT
@given(qkv(), st.floats(-6.0, 5.0), st.floats(0.05, 1.0), st.booleans())
def test_entropy_grows_with_temperature(t, log_t, step, scale):
    q, k, v = t
    t1 = 10.0**log_t
    t2 = t1 * 10.0**step
    _, w1 = attention(q, k, v, temperature=t1, scale=scale)
    _, w2 = attention(q, k, v, temperature=t2, scale=scale)
    h1, h2 = entropy_bits(w1), entropy_bits(w2)
    # The logits are rounded (by up to `noise`), and |dH/dl| <= log2(n) + 2 bits per unit of
    # logit: near a tie that rounding may decide whether the colder row stays tied.
    noise = logit_noise(q, k, (math.sqrt(q.shape[1]) if scale else 1.0) * t1)
    tol = 1e-9 + 2 * (math.log2(k.shape[0]) + 2) * noise
    assert (h1 <= h2 + tol).all(), (h1, h2, tol)
    assert (h1 >= -1e-12).all() and (h2 <= math.log2(k.shape[0]) + 1e-9).all()


@INVARIANT
@given(qkv(), temperatures, st.sampled_from([0.5, 2.0, 4.0, 0.125]), st.booleans())
def test_scaling_the_queries_equals_dividing_the_temperature(t, temp, c, scale):
    q, k, v = t
    # powers of two: c q and temp / c are exact, so only the order of rounding differs
    _, w_q = attention(q * c, k, v, temperature=temp, scale=scale)
    _, w_t = attention(q, k, v, temperature=temp / c, scale=scale)
    divisor = (math.sqrt(q.shape[1]) if scale else 1.0) * temp / c
    np.testing.assert_allclose(w_q, w_t, rtol=0, atol=4 * logit_noise(q, k, divisor) + 1e-14)


@INVARIANT
@given(qkv(), temperatures, st.booleans(), st.data())
def test_output_lies_in_the_convex_hull_of_the_legal_values(t, temp, scale, data):
    q, k, v = t
    mask = data.draw(legal_mask(q.shape[0], k.shape[0]))
    out, _ = attention(q, k, v, mask=mask, temperature=temp, scale=scale)
    slack = 4 * k.shape[0] * EPS * float(np.abs(v).max()) + 1e-300
    for i in range(q.shape[0]):
        legal = v[mask[i]]
        assert (out[i] >= legal.min(axis=0) - slack).all()
        assert (out[i] <= legal.max(axis=0) + slack).all()


@INVARIANT
@given(qkv(), temperatures, st.booleans())
def test_ties_get_equal_weight_and_the_ranking_follows_the_logits(t, temp, scale):
    q, k, v = t
    k2 = np.vstack([k, k[:1]])  # an exact copy of the first key: an exact tie
    v2 = np.vstack([v, v[:1]])
    tr = direct_trace(q, k2, v2, temperature=temp, scale=scale)
    assert (tr.weights[:, 0] == tr.weights[:, -1]).all()
    for i in range(q.shape[0]):
        assert ranking_reversals(tr.logits[i], tr.weights[i], 0.0) == 0


@INVARIANT
@given(qkv(), temperatures, st.booleans(), st.data())
def test_trace_entropy_matches_the_weights(t, temp, scale, data):
    q, k, v = t
    mask = data.draw(legal_mask(q.shape[0], k.shape[0]))
    tr = direct_trace(q, k, v, mask=mask, temperature=temp, scale=scale)
    assert np.isfinite(tr.entropy).all()
    np.testing.assert_allclose(tr.entropy, entropy_bits(tr.weights), rtol=0, atol=1e-9)
    assert (tr.entropy <= np.log2(mask.sum(axis=1)) + 1e-9).all()


def test_trace_entropy_stays_exact_for_huge_logits():
    # Values near the bound at T = 1e-3: logits near 1e12 that differ by about 1. The shortcut
    # sum(w l) - max(l) cancelled there (4e-6 bits off here, whole bits at the bound).
    q = np.array([[1e6, 1e6]])
    k = np.array([[1e3, 0.0], [1e3, -1e-9], [1e3, -3e-9]])
    tr = direct_trace(q, k, k, temperature=1e-3, scale=False)
    assert abs(tr.logits[0, 0]) > 1e11
    np.testing.assert_allclose(tr.entropy, entropy_bits(tr.weights), rtol=0, atol=1e-12)
