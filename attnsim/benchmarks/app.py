"""Application benchmarks: time from process start to the first painted main window."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from . import Row, summarize


def _launch_once(env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnsim", "gui"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("first-paint"):
            elapsed = (time.perf_counter() - t0) * 1000
            break
    else:
        proc.wait()
        raise RuntimeError("the app exited without painting its window")
    proc.wait(timeout=30)
    return elapsed


def startup(quick: bool = False) -> list[Row]:
    """``startup_cold``: the first launch in this run, with Python's bytecode cache disabled
    (every module compiled from source, as right after an install). ``startup_warm``: later
    launches with caches in place. Both to the first painted frame, offscreen."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_FIRST_PAINT="1", ATTNSIM_HOME=home
        )
        cold_env = dict(
            env, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=os.path.join(home, "pyc")
        )
        cold = [_launch_once(cold_env) for _ in range(1 if quick else 3)]
        _launch_once(env)  # fill the caches
        warm = [_launch_once(env) for _ in range(3 if quick else 10)]
    return [
        summarize("startup_cold", cold, target_ms=None),
        summarize(
            "startup_warm",
            warm,
            target_ms=1000.0,
            meets_target=sorted(warm)[len(warm) // 2] < 1000.0,
        ),
    ]


BENCHMARKS = {"startup": startup}
