"""Application benchmarks: time from process start to the first painted main window."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from attnsim.cli.headless import offscreen_platform

from . import Row, summarize

EXTRA_PANELS = 20
# The app with EXTRA_PANELS more panels registered (copies of the heatmap, not on screen),
# started as ``attnsim gui`` starts (``attnsim.cli.main``, the plain start's short path, not
# ``cli.entry``, which loads every command of the command line: 30-40 ms of imports that the
# plain start does not make), with the cyclic collector off from the first import (``attnsim
# gui`` turns it off before it imports the app), NumPy loaded as it loads it (OpenBLAS on one
# thread), then the app's package (PySide6 through app/qt_start.py, before any module that
# uses it), and the copies made here as ``extra_panels`` makes them, without loading the
# benchmarks' package (statistics, platform): so that the two starts differ by the panels alone.
_WITH_EXTRA = (
    "import gc, sys\n"
    "gc.disable()\n"
    "from attnsim.cli.gui import _numpy_on_one_blas_thread\n"
    "_numpy_on_one_blas_thread()\n"
    "import attnsim.app\n"
    "from attnsim import panels\n"
    "base = next(s for s in panels.PANEL_SPECS if s.panel_id == 'heatmap')\n"
    "panels.PANEL_SPECS.extend(\n"
    "    base._replace(panel_id=f'heatmap_copy{i + 1}', tab=f'Copy {i + 1}')\n"
    f"    for i in range({EXTRA_PANELS})\n"
    ")\n"
    "from attnsim.cli import main\n"
    "sys.exit(main(['gui']))\n"
)


def _launch_once(
    env: dict[str, str],
    extra: bool = False,
    cpu: list[float] | None = None,
    drawn: list[float] | None = None,
) -> float:
    """Milliseconds from the spawn to the first painted window; the child's CPU time to then
    (all its threads, from its own start) is appended to ``cpu`` when given, and the
    milliseconds from the spawn to the frame with every panel on screen made and drawn to
    ``drawn`` (when the app says: an older checkout does not)."""
    t0 = time.perf_counter()
    args = ["-c", _WITH_EXTRA] if extra else ["-m", "attnsim", "gui"]
    proc = subprocess.Popen(
        [sys.executable, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("first-paint"):
            elapsed = (time.perf_counter() - t0) * 1000
            words = line.replace(",", "").split()
            if cpu is not None and "cpu" in words:
                cpu.append(float(words[words.index("cpu") + 1]) * 1000)
            break
    else:
        proc.wait()
        raise RuntimeError("the app exited without painting its window")
    for line in proc.stdout:
        if line.startswith("panels-drawn") and drawn is not None:
            drawn.append((time.perf_counter() - t0) * 1000)
    proc.wait(timeout=30)
    return elapsed


def startup(quick: bool = False) -> list[Row]:
    """Time from process start to the first painted main window, offscreen.

    ``startup_cold``: with Python's bytecode cache empty and not written (every attnsim module
    compiled from source, as on the first launch after an install). ``startup_warm``: later
    launches with the bytecode cache in place, as every launch after the first. Both use a
    private cache folder (``PYTHONPYCACHEPREFIX``), so the measurement neither depends on nor
    litters the checkout, whatever PYTHONDONTWRITEBYTECODE says in the caller's environment.
    ``startup_warm_plus20``: the same with 20 more panels registered (copies of the heatmap,
    on dock tabs behind the others), launched in turn with the plain app; ``vs_plain`` is the
    median of the paired ratios: what a panel that is not on screen costs the start
    (``vs_plain_cpu`` the same by the children's CPU times to their first paint). The warm
    rows also give ``cpu_median_ms``, the median CPU time of the child to its first paint, and
    ``panels_drawn_median_ms``, the median time from the spawn to the frame with the panels on
    screen made and drawn (they open after the first frame, their docks saying so meanwhile).
    """
    with tempfile.TemporaryDirectory() as home:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = dict(
            base, QT_QPA_PLATFORM=offscreen_platform(), ATTNSIM_FIRST_PAINT="1", ATTNSIM_HOME=home
        )
        cold_env = dict(
            env, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=os.path.join(home, "pyc-cold")
        )
        warm_env = dict(env, PYTHONPYCACHEPREFIX=os.path.join(home, "pyc-warm"))
        cold = [_launch_once(cold_env) for _ in range(1 if quick else 3)]
        _launch_once(warm_env)  # fill the cache
        _launch_once(warm_env, extra=True)
        warm, plus, ratios, warm_cpu, plus_cpu = [], [], [], [], []
        warm_drawn: list[float] = []
        plus_drawn: list[float] = []
        for _ in range(3 if quick else 10):  # in turn, so that the ratio is paired
            warm.append(_launch_once(warm_env, cpu=warm_cpu, drawn=warm_drawn))
            plus.append(_launch_once(warm_env, extra=True, cpu=plus_cpu, drawn=plus_drawn))
            ratios.append(plus[-1] / warm[-1])
    median_warm = statistics.median(warm)
    return [
        summarize("startup_cold", cold),
        summarize(
            "startup_warm",
            warm,
            target_ms=500.0,
            meets_target=median_warm <= 500.0,
            **_cpu_median(warm_cpu),
            **_drawn_median(warm_drawn),
        ),
        summarize(
            f"startup_warm_plus{EXTRA_PANELS}",
            plus,
            extra_panels=EXTRA_PANELS,
            vs_plain=round(statistics.median(ratios), 3),
            **_cpu_ratio(plus_cpu, warm_cpu),
            **_cpu_median(plus_cpu),
            **_drawn_median(plus_drawn),
        ),
    ]


def _cpu_median(cpu_ms: list[float]) -> dict[str, float]:
    """``cpu_median_ms``: the child's median CPU time to its first paint (all its threads), a
    figure a loaded machine disturbs much less than the wall-clock time; none when the app
    did not say (an older checkout)."""
    return {"cpu_median_ms": round(statistics.median(cpu_ms), 1)} if cpu_ms else {}


def _cpu_ratio(plus_ms: list[float], plain_ms: list[float]) -> dict[str, float]:
    """``vs_plain_cpu``: the median of the paired ratios of the children's CPU times to their
    first paint (``vs_plain`` by the CPU time, which a loaded machine disturbs much less);
    none when the app did not say (an older checkout)."""
    if not plus_ms or len(plus_ms) != len(plain_ms):
        return {}
    ratios = [p / w for p, w in zip(plus_ms, plain_ms, strict=True)]
    return {"vs_plain_cpu": round(statistics.median(ratios), 3)}


def _drawn_median(drawn_ms: list[float]) -> dict[str, float]:
    """``panels_drawn_median_ms`` (see ``startup``); none when the app did not say."""
    return {"panels_drawn_median_ms": round(statistics.median(drawn_ms), 1)} if drawn_ms else {}


BENCHMARKS = {"startup": startup}
