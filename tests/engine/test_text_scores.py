"""The induction-style score on a text's own repeats (engine/models/scores.py): the probe's
score on a repeated random sequence, the tokens after every earlier occurrence, special tokens
left out, and a text with no repeat giving a defined "nothing" rather than NaN."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.models import probe_scores
from attnsim.engine.models.scores import induction_targets, text_induction


def causal_weights(rng: np.random.Generator, lead: tuple[int, ...], n: int) -> np.ndarray:
    w = np.tril(rng.random((*lead, n, n)) + 1e-3)
    return w / w.sum(axis=-1, keepdims=True)


def test_on_a_repeated_random_sequence_it_is_the_probes_induction_score():
    rng = np.random.default_rng(3)
    half = rng.permutation(1000)[:9]
    ids = np.concatenate([half, half])
    w = causal_weights(rng, (3, 4), ids.size)
    got = text_induction(w, ids)
    assert got.count == 9 and got.defined and got.score.shape == (3, 4)
    np.testing.assert_allclose(got.score, probe_scores(w, 9)[1], rtol=0, atol=1e-6)


def test_every_earlier_occurrence_points_at_the_token_after_it():
    found = induction_targets([1, 2, 1, 2, 1])
    np.testing.assert_array_equal(found.queries, [2, 3, 4])
    assert set(zip(*np.nonzero(found.targets), strict=True)) == {(2, 1), (3, 2), (4, 1), (4, 3)}
    w = np.zeros((5, 5))
    w[2, 1], w[3, 2], w[4, 1], w[4, 3] = 0.5, 0.25, 0.25, 0.5  # row 4: both targets, summed
    w[np.arange(5), 0] += 1 - w.sum(axis=1)
    got = text_induction(w, [1, 2, 1, 2, 1])
    assert got.score.shape == () and got.count == 3
    assert float(got.score) == pytest.approx((0.5 + 0.25 + 0.75) / 3, abs=1e-6)


def test_a_token_right_after_itself_has_nothing_to_copy_yet():
    # "A A": the token after the first A is the second A itself, not an earlier key
    found = induction_targets([7, 7, 8])
    assert found.count == 0 and not found.targets.any()


def test_special_tokens_never_count_as_a_repeat():
    ids = [101, 5, 102, 101, 6, 102]
    assert induction_targets(ids).count == 2  # [CLS] and [SEP] repeat
    assert induction_targets(ids, skip=[101, 102]).count == 0


def test_a_text_without_repeats_is_undefined_not_nan():
    rng = np.random.default_rng(0)
    w = causal_weights(rng, (2, 3), 6)
    got = text_induction(w, [1, 2, 3, 4, 5, 6])
    assert not got.defined and got.count == 0
    assert got.score.shape == (2, 3) and np.all(got.score == 0) and np.isfinite(got.score).all()


def test_the_weights_and_the_ids_must_agree():
    with pytest.raises(ValueError, match="over 4 tokens but 3 ids"):
        text_induction(np.eye(4), [1, 2, 3])
    with pytest.raises(ValueError, match=r"\(\.\.\., n, n\)"):
        text_induction(np.ones((2, 3)), [1, 2, 3])
