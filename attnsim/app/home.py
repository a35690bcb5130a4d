"""Where the app keeps its settings and its recovery files, and the checks every file read at
start-up passes: a file that fails them is set aside (renamed with ``.bad-`` and the time) and
named in the status bar, and the window starts all the same."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from attnsim.engine.scenario import ScenarioError
from attnsim.engine.scenario.files import read_bytes

SETTINGS_NAME = "settings.ini"
MAX_SETTINGS_BYTES = 1 << 20  # the window's layout and eight recent files take a few KB
MAX_RECENT_PATH = 4096
# Problems found while finding the home folder, for the first window's status bar.
_home_problems: list[str] = []


def set_aside(path: Path) -> Path:
    """Rename ``path`` (file or folder) to ``<name>.bad-<time>`` beside it; the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bad-{stamp}")
    k = 1
    while target.exists() or target.is_symlink():
        k += 1
        target = path.with_name(f"{path.name}.bad-{stamp}-{k}")
    path.rename(target)
    return target


def _folder(path: Path) -> Path:
    """``path`` as a folder: a file in its place is set aside first."""
    if (path.exists() or path.is_symlink()) and not path.is_dir():
        moved = set_aside(path)
        _home_problems.append(
            f"{path} was a file where attnsim keeps a folder; it was moved aside to {moved.name}."
        )
    path.mkdir(parents=True, exist_ok=True)
    return path


def app_home() -> Path:
    """Where settings and recovery files live (ATTNSIM_HOME overrides, e.g. in tests)."""
    env = os.environ.get("ATTNSIM_HOME")
    base = Path(env) if env else Path.home() / ".attnsim"
    try:
        return _folder(base)
    except OSError as exc:
        fallback = Path(tempfile.gettempdir()) / f"attnsim-{os.getuid()}"
        note = (
            f"attnsim cannot use {base} ({exc.strerror or exc}); settings and autosaves go to "
            f"{fallback} for now."
        )
        if note not in _home_problems:
            _home_problems.append(note)
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def recovery_dir() -> Path:
    """The folder of the windows' recovery files (one per window with unsaved work)."""
    home = app_home()
    try:
        return _folder(home / "recovery")
    except OSError:
        return home


def settings_file() -> Path:
    return app_home() / SETTINGS_NAME


def settings() -> QSettings:
    return QSettings(str(settings_file()), QSettings.Format.IniFormat)


def home_problems() -> list[str]:
    """What went wrong finding the home folder (each said once)."""
    out = list(_home_problems)
    _home_problems.clear()
    return out


# ---- checking a file before reading it ----------------------------------------------------------
def read_startup_bytes(path: Path, max_bytes: int, error: type[Exception]) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``error(sentence)`` otherwise.

    The engine's reader refuses a named pipe or a device before it is opened (reading one could
    wait forever or never end), and a file larger than the limit; an empty file is refused too,
    since attnsim never writes one.
    """
    try:
        data = read_bytes(path, "(file)", max_bytes)
    except ScenarioError as exc:
        raise error(exc.problem) from None
    if not data:
        raise error("is empty")
    return data


def read_startup_file(path: Path, max_bytes: int, error: type[Exception]) -> Any:
    """The JSON in ``path``, checked as :func:`read_startup_bytes` does and then decoded."""
    data = read_startup_bytes(path, max_bytes, error)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"is not UTF-8 text (byte {exc.start} cannot be read)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise error("is nested too deeply to read") from None
    except MemoryError:
        raise error("is too large to read") from None


class SettingsError(ValueError):
    pass


def _check_settings_values(s: QSettings) -> None:
    if s.status() != QSettings.Status.NoError:
        raise SettingsError("is not a settings file attnsim can read")
    for key in ("geometry", "state"):
        v = s.value(key)
        if v is not None and not isinstance(v, QByteArray):
            raise SettingsError(f"its saved window layout ('{key}') is not a layout")
    recent = s.value("recent")
    if recent is None:
        return
    items = [recent] if isinstance(recent, str) else recent
    if not isinstance(items, list):
        raise SettingsError("its list of recent files is not a list of file names")
    for item in items:
        ok = isinstance(item, str) and 0 < len(item) <= MAX_RECENT_PATH and "\0" not in item
        if not ok:
            raise SettingsError(f"its recent file {str(item)[:40]!r} is not a file name")
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:
            raise SettingsError("a recent file's name cannot be written back") from None


def check_settings() -> list[str]:
    """Check the settings file (layout, recent files); set it aside if it is bad.

    Returns sentences for the status bar: which file was set aside and why.
    """
    path = settings_file()
    if not (path.exists() or path.is_symlink()):
        return []
    if path.is_file() and path.stat().st_size == 0:
        return []  # Qt reads an empty file as no settings
    try:
        raw = read_startup_bytes(path, MAX_SETTINGS_BYTES, SettingsError)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SettingsError(f"is not UTF-8 text (byte {exc.start} cannot be read)") from None
        _check_settings_values(QSettings(str(path), QSettings.Format.IniFormat))
    except SettingsError as exc:
        why = str(exc)
    except Exception as exc:  # whatever a hostile file finds: set it aside, start anyway
        why = f"cannot be read ({type(exc).__name__})"
    else:
        return []
    try:
        moved = set_aside(path)
    except OSError as exc:
        return [f"The settings file {path} {why}; it could not be moved aside ({exc.strerror})."]
    return [
        f"The settings file {path} {why}; it was moved aside to {moved.name} and the default "
        "layout is used."
    ]
