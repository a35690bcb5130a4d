"""How long the window stops answering: the largest gap between the beats of a 10 ms timer.

``largest_ui_gap_n{2048,4096}`` open the main window (offscreen, the default layout) in a child
process on a random causal scenario of n tokens (d = 64), start a timer that should fire every
10 ms, and then, one after the other: make one undoable edit (the temperature), bring every
panel to the front in turn (as a click on its dock tab does), and make the edit again with
every panel built. Between two beats the event loop did nothing else; the largest gap is how
long a user's click or drag would have waited. The row's median is the largest gap over the
whole run; ``phases_ms`` gives the largest gap of each step (the window's start-up before the
first beat is not a gap: ``open_ms`` is reported apart), ``phases_cpu_ms`` the window thread's
CPU time in each step's largest CPU gap (what a loaded machine's wall clock hides). Goal: no
gap over :data:`TARGET_MS`.

Last, a drag of :data:`DRAG_S` seconds with the default layout: one token's vector moved
60 times a second, each move an edit with one drag id as the vector editor sends it. The row
``drag_shown_n{n}`` counts the states the panels were told of (each with its finished trace)
per second of the drag, beside the moves made; its median is the largest gap of the drag.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

from attnsim.cli.headless import offscreen_platform

from . import Row

SIZES = (2048, 4096)
DIM = 64
TARGET_MS = 100.0
BEAT_MS = 10
DRAG_S = 2.0
DRAG_MOVE_MS = 16


class _Heart:
    """A 10 ms timer and the times it fired: wall clock, and the window thread's CPU time (on a
    loaded machine the wall-clock gaps also hold the time other processes had the cores)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.beats: list[float] = []
        self.cpu: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(BEAT_MS)
        self.timer.timeout.connect(self._beat)
        self.timer.start()

    def _beat(self) -> None:
        self.beats.append(time.perf_counter())
        self.cpu.append(time.thread_time())

    def largest_gap_ms(self, since: int, *, cpu: bool = False) -> float:
        b = (self.cpu if cpu else self.beats)[max(since - 1, 0) :]
        gaps = [(b2 - b1) * 1000 for b1, b2 in itertools.pairwise(b)]
        return max(gaps, default=0.0)


def _settle(app, wb, win=None, quiet_s: float = 0.3, timeout_s: float = 600.0) -> None:
    """Run the event loop until the runner is idle, no panel of ``win`` is still being opened
    in steps, and ``quiet_s`` has passed since (a panel's steps left over from one step of the
    run would count in the next)."""
    end = time.monotonic() + timeout_s
    calm_since = None
    while time.monotonic() < end:
        app.processEvents()
        busy = (
            wb.computing
            or any(r._jobs or r.active_threads() > 0 for r in (wb.runner, wb.tracer))
            or (win is not None and win.panels_opening())
        )
        now = time.monotonic()
        if busy:
            calm_since = None
        elif calm_since is None:
            calm_since = now
        elif now - calm_since >= quiet_s:
            return
        time.sleep(0.002)


class _Steps:
    """The heartbeat of a window and the largest gap of each step of a run, in wall-clock time
    (``phases``) and in the window thread's CPU time (``cpu``)."""

    def __init__(self, app, wb, win=None) -> None:
        self.app, self.wb, self.win = app, wb, win
        self.heart = _Heart()
        self.phases: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def step(self, name: str, action) -> None:
        since = len(self.heart.beats)
        action()
        _settle(self.app, self.wb, self.win)
        self.note(name, since)

    def note(self, name: str, since: int) -> None:
        """The largest gaps since beat ``since``, as step ``name``."""
        self.phases[name] = round(self.heart.largest_gap_ms(since), 1)
        self.cpu[name] = round(self.heart.largest_gap_ms(since, cpu=True), 1)
        print(name, self.phases[name], self.cpu[name], file=sys.stderr, flush=True)


def collector_off_as_the_app_starts() -> None:
    """The cyclic collector as ``attnsim gui`` has it while the window is made: off."""
    gc.disable()


def collector_on_as_the_app_runs() -> None:
    """Then, once the panels on screen are in, what start-up made frozen out of its way and
    the collector back on, as ``attnsim gui`` does (without it, full collections walked the
    whole start-up again and again: 90-140 ms turns of CPU the app does not have)."""
    from attnsim.cli.gui import _collector_back_on

    _collector_back_on()


def child(n: int, dim: int = DIM) -> dict[str, object]:
    """In this process: the window on an n-token scenario; the largest gap of each step."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    collector_off_as_the_app_starts()
    from attnsim.app import MainWindow, create_app
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench

    t0 = time.perf_counter()
    app = create_app()
    wb = Workbench(random_scenario(n, dim, mask="causal", receiving=n - 1))
    win = MainWindow(wb, ask=lambda *_: False, restore_layout=False, autosave_ms=10**8)
    win.show()
    app.processEvents()
    open_ms = (time.perf_counter() - t0) * 1000
    collector_on_as_the_app_runs()
    steps = _Steps(app, wb, win)
    step, heart = steps.step, steps.heart

    def temperature() -> None:
        t = 1.1 if wb.scenario.temperature != 1.1 else 0.9
        wb.edit(wb.scenario.replace(temperature=t), "bench")

    step("(idle)", lambda: None)
    step("edit, default layout", temperature)

    def raise_tab(pid: str) -> None:  # what a click on the panel's dock tab does
        win.docks[pid].show()
        win.docks[pid].raise_()

    for pid in list(win.panels):
        step(f"show {pid}", lambda pid=pid: raise_tab(pid))
    step("edit, every panel built", temperature)
    for pid in ("vectors", "heatmap", "readout", "space3d"):  # the default layout's front tabs
        raise_tab(pid)
    _settle(app, wb, win)
    since = len(heart.beats)
    drag = _drag(app, wb)
    _settle(app, wb, win)
    drag["gap_ms"] = round(heart.largest_gap_ms(since), 1)
    print("drag", drag, file=sys.stderr, flush=True)
    return {"n": n, "open_ms": open_ms, "phases": steps.phases, "cpu_phases": steps.cpu,
            "drag": drag, "collector_on": gc.isenabled(),
            "collector_frozen": gc.get_freeze_count()}  # fmt: skip


def _drag(app, wb) -> dict[str, float]:
    """Move one token's vector 60 times a second for :data:`DRAG_S` seconds, as one drag."""
    import numpy as np
    from PySide6.QtCore import QTimer

    from attnsim.engine import edits
    from attnsim.model.workbench import new_drag_id

    told: list[float] = []
    wb.changed.connect(lambda _what: told.append(time.perf_counter()))
    drag, row = new_drag_id(), wb.scenario.n_tokens // 2
    start = np.array(wb.scenario.X[row])
    moves = [0]

    def move() -> None:  # the edit a drag of the vector's tip makes (the vector editor's)
        a = 2 * np.pi * moves[0] / 60
        vec = start.copy()
        vec[:2] = start[:2] + np.array([np.cos(a) - 1.0, np.sin(a)])
        wb.edit(edits.set_vector(wb.scenario, "x", row, vec), "bench drag", drag=drag)
        moves[0] += 1

    timer = QTimer()
    timer.setInterval(DRAG_MOVE_MS)
    timer.timeout.connect(move)
    t0 = time.perf_counter()
    timer.start()
    while time.perf_counter() - t0 < DRAG_S:
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    during = [t for t in told if t - t0 <= DRAG_S]
    return {"moves": moves[0], "shown": len(during), "shown_per_s": round(len(during) / DRAG_S, 1)}


def run_child(module: str, *args: int, what: str) -> dict[str, object]:
    """Run ``python -m module args`` on an offscreen screen with a home of its own; the JSON
    it printed last (``what`` names the run in the error if it failed)."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, QT_QPA_PLATFORM=offscreen_platform(), ATTNSIM_HOME=home)
        proc = subprocess.run(
            [sys.executable, "-m", module, *map(str, args)],
            env=env,
            capture_output=True,
            text=True,
            timeout=3000,
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"the window at {what} failed (exit {proc.returncode}): {tail}")
    return json.loads(lines[-1])


def _run_child(n: int) -> dict[str, object]:
    return run_child("attnsim.benchmarks.ui_gap", n, what=f"n = {n}")


def ui_gap(quick: bool = False) -> list[Row]:
    """One row per size in :data:`SIZES` (only the smaller with ``quick``)."""
    rows: list[Row] = []
    for n in SIZES[:1] if quick else SIZES:
        res = _run_child(n)
        phases: dict[str, float] = res["phases"]  # type: ignore[assignment]
        worst = max(phases, key=phases.__getitem__)
        gap = phases[worst]
        rows.append(
            {
                "name": f"largest_ui_gap_n{n}",
                "median_ms": gap,
                "p95_ms": gap,
                "runs": 1,
                "target_ms": TARGET_MS,
                "meets_target": gap <= TARGET_MS,
                "worst_step": worst,
                "open_ms": round(float(res["open_ms"])),  # type: ignore[arg-type]
                "phases_ms": phases,
                # the window thread's CPU time in each step's largest gap (load aside)
                "phases_cpu_ms": res.get("cpu_phases", {}),
            }
        )
        drag: dict[str, float] = res["drag"]  # type: ignore[assignment]
        rows.append(
            {
                "name": f"drag_shown_n{n}",
                "median_ms": drag["gap_ms"],
                "p95_ms": drag["gap_ms"],
                "runs": 1,
                "moves": drag["moves"],
                "states_shown": drag["shown"],
                "shown_per_s": drag["shown_per_s"],
            }
        )
    return rows


BENCHMARKS = {"largest_ui_gap": ui_gap}


if __name__ == "__main__":
    # `python -m attnsim.benchmarks.ui_gap N [D]`: one child, by hand (D: the width, default 64)
    print(json.dumps(child(*(int(a) for a in sys.argv[1:3]))), flush=True)
