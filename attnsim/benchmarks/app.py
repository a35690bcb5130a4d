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
    """Time from process start to the first painted main window, offscreen.

    ``startup_cold``: with Python's bytecode cache empty and not written (every attnsim module
    compiled from source, as on the first launch after an install). ``startup_warm``: later
    launches with the bytecode cache in place, as every launch after the first. Both use a
    private cache folder (``PYTHONPYCACHEPREFIX``), so the measurement neither depends on nor
    litters the checkout, whatever PYTHONDONTWRITEBYTECODE says in the caller's environment.
    """
    with tempfile.TemporaryDirectory() as home:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = dict(base, QT_QPA_PLATFORM="offscreen", ATTNSIM_FIRST_PAINT="1", ATTNSIM_HOME=home)
        cold_env = dict(
            env, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=os.path.join(home, "pyc-cold")
        )
        warm_env = dict(env, PYTHONPYCACHEPREFIX=os.path.join(home, "pyc-warm"))
        cold = [_launch_once(cold_env) for _ in range(1 if quick else 3)]
        _launch_once(warm_env)  # fill the cache
        warm = [_launch_once(warm_env) for _ in range(3 if quick else 10)]
    median_warm = sorted(warm)[len(warm) // 2]
    return [
        summarize("startup_cold", cold),
        summarize("startup_warm", warm, target_ms=1000.0, meets_target=median_warm < 1000.0),
    ]


BENCHMARKS = {"startup": startup}
