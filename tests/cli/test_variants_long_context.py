"""``attnsim variants --json`` carries the long-context lab's sweep for the first head's
receiving query: the four kinds, their ends, and their difference from a plain softmax."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsim.engine.attention import softmax
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.context_lab import KINDS

pytestmark = pytest.mark.numeric  # computed numbers: checked again on the second BLAS kernel


def test_the_json_holds_each_kinds_sweep_checked_against_a_softmax(attnsim):
    r = attnsim("variants", "--scenario", "river-bank", "--json")
    assert r.returncode == 0, r.stderr
    lc = json.loads(r.stdout)["long_context"]
    sc = resolve_scenario("river-bank")
    assert (lc["head"], lc["query"], lc["k_max"]) == (0, sc.receiving, 64)
    assert [k["kind"] for k in lc["kinds"]] == list(KINDS)
    head = sc.compute().heads[0]
    w0 = float(np.max(head.weights[sc.receiving]))
    by = {k["kind"]: k for k in lc["kinds"]}
    for k in lc["kinds"]:
        assert k["best_weight_0"] == pytest.approx(w0, abs=1e-12)
        assert 0 <= k["max_abs_diff"] < 1e-12
        assert k["best_weight_k_max"] < k["best_weight_0"]
    # 64 exact copies of the fact: the closed form w0 / (1 + 64 w0)
    assert by["duplicate"]["best_weight_k_max"] == pytest.approx(w0 / (1 + 64 * w0), abs=1e-12)
    assert by["superseded"]["shift_k_max"] > by["duplicate"]["shift_k_max"]
    # the reference itself: the best key against 64 copies of it, one softmax
    logits = head.logits[sc.receiving]
    b = int(np.argmax(logits))
    w = softmax(np.concatenate([logits, np.full(64, logits[b])]))
    assert by["duplicate"]["best_weight_k_max"] == pytest.approx(w[b], abs=1e-12)
