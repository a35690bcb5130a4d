"""Qt without a display, for the commands that draw (export, screenshot, figures)."""

from __future__ import annotations

import os
import sys

# The offscreen platform says this for every dock; it means nothing for a figure.
HARMLESS = ("This plugin does not support propagateSizeHints()",)


def headless() -> None:
    """Use Qt's offscreen platform unless another is set, and pass Qt's messages to stderr
    except the harmless ones."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode, _context, message: str) -> None:
        if message not in HARMLESS:
            sys.stderr.write(message + "\n")

    headless.handler = handler  # type: ignore[attr-defined]  # keep it alive
    qInstallMessageHandler(handler)
