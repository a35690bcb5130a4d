"""``autosave_n2048_d{64,1024}``: how long an autosave holds up the UI thread.

A window's autosave takes the document (references to its frozen arrays) on the UI thread and
encodes and writes it on another. Each run starts one write of a random scenario of n = 2,048
tokens while a 1 ms timer ticks on the UI thread, and records the longest gap between ticks
during the write (the UI thread waiting for the interpreter), the time the call itself took on
the UI thread, and how long the write took in the background. ``median_ms`` is the longest gap;
``idle_gap_ms`` the longest gap of the same loop over the same time with no write, which is
what this machine's scheduler gives anyway.
"""

from __future__ import annotations

import os
import tempfile
import time

from . import Row, qt_app, summarize


def _one_write(app, slot, work, *, write: bool = True, for_s: float = 0.0) -> tuple:
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer

    done: list[str] = []
    slot.written.connect(done.append)
    clock = QElapsedTimer()
    gaps: list[float] = []
    last = [0.0]

    def tick() -> None:
        now = clock.nsecsElapsed() / 1e6
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(1)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)
    timer.start()
    for _ in range(20):  # the timer is running before the write starts
        app.processEvents()
        time.sleep(0.001)
    clock.start()
    t0 = time.perf_counter()
    if write:
        slot.write(work)
    else:
        done.append("")  # the same loop with no write: the gaps a busy machine gives anyway
    call_ms = (time.perf_counter() - t0) * 1e3
    last[0] = clock.nsecsElapsed() / 1e6
    end = time.perf_counter() + for_s
    while not done or time.perf_counter() < end:
        app.processEvents()
    if write:
        slot.on_written()
    timer.stop()
    slot.written.disconnect(done.append)
    return max([call_ms, *gaps]), call_ms, slot.last_write_s * 1e3 if write else 0.0


def autosave(quick: bool = False) -> list[Row]:
    app = qt_app()
    from attnsim.app.recovery import RecoverySlot, Work
    from attnsim.engine.scenario.model import random_scenario

    rows: list[Row] = []
    old = os.environ.get("ATTNSIM_HOME")
    with tempfile.TemporaryDirectory(prefix="attnsim-bench-home-") as home:
        os.environ["ATTNSIM_HOME"] = home
        try:
            for d in (64, 1024):
                work = Work(random_scenario(2048, d), None, {})
                slot = RecoverySlot()
                runs, idle = [], []
                for _ in range(3 if quick else 7):
                    runs.append(_one_write(app, slot, work))
                    idle.append(_one_write(app, slot, work, write=False, for_s=runs[-1][2] / 1e3))
                size = slot.file.stat().st_size if slot.file else 0
                slot.release()
                rows.append(
                    summarize(
                        f"autosave_n2048_d{d}",
                        [r[0] for r in runs],
                        ui_call_ms=sorted(r[1] for r in runs)[len(runs) // 2],
                        write_ms=sorted(r[2] for r in runs)[len(runs) // 2],
                        idle_gap_ms=sorted(r[0] for r in idle)[len(idle) // 2],
                        file_mb=round(size / 1e6, 1),
                    )
                )
        finally:
            if old is None:
                os.environ.pop("ATTNSIM_HOME", None)
            else:
                os.environ["ATTNSIM_HOME"] = old
    return rows


BENCHMARKS = {"autosave_n2048": autosave}
