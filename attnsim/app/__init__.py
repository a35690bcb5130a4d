"""The main window and the Qt application around it.

``window`` holds ``MainWindow``; its parts are mixins in ``docks`` (the panels' docks and
layout), ``menus`` (menus, Help, About), ``status`` (the status line), ``documents`` (open, save,
import, recovery) and ``figures`` (exports and the clipboard image). ``application`` makes the
QApplication and a window on a scenario; ``home`` is where settings and recovery files live and
checks every file read at start-up; ``recovery`` is each window's autosave file and the work of
windows that are no longer running; ``lab_states`` keeps the labs' settings in it.
"""

from attnsim.resources import scenario_path

from . import qt_start  # noqa: F401  (first of the Qt modules: see its doc)
from .application import DEFAULT_SCENARIO, build_window, create_app
from .docks import DOCK_GROUPS, FRAME_ALLOWANCE, PREFERRED_SIZE, dock_groups
from .documents import MAX_RECENT
from .home import app_home, recovery_dir, settings
from .window import MainWindow

__all__ = [
    "DEFAULT_SCENARIO",
    "DOCK_GROUPS",
    "FRAME_ALLOWANCE",
    "MAX_RECENT",
    "PREFERRED_SIZE",
    "MainWindow",
    "app_home",
    "build_window",
    "create_app",
    "dock_groups",
    "recovery_dir",
    "scenario_path",
    "settings",
]
