"""The induction lab as a lesson reads and sets it: its quantities, its edits, and a lesson
that trains the model and removes a head, checked headless."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnsim.engine.induction import InductionTrainer, forward
from attnsim.engine.induction_circuits import half_losses, head_scores
from attnsim.lessons import parse_lesson, solve
from attnsim.lessons.edits import Edit, apply_edits, apply_lab_edit, apply_lab_edits
from attnsim.lessons.labs import Labs, lab_values, trained_params
from attnsim.lessons.quantities import Quantity, resolve
from attnsim.lessons.shipped import panel_ids, preset
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.induction_lab import BOS, InductionLabState, eval_tokens

HAND = Labs(InductionLabState(preset="hand_built"))


def test_hand_built_values_read_the_circuit():
    v = lab_values(HAND)
    # the hand-built circuit is exact: its induction head looks one step right of the copy
    assert v["induction_score"] > 0.99 and v["previous_token_score"] > 0.99
    assert v["repeated_loss"] < 0.01 < 1.0 < v["first_loss"]
    assert v["heads_removed"] == 0.0


@pytest.mark.parametrize("head", [(0, 0), (1, 0)])
def test_removing_either_head_breaks_the_repeat(head):
    v = lab_values(HAND.with_ablated((head,)))
    assert v["heads_removed"] == 1.0
    assert v["repeated_loss"] > 2.0  # the prediction of the repeated half is gone
    if head == (0, 0):  # without the previous-token head the induction head has no keys
        assert v["induction_score"] < 0.5


def test_training_here_is_the_sessions_training_step_for_step():
    state = InductionLabState()
    trainer = InductionTrainer(
        state.config(), seed=state.seed, lr=state.lr, half_len=state.half_len, bos=BOS
    )
    for _ in range(30):
        trainer.step()
    ours = trained_params(state, 30)
    for k, v in trainer.params.items():
        np.testing.assert_allclose(ours[k], v, rtol=0, atol=1e-6)
    # and the values are the lab's own measurements of that model
    tr = forward(trainer.params, eval_tokens(state))
    first, rep = half_losses(tr, state.half_len)
    scores = head_scores(tr, state.half_len)
    v = lab_values(Labs(state, trained=30))
    assert v["first_loss"] == pytest.approx(first, rel=1e-5)
    assert v["repeated_loss"] == pytest.approx(rep, rel=1e-5)
    assert v["induction_score"] == pytest.approx(float(scores.induction[1:].max()), rel=1e-5)
    # given the session's weights, those are read instead of training here
    assert lab_values(Labs(state, trained=999), trainer.params)["first_loss"] == pytest.approx(
        first, rel=1e-5
    )


def test_skip_trigram_has_no_halves():
    v = lab_values(Labs(InductionLabState(preset="skip_trigram")))
    assert math.isnan(v["repeated_loss"]) and v["heads_removed"] == 0.0


def test_lab_edits():
    labs = apply_lab_edits(
        Labs(),
        (
            Edit("induction_preset", "hand_built"),
            Edit("ablate", [[1, 0], [0, 0], [1, 0]]),
            Edit("ablation_mode", "mean"),
            Edit("train", 40),
            Edit("train", 2),
        ),
    )
    assert labs.induction.preset == "hand_built"
    assert labs.induction.ablated == ((0, 0), (1, 0))
    assert labs.induction.ablation_mode == "mean"
    assert labs.trained == 42
    assert apply_lab_edit(labs, Edit("reset_training")).trained == 0
    assert apply_lab_edit(labs, Edit("ablate", [])).induction.ablated == ()
    # the scenario's edits leave the labs alone, and the lab edits the scenario
    sc = resolve_scenario("river-bank")
    assert apply_edits(sc, (Edit("train", 5),)) is sc
    assert apply_lab_edits(labs, (Edit("temperature", 2.0),)) is labs


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (Edit("ablate", [[2, 0]]), "has no head L2H0 (2 layers of 1 head)"),
        (Edit("ablate", [[1]]), "[layer, head] pairs"),
        (Edit("ablate", [[1, -1]]), "[layer, head] pairs"),
        (Edit("ablate", 3), "[layer, head] pairs"),
        (Edit("ablation_mode", "half"), '"zero" or "mean"'),
        (Edit("train", 0), "from 1 to 5000"),
        (Edit("train", 2.5), "from 1 to 5000"),
        (Edit("train", True), "from 1 to 5000"),
        (Edit("induction_preset", "big"), "one of train, hand_built, skip_trigram"),
    ],
)
def test_lab_edit_refusals(edit, problem):
    with pytest.raises(ValueError, match=".*".join(map(__import__("re").escape, [problem]))):
        apply_lab_edit(Labs(), edit)


def test_lab_quantities_resolve_without_tokens():
    sc = resolve_scenario("river-bank")
    r = resolve(Quantity("repeated_loss"), sc)
    assert r.from_lab and "repeated half" in r.words
    assert r.read(sc, sc.compute(), lambda: {"repeated_loss": 1.5}) == 1.5
    for bad, problem in [
        (Quantity("repeated_loss", of="bank"), "remove 'of'"),
        (Quantity("induction_score", head=2), "remove 'head'"),
        (Quantity("first_loss", axis=1), "remove 'axis'"),
    ]:
        with pytest.raises(ValueError, match=problem):
            resolve(bad, sc)


# a lesson that trains the lab's model, then removes a head (the panel's tests take it too)
TRAIN_AND_BREAK = (Path(__file__).parent / "train_and_break.toml").read_text(encoding="utf-8")


def test_a_lesson_that_trains_and_removes_a_head_solves():
    lesson = parse_lesson(TRAIN_AND_BREAK, "train-and-break.toml")
    steps = solve(lesson, preset, panel_ids())
    assert all(s.ok for s in steps), [s.lines for s in steps]
    assert "not passed at the start" in steps[0].lines[0]


def test_a_solution_that_does_not_train_enough_is_caught():
    text = TRAIN_AND_BREAK.replace("value = 500 }]", "value = 20 }]")
    steps = solve(parse_lesson(text, "short.toml"), preset, panel_ids())
    assert not steps[0].ok and "does NOT pass" in steps[0].lines[-1]


def test_the_labs_carry_over_from_step_to_step():
    from attnsim.lessons import step_states

    lesson = parse_lesson(TRAIN_AND_BREAK, "train-and-break.toml")
    states = step_states(lesson, preset)
    assert states[0].start_labs.trained == 0 and states[0].solved_labs.trained == 500
    assert states[1].start_labs == states[0].solved_labs
    assert states[1].solved_labs == replace(states[0].solved_labs).with_ablated(((1, 0),))


def test_the_lesson_check_benchmark_reads_every_shipped_challenge():
    from attnsim.benchmarks.lessons import lesson_check
    from attnsim.lessons import shipped_lessons

    (row,) = lesson_check(quick=True)
    graded = sum(1 for x in shipped_lessons() for s in x.steps if s.challenge is not None)
    assert row["challenges"] == graded >= 21  # the induction lesson's two lab challenges too
    assert row["slowest_median_ms"] > 0
