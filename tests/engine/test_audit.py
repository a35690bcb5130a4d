"""The audit catches real faults, not only passes on a correct engine."""

from __future__ import annotations

import numpy as np

import attnsim.engine.audit as audit
from attnsim.engine.audit import audit_summary, run_audit
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
    from attnsim.engine.scenario.model import random_scenario

    big = random_scenario(64, 64)  # 64 x 64 x 64 products: beyond what the plain loop runs on
    checks = run_audit(big)
    skipped = [c for c in checks if c.skipped]
    assert [c.name for c in skipped] == ["reference loop = vectorised engine"]
    passed, ran, n_skipped = audit_summary(checks)
    assert (ran, n_skipped) == (len(checks) - 1, 1) and passed == ran
    small = audit_summary(run_audit(resolve_scenario("tired-cat")))
    assert small[2] == 0 and small[0] == small[1]
