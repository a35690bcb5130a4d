"""The long-context lab's view-model: each kind's rows, the curves against the engine and a plain
softmax, the bars at the chosen k, the verdicts' numbers, and refused settings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnsim.engine.attention import direct_trace, softmax
from attnsim.engine.numbers import fmt_fixed
from attnsim.engine.routing import distractor_key
from attnsim.viewmodels.context_lab import (
    KINDS,
    SETTINGS,
    ContextLabState,
    context_data,
    kind_rows,
)

RNG = np.random.default_rng(11)
Q = RNG.normal(size=(3, 4))
K = RNG.normal(size=(5, 4))
V = RNG.normal(size=(5, 2))
KEYS = tuple(f"k{j}" for j in range(5))
TRACE = direct_trace(Q, K, V)
LOGITS = TRACE.logits[1]
BEST = int(np.argmax(LOGITS))


DEFAULT = ContextLabState()


def data(state: ContextLabState = DEFAULT, trace=TRACE, receiving: int = 1):
    return context_data(trace, receiving, f"q{receiving}", KEYS, state)


def test_each_kind_builds_its_rows_from_the_best_key():
    st = ContextLabState(k_max=6, noise=0.3, seed=4)
    q = Q[1]
    noisy_k, noisy_v = kind_rows("noisy", q, K, V, BEST, st)
    assert noisy_k.shape == (6, 4) and not np.allclose(noisy_k, K[BEST])
    np.testing.assert_array_equal(noisy_v, 0.0)
    np.testing.assert_array_equal(noisy_k, kind_rows("noisy", q, K, V, BEST, st)[0])
    long_k, long_v = kind_rows("high-norm", q, K, V, BEST, st)
    np.testing.assert_allclose(long_k, np.tile(distractor_key(q, K, BEST, "large-norm"), (6, 1)))
    assert np.linalg.norm(long_k[0]) > 2.9 * np.max(np.linalg.norm(K, axis=1))
    np.testing.assert_array_equal(long_v, 0.0)
    dup_k, dup_v = kind_rows("duplicate", q, K, V, BEST, st)
    np.testing.assert_array_equal(dup_k, np.tile(K[BEST], (6, 1)))
    np.testing.assert_array_equal(dup_v, np.tile(V[BEST], (6, 1)))
    sup_k, sup_v = kind_rows("superseded", q, K, V, BEST, st)
    np.testing.assert_array_equal(sup_k, dup_k)
    np.testing.assert_array_equal(sup_v, np.tile(-V[BEST], (6, 1)))


@pytest.mark.parametrize("kind", KINDS)
def test_the_bars_are_a_softmax_over_the_keys_and_the_inserted_rows(kind):
    st = ContextLabState(kind=kind, k=5, k_max=9)
    d = data(st)
    assert d.message == "" and d.best_label == KEYS[BEST]
    ek, ev = kind_rows(kind, Q[1], K, V, BEST, st)
    logits = np.concatenate([LOGITS, ek[:5] @ Q[1] / TRACE.divisor])
    w = softmax(logits)
    np.testing.assert_allclose(d.bars.weights, w, rtol=0, atol=1e-12)
    assert d.bars.labels == (*KEYS, "d1", "d2", "d3", "d4", "d5")
    assert list(d.bars.role) == [1 if j == BEST else 0 for j in range(5)] + [2] * 5
    c = d.chosen
    assert c.kind == kind and c.best_weight.shape == (10,)
    assert c.best_weight[5] == pytest.approx(w[BEST], abs=1e-12)
    out = w @ np.vstack([V, ev[:5]])
    assert c.shift[5] == pytest.approx(np.linalg.norm(out - TRACE.output[1]), abs=1e-12)
    assert c.best_weight[0] == pytest.approx(TRACE.weights[1, BEST], abs=1e-12)
    assert fmt_fixed(w[BEST], 3) in d.summary


def test_all_four_kinds_are_swept_and_duplicates_keep_the_fact_weight():
    d = data(ContextLabState(kind="duplicate", k=3, k_max=20))
    assert tuple(c.kind for c in d.curves) == KINDS
    dup = d.chosen
    w0 = dup.best_weight[0]
    k = np.arange(21)
    np.testing.assert_allclose(dup.best_weight, w0 / (1 + k * w0), atol=1e-12)
    np.testing.assert_allclose(dup.fact_weight, (1 + k) * w0 / (1 + k * w0), atol=1e-12)
    assert all(c.fact_weight is None for c in d.curves if c.kind != "duplicate")
    sup = next(c for c in d.curves if c.kind == "superseded")
    np.testing.assert_allclose(sup.best_weight, dup.best_weight, atol=1e-15)
    # a superseded fact moves the output further than the duplicate does: its value differs
    assert np.all(sup.shift[1:] > dup.shift[1:])


def test_the_verdicts_carry_the_numbers_at_the_end_of_the_sweep():
    d = data(ContextLabState(kind="superseded", k=4, k_max=16))
    by = {c.kind: c for c in d.curves}
    assert by["noisy"].verdict.startswith("16 look-alikes")
    assert fmt_fixed(by["duplicate"].best_weight[16], 3) in by["duplicate"].verdict
    assert fmt_fixed(by["duplicate"].best_weight[0], 3) in by["duplicate"].verdict
    assert "answer changes" in by["superseded"].verdict
    assert "outscores" in by["high-norm"].verdict  # 3x the longest key, 50° off the query
    # the same verdicts at any k: only the sweep's settings change them
    d0 = data(ContextLabState(kind="superseded", k=0, k_max=16))
    assert [c.verdict for c in d0.curves] == [c.verdict for c in d.curves]


def test_a_query_with_no_legal_key_has_nothing_to_disturb():
    # attention() refuses such a mask; a trace built some other way could still carry one
    trace = dataclasses.replace(TRACE, mask=np.zeros((3, 5), dtype=bool))
    d = data(trace=trace)
    assert "may read no key" in d.message and d.curves == () and d.bars is None


def test_masked_keys_are_marked_and_get_no_weight():
    mask = np.ones((3, 5), dtype=bool)
    other = (BEST + 1) % 5
    mask[1, other] = False
    d = data(ContextLabState(k=2), trace=direct_trace(Q, K, V, mask=mask))
    assert d.bars.role[other] == 3 and d.bars.weights[other] == 0.0


def test_overflowing_scores_are_explained_not_drawn():
    # one non-zero coordinate each, so every q · k is a single product that overflows to +inf
    # or -inf: summed over several coordinates, inf - inf gives NaN on some BLAS kernels
    # (OpenBLAS's Prescott) and +-inf on others, and the trace itself refuses NaN
    q, k = np.zeros_like(Q), np.zeros_like(K)
    q[:, 0] = 1e200
    k[:, 0] = 1e200 * np.where(np.arange(len(K)) % 2 == 0, 1.0, -1.0)
    d = data(trace=direct_trace(q, k, V))
    assert "overflow" in d.message and d.curves == ()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"k_max": 0}, "K must lie between 1 and 256, got 0"),
        ({"k_max": 300}, "K must lie between 1 and 256, got 300"),
        ({"k": 40}, "k must lie between 0 and 32, got 40"),
        ({"k": -1}, "k must lie"),
        ({"noise": -0.5}, "noise must lie between 0 and 10, got -0.5"),
        ({"noise": float("nan")}, "noise"),
        ({"seed": -3}, "seed must lie"),
        ({"kind": "bogus"}, "distractor kind must be one of noisy copies"),
        ({"k": 2.5}, "k must be a whole number"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(change, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        SETTINGS.check(dataclasses.replace(ContextLabState(), **change))
    assert SETTINGS.check(ContextLabState()) == ContextLabState()
