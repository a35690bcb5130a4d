"""The "Real model" view-model: its lab state, tokenising with the 512-token limit, runs with
ablations (reusing the unablated run), rankings, the induction probe and a head as a scenario.

Uses the installed model files (``attnsim models install``, which ``.ci/run`` runs); without
them the tests that run a model fail, saying so."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from attnsim.engine.models import head_metrics, load_smollm2, next_token_change
from attnsim.viewmodels import real_model as rm
from attnsim.viewmodels.real_model import RealModelState, RunCancelledError


@pytest.fixture
def installed():
    """Fail at once, naming the command, when a model's files are missing (not halfway
    through a run with a less helpful error)."""
    for m in rm.MODELS:
        if rm.missing_files(m):
            pytest.fail(rm.missing_files(m))


needs = {m: pytest.mark.usefixtures("installed") for m in rm.MODELS}


def quiet(state: RealModelState, base=None) -> rm.RunResult:
    return rm.run(state, lambda f: None, lambda: False, base)


def test_state_checks_and_normalises():
    with pytest.raises(ValueError, match="model"):
        RealModelState(model="gpt2")
    with pytest.raises(ValueError, match="metric"):
        RealModelState(metric="copying")
    with pytest.raises(ValueError, match="empty"):
        RealModelState(text="   ")
    with pytest.raises(ValueError, match=r"ablation must be one of .*'half'"):
        RealModelState(ablation="half")
    s = RealModelState(model="minilm", selected=(20, 8), ablated=((1, 2), (0, 3), (1, 2), (9, 0)))
    assert s.selected == (0, 0)  # layer 20 is SmolLM2's, not MiniLM's
    assert s.ablated == ((0, 3), (1, 2))  # sorted, once each, only this model's heads
    assert s.with_head_toggled(0, 3).ablated == ((1, 2),)


def test_missing_files_name_the_install_command(monkeypatch):
    def missing(model, name):
        raise rm.ModelFilesMissing(f"{model} is not installed: run attnsim models install")

    monkeypatch.setattr(rm, "model_file", missing)
    assert "attnsim models install" in rm.missing_files("smollm2")


@needs["minilm"]
def test_minilm_run_and_ablation_reusing_the_base():
    state = RealModelState(model="minilm", text="the cat sat on the mat")
    r = quiet(state)
    n = len(r.ids)
    assert r.weights.shape == (6, 12, n, n)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-5)
    assert r.labels[0] == "[CLS]" and "the 2" in r.labels  # distinct names for the scenario
    np.testing.assert_allclose(r.metrics["entropy"], head_metrics(r.weights).entropy, atol=1e-6)
    assert r.cosine == pytest.approx(1.0, abs=1e-5)  # nothing ablated: the run against itself
    ablated = RealModelState(model="minilm", text=state.text, ablated=((0, 1), (3, 4)))
    with_base, fresh = quiet(ablated, base=rm.unablated(r)), quiet(ablated)
    np.testing.assert_allclose(with_base.weights, fresh.weights, atol=1e-6)
    assert 0.5 < with_base.cosine < 1.0 - 1e-5
    assert rm.unablated(with_base) is None
    # zeroing layer 0's head 1 changes what layer 1 sees, not layer 0's own weights
    np.testing.assert_allclose(with_base.weights[0], r.weights[0], atol=1e-6)
    assert np.abs(with_base.weights[1] - r.weights[1]).max() > 1e-4


@needs["minilm"]
def test_tokenize_refuses_over_512_tokens_naming_the_count():
    with pytest.raises(ValueError, match=r"602 tokens; the panel runs at most 512"):
        rm.tokenize("minilm", "word " * 600)
    ids, pieces = rm.tokenize("minilm", "hello world")
    assert pieces == ("[CLS]", "hello", "world", "[SEP]") and len(ids) == 4


@needs["minilm"]
def test_cancel_stops_a_run_between_layers():
    seen = []
    with pytest.raises(RunCancelledError):
        rm.run(RealModelState(), seen.append, lambda: len(seen) >= 2)
    assert seen == pytest.approx([1 / 6, 2 / 6])


@needs["minilm"]
def test_ranking_orders_heads_by_metric():
    r = quiet(RealModelState(model="minilm"))
    prev = rm.ranking(r, "previous_token")
    assert len(prev) == 72 and prev[0][2] >= prev[1][2] >= prev[-1][2]
    assert prev[0][2] == pytest.approx(float(r.metrics["previous_token"].max()))
    ent = rm.ranking(r, "entropy")
    assert ent[0][2] == pytest.approx(float(r.metrics["entropy"].min()))  # sharpest first


@needs["minilm"]
def test_minilm_head_scenario_reproduces_the_head():
    r = quiet(RealModelState(model="minilm", text="a bird in the hand"))
    sc = rm.head_scenario(r, 2, 5)
    assert sc.mode == "direct" and sc.tokens == r.labels
    np.testing.assert_allclose(sc.compute().heads[0].weights, r.weights[2, 5], atol=1e-5)
    with pytest.raises(ValueError, match="L6H0"):
        rm.head_scenario(r, 6, 0)


@needs["smollm2"]
def test_smollm2_predictions_loss_change_and_causal_scenario():
    state = RealModelState(model="smollm2", text="One, two, three, four, five")
    r = quiet(state)
    probs = [p for _, p in r.top]
    assert len(probs) == 10 and probs == sorted(probs, reverse=True) and sum(probs) <= 1.0
    assert r.top[0][0] == ","  # after "five" in a count
    assert r.loss_delta == 0.0 and r.top == r.base_top
    abl = quiet(
        RealModelState(model="smollm2", text=state.text, ablated=((0, 0),)), rm.unablated(r)
    )
    model = load_smollm2()
    expect = next_token_change(
        model.forward(r.ids), model.forward(r.ids, head_mask={(0, 0): "zero"})
    ).loss_delta
    assert abl.loss_delta == pytest.approx(expect, abs=1e-4) and abl.loss_delta != 0.0
    sc = rm.head_scenario(r, 18, 6)
    assert sc.mask == "causal"
    np.testing.assert_allclose(sc.compute().heads[0].weights, r.weights[18, 6], atol=1e-5)


@needs["smollm2"]
def test_probe_is_the_command_lines_experiment_with_its_settings_in_words():
    from attnsim.cli.real_models import probe as cli_probe

    fractions: list[float] = []
    p = rm.probe(fractions.append, lambda: False)
    assert fractions[-1] == pytest.approx(1.0, abs=1e-12) and np.all(np.diff(fractions) > 0)
    top = p.top(4)
    assert {layer for layer, _, _ in top} <= {17, 18} and top[0][2] > 0.6
    base, top_zeroed, random_zeroed = (a.repeated_loss for a in p.ablations)
    # zeroing the top 4 induction heads costs the repeated half far more than 4 random heads
    assert top_zeroed - base > 2.0 and top_zeroed - base > 4 * abs(random_zeroed - base)
    assert rm.probe_settings(p) == (
        "4 sequences of 20 random tokens, each followed by its repeat (random seed 0)"
    )
    # `attnsim model probe` runs the same engine function: the same numbers to the bit
    d = cli_probe()
    assert (d["seed"], d["half_len"], d["batch"]) == (p.seed, p.half, p.batch)
    assert np.array_equal(np.array(d["induction"]), p.induction.astype(float))
    assert np.array_equal(np.array(d["previous_token"]), p.previous_token.astype(float))
    assert [row["repeated_loss"] for row in d["ablation"]] == [base, top_zeroed, random_zeroed]
    assert [[tuple(h) for h in row["heads"]] for row in d["ablation"]] == [
        list(a.heads) for a in p.ablations
    ]


@needs["smollm2"]
def test_cancel_stops_the_probe_between_layers():
    seen: list[float] = []
    with pytest.raises(RunCancelledError):
        rm.probe(seen.append, lambda: len(seen) >= 3)
    assert len(seen) == 3


def test_a_first_load_gives_the_first_part_of_the_progress(monkeypatch):
    # a cache build reports from its start; a model in memory leaves the progress to the run
    def building(progress=None):
        for f in (0.0, 0.5, 1.0):
            progress(f)
        return "model"

    from attnsim.engine.models import loaded as one_copy

    monkeypatch.setattr(one_copy, "_models", {})
    monkeypatch.setattr(one_copy, "_load", lambda model, progress: building(progress))
    seen: list[float] = []
    model, rest = rm.load_then("smollm2", seen.append)
    rest(0.5)
    rest(1.0)
    share = rm.LOAD_SHARE
    assert model == "model" and rm.is_loaded("smollm2")
    assert seen == pytest.approx([0.0, share / 2, share, share + (1 - share) / 2, 1.0], abs=1e-12)
    again: list[float] = []
    model, rest = rm.load_then("smollm2", again.append)
    rest(0.25)
    assert model == "model" and again == [0.25]


def test_run_key_counts_the_ablation_mode_only_with_heads_ablated():
    plain = RealModelState(model="minilm")
    assert plain.run_key() == replace(plain, ablation="mean").run_key()
    one = plain.with_head_toggled(1, 2)
    assert one.run_key() != replace(one, ablation="mean").run_key()
    assert replace(one, ablation="mean").run_key()[3] == "mean"


@needs["minilm"]
def test_mean_ablation_differs_from_zero_and_matches_the_engine():
    text = "the cat sat on the mat"
    base = quiet(RealModelState(model="minilm", text=text))
    zero = quiet(RealModelState(model="minilm", text=text, ablated=((2, 3),)), base)
    mean = quiet(
        RealModelState(model="minilm", text=text, ablated=((2, 3),), ablation="mean"), base
    )
    assert (zero.ablation, mean.ablation) == ("zero", "mean")
    model = rm.loaded("minilm")
    expect = model.forward(base.ids, head_mask={(2, 3): "mean"})
    np.testing.assert_allclose(mean.weights, expect.weights, atol=1e-6)
    # mean ablation keeps the head's average output: layer 3 moves less than with zero
    moved = [np.abs(r.weights[3] - base.weights[3]).max() for r in (zero, mean)]
    assert moved[0] > 1e-4 and moved[1] > 1e-6 and moved[0] != pytest.approx(moved[1])


def _boxes(lay: rm.GridLayout) -> list[tuple[float, float, float, float]]:
    return [(x - 4.0, y, x + side, y + side) for x, y, side in lay.cells.values()]


@pytest.mark.parametrize("model", rm.MODELS)
@pytest.mark.parametrize("size", [(290, 230), (600, 300), (300, 600), (900, 400), (420, 120)])
def test_grid_layout_fills_the_area_without_overlaps(model, size):
    layers, heads = rm.shape_of(model)
    w, h = size
    lay = rm.grid_layout(layers, heads, w, h)
    assert len(lay.cells) == layers * heads
    boxes = _boxes(lay)
    assert all(x0 >= 0 and x1 <= w and y0 >= 0 and y1 <= h for x0, y0, x1, y1 in boxes)
    for a, b in itertools.combinations(boxes, 2):
        # side by side or one above the other
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    # the grid reaches across the area or down it (within one cell and its gaps)
    assert w - lay.width < lay.side + 12 or h - lay.height < lay.side + 12, (lay.width, lay.height)
    # no other arrangement of the same rows and columns gives larger maps
    for heads_across in (True, False):
        rows, cols = (layers, heads) if heads_across else (heads, layers)
        for pad in (4.0, 2.0):  # 4 px between maps of 24 px or more, else 2
            one_block = min((w - 24) / cols - 4 - pad, (h - 14) / rows - pad)
            if one_block >= 24:
                break
        assert lay.side >= np.floor(one_block)


def test_grid_layout_turns_or_splits_each_model_to_fit_its_area():
    tall = rm.grid_layout(6, 12, 300, 600)  # MiniLM in a narrow, tall dock: heads run down
    assert not tall.heads_across and tall.blocks == 1 and tall.side >= 36
    assert tall.row_labels[0][0] == "H0" and tall.col_labels[5][0] == "L5"
    wide = rm.grid_layout(30, 9, 900, 400)  # SmolLM2's 30 layers in a wide one: side by side
    assert wide.heads_across and wide.blocks >= 2 and wide.side >= 20
    assert rm.grid_layout(30, 9, 900, 400, max_side=10).side == 10
    assert min(rm.grid_layout(30, 9, 40, 40).side, 2.0) == 2.0  # never below 2 px


@needs["minilm"]
def test_induction_score_ranks_heads_on_the_texts_own_repeats():
    from attnsim.engine.models.scores import text_induction

    r = quiet(RealModelState(model="minilm", text="the cat sat on the mat. the cat sat."))
    expect = text_induction(r.weights, r.ids)
    assert r.repeats == expect.count >= 5  # the, cat, sat, ... occur again
    np.testing.assert_allclose(r.metrics["induction"], expect.score, rtol=0, atol=1e-7)
    ranked = rm.ranking(r, "induction")
    assert ranked[0][2] == pytest.approx(float(expect.score.max())) and ranked[0][2] > 0
    assert ranked[0][2] >= ranked[1][2] >= ranked[-1][2]
    assert f"over the {r.repeats} positions" in rm.metric_note(r, "induction")
    assert rm.metric_note(r, "entropy") == ""


@needs["minilm"]
def test_a_text_without_repeats_says_the_induction_score_is_undefined():
    r = quiet(RealModelState(model="minilm", text="one two three four"))
    assert r.repeats == 0
    assert np.all(r.metrics["induction"] == 0) and np.isfinite(r.metrics["induction"]).all()
    assert rm.metric_note(r, "induction").startswith("No token repeats in this text")
    ranked = rm.ranking(r, "induction")  # nothing to rank by: the heads in the model's order
    assert [(la, he) for la, he, _ in ranked[:2]] == [(0, 0), (0, 1)]
