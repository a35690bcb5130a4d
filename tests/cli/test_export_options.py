"""`attnsim export` for a headless figure: the scenario options, the panel list, figure or
panel, and token scenarios that some labs cannot show. Run as a user would: a subprocess."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from attnsim.panels import PANEL_SPECS

SVG_TEXT = "{http://www.w3.org/2000/svg}text"


def svg_text(path) -> str:
    root = ET.parse(path).getroot()
    return " ".join("".join(t.text or "" for t in root.iter(SVG_TEXT)).split())


def test_scenario_options_reach_the_figure(attnsim, tmp_path):
    r = attnsim("export", "--scenario", "two-heads", "--out", str(tmp_path), "--format", "svg",
                "--panels", "heatmap", "--head", "2", "--mask", "causal", "--receiving", "the",
                "--temperature", "0.5", "--titles")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(tmp_path / "heatmap.svg")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heatmap.svg"]
    text = svg_text(tmp_path / "heatmap.svg")
    assert text.startswith("Scores and weights")  # --titles
    assert "Head 2 of 2 (finance head)" in text
    assert "mask: causal" in text
    assert "Receiving the:" in text
    assert "√2·T" in text  # T = 0.5 shown in the score formula
    # Figure by default: none of the panel's controls (their texts) are drawn.
    assert "Temperature T:" not in text and "numbers" not in text.split()

    grab = tmp_path / "grab"
    r = attnsim("export", "--scenario", "two-heads", "--out", str(grab), "--format", "svg",
                "--panels", "heatmap", "--panel", "--receiving", "2")  # fmt: skip
    assert r.returncode == 0, r.stderr
    text = svg_text(grab / "heatmap.svg")
    assert "Temperature T:" in text  # the whole panel, controls included
    assert "Receiving river:" in text  # positions count from 1
    assert "Head 1 of 2" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--head", "3"], "--head 3 is out of range: two-heads has 2 heads (1 to 2)"),
        (["--head", "0"], "--head 0 is out of range"),
        (["--receiving", "4"], "--receiving 4 is out of range: the queries are 1 to 3"),
        (["--receiving", "boat"], "--receiving 'boat' is not a query token of two-heads"),
        (["--temperature", "0"], "temperature: must be a positive finite number, got 0.0"),
        (["--temperature", "nan"], "temperature: must be a positive finite number"),
        (["--temperature", "5000"], "temperature: 5000.0 is outside the range 0.001 to 1000"),
        (["--temperature", "warm"], "argument --temperature: must be a number, got 'warm'"),
        (["--mask", "diagonal"], "argument --mask: invalid choice: 'diagonal'"),
        (["--panels", "heatmap,plots"], "argument --panels: unknown panel 'plots'; choose from"),
        (["--figure", "--panel"], "argument --panel: not allowed with argument --figure"),
    ],
)
def test_bad_options_are_one_line_exit_2_and_write_nothing(attnsim, tmp_path, args, message):
    out = tmp_path / "out"
    r = attnsim("export", "--scenario", "two-heads", "--out", str(out), *args)
    assert r.returncode == 2
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists() or not any(out.iterdir())


def test_token_scenario_exports_only_panels_with_something_to_show(attnsim, tmp_path):
    r = attnsim("export", "--scenario", "river-bank", "--out", str(tmp_path),
                "--format", "png", "--scale", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    written = {p.stem for p in tmp_path.iterdir()}
    assert "routing_lab" not in written and "fields_lab" not in written
    assert {"heatmap", "vectors", "space3d", "explorer", "stepper"} <= written
    assert written == {spec.panel_id for spec in PANEL_SPECS} - {"routing_lab", "fields_lab"}
    skipped = [ln for ln in r.stderr.splitlines() if "skipped" in ln]
    assert len(skipped) == 2
    assert any("skipped routing_lab: " in ln and "token scenario" in ln for ln in skipped)
    assert any("skipped fields_lab: " in ln and "token scenario" in ln for ln in skipped)

    # The lab's own page is still there as a whole-panel grab, and on its own preset the lab
    # has a figure.
    r = attnsim("export", "--scenario", "river-bank", "--out", str(tmp_path / "grab"),
                "--format", "png", "--panels", "routing_lab", "--panel")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert not QImage(str(tmp_path / "grab" / "routing_lab.png")).isNull()
    # Named with --panels, a panel with nothing to show is skipped with its note too.
    r = attnsim("export", "--scenario", "routing-lab", "--out", str(tmp_path / "lab"),
                "--format", "svg", "--panels", "routing_lab,fields_lab")  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnsim export: skipped fields_lab: "), lines
    assert sorted(p.name for p in (tmp_path / "lab").iterdir()) == ["routing_lab.svg"]
    assert "route: weights" in svg_text(tmp_path / "lab" / "routing_lab.svg")


@pytest.mark.parametrize("scenario", ["routing-lab", "three-fields"])
def test_direct_scenarios_export_every_format_with_one_note_per_skipped_panel(
    attnsim, tmp_path, scenario
):
    # Issue 24: these presets exited 2 after two files ("the Projections panel has nothing to
    # draw as a figure"), and their PDFs printed dozens of QPdfEngine warnings.
    r = attnsim("export", "--scenario", scenario, "--out", str(tmp_path),
                "--format", "png,svg,pdf", "--scale", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    notes = r.stderr.splitlines()
    assert all(ln.startswith("attnsim export: skipped ") for ln in notes), r.stderr
    skipped = {ln.split()[3].rstrip(":") for ln in notes}
    assert len(skipped) == len(notes)  # one note each
    assert "projections" in skipped  # no Wq, Wk, Wv in a direct scenario
    assert any("directly" in ln for ln in notes if "skipped projections:" in ln)
    panels = {spec.panel_id for spec in PANEL_SPECS}
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f"{pid}.{fmt}" for pid in panels - skipped
                             for fmt in ("png", "svg", "pdf"))  # fmt: skip
    assert sorted(Path(p).name for p in r.stdout.split()) == written
