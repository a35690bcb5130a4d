"""Test setup: Qt runs offscreen (no X server), settings and recovery go to a temporary home."""

from __future__ import annotations

import faulthandler
import gc
import os
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import pytest
from hypothesis import HealthCheck, settings

from attnsim.cli.headless import DESKTOP, screen_file
from tests.crash_notes import crash_dir, crash_file, crash_notes

os.environ.setdefault("ATTNSIM_HOME", tempfile.mkdtemp(prefix="attnsim-test-home-"))
# The window is tested on the desktop it is made for, 1600 x 1000 (the offscreen platform's own
# 800 x 800 screen would give it the small screens' fewer tab groups; those have their tests).
os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen_file(*DESKTOP)}"

# Time belongs to the benchmarks: a property must not fail because a shared or slow CI machine
# took longer than Hypothesis's 200 ms deadline to run or to generate an example.
settings.register_profile("attnsim", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("attnsim")

crash_dir()  # made here, in the controlling process, so that every worker writes to it
_FAULTS = pytest.StashKey[TextIO]()


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    """In a worker: a native crash writes every thread's stack to the worker's crash file
    (pytest's own faulthandler writes to the worker's stderr, which a crash loses)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        session.config.stash[_FAULTS] = fh = crash_file("faulthandler").open("w")
        faulthandler.enable(file=fh, all_threads=True)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """In the controller: the crashed worker's stacks and last monkey actions go in the report."""
    notes = crash_notes(report.node.gateway.id)
    if notes:
        report.longrepr = f"{report.longrepr}\n{notes}"


# Tiers, for the second CI pass on another BLAS kernel (see .ci/run and the README):
#   qt       the test uses Qt (qtbot or qapp, directly or through a fixture);
#   process  it starts attnsim (or a fresh interpreter) in another process;
#   numeric  its result could depend on the BLAS: the engine, view-model and model tiers by
#            their folder, and the command-line tests that print computed numbers, by mark.
# A test that is qt or process and not numeric only draws or drives what the numeric tiers
# compute, so the second pass leaves it out: -m "not slow and (numeric or not (qt or process))".
QT_FIXTURES = {"qtbot", "qapp"}
PROCESS_FIXTURES = {"attnsim", "modules_loaded_by", "gui_process"}
NUMERIC_FOLDERS = ("engine", "viewmodels", "model", "lessons")


def pytest_collection_modifyitems(config, items):
    root = Path(__file__).parent
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & QT_FIXTURES:
            item.add_marker(pytest.mark.qt)
        if names & PROCESS_FIXTURES:
            item.add_marker(pytest.mark.process)
        try:
            folder = Path(str(item.path)).relative_to(root).parts[0]
        except ValueError:
            continue
        if folder in NUMERIC_FOLDERS:
            item.add_marker(pytest.mark.numeric)


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


@pytest.fixture
def params_copy():
    """``params_copy(params)``: an independent copy of a trainer's parameter dict."""
    import numpy as np

    def copy(params: dict) -> dict:
        return {k: np.array(v, copy=True) for k, v in params.items()}

    return copy


@pytest.fixture
def assert_params_equal():
    """``assert_params_equal(a, b)``: every named parameter array of a and b is exactly equal."""
    import numpy as np

    from attnsim.engine.training import PARAM_NAMES

    def check(a: dict, b: dict) -> None:
        for k in PARAM_NAMES:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)

    return check


@pytest.fixture
def modules_loaded_by():
    """``modules_loaded_by("a, b.c")``: the names in ``sys.modules`` of a fresh interpreter
    after ``import a, b.c`` (the import itself must succeed)."""
    import json
    import subprocess
    import sys

    def run(imports: str) -> list[str]:
        code = f"import sys, json, {imports}; print(json.dumps(sorted(sys.modules)))"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert r.returncode == 0, f"import {imports} failed: {r.stderr}"
        return json.loads(r.stdout)

    return run


@pytest.fixture(autouse=True)
def _free_a_tests_cycles_as_it_ends():
    """What a test leaves in reference cycles is freed when the test ends (after pytest-qt has
    closed its widgets), not by a collection that happens to run in a later test: a crash
    there (a dropped workbench's undo history, before Workbench.__del__) showed up in a
    different test each time. And the test must leave the collector on or off as it found it."""
    collector_on = gc.isenabled()
    yield
    if gc.isenabled() != collector_on:  # a test that turned the collector off or on leaves
        # every later test in this process another state: put back, and said
        (gc.enable if collector_on else gc.disable)()
        pytest.fail(f"the test left the cyclic collector {'off' if collector_on else 'on'}")
    if "PySide6.QtWidgets" in sys.modules:
        from PySide6.QtCore import QCoreApplication, QEvent

        # pytest-qt closed the test's windows with deleteLater, which its processEvents leaves
        # waiting: Qt deletes them here, parents before children, as the app would. Freed by
        # the collector instead, a window's Python parts go in no set order (a widget or an
        # undo command could be freed before the Qt object that still held it).
        if QCoreApplication.instance() is not None:
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
