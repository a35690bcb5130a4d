"""``attnsim induction``: train the induction-head model headless and report what formed."""

from __future__ import annotations

import json
import math

import pytest

from attnsim import cli

pytestmark = pytest.mark.numeric  # computed numbers: checked again on the second BLAS kernel


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["induction", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_losses_scores_and_the_ablation_table_of_every_head(capsys) -> None:
    code, out, err = _run(capsys, "--steps", "5", "--layers", "3", "--heads", "2", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["config"]["n_layers"] == 3 and r["config"]["n_heads"] == 2
    (run,) = r["runs"]
    assert run["steps"] == 5 and run["seed"] == 0
    for key in ("previous_token", "induction"):
        assert len(run[key]) == 3 and all(len(row) == 2 for row in run[key])
        assert all(0.0 <= v <= 1.0 for row in run[key] for v in row)
    heads = {(a["layer"], a["head"], a["mode"]) for a in run["ablation"]}
    assert heads == {
        (layer, h, m) for layer in range(3) for h in range(2) for m in ("zero", "mean")
    }
    # five steps from random weights: both halves still near ln 32, nothing formed
    assert abs(run["loss_first_half"] - math.log(32)) < 0.5
    assert run["loss_repeated_half"] > 0.5 * run["loss_first_half"]
    assert (r["formed"], r["seeds"], r["where"]) == (0, 1, [])
    assert not run["criterion"]["met"]


def test_text_report_prints_both_halves_every_head_and_a_verdict(capsys) -> None:
    code, out, _ = _run(capsys, "--steps", "3", "--seed", "4")
    assert code == 0
    assert "model 2 layers x 1 heads" in out
    assert "seed 4: 3 steps" in out
    assert "first half" in out and "repeated half" in out
    for head in ("L0H0", "L1H0"):
        assert sum(line.startswith(head) for line in out.splitlines()) == 3  # scores + 2 modes
    assert out.rstrip().splitlines()[-1].startswith("no induction head; best candidate L1H0")


def test_several_seeds_are_trained_and_counted(capsys) -> None:
    code, out, _ = _run(capsys, "--steps", "2", "--seed", "10", "--seeds", "3")
    assert code == 0
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines[1:4]] == ["seed 10", "seed 11", "seed 12"]
    assert lines[-1] == "an induction head formed in 0 of 3 seeds"
    code, out, _ = _run(capsys, "--steps", "2", "--seeds", "2", "--json")
    assert [r["seed"] for r in json.loads(out)["runs"]] == [0, 1]


def test_seeds_differ_and_a_seed_repeats(capsys) -> None:
    runs = [json.loads(_run(capsys, "--steps", "4", "--seed", s, "--json")[1]) for s in "110"]
    loss = [r["runs"][0]["loss"] for r in runs]
    assert loss[0] == loss[1]
    assert loss[0] != loss[2]


def test_one_layer_has_no_head_to_compose(capsys) -> None:
    code, out, _ = _run(capsys, "--steps", "2", "--layers", "1")
    assert code == 0
    assert "a one-layer model has no later head" in out


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (["--steps", "-1"], "--steps", "[0, 100000], got -1"),
        (["--steps", "ten"], "--steps", "whole number, got 'ten'"),
        (["--heads", "9"], "--heads", "[1, 8], got 9"),
        (["--heads", "0"], "--heads", "[1, 8], got 0"),
        (["--layers", "4"], "--layers", "[1, 3], got 4"),
        (["--seeds", "0"], "--seeds", "[1, 100], got 0"),
        (["--seed", "1.5"], "--seed", "whole number, got '1.5'"),
        (["--lr", "1"], "unrecognized", "--lr"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, args, option, message) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert option in err and message in err


@pytest.mark.slow
def test_the_default_seed_forms_an_induction_head_in_layer_1(capsys) -> None:
    # 800 steps and the report: 33 s on the shared 2-core machine (8 s with one BLAS thread)
    code, out, _ = _run(capsys, "--steps", "800", "--json")
    assert code == 0
    r = json.loads(out)
    assert (r["formed"], r["where"]) == (1, ["L1H0"])
    run = r["runs"][0]
    assert run["induction"][1][0] >= 0.5
    assert run["loss_repeated_half"] < 0.3 * run["loss_first_half"]
    zero = next(a for a in run["ablation"] if (a["layer"], a["head"], a["mode"]) == (1, 0, "zero"))
    gap = run["loss_first_half"] - run["loss_repeated_half"]
    assert zero["repeated_delta"] >= 0.5 * gap
