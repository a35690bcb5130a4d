"""The score scale sweep: every score multiplied by a factor before the softmax, which is the
temperature 1 / scale. Parsing and its refusals, the state and caption of every frame, the
dialog's choice, and the reference text's claim that a larger scale sharpens the weights."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.app.animation_dialog import QUANTITY_NAMES, AnimationDialog
from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE
from attnsim.export.frames import FrameRenderer, frame_plan
from attnsim.export.sweeps import MAX_SCALE, MIN_SCALE, QUANTITIES, Sweep, parse_sweep
from attnsim.resources import resolve_scenario

SIZE = (320, 240)
BANK = 2  # the river-bank preset's tokens: the, river, bank


@pytest.fixture
def sc():
    return resolve_scenario("river-bank")


def test_the_scale_is_a_quantity_with_the_temperatures_range_turned_over(sc):
    assert "scale" in QUANTITIES and "scale" in QUANTITY_NAMES
    assert (MIN_SCALE, MAX_SCALE) == (1 / MAX_TEMPERATURE, 1 / MIN_TEMPERATURE)
    assert (MIN_SCALE, MAX_SCALE) == (0.001, 1000)
    extreme = parse_sweep("scale:0.001:1000:3", sc)  # both bounds are allowed
    assert extreme.scenario_at(sc, 0.001).temperature == pytest.approx(MAX_TEMPERATURE)
    assert extreme.scenario_at(sc, 1000).temperature == pytest.approx(MIN_TEMPERATURE)


def test_a_scale_sweep_parses_in_even_log_steps(sc):
    sweep = parse_sweep("scale:0.1:5:60", sc)
    assert sweep == Sweep("scale", 0.1, 5.0, 60)
    v = sweep.values()
    assert len(v) == 60
    assert v[0] == pytest.approx(0.1, rel=1e-12) and v[-1] == pytest.approx(5.0, rel=1e-12)
    np.testing.assert_allclose(v[1:] / v[:-1], 50 ** (1 / 59) * np.ones(59), rtol=1e-12)
    down = parse_sweep(" SCALE:4:0.25:5 ", sc).values()  # downwards, any case, spaces around
    np.testing.assert_allclose(down, [4, 2, 1, 0.5, 0.25], rtol=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scale:0:5:10", "the score scale (what every score is multiplied by before the "
                         "softmax) runs from 0.001 to 1000, got 0"),
        ("scale:-1:5:10", "runs from 0.001 to 1000, got -1"),
        ("scale:1:-2:10", "runs from 0.001 to 1000, got -2"),
        ("scale:0.0005:5:10", "runs from 0.001 to 1000, got 0.0005"),
        ("scale:1:1001:10", "runs from 0.001 to 1000, got 1001"),
        ("scale:2:2:10", "a sweep needs two different ends, got 2 twice"),
        ("scale:1:inf:10", "a sweep starts and ends at finite numbers"),
        ("scale:1:5", "a scale sweep is written scale:START:END:FRAMES"),
        ("scale:a:5:10", "START and END are numbers (scale:START:END:FRAMES)"),
        ("scale:1:5:1", "a sweep has 2 to 2000 frames, got 1"),
        ("scales:1:5:10", "sweep one of temperature, scale, vector, wq, k"),
    ],
)  # fmt: skip
def test_a_bad_scale_range_is_refused_in_a_sentence(sc, text, message):
    with pytest.raises(ValueError) as got:
        parse_sweep(text, sc)
    assert message in str(got.value)


def test_every_frame_is_the_temperature_one_over_the_scale(make_wb, sc):
    user = make_wb("river-bank")
    sweep = parse_sweep("scale:0.1:5:7", user.scenario)
    renderer = FrameRenderer(user, "heatmap", SIZE)
    try:
        plan = frame_plan(renderer, sweep)
    finally:
        renderer.close()
    assert len(plan) == 7
    temps = np.array([frame_sc.temperature for frame_sc, _, _ in plan])
    np.testing.assert_allclose(temps, 1 / sweep.values(), rtol=1e-12)
    assert temps[0] == pytest.approx(10.0, rel=1e-12)  # score × 0.1
    assert temps[-1] == pytest.approx(0.2, rel=1e-12)  # score × 5
    assert np.all(np.diff(temps) < 0)
    assert plan[0][2] == "score × 0.1" and plan[-1][2] == "score × 5"
    # only the temperature moves: the rest of the scenario is the user's
    assert all(np.array_equal(frame_sc.X, sc.X) for frame_sc, _, _ in plan)
    assert user.scenario.temperature == sc.temperature and user.undo_stack.count() == 0


def test_captions_use_three_significant_digits(sc):
    sweep = Sweep("scale", 0.1, 5.0, 3)
    assert sweep.caption(0.25, sc) == "score × 0.25"
    assert sweep.caption(5.0, sc) == "score × 5"
    assert sweep.caption(1 / 3, sc) == "score × 0.333"
    assert sweep.caption(123.456, sc) == "score × 123"


def test_a_larger_scale_puts_more_weight_on_bank_itself(sc):
    """The reference: multiply the scores by 5 and the largest score gets a larger share;
    by 0.1 and the weights approach a uniform average."""
    sweep = Sweep("scale", 0.1, 5.0, 3)
    row = {s: sweep.scenario_at(sc, s).compute().heads[0].weights[BANK] for s in (0.1, 1, 5)}
    assert int(np.argmax(row[1])) == BANK  # bank's largest score is its own
    assert row[5][BANK] > row[1][BANK] + 0.3  # 0.776 against 0.428
    assert row[5][BANK] == pytest.approx(0.7763, abs=1e-3)
    assert row[1][BANK] == pytest.approx(0.4276, abs=1e-3)
    # the same as the scores multiplied by hand: the temperature is 1 / 5
    np.testing.assert_allclose(row[5], sc.replace(temperature=0.2).compute().heads[0].weights[BANK])
    assert np.ptp(row[0.1]) < 0.02  # nearly uniform: every weight close to 1/3
    np.testing.assert_allclose(row[0.1], np.full(3, 1 / 3), atol=0.01)


def test_the_dialog_offers_the_score_scale(qtbot, sc):
    panels = {"heatmap": "Scores and weights"}
    dialog = AnimationDialog(panels, "heatmap", sc)
    qtbot.addWidget(dialog)
    names = [dialog.quantity_box.itemText(i) for i in range(dialog.quantity_box.count())]
    assert QUANTITY_NAMES["scale"] in names
    assert "before the softmax" in QUANTITY_NAMES["scale"]
    dialog.quantity_box.setCurrentIndex(dialog.quantity_box.findData("scale"))
    assert dialog.start_box.isEnabled() and dialog.frames_box.isEnabled()
    assert dialog.choice().sweep == Sweep("scale", 0.1, 5.0, 60)
    dialog.start_box.setValue(0.0)
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted
    assert dialog.refusal.text() == (
        "The score scale (what every score is multiplied by before the softmax) runs from "
        "0.001 to 1000, got 0"
    )
