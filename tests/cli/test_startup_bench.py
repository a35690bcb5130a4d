"""The startup benchmark's app with more panels starts as ``attnsim gui`` starts: in a fresh
process each, since what is compared is what a start imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from attnsim.benchmarks import extra_panels
from attnsim.benchmarks.app import _WITH_EXTRA, EXTRA_PANELS

pytestmark = pytest.mark.process

# What the child has done when it reads the scenario of its window (``cmd_gui`` has turned
# the collector off and imported NumPy and the app by then): it reports the modules loaded,
# the collector's state and the panels registered, and exits.
_REPORT = (
    "import gc, json, sys\n"
    "from attnsim.cli import gui\n"
    "def load_scenario(name):\n"
    "    from attnsim import panels\n"
    "    print(json.dumps({'modules': sorted(sys.modules), 'gc': gc.isenabled(),\n"
    "        'panels': [list(s) for s in panels.PANEL_SPECS]}))\n"
    "    sys.exit(0)\n"
    "gui.load_scenario = load_scenario\n"
)
_PLAIN = _REPORT + "import runpy\nsys.argv = ['attnsim', 'gui']\nrunpy.run_module('attnsim')\n"


def _run(code: str) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_the_start_with_more_panels_differs_from_the_plain_one_by_the_panels_alone():
    plain, extra = _run(_PLAIN), _run(_REPORT + _WITH_EXTRA)
    # the same modules as ``python -m attnsim gui`` before the window (runpy is the -m's own):
    # no command-line module of another command, nothing of the benchmarks' own
    assert set(extra["modules"]) == set(plain["modules"]) - {"runpy"}
    assert not any(m.startswith("attnsim.benchmarks") for m in extra["modules"])
    assert extra["gc"] is plain["gc"] is False
    with extra_panels(EXTRA_PANELS):
        from attnsim import panels

        expected = [list(s) for s in panels.PANEL_SPECS]
    assert extra["panels"] == expected  # the copies ``extra_panels`` makes
    assert len(extra["panels"]) == len(plain["panels"]) + EXTRA_PANELS


def test_the_cpu_ratio_pairs_each_start_with_the_plain_one_beside_it():
    from attnsim.benchmarks.app import _cpu_ratio

    # paired: 1.1, 1.0, 1.5 (a median of the medians would be 330 / 200)
    assert _cpu_ratio([110.0, 200.0, 330.0], [100.0, 200.0, 220.0]) == {"vs_plain_cpu": 1.1}
    assert _cpu_ratio([], []) == {}  # an older checkout says no CPU time
    assert _cpu_ratio([110.0], [100.0, 90.0]) == {}  # nor for every start
