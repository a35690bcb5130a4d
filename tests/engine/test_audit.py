"""The audit catches real faults, not only passes on a correct engine."""

from __future__ import annotations

import numpy as np

import attnsim.engine.audit as audit
from attnsim.engine.audit import run_audit
from attnsim.resources import resolve_scenario


def failing(checks):
    return {c.name for c in checks if not c.passed}


def test_every_check_passes_on_a_correct_state():
    assert failing(run_audit(resolve_scenario("tired-cat").replace(mask="causal"))) == set()


def test_zero_masking_fails_exactly_the_checks_it_breaks():
    sc = resolve_scenario("bank-river").replace(mask_value=0.0)
    # forbidden keys take weight, so the legal ones no longer sum to 1; the rest still hold
    assert failing(run_audit(sc)) == {
        "masked keys get exactly 0",
        "weights over legal keys sum to 1",
    }


def test_a_broken_engine_is_caught(monkeypatch):
    real = audit.attention

    def leaky_values(q, k, v, **kw):
        # a bug that lets the values leak into the route
        _, w = real(q, k, v, **kw)
        w = w * (1 + 1e-3 * np.tanh(v[:, :1].T))
        return w @ v, w

    monkeypatch.setattr(audit, "attention", leaky_values)
    bad = failing(run_audit(resolve_scenario("routing-lab").replace(mask="none")))
    assert "swapping values keeps the route" in bad
    assert "weights over legal keys sum to 1" not in bad  # that one reads the real trace


def test_a_wrong_shift_invariance_is_caught(monkeypatch):
    def bad_softmax(x, axis=-1):
        z = np.asarray(x, dtype=float)
        e = np.exp(np.clip(z, -50, 50) / 50.0)  # not shift-invariant
        return e / e.sum(axis=axis, keepdims=True)

    monkeypatch.setattr(audit, "softmax", bad_softmax)
    assert "adding a constant to every logit" in failing(run_audit(resolve_scenario("river-bank")))


def _tied_scenario():
    from attnsim.engine.scenario import Scenario

    # k1 and k2 have the same score q·k in exact arithmetic (k2 = k1 + a vector orthogonal
    # to q); in floating point the two dot products differ in the last bits, and at a low
    # temperature the old check counted that rounding as "order reversals".
    q = [-62.0, -100.5, 36.7, 79.5]
    K = [[-4.8, -2.1, -5.8, 5.3], [74.7, -2.1, -5.8, 67.3], [-1.1, 0.4, 0.4, -0.4]]
    return Scenario(
        name="tied", tokens=("k1", "k2", "k3"), mode="direct", query_tokens=("q",),
        Q=[q], K=K, V=K, scale=False, temperature=0.1,
    )  # fmt: skip


def test_tied_scores_are_not_a_reversal():
    sc = _tied_scenario()
    logits = sc.compute().heads[0].logits[0]
    assert abs(logits[0] - logits[1]) <= 1e-9 * abs(logits[0])
    assert failing(run_audit(sc)) == set()


def test_a_real_reversal_is_still_caught(monkeypatch):
    real = audit._recompute

    def reversed_at_other_temperatures(tr, q, k, v, mask, temperature=None):
        out, w = real(tr, q, k, v, mask, temperature)
        if temperature is not None and temperature != tr.temperature:
            w = w[:, ::-1].copy()  # a softmax that orders the keys backwards
        return out, w

    monkeypatch.setattr(audit, "_recompute", reversed_at_other_temperatures)
    sc = resolve_scenario("river-bank")
    assert "temperature keeps the ranking" in failing(run_audit(sc))
    assert "temperature keeps the ranking" in failing(run_audit(_tied_scenario()))


def test_ranking_reversals_allow_ties_either_way():
    logits = np.array([2.0, 1.0, 1.0 + 1e-15, 0.0])
    tie = 1e-12
    assert audit.ranking_reversals(logits, np.array([0.6, 0.15, 0.15, 0.1]), tie) == 0
    assert audit.ranking_reversals(logits, np.array([0.6, 0.16, 0.14, 0.1]), tie) == 0
    assert audit.ranking_reversals(logits, np.array([0.6, 0.14, 0.16, 0.1]), tie) == 0
    # a clearly lower logit with a clearly higher weight is a reversal
    assert audit.ranking_reversals(logits, np.array([0.1, 0.15, 0.15, 0.6]), tie) == 2
    # rounding-sized disagreement is not
    w = np.array([0.5, 0.25, 0.25 * (1 + 1e-15), 0.0])
    assert audit.ranking_reversals(np.array([3.0, 2.0, 1.0, 0.0]), w, 0.0) == 0
