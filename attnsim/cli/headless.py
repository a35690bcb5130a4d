"""Qt without a display, for the commands that draw (export, screenshot, figures)."""

from __future__ import annotations

import atexit
import json
import os
import sys
import tempfile
from pathlib import Path

# The offscreen platform says this for every dock; it means nothing for a figure.
HARMLESS = ("This plugin does not support propagateSizeHints()",)

# The desktop the window is laid out for when no size is asked for (the tests' screen too).
DESKTOP = (1600, 1000)


def headless(screen: tuple[int, int] = DESKTOP) -> None:
    """Use Qt's offscreen platform unless another is set, on a virtual screen of ``screen``
    (width, height) pixels, and pass Qt's messages to stderr except the harmless ones.

    The screen's size matters: the window arranges its docks for the screen it is on (fewer
    tab groups on a small one), and the offscreen platform's own screen is 800 x 800, so a
    screenshot at 1280 x 800 showed the layout of a small screen."""
    if "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = offscreen_platform(screen)
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode, _context, message: str) -> None:
        if message not in HARMLESS:
            sys.stderr.write(message + "\n")

    headless.handler = handler  # type: ignore[attr-defined]  # keep it alive
    qInstallMessageHandler(handler)


def offscreen_platform(screen: tuple[int, int] = DESKTOP) -> str:
    """The QT_QPA_PLATFORM value of Qt's offscreen platform on a ``screen`` (width, height)
    pixels wide (for a child process too: its own plain "offscreen" is an 800 x 800 screen)."""
    return f"offscreen:configfile={screen_file(*screen)}"


def screen_file(width: int, height: int) -> Path:
    """A screen description for the offscreen platform (its ``configfile``), removed at exit."""
    screen = {"name": "attnsim", "x": 0, "y": 0, "width": int(width), "height": int(height),
              "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}  # fmt: skip
    fd, name = tempfile.mkstemp(prefix="attnsim-screen-", suffix=".json")
    with os.fdopen(fd, "w", encoding="ascii") as f:
        json.dump({"screens": [screen]}, f)
    path = Path(name)
    atexit.register(path.unlink, missing_ok=True)
    return path
