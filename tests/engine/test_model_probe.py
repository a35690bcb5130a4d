"""The SmolLM2 induction probe (:func:`attnsim.engine.models.induction_probe`), the one the
Real model panel and ``attnsim model probe`` both run, and the first load's progress.

The reference numbers are what ``attnsim model probe`` printed before the probe moved into the
engine (seed 0, 4 sequences of 20 tokens): they are compared to the printed decimals, within
half of the last printed digit (5e-4), so that a change of summation order in the BLAS passes
and any other change of the experiment fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.models import (
    PROBE_BATCH,
    PROBE_HALF,
    PROBE_SEED,
    induction_probe,
    load_smollm2,
    smollm2,
)

PRINTED = 5e-4  # half of the third decimal the command line prints
TOP = [((18, 6), 0.883), ((17, 4), 0.738), ((17, 3), 0.700), ((17, 5), 0.657)]
LOSSES = {"none": 3.657, "top": 8.463, "random": 3.750}


@pytest.fixture(scope="module")
def model() -> smollm2.SmolLM2:
    return load_smollm2()


@pytest.fixture(scope="module")
def reference(model):
    fractions: list[float] = []
    return induction_probe(model, progress=fractions.append), fractions


def test_the_defaults_are_the_command_lines_experiment():
    assert (PROBE_SEED, PROBE_HALF, PROBE_BATCH) == (0, 20, 4)


def test_the_probe_gives_the_reference_heads_and_losses(reference):
    r, _ = reference
    assert (r.seed, r.half, r.batch) == (0, 20, 4)
    assert r.induction.shape == r.previous_token.shape == (30, 9)
    top = r.top(4)
    assert [(la, he) for la, he, _ in top] == [h for h, _ in TOP]
    for (_, _, score), (_, want) in zip(top, TOP, strict=True):
        assert score == pytest.approx(want, abs=PRINTED)
    assert [a.kind for a in r.ablations] == ["none", "top", "random"]
    for a in r.ablations:
        assert a.repeated_loss == pytest.approx(LOSSES[a.kind], abs=PRINTED)
    none, top_row, random_row = r.ablations
    assert none.heads == () and r.base_loss == none.repeated_loss
    assert top_row.heads == tuple(h for h, _ in TOP)
    # four other heads, drawn after the sequences from the same generator
    assert random_row.heads == ((10, 8), (15, 7), (29, 3), (13, 3))
    assert not set(random_row.heads) & set(top_row.heads)


def test_progress_runs_layer_by_layer_to_the_end(reference):
    _, fractions = reference
    assert len(fractions) == 3 * 4 * 30  # three runs of four sequences, 30 layers each
    assert np.all(np.diff(fractions) > 0) and fractions[-1] == pytest.approx(1.0, abs=1e-12)


def test_scores_are_the_mean_of_each_sequences_scores(model, reference):
    r, _ = reference
    rng = np.random.default_rng(0)
    seqs = [smollm2.repeated_random_ids(20, rng) for _ in range(4)]
    each = [smollm2.probe_scores(model.forward(ids).weights, 20) for ids in seqs]
    np.testing.assert_allclose(r.induction, np.mean([s[1] for s in each], axis=0), atol=1e-6)
    np.testing.assert_allclose(r.previous_token, np.mean([s[0] for s in each], axis=0), atol=1e-6)


class StopError(Exception):
    """What a cancel raises from the progress callback (the panel's RunCancelledError)."""


def test_an_exception_from_progress_stops_the_probe(model):
    calls = []

    def cancel(fraction: float) -> None:
        calls.append(fraction)
        if len(calls) == 5:
            raise StopError

    with pytest.raises(StopError):
        induction_probe(model, half=2, batch=1, progress=cancel)
    assert len(calls) == 5


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"seed": -1}, "seed must be"),
        ({"half": 1}, r"half must lie in \[2, 256\]"),
        ({"batch": 0}, r"batch must lie in \[1, 64\]"),
        ({"top": 0}, r"top must lie in \[1, 135\]"),
    ],
)
def test_bad_settings_are_refused_naming_them(model, kwargs, says):
    with pytest.raises(ValueError, match=says):
        induction_probe(model, **kwargs)


def test_a_first_load_reports_progress_from_its_start(tmp_path):
    # the cache build (seconds): the GGUF reader's part counts its strings, the rest its tensors
    fractions: list[float] = []
    m = load_smollm2(cache=tmp_path, progress=fractions.append)
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert np.all(np.diff(fractions) >= 0)
    reading = [f for f in fractions if 0.0 < f <= smollm2._READ_SHARE]
    assert len(reading) >= 20  # the reader's seconds show as steps, not one stall at 0 %
    assert len(fractions) > 270  # and so does every one of the 270 layer tensors after it
    assert max(np.diff(fractions)) < 0.025  # no step moves the bar by more than 2.5 %
    later: list[float] = []
    assert load_smollm2(cache=tmp_path, progress=later.append).config == m.config
    assert later == []  # a cache already built only memory-maps: nothing to report
