"""Peak memory of the whole app on the largest scenarios it accepts.

``app_peak_rss_n{2048,4096}_d1024`` start the main window (offscreen, every panel) in a child
process on a random causal scenario of n tokens in d = 1,024 dimensions (the size limits are
n = 4,096 and d = 1,024), bring each panel to the front in turn so that it computes and draws,
wait for its background work, and report the child's peak resident set size
(``ru_maxrss``) in MB, with the panel whose turn raised the peak the most. The child runs
under an address-space limit (:data:`ADDRESS_LIMIT_GB`), so a feature that tries to allocate
far too much fails in the child (reported as ``errors``) instead of swapping the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from attnsim.cli.headless import offscreen_platform

from . import Row

SIZES = ((2048, 1024), (4096, 1024))
TARGET_MB = 1500.0
ADDRESS_LIMIT_GB = 12


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # kB on Linux


def _settle(app, wb, timeout_s: float = 300.0) -> None:
    """Process events until the workbench's runner has no job left (or ``timeout_s``)."""
    end = time.monotonic() + timeout_s
    quiet = 0
    while time.monotonic() < end and quiet < 5:
        app.processEvents()
        busy = bool(wb.runner._jobs) or wb.runner.active_threads() > 0
        quiet = 0 if busy else quiet + 1
        time.sleep(0.02)


def child(n: int, d: int) -> dict[str, object]:
    """In this process: the window on an n × d scenario, every panel shown; the peak RSS."""
    import resource

    limit = ADDRESS_LIMIT_GB * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from attnsim.app import MainWindow, create_app
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench

    app = create_app()
    wb = Workbench(random_scenario(n, d, mask="causal", receiving=n - 1))
    errors: list[str] = []
    wb.message.connect(lambda text: errors.append(text) if "rror" in text else None)
    win = MainWindow(wb, ask=lambda *_: False, restore_layout=False, autosave_ms=10**8)
    win.show()
    _settle(app, wb)
    panels: dict[str, list[float]] = {"(window)": [_rss_mb(), _peak_mb()]}
    for pid in list(win.panels):
        try:
            panel = win._bring_forward(pid)
            _settle(app, wb)
            panel.grab()  # draw it, as on screen
            _settle(app, wb)
        except MemoryError as exc:
            errors.append(f"{pid}: MemoryError {exc}")
        panels[pid] = [_rss_mb(), _peak_mb()]
        print(pid, *(round(x) for x in panels[pid]), file=sys.stderr, flush=True)
    win.write_recovery()
    panels["(recovery)"] = [_rss_mb(), _peak_mb()]
    return {"n": n, "d": d, "peak_mb": _peak_mb(), "panels": panels, "errors": errors}


def _run_child(n: int, d: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, QT_QPA_PLATFORM=offscreen_platform(), ATTNSIM_HOME=home)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "attnsim.benchmarks.memory", str(n), str(d)],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        elapsed = (time.perf_counter() - t0) * 1000
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])
        return {"n": n, "d": d, "peak_mb": None, "errors": [f"exit {proc.returncode}: {tail}"],
                "panels": {}, "elapsed_ms": elapsed}  # fmt: skip
    out = json.loads(lines[-1])
    out["elapsed_ms"] = elapsed
    # a panel's drawing error is caught and shown in the panel; its traceback goes to stderr
    out["errors"] += [ln for ln in proc.stderr.splitlines() if "MemoryError" in ln]
    return out


def peak_rss(quick: bool = False) -> list[Row]:
    """One row per size in :data:`SIZES` (only the largest with ``quick``)."""
    rows: list[Row] = []
    for n, d in SIZES[-1:] if quick else SIZES:
        res = _run_child(n, d)
        panels: dict[str, list[float]] = res.get("panels", {})  # type: ignore[assignment]
        steps, before = {}, 0.0
        for pid, (_, peak) in panels.items():
            steps[pid] = round(peak - before, 1)
            before = max(before, peak)
        worst = max(steps, key=steps.__getitem__) if steps else None
        peak = res["peak_mb"]
        rows.append(
            {
                "name": f"app_peak_rss_n{n}_d{d}",
                "median_ms": res["elapsed_ms"],
                "p95_ms": res["elapsed_ms"],
                "runs": 1,
                "peak_rss_mb": peak,
                "target_mb": TARGET_MB,
                "meets_target": peak is not None and peak <= TARGET_MB,  # type: ignore[operator]
                "largest_step": worst,
                "largest_step_mb": steps.get(worst) if worst else None,
                "steps_mb": steps,
                "errors": res["errors"],
            }
        )
    return rows


BENCHMARKS = {"app_peak_rss": peak_rss}


if __name__ == "__main__":
    print(json.dumps(child(int(sys.argv[1]), int(sys.argv[2]))), flush=True)
    os._exit(0)  # skip tearing the window down: the measurement is taken
