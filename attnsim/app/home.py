"""Where the app keeps its settings and its recovery file."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings


def app_home() -> Path:
    """Where settings and the recovery file live (ATTNSIM_HOME overrides, e.g. in tests)."""
    env = os.environ.get("ATTNSIM_HOME")
    base = Path(env) if env else Path.home() / ".attnsim"
    base.mkdir(parents=True, exist_ok=True)
    return base


def settings() -> QSettings:
    return QSettings(str(app_home() / "settings.ini"), QSettings.Format.IniFormat)


def recovery_file() -> Path:
    return app_home() / "recovery.json"
