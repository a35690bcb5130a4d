"""What the command-line tests share: running ``attnsim`` as a user would, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# A figure export starts Qt and draws every panel asked for: allow a loaded machine its time.
TIMEOUT_S = 180


def run_attnsim(*args: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``python -m attnsim *args`` as on a machine without a display (the commands that draw
    choose Qt's offscreen platform themselves), its output captured as text (never raises on a
    non-zero exit: the tests check the code and the one-line error themselves)."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    if args[:1] == ("gui",):  # the window itself needs a platform, and there is no display
        env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(
        [sys.executable, "-m", "attnsim", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture
def attnsim():
    """The command line as a function: ``attnsim("audit", "--scenario", path)``."""
    return run_attnsim
