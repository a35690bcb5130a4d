"""The induction lab's view-model: settings, patterns, scores, ablations, circuits, scenario."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnsim.engine.induction import init_params
from attnsim.viewmodels.induction_lab import (
    InductionLabState,
    ablation_view,
    circuit_view,
    composition_view,
    distinct,
    head_scenario,
    lab_view,
    preset_params,
    sample_tokens,
)

SMALL = InductionLabState(n_layers=2, n_heads=2, d_model=16, d_vocab=8, half_len=4)


def test_state_refuses_bad_settings_naming_the_field():
    with pytest.raises(ValueError, match="heads must lie between 1 and 8, got 9"):
        InductionLabState(n_heads=9)
    with pytest.raises(ValueError, match="learning rate"):
        InductionLabState(lr=0.0)
    with pytest.raises(ValueError, match="multiple"):
        InductionLabState(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="preset"):
        InductionLabState(preset="nope")
    s = SMALL.with_head_toggled(1, 0).with_head_toggled(0, 1)
    assert s.ablated == ((0, 1), (1, 0))
    assert s.with_head_toggled(1, 0).ablated == ((0, 1),)
    assert s.training_key() == SMALL.training_key()  # ablation never retrains


def test_lab_view_patterns_are_causal_rows_and_scores_in_range():
    params = init_params(SMALL.config(), 0, dtype=np.float64)
    v = lab_view(params, SMALL)
    n = 2 * SMALL.half_len + 1
    assert v.patterns.shape == (2, 2, n, n)
    assert np.allclose(v.patterns.sum(axis=-1), 1.0)
    assert np.allclose(np.triu(v.patterns, 1), 0.0)
    assert v.labels[0] == "BOS" and v.labels[1:5] == v.labels[5:9]
    assert ((v.induction >= 0) & (v.induction <= 1)).all()
    assert v.base_repeated_loss == v.repeated_loss  # nothing ablated


def test_ablating_a_head_changes_its_pattern_rows_downstream_and_the_loss():
    params = init_params(SMALL.config(), 0, dtype=np.float64)
    base = lab_view(params, SMALL)
    ablated = lab_view(params, SMALL.with_head_toggled(0, 0))
    assert np.allclose(ablated.patterns[0], base.patterns[0])  # its own layer is unchanged
    assert not np.allclose(ablated.patterns[1], base.patterns[1])
    assert ablated.repeated_loss != pytest.approx(base.repeated_loss, abs=1e-9)
    assert ablated.base_repeated_loss == pytest.approx(base.repeated_loss)
    mean = lab_view(params, replace(SMALL, ablated=((0, 0),), ablation_mode="mean"))
    assert np.isfinite(mean.repeated_loss) and mean.repeated_loss != ablated.repeated_loss


def test_hand_built_preset_is_an_induction_circuit():
    state = InductionLabState(preset="hand_built")
    params = preset_params(state)
    v = lab_view(params, state)
    assert v.previous_token[0, 0] > 0.99  # layer 0 attends to the previous token
    assert v.induction[1, 0] > v.induction[0, 0] + 0.4
    assert v.repeated_loss < 0.5 * v.first_loss
    comp = composition_view(params)
    assert comp.scores is not None and comp.scores[0, 0] > 2 * comp.baseline
    table = ablation_view(params, state)
    zero_l1 = next(r for r in table.rows if (r.layer, r.head, r.mode) == (1, 0, "zero"))
    assert zero_l1.repeated_delta > 0.5


def test_skip_trigram_preset_has_no_repeats_and_one_layer():
    state = InductionLabState(preset="skip_trigram")
    params = preset_params(state)
    v = lab_view(params, state)
    assert v.patterns.shape[:2] == (1, 1) and np.isnan(v.induction).all()
    assert ablation_view(params, state) is None
    assert composition_view(params).scores is None
    c = circuit_view(params, state, 0, 0)
    assert c.vocab[0] == "keep" and c.qk.shape == (8, 8)
    assert sample_tokens(state)[1] == ("keep", "the", "door", "in")


def test_circuits_and_copying_score():
    params = init_params(SMALL.config(), 1, dtype=np.float64)
    c = circuit_view(params, SMALL, 1, 1)
    assert c.qk.shape == c.ov.shape == (8, 8) and -1 <= c.copying <= 1
    assert c.vocab[0] == "BOS" and c.vocab[3] == "3"


def test_head_scenario_is_the_head_on_the_sample():
    params = init_params(SMALL.config(), 0, dtype=np.float64)
    sc = head_scenario(params, SMALL, 1, 1)
    assert sc.mode == "direct" and sc.n_tokens == 2 * SMALL.half_len + 1
    assert len(set(sc.tokens)) == sc.n_tokens  # repeats told apart
    weights = sc.compute().heads[0].weights
    assert np.allclose(weights, lab_view(params, SMALL).patterns[1, 1], atol=1e-9)
    with pytest.raises(ValueError, match="L2H0"):
        head_scenario(params, SMALL, 2, 0)


def test_distinct_labels():
    assert distinct(["a", "b", "a", "a"]) == ("a", "b", "a 2", "a 3")


def test_the_hand_built_preset_is_exact_on_its_own_sequences():
    # its sequences used to repeat tokens inside a half (8 ids for halves of 8), so "what came
    # after this token last time" had two answers and the repeated-half loss was 1.46
    import attnsim.viewmodels.induction_lab as lab
    from attnsim.engine.induction import forward
    from attnsim.engine.induction_circuits import half_losses, head_scores

    state = lab.InductionLabState(preset="hand_built")
    tokens = lab.eval_tokens(state)
    halves = tokens[:, 1 : 1 + lab.HAND_BUILT_HALF]
    assert all(len(set(row)) == len(row) for row in halves.tolist())
    trace = forward(lab.preset_params(state), tokens)
    first, repeated = half_losses(trace, lab.HAND_BUILT_HALF)
    assert repeated < 1e-3 < 1.0 < first
    scores = head_scores(trace, lab.HAND_BUILT_HALF)
    assert scores.previous_token[0, 0] > 0.99 and scores.induction[1, 0] > 0.99


def test_the_drawn_sample_repeats_no_token_within_a_half_when_it_can():
    import attnsim.viewmodels.induction_lab as lab

    state = lab.InductionLabState()
    tokens, labels = lab.sample_tokens(state)
    half = tokens[1 : 1 + state.half_len].tolist()
    assert len(set(half)) == len(half)
    assert tokens[1 + state.half_len :].tolist() == half
    assert labels[0] == "BOS" and len(labels) == len(tokens)


def test_sending_a_head_ignores_ablations_of_heads_the_model_no_longer_has():
    # Ablate L0H3 of a 4-head model, switch to the hand-built preset (one head per layer):
    # sending L1H0 was refused with "ablated head L0H3 is not in the model".
    import attnsim.viewmodels.induction_lab as lab

    state = lab.InductionLabState(n_heads=4, ablated=((0, 3),))
    hand = replace(state, preset="hand_built")
    sc = lab.head_scenario(lab.preset_params(hand), hand, 1, 0)
    tokens = lab.sample_tokens(hand)[0]
    assert np.asarray(sc.Q).shape[0] == len(tokens)


def test_the_evaluation_batch_shrinks_with_the_model_and_keeps_the_default():
    from attnsim.viewmodels.induction_lab import EVAL_BATCH, EVAL_MIN, eval_batch, eval_tokens

    default = InductionLabState()
    assert eval_batch(default) == EVAL_BATCH == eval_tokens(default).shape[0]
    largest = replace(default, n_layers=3, n_heads=8, d_model=256, d_vocab=512, half_len=64)
    assert eval_batch(largest) == EVAL_MIN == eval_tokens(largest).shape[0]
    middle = replace(default, n_layers=3, n_heads=8, d_model=128, d_vocab=256, half_len=32)
    assert EVAL_MIN < eval_batch(middle) < EVAL_BATCH
    # a larger model never gets more sequences
    sizes = [eval_batch(replace(default, half_len=h)) for h in (16, 24, 32, 48, 64)]
    assert sizes == sorted(sizes, reverse=True)
    # the hand-built preset keeps its fixed batch
    hand = replace(largest, preset="hand_built")
    assert eval_tokens(hand).shape[0] == EVAL_BATCH
