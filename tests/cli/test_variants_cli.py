"""``attnsim variants``: the variant checks, the precision table and the memory figures of a
scenario's first head, as text or one JSON object; bad arguments exit 2 with one line."""

from __future__ import annotations

import json

import pytest

from attnsim.engine.precision import DTYPES, MASK_LABELS
from attnsim.engine.scenario.model import random_scenario

CHECKS = ["tiled", "kv_cache", "gqa", "linear_memory"]


pytestmark = pytest.mark.numeric  # computed numbers: checked again on the second BLAS kernel


def test_json_parses_and_holds_every_part(attnsim):
    r = attnsim("variants", "--scenario", "tired-cat", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)  # strict JSON: infinities are strings
    assert d["scenario"] == "tired-cat" and d["passed"] is True
    assert (d["n_q"], d["n_k"], d["d_k"], d["d_v"]) == (5, 5, 5, 5)
    assert [c["name"] for c in d["checks"]] == CHECKS
    for c in d["checks"]:
        assert {"passed", "skipped", "max_abs_diff", "tolerance", "cases", "reference"} <= set(c)
        assert c["passed"] is True and c["max_abs_diff"] <= c["tolerance"]
        assert c["cases"]
    rows = d["precision"]["rows"]
    assert [(p["dtype"], p["mask_label"]) for p in rows] == [
        (t, m) for t in DTYPES for m in MASK_LABELS
    ]
    assert {"leaked_weight", "nan_rows", "silent_rows", "probe_leak"} <= set(rows[0])
    mem = d["memory"]
    assert [p["n_q"] for p in mem["peak"]] == [5, 2048]
    assert mem["linear_vs_kv_cache"]["n"] == [64, 512, 4096]
    assert [(s["h"], s["g"]) for s in mem["sharing"]] == [(32, 32), (32, 8), (32, 1)]


def test_text_names_every_check_the_precision_rows_and_the_memory(attnsim):
    r = attnsim("variants", "--scenario", "river-bank")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for title in ("tiled kernel", "KV-cache generation", "grouped-query", "linear-attention"):
        (line,) = [ln for ln in out.splitlines() if title in ln]
        assert line.startswith("PASS") and "max |diff|" in line
    rows = [ln.split() for ln in out.splitlines() if ln.strip().split(" ")[0] in DTYPES]
    assert [(row[0], row[1]) for row in rows] == [(t, m) for t in DTYPES for m in MASK_LABELS]
    assert "peak scores, n 2048x2048" in out and "linear memory vs KV cache" in out
    assert "h 32, g 1 (MQA)" in out
    assert out.rstrip().splitlines()[-1] == "4 of 4 checks within tolerance on river-bank"


def test_a_scenario_file_and_a_cross_attention_preset(attnsim, tmp_path):
    path = tmp_path / "random.json"
    random_scenario(20, 4, seed=1, mask="causal").save(path)
    r = attnsim("variants", "--scenario", str(path), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_q"] == 20
    # three queries over twelve keys: the self-attention checks say why they did not run
    r = attnsim("variants", "--scenario", "three-fields")
    assert r.returncode == 0, r.stderr
    skipped = [ln for ln in r.stdout.splitlines() if ln.startswith("SKIP")]
    assert len(skipped) == 2 and all("3 and 12" in ln for ln in skipped)


def test_bad_arguments_exit_2_with_one_line(attnsim, tmp_path):
    for args in (
        ("variants", "--scenario", "no-such-preset"),
        ("variants", "--scenario", str(tmp_path / "missing.json")),
        ("variants", "--no-such-flag"),
    ):
        r = attnsim(*args)
        assert r.returncode == 2, args
        assert r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("attnsim: error:")
