"""A real attnsim window that works by itself, for the crash tests (run as its own process).

``python recovery_driver.py edits SECONDS``: a temperature edit every 0.5 s;
``drag SECONDS``: one drag of X[0, 0], a move every 50 ms; ``idle T``: one edit to temperature
T, then nothing. Each edit prints ``edit VALUE UNIX_TIME``; ``saved`` once the window's
recovery file exists, ``done`` when the work is over (the window keeps running until killed).
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer

from attnsim.app import MainWindow, create_app
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.resources import resolve_scenario


def main() -> None:
    mode, amount = sys.argv[1], float(sys.argv[2])
    app = create_app(["attnsim"])
    win = MainWindow(Workbench(resolve_scenario("river-bank")))  # the app's own timers
    win.show()
    wb = win.wb
    start = time.time()
    state = {"k": 0, "saved": False, "done": False}
    drag = new_drag_id()
    x0 = wb.scenario.X.copy()

    def say(text: str) -> None:
        print(text, flush=True)

    def tick() -> None:
        if not state["saved"] and win.recovery_path is not None and win.recovery_path.exists():
            state["saved"] = True
            say("saved")
        if mode == "idle":
            return
        if time.time() - start > amount:
            if not state["done"]:  # a late tick (a loaded machine) still ends the work
                state["done"] = True
                say("done")
            return
        state["k"] += 1
        if mode == "edits":
            value = 1 + state["k"] / 100
            wb.edit(wb.scenario.replace(temperature=value), "T")
        else:
            value = float(x0[0, 0] + state["k"] / 100)
            X = x0.copy()
            X[0, 0] = value
            wb.edit(wb.scenario.replace(X=X), "Drag", drag=drag)
        say(f"edit {value!r} {time.time()!r}")
        if time.time() - start + timer.interval() / 1000 > amount:
            state["done"] = True
            say("done")

    if mode == "idle":
        wb.edit(wb.scenario.replace(temperature=amount), "T")
        say(f"edit {amount!r} {time.time()!r}")
    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(500 if mode == "edits" else 50 if mode == "drag" else 20)
    say("ready")
    app.exec()


if __name__ == "__main__":
    main()
