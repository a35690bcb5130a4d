"""The Qt application (style sheet, icon, plot pens for the screen) and a window on a scenario."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from attnsim.model.workbench import Workbench
from attnsim.panels.kit.hidpi import scale_plot_pens
from attnsim.resources import resolve_scenario, resource_path

from .window import MainWindow

DEFAULT_SCENARIO = "river-bank"

# The window's process does its NumPy work on one BLAS thread (the limit is kept for good).
# Its products are small or many; beside the window's own thread and the background runner,
# OpenBLAS's extra threads fight for the cores: on a busy 2-core machine the 3-D view's QR of
# the 4,096 query and key rows at n = 2,048 took 660-990 ms with two BLAS threads and 7 ms
# with one, and an edit there held the window 1.3 s instead of 0.2 s.
_BLAS_LIMIT: list[object] = []

# Background work (traces, labs' runs, autosave) hands the interpreter back to the window's
# thread within this long, not Python's default 5 ms. The window's thread lets go of the lock
# in every call into Qt and waits up to this long to get it back while a worker runs Python:
# a panel's first show at n = 4,096 made ~40 such calls beside the scaling lab's run and
# waited 60-100 ms in all (its own work 25-50 ms; 21 calls of addWidget alone took 27 ms).
# With 0.2 ms instead of 1 ms, the null-space lab's first show at n = 4,096 took 20, 44 and 19
# ms in three runs (109, 21 and 20 with 1 ms: the wait comes when a worker is busy then).
SWITCH_INTERVAL_S = 0.0002


def create_app(argv: list[str] | None = None, *, blas_on_one_thread: bool = False) -> QApplication:
    """The application. ``blas_on_one_thread``: the caller loaded NumPy's BLAS on one thread
    already (``attnsim gui`` does), so no limit is set (finding the libraries to limit costs
    about 10 ms of CPU)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv or ["attnsim"])
    assert isinstance(app, QApplication)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    if not _BLAS_LIMIT:
        if blas_on_one_thread:
            _BLAS_LIMIT.append("loaded on one thread")
        else:
            from threadpoolctl import threadpool_limits

            _BLAS_LIMIT.append(threadpool_limits(limits=1, user_api="blas"))
    # Plot strokes as heavy on a 2x screen as on a 1x one (pyqtgraph counts device pixels).
    # At 1x there is nothing to change in a pyqtgraph not loaded yet (the window's first frame
    # draws no plot; pyqtgraph loads when the first panel opens).
    ratio = app.primaryScreen().devicePixelRatio()
    if ratio > 1.0 or "pyqtgraph" in sys.modules:
        scale_plot_pens(ratio)
    app.setApplicationName("attnsim")
    app.setOrganizationName("attnsim")
    style = resource_path("style.qss")
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    icon = resource_path("icons", "attnsim.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def build_window(scenario: str | None = None, **kwargs) -> MainWindow:
    """Create the workbench and the main window for a preset name or a scenario path."""
    sc = resolve_scenario(scenario or DEFAULT_SCENARIO)
    wb = Workbench(sc)
    path = None
    if scenario and (scenario.endswith(".json") or Path(scenario).exists()):
        path = Path(scenario)
    wb.path = path
    win = MainWindow(wb, **kwargs)
    return win
