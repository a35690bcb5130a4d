"""The four-causes experiment in the engine: numbers and enums only, no sentences."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from attnsim.engine import routing
from attnsim.engine.routing import CauseTrial, Effect, Finding, cause_trials, synthetic_route
from attnsim.viewmodels.routing_lab import four_causes

Q = np.array([1.0, 0.0])
K = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
V = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])


def _by_key(trials):
    return {t.key: t for t in trials}


def test_trials_carry_no_text():
    trials = cause_trials(synthetic_route(Q, K, V, d=64))
    assert [t.key for t in trials] == ["norm", "temperature", "dimension", "direction"]
    for t in trials:
        assert isinstance(t, CauseTrial) and isinstance(t.finding, Finding)
        assert isinstance(t.effect, Effect)
        values = [getattr(t, f.name) for f in dataclasses.fields(t)]
        text = [v for v in values if isinstance(v, str) and not isinstance(v, Effect)]
        assert text == [t.key], f"{t.key} carries text {text}"


def test_findings_follow_the_route():
    unscaled = _by_key(cause_trials(synthetic_route(Q, K, V, d=64)))
    assert unscaled["dimension"].finding is Finding.UNSCALED_GROWTH
    assert unscaled["dimension"].setting == 16.0 and unscaled["dimension"].implicated
    scaled = _by_key(cause_trials(synthetic_route(Q, K, V, d=64, scale=True)))
    assert scaled["dimension"].finding is Finding.SCALING_CANCELS
    cold = _by_key(cause_trials(synthetic_route(Q, K, V, temperature=0.2)))
    assert cold["temperature"].finding is Finding.TEMPERATURE_SHARPENS
    assert cold["temperature"].ranking_kept and cold["temperature"].setting == pytest.approx(0.8)
    one = synthetic_route(Q, K, V, mask=np.array([False, True, False]))
    assert {t.finding for t in cause_trials(one)} == {Finding.MASK_DECIDES}
    zero = _by_key(cause_trials(synthetic_route(np.zeros(2), K, V)))
    assert zero["direction"].finding is Finding.ZERO_QUERY


def test_effect_enum_compares_as_its_word():
    # the view and its tests read effects as words; the enum keeps that spelling
    assert Effect.BROADER == "broader" and f"{Effect.SHARPER}" == "sharper"


def test_the_view_words_every_trial_with_the_same_numbers():
    route = synthetic_route(Q, K, V, d=64, temperature=0.5)
    trials, causes = cause_trials(route), four_causes(route, ["A", "B", "C"])
    for t, c in zip(trials, causes, strict=True):
        assert (t.key, t.top_before, t.top_after, t.effect, t.implicated) == (
            c.key,
            c.top_before,
            c.top_after,
            c.effect,
            c.implicated,
        )
        assert c.verdict and c.perturbation


def test_the_engine_module_holds_no_verdict_sentences():
    src = Path(routing.__file__).read_text(encoding="utf-8")
    for phrase in ("the mask alone decides", "norms are not the cause", "alignment decides"):
        assert phrase not in src
