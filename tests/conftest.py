"""Test setup: Qt runs offscreen (no X server), settings and recovery go to a temporary home."""

from __future__ import annotations

import os
import tempfile

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.setdefault("ATTNSIM_HOME", tempfile.mkdtemp(prefix="attnsim-test-home-"))

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh ATTNSIM_HOME for tests that look at settings or the recovery file."""
    monkeypatch.setenv("ATTNSIM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def make_wb(qapp):
    """Build a workbench on a preset (by name) or a Scenario."""
    from attnsim.engine.scenario import Scenario
    from attnsim.model.workbench import Workbench
    from attnsim.resources import resolve_scenario

    made = []

    def make(scenario="river-bank"):
        sc = scenario if isinstance(scenario, Scenario) else resolve_scenario(scenario)
        wb = Workbench(sc)
        made.append(wb)
        return wb

    yield make
    for wb in made:
        wb.undo_stack.clear()
