"""The view-model of the Real model panel's second part: the preset pairs, and the compare,
patching, lens and flow jobs with their progress, Cancel and refusals (real model files)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.viewmodels import real_heads as rh


def _quiet(seen=None):
    return (lambda f: None) if seen is None else seen.append


def test_the_presets_pair_texts_of_equal_token_length_where_they_patch():
    from attnsim.engine.models import load_smollm2

    m = load_smollm2()
    for key in ("names", "repeat"):
        pair = rh.PAIRS[key]
        assert len(m.encode(pair.a)) == len(m.encode(pair.b)), key
        assert all(len(m.encode(t)) == 1 for t in pair.next_tokens)
    bank = rh.PAIRS["bank"]
    assert "bank" in bank.a and "bank" in bank.b


@pytest.mark.parametrize("key", ["names", "repeat"])
def test_the_pairs_with_a_repeated_word_compare_its_last_occurrence(key):
    # "to" ends the names pair (its next word is the name), "seven" is repeated in A and
    # stands once in B: the first "to" ("went to the store") compared nothing of interest
    pair = rh.PAIRS[key]
    r = rh.compare_job("smollm2", pair.a, pair.b, pair.token, _quiet(), lambda: False)
    c = r.comparison
    assert c.position_a == len(r.pieces_a) - 1 == c.position_b, (c.position_a, c.position_b)
    assert pair.token in r.pieces_a[c.position_a] and pair.token in r.pieces_b[c.position_b]


def test_compare_job_finds_the_token_in_both_texts():
    pair = rh.PAIRS["bank"]
    seen: list[float] = []
    r = rh.compare_job("minilm", pair.a, pair.b, "bank", seen.append, lambda: False)
    assert r.pieces_a[r.comparison.position_a] == "bank" == r.pieces_b[r.comparison.position_b]
    assert r.comparison.cosine.shape == (7,) and seen[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="in text B, the token 'bank' is not in the text"):
        rh.compare_job("minilm", pair.a, "a river", "bank", _quiet(), lambda: False)
    with pytest.raises(ValueError, match="the text is empty"):
        rh.compare_job("minilm", "", pair.b, "bank", _quiet(), lambda: False)


def test_patch_job_on_minilm_gives_fractions_and_cancels():
    clean, corrupt = "The river bank was muddy.", "The money bank was closed."
    seen: list[float] = []
    r = rh.patch_job("minilm", clean, corrupt, seen.append, lambda: False, token="bank")
    assert r.heads.shape == (6, 12) and r.resid.shape == (6, len(r.pieces))
    np.testing.assert_allclose(r.heads, r.patching.restored(r.patching.heads))
    assert (np.diff(seen) >= 0).all() and seen[-1] == pytest.approx(1.0)
    with pytest.raises(rh.JobCancelledError):
        rh.patch_job("minilm", clean, corrupt, _quiet(), lambda: True, token="bank")
    with pytest.raises(ValueError, match="same length in tokens"):
        rh.patch_job("minilm", clean, "A bank.", _quiet(), lambda: False, token="bank")
    with pytest.raises(ValueError, match="choose the token"):
        rh.patch_job("minilm", clean, corrupt, _quiet(), lambda: False)


def test_lens_and_flow_jobs():
    r = rh.lens_job("The capital of France is", " Paris", _quiet(), lambda: False, k=3)
    assert r.top_pieces[-1][-1] == " Paris" and r.lens.top_ids.shape == (30, 5, 3)
    assert r.lens.token_probs[-1, -1] > 0.3
    f = rh.flow_job("minilm", "The river bank was muddy.", "bank", _quiet(), lambda: False)
    assert f.pieces[f.flow.position] == "bank"
    assert f.flow.rollout.sum() == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="in the text, the token 'cat'"):
        rh.flow_job("minilm", "The river bank.", "cat", _quiet(), lambda: False)


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_two_text_pages_and_the_runs_share_one_copy_of_each_model(model):
    # Two caches once held two SmolLM2s: half a gigabyte more once the monkey pressed both Runs.
    from attnsim.viewmodels import real_model as rm

    ours, _ = rh.load_then(model, _quiet())
    assert ours is rm.loaded(model)
    ids, pieces = rh.tokenize(model, ours, "the river bank")
    ids_rm, pieces_rm = rm.tokenize(model, "the river bank")
    assert np.array_equal(ids, ids_rm) and pieces == pieces_rm
