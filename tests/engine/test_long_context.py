"""The long-context sweep against closed forms and a plain softmax over the concatenated keys.

With w0 the best key's weight and o_0 the output before anything is inserted, k exact copies of
a row (key k_b, value u) give the best key w0 / (1 + k w0), the copies together k w0 / (1 + k w0)
and the output (o_0 + k w0 u) / (1 + k w0): the softmax denominator Z grows by k e^{s_b}.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import softmax
from attnsim.engine.long_context import (
    distractor_sweep,
    duplicated_facts,
    noisy_copies,
    repeated_rows,
    superseded_facts,
    sweep_reference_diff,
)

RNG = np.random.default_rng(3)
q = RNG.normal(size=4)
K = RNG.normal(size=(6, 4))
V = RNG.normal(size=(6, 3))
DIV = 2.0
W0 = softmax(K @ q / DIV)
B = int(np.argmax(W0))
O0 = W0 @ V


def reference(extra_K, extra_V, k, allowed=None):
    """Weights and output of a plain softmax over the original keys and the first k rows."""
    keys = np.vstack([K, extra_K[:k]])
    vals = np.vstack([V, extra_V[:k]])
    logits = keys @ q / DIV
    if allowed is not None:
        logits[: len(allowed)][~np.asarray(allowed)] = -np.inf
    w = softmax(logits)
    return w, w @ vals


def test_exact_duplicates_follow_the_closed_forms():
    ek, ev = duplicated_facts(K[B], V[B], 40)
    s = distractor_sweep(q, K, V, ek, ev, divisor=DIV)
    k = np.arange(41)
    w0 = W0[B]
    assert s.best == B
    np.testing.assert_allclose(s.best_weight, w0 / (1 + k * w0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.distractor_weight, k * w0 / (1 + k * w0), rtol=0, atol=1e-12)
    expect = (O0[None, :] + (k * w0)[:, None] * V[B][None, :]) / (1 + k * w0)[:, None]
    np.testing.assert_allclose(s.outputs, expect, rtol=0, atol=1e-12)
    # the fact as a whole (original plus copies) only gains weight
    fact = s.best_weight + s.distractor_weight
    assert np.all(np.diff(fact) > 0)


def test_a_superseded_fact_moves_the_output_along_the_line_to_its_value():
    new = -V[B] + 1.0
    ek, ev = superseded_facts(K[B], new, 30)
    s = distractor_sweep(q, K, V, ek, ev, divisor=DIV)
    k = np.arange(31)
    frac = k * W0[B] / (1 + k * W0[B])
    np.testing.assert_allclose(s.outputs, O0 + frac[:, None] * (new - O0), rtol=0, atol=1e-12)
    dist = np.linalg.norm(s.outputs - new, axis=1)
    assert np.all(np.diff(dist) < 0)  # strictly closer to the new value at every step
    np.testing.assert_allclose(s.shift, frac * np.linalg.norm(new - O0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.best_weight, W0[B] / (1 + k * W0[B]), rtol=0, atol=1e-12)


def test_the_sweep_equals_a_plain_softmax_at_every_k_with_a_mask():
    ek = RNG.normal(size=(9, 4)) * 2.0
    ev = RNG.normal(size=(9, 3))
    allowed = np.array([True, False, True, True, False, True])
    s = distractor_sweep(q, K, V, ek, ev, divisor=DIV, allowed=allowed)
    masked = np.where(allowed, K @ q / DIV, -np.inf)
    assert s.best == int(np.argmax(masked))
    for k in range(10):
        w, o = reference(ek, ev, k, allowed)
        np.testing.assert_allclose(s.weights_at(k), w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(s.outputs[k], o, rtol=0, atol=1e-12)
        assert s.best_weight[k] == pytest.approx(w[s.best], abs=1e-12)
        assert s.distractor_weight[k] == pytest.approx(w[6:].sum(), abs=1e-12)
        assert s.shift[k] == pytest.approx(np.linalg.norm(o - s.outputs[0]), abs=1e-12)
    assert s.weights_at(4)[~np.r_[allowed, [True] * 4]].sum() == 0.0


def test_huge_logits_stay_finite_and_a_dominant_distractor_takes_everything():
    ek = repeated_rows(q * 1e3, 3)  # logits ~1e3 · |q|² / 2: exp would overflow without a max
    ev = np.zeros((3, 3))
    s = distractor_sweep(q, K, V, ek, ev, divisor=DIV)
    assert np.all(np.isfinite(s.best_weight)) and np.all(np.isfinite(s.outputs))
    assert s.best_weight[0] == pytest.approx(W0[B], abs=1e-12)
    assert s.best_weight[1] == 0.0 and s.distractor_weight[3] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(s.outputs[1:], 0.0, atol=1e-300)
    assert s.shift[3] == pytest.approx(np.linalg.norm(O0), abs=1e-12)


def test_a_query_that_reads_nothing_has_no_best_key_until_a_distractor_arrives():
    ek, ev = duplicated_facts(K[0], V[0], 2)
    s = distractor_sweep(q, K, V, ek, ev, allowed=np.zeros(6, dtype=bool))
    assert s.best == -1
    np.testing.assert_array_equal(s.weights_at(0), np.zeros(6))
    np.testing.assert_allclose(s.weights_at(2), [0] * 6 + [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(s.outputs[2], V[0], atol=1e-15)


def test_noisy_copies_are_reproducible_per_seed_nested_and_scaled():
    a = noisy_copies(K[B], 8, noise=0.2, seed=5)
    b = noisy_copies(K[B], 8, noise=0.2, seed=5)
    c = noisy_copies(K[B], 8, noise=0.2, seed=6)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_array_equal(noisy_copies(K[B], 3, noise=0.2, seed=5), a[:3])
    np.testing.assert_array_equal(noisy_copies(K[B], 4, noise=0.0, seed=5), repeated_rows(K[B], 4))
    # the noise vectors' mean squared length is noise² |k|² (checked on many rows)
    many = noisy_copies(K[B], 20000, noise=0.5, seed=1) - K[B]
    ratio = np.mean(np.sum(many**2, axis=1)) / (0.25 * K[B] @ K[B])
    assert ratio == pytest.approx(1.0, abs=0.03)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: noisy_copies(K[0], -1, noise=0.1, seed=0), "whole number >= 0"),
        (lambda: noisy_copies(K[0], 2, noise=-0.1, seed=0), "noise"),
        (lambda: distractor_sweep(q, K, V, np.ones((2, 3)), np.ones((2, 3))), "d_k"),
        (lambda: distractor_sweep(q, K, V, np.ones((2, 4)), np.ones((1, 3))), "one value"),
        (lambda: distractor_sweep(q * 1e200, K * 1e200, V, K[:1], V[:1]), "overflow"),
        (lambda: distractor_sweep(q, K, V, K[:1], V[:1], divisor=0.0), "divisor"),
        (lambda: distractor_sweep(q, K, V, K[:1], V[:1]).weights_at(2), "k must lie"),
    ],
)
def test_bad_input_is_refused_with_the_reason(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_reference_difference_is_rounding_and_catches_a_wrong_sweep():
    ek = noisy_copies(K[B], 12, noise=0.3, seed=2)
    ev = RNG.normal(size=(12, 3))
    allowed = np.array([True, True, False, True, True, True])
    s = distractor_sweep(q, K, V, ek, ev, divisor=DIV, allowed=allowed)
    assert sweep_reference_diff(s, q, K, V, ek, ev, divisor=DIV, allowed=allowed) < 1e-14
    # the same sweep judged against other values is far off: the check can fail
    assert sweep_reference_diff(s, q, K, V, ek, ev + 1.0, divisor=DIV, allowed=allowed) > 0.1


def test_the_sweeps_of_several_kinds_at_once_are_each_kinds_sweep_to_the_bit():
    from attnsim.engine.long_context import distractor_sweep, distractor_sweeps

    rng = np.random.default_rng(3)
    n, d_k, d_v, k = 12, 4, 3, 9
    q, K, V = rng.standard_normal(d_k), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_v))
    allowed = rng.random(n) > 0.3
    allowed[0] = True
    extras = [(rng.standard_normal((k, d_k)) * s, rng.standard_normal((k, d_v))) for s in (1, 3, 5)]
    together = distractor_sweeps(q, K, V, extras, divisor=2.0, allowed=allowed)
    for (ek, ev), s in zip(extras, together, strict=True):
        alone = distractor_sweep(q, K, V, ek, ev, divisor=2.0, allowed=allowed)
        for field in ("logits", "extra_logits", "best_weight", "distractor_weight", "outputs",
                      "shift"):  # fmt: skip
            assert np.array_equal(getattr(s, field), getattr(alone, field)), field
        assert s.best == alone.best
