"""The drawing commands lay the window out for the screen size they are asked for: the
offscreen platform's own 800 x 800 screen gave a 1280 x 800 screenshot a small screen's docks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
from attnsim.cli.headless import headless
headless(({w}, {h}))
from attnsim.app import MainWindow, create_app
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario
app = create_app()
size = app.primaryScreen().size()
win = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: False,
                 restore_layout=False)
print(app.platformName(), size.width(), size.height(), win._layout_groups)
"""


@pytest.mark.process
@pytest.mark.parametrize(("w", "h", "groups"), [(1280, 800, 4), (1600, 1000, 4), (800, 500, 1)])
def test_the_offscreen_screen_has_the_asked_size_and_the_docks_follow_it(tmp_path, w, h, groups):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["ATTNSIM_HOME"] = str(tmp_path / "home")
    run = subprocess.run(
        [sys.executable, "-c", PROBE.format(w=w, h=h)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["offscreen", str(w), str(h), str(groups)], run.stdout


@pytest.mark.process
def test_a_platform_the_user_set_is_kept(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="minimal", ATTNSIM_HOME=str(tmp_path / "home"))
    code = "import os\nfrom attnsim.cli.headless import headless\nheadless((1280, 800))\n"
    code += "print(os.environ['QT_QPA_PLATFORM'])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)  # fmt: skip
    assert run.stdout.strip() == "minimal", run.stderr
