"""The command line, run as a user would: a separate process, offscreen, exit codes checked."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtGui import QImage

from attnsim.resources import preset_names, presets_in_order


def test_scenarios_lists_every_preset_in_teaching_order_with_a_line_on_it(attnsim):
    r = attnsim("scenarios")
    assert r.returncode == 0
    rows = [ln.split("\t") for ln in r.stdout.strip().splitlines()]
    assert [row[0] for row in rows] == [p.name for p in presets_in_order()]
    assert sorted(row[0] for row in rows) == preset_names()
    assert all(len(row) == 3 and row[1] and row[2].endswith(".") for row in rows)
    assert rows[0][0] == "river-bank"


def test_export_writes_valid_png_svg_pdf_per_panel(attnsim, tmp_path, qapp):
    from attnsim.panels import panel_classes

    r = attnsim(
        "export",
        "--scenario",
        "eiffel-swap-query",
        "--out",
        str(tmp_path),
        "--format",
        "png,svg,pdf",
        "--scale",
        "2",
        "--panel",  # whole panels: the labs too (their figures need direct scenarios)
    )
    assert r.returncode == 0, r.stderr
    for cls in panel_classes():
        png, svg, pdf = (tmp_path / f"{cls.panel_id}.{ext}" for ext in ("png", "svg", "pdf"))
        img = QImage(str(png))
        assert not img.isNull() and img.width() > 200
        root = ET.parse(svg).getroot()
        texts = [t for t in root.iter() if t.tag.endswith("text")]
        assert texts, f"{svg.name} has no text elements"
        assert pdf.read_bytes().startswith(b"%PDF")
        assert pdf.stat().st_size > 1000


def test_screenshot_has_the_requested_size_and_is_not_blank(attnsim, tmp_path, qapp):
    out = tmp_path / "shot.png"
    r = attnsim("screenshot", "--scenario", "river-bank", "--out", str(out), "--size", "1200x800")
    assert r.returncode == 0, r.stderr
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1200, 800)
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(img.constBits(), dtype=np.uint32, count=img.width() * img.height())
    assert len(np.unique(pixels)) > 20  # text and drawing, not a blank window
    # and not a single dominant flat colour everywhere
    assert np.mean(pixels == np.bincount(pixels & 0xFFFFFF).argmax() | 0xFF000000) < 0.98


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--scenario", "nope", "--out", "x"], "no preset named 'nope'"),
        (
            ["export", "--scenario", "river-bank", "--out", "x", "--format", "gif"],
            "unknown format 'gif'",
        ),
        (["screenshot", "--out", "x.png", "--size", "huge"], "size must look like 1600x1000"),
        (
            ["export", "--scenario", "river-bank", "--out", "x", "--scale", "9"],
            "scale must be between 1 and 4",
        ),
        (["frobnicate"], "invalid choice"),
        (["train", "--model", "sense-2d", "--epochs", "-1"], "--epochs must be 0 or more"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(attnsim, args, message):
    r = attnsim(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0] and lines[0].startswith("attnsim: error:")


def test_bad_scenario_file_exits_2_naming_file_and_field(attnsim, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "name": "x",
                "tokens": ["a"],
                "X": [[1.0]],
                "Wq": "identity",
                "Wk": "identity",
                "Wv": "identity",
                "temperature": -1,
            }
        )
    )
    r = attnsim("audit", "--scenario", str(bad))
    assert r.returncode == 2
    assert str(bad) in r.stderr and "temperature" in r.stderr


@pytest.mark.numeric
def test_train_8d_classifies_all_four_sentences(attnsim):
    r = attnsim("train", "--model", "sense-8d", "--epochs", "300", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["all_correct"] is True
    assert [s["prediction"] for s in data["sentences"]] == ["water", "finance", "water", "finance"]
    r2 = attnsim("train", "--model", "sense-8d", "--epochs", "300")
    assert "final mean loss" in r2.stdout and r2.stdout.count("✓") == 4


@pytest.mark.numeric
def test_audit_passes_on_every_preset_and_fails_with_zero_masking(attnsim, tmp_path):
    for name in preset_names():
        r = attnsim("audit", "--scenario", name, "--json")
        assert r.returncode == 0, (name, r.stdout)
        assert json.loads(r.stdout)["passed"] is True
    from attnsim.resources import resolve_scenario

    broken = resolve_scenario("bank-river").replace(mask_value=0.0)
    path = tmp_path / "zero-mask.json"
    broken.save(path)
    r = attnsim("audit", "--scenario", str(path))
    assert r.returncode == 1
    assert "FAIL  masked keys get exactly 0" in r.stdout


@pytest.mark.numeric
def test_experiments_print_the_reference_numbers(attnsim):
    r = attnsim("experiment", "entropy")
    assert r.returncode == 0
    assert "d_k =   16: without scaling 1.40 bits, with 1/√d_k 3.44 bits" in r.stdout
    r = attnsim("experiment", "fields", "--json")
    res = json.loads(r.stdout)["results"]
    assert round(res[0]["per_field"]["acoustics"], 2) == 0.87


def test_bench_json_format(attnsim):
    r = attnsim("bench", "--json", "--quick", "--only", "head_trace_n16", "attention_forward")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert {"python", "cpus", "numpy"} <= set(data["machine"])
    names = [row["name"] for row in data["results"]]
    assert names == [
        "attention_forward_n8",
        "attention_forward_n64",
        "attention_forward_n512",
        "attention_forward_n2048",
        "head_trace_n16",
    ]
    for row in data["results"]:
        assert row["median_ms"] > 0 and row["p95_ms"] >= row["median_ms"] and row["runs"] >= 5
    r = attnsim("bench", "--only", "no_such_result")
    assert r.returncode == 2 and "unknown result" in r.stderr


def test_the_gui_starts_with_the_collector_off_and_turns_it_back_on_with_its_panels(
    attnsim, home, monkeypatch
):
    # Start-up runs with the cyclic garbage collector off; once the panels on screen are in
    # (they open after the first frame) the collector is on again, with what start-up made
    # frozen (so it is not walked at every collection).
    monkeypatch.setenv("ATTNSIM_FIRST_PAINT", "1")
    r = attnsim("gui")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("first-paint"))
    words = line.replace(",", "").split()
    assert words[2:4] == ["collector", "off"], line
    # and the CPU time to the first paint (the startup benchmark's figure for a loaded machine)
    assert words[5:6] == ["frozen"] and words[6:7] == ["cpu"], line
    assert 0 < float(words[7]) < 600, line
    # then the frame with the panels on screen made and drawn: on the tests' 800 x 800 screen
    # the docks stand in two tab groups, one panel in front in each
    drawn = next(x for x in r.stdout.splitlines() if x.startswith("panels-drawn"))
    more = drawn.replace(",", "").split()
    assert more[2:4] == ["2", "panels"] and float(more[1]) >= float(words[1]), drawn
    assert more[4:6] == ["collector", "on"] and int(more[6]) > 10_000, drawn
    assert more[7:9] == ["frozen", "cpu"] and float(more[9]) >= float(words[7]), drawn


@pytest.mark.numeric
def test_audit_prints_a_skipped_check_as_skipped(tmp_path, capsys):
    from attnsim.cli import main
    from attnsim.engine.scenario.model import random_scenario

    path = tmp_path / "big.json"
    random_scenario(64, 64).save(path)
    assert main(["audit", "--scenario", str(path)]) == 0
    out = capsys.readouterr().out
    assert "SKIP  reference loop = vectorised engine" in out
    assert out.strip().endswith("checks pass on random-64x64, 1 skipped")
    assert "PASS  reference loop" not in out
