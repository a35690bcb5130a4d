"""``attnsim gui`` (the default command): open the main window."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

from .options import load_scenario

__all__ = ["cmd_gui", "gui_only_args"]

BLAS_THREADS_VAR = "OPENBLAS_NUM_THREADS"
COLLECTOR_LATEST_MS = 10_000
_LOADED_ON_ONE_THREAD = [False]  # [True] once NumPy's OpenBLAS was loaded on one thread here


def gui_only_args(argv: list[str]) -> argparse.Namespace | None:
    """The arguments of a plain start of the app, or None for anything else (another command,
    ``--help``, an option the full command line must check)."""
    rest = list(argv)
    scenario = None
    if rest[:1] == ["gui"]:
        rest = rest[1:]
    if len(rest) == 1 and rest[0].startswith("--scenario="):
        scenario = rest[0].split("=", 1)[1]
    elif len(rest) == 2 and rest[0] == "--scenario" and not rest[1].startswith("-"):
        scenario = rest[1]
    elif rest:
        return None
    if scenario == "":
        return None  # let the full command line say what is wrong
    return argparse.Namespace(command="gui", scenario=scenario, lesson=None)


def cmd_gui(args: argparse.Namespace) -> int:
    # Start-up makes hundreds of thousands of objects and almost no garbage: the cyclic
    # collector would walk them again and again (about 6 % of the time to the first frame).
    # It comes back once the panels on screen are in, with what start-up made frozen out of
    # its way.
    collector_was_on = gc.isenabled()
    gc.disable()
    blas_on_one_thread = _numpy_on_one_blas_thread()
    from attnsim.app import MainWindow, create_app
    from attnsim.model.workbench import Workbench

    t0 = time.perf_counter()
    scenario = getattr(args, "scenario", None)
    # A large file is read while the window is up (in a child process): the window opens at
    # once on the usual start, and the file's scenario replaces it when it is read.
    from attnsim.app.opening import is_large_file

    large = scenario if scenario and is_large_file(scenario) else None
    try:
        sc = load_scenario("river-bank" if large else (scenario or "river-bank"))
    except BaseException:  # refused before any window: the collector as it was
        if collector_was_on:
            gc.enable()
        raise
    app = create_app(sys.argv[:1], blas_on_one_thread=blas_on_one_thread)
    wb = Workbench(sc)
    if scenario and not large and (scenario.endswith(".json") or Path(scenario).exists()):
        wb.path = Path(scenario)
    # The window's first frame comes before the panels on screen, which open in the turns
    # after it (their docks say "Opening …" meanwhile).
    win = MainWindow(wb, panels_after_first_frame=True)
    win.show()
    from PySide6.QtCore import QTimer

    if large:
        win.open_path(large)

    # The collector comes back once the panels on screen are in (they are made after the
    # first frame and make most of start-up's objects), or after COLLECTOR_LATEST_MS at most.
    win.panels_in.connect(_collector_back_on)
    QTimer.singleShot(COLLECTOR_LATEST_MS, _collector_back_on)
    if os.environ.get("ATTNSIM_FIRST_PAINT"):
        # For the startup benchmark: report the first painted frame, then the frame with every
        # panel on screen made and drawn, then quit.
        def painted() -> None:
            for panel in win.panels.built().values():  # the panels on screen
                panel.flush()
            win.repaint()
            collector = (
                f"collector {'on' if gc.isenabled() else 'off'}, {gc.get_freeze_count()} frozen"
            )
            # and the CPU time the process has used so far (all its threads), which a loaded
            # machine stretches far less than the wall-clock time
            cpu = f"cpu {time.process_time():.6f}"
            print(f"first-paint {time.perf_counter() - t0:.6f} {collector}, {cpu}", flush=True)
            QTimer.singleShot(1, panels_drawn)

        def panels_drawn() -> None:
            if win.panels_opening():
                QTimer.singleShot(1, panels_drawn)
                return
            for panel in win.panels.built().values():
                panel.flush()
            win.repaint()
            seen = len(win.panels.built())
            collector = (
                f"collector {'on' if gc.isenabled() else 'off'}, {gc.get_freeze_count()} frozen"
            )
            cpu = f"cpu {time.process_time():.6f}"
            print(
                f"panels-drawn {time.perf_counter() - t0:.6f} {seen} panels, {collector}, {cpu}",
                flush=True,
            )
            app.quit()

        QTimer.singleShot(0, painted)
        return app.exec()
    report = os.environ.get("ATTNSIM_STARTUP_REPORT")
    if report:
        from attnsim.app.report import startup_report

        return startup_report(app, win, Path(report))
    win.offer_recovery()
    lesson = getattr(args, "lesson", None)
    if lesson:
        win.open_lesson(lesson)
    else:
        win.offer_first_lesson()
    return app.exec()


def _numpy_on_one_blas_thread() -> bool:
    """Load NumPy with OpenBLAS on one thread from the start; True if NumPy's BLAS is OpenBLAS
    and was loaded so (it needs no limit then).

    The window's process runs BLAS on one thread for good (``create_app`` sets the limit); an
    OpenBLAS loaded with its default pool first starts and sets up a thread per core, which
    cost about 60 ms of CPU at start-up and is never used. The variable is set only while
    NumPy loads (children of the window get the environment they had) and never overrides a
    value the user set.
    """
    if "numpy" in sys.modules or BLAS_THREADS_VAR in os.environ:
        return _LOADED_ON_ONE_THREAD[0]  # what an earlier call did (the benchmark's)
    os.environ[BLAS_THREADS_VAR] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ[BLAS_THREADS_VAR]
    _LOADED_ON_ONE_THREAD[0] = _numpy_blas_is_openblas()
    return _LOADED_ON_ONE_THREAD[0]


def _numpy_blas_is_openblas() -> bool:
    """Whether NumPy was built on OpenBLAS (the library the variable above speaks to)."""
    try:
        from numpy import __config__

        name = __config__.CONFIG["Build Dependencies"]["blas"]["name"]
    except Exception:  # an older or unusual NumPy: the limit is set as always
        return False
    return "openblas" in str(name).lower()


def _collector_back_on() -> None:
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
