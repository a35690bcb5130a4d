"""A start-up that reports instead of waiting for a person (``ATTNSIM_STARTUP_REPORT``): the
tests start the real ``attnsim gui`` this way to see what a user would be asked and shown."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from .window import MainWindow


def startup_report(app: QApplication, win: MainWindow, out: Path) -> int:
    """For tests: start as a user would, answer the recovery questions with
    ATTNSIM_STARTUP_ANSWER (yes or no), write what was asked and shown to ``out``, then close
    the window as a user would and quit."""
    answer = os.environ.get("ATTNSIM_STARTUP_ANSWER", "no") == "yes"
    asked: list[str] = []
    win._ask = lambda title, text: asked.append(text) or answer

    def done() -> None:
        restored = win.offer_recovery()
        record = {
            "asked": asked,
            "restored": restored,
            "scenario": win.wb.scenario.name,
            "temperature": win.wb.scenario.temperature,
            "x00": None if win.wb.scenario.X is None else float(win.wb.scenario.X[0, 0]),
            "status": win.statusBar().currentMessage(),
            "visible": win.isVisible(),
        }
        out.write_text(json.dumps(record), encoding="utf-8")
        win._ask_quit = lambda: "discard"  # quit without keeping the restored work
        win.close()
        app.quit()

    QTimer.singleShot(0, done)
    return app.exec()
