"""Session exporters: the whole scenario as one file (a Python script, a Jupyter notebook).

A figure exporter (:class:`~attnsim.export.exporter.Exporter`) writes a panel's picture at a
scale; a session exporter writes the scenario itself, with a note of what it leaves out, so it is
a second, small kind with its own list. The formats are registered in
:mod:`attnsim.export.registry` (one line each); File ▸ Export as… and ``attnsim export-code``
ask this module for them. Qt-free, and no exporter loads its libraries before it writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attnsim.engine.scenario import Scenario

__all__ = [
    "SessionExporter",
    "register_session",
    "session_exporter",
    "session_exporter_for",
    "session_exporters",
    "unregister_session",
    "write_text_atomically",
]

# Makes the file's text: (scenario, *, notes) -> str. ``notes`` are sentences naming what was
# changed in the session but is not part of the scenario (a lab's settings).
Render = Callable[..., str]


@dataclass(frozen=True)
class SessionExporter:
    """One way to write the session: a name (its suffix too), a label and the text it writes."""

    name: str  # "py"
    label: str  # "Python script": the menu, the file dialog, the messages
    render: Render

    @property
    def suffix(self) -> str:
        return f".{self.name}"

    def write(self, sc: Scenario, path: str | Path, *, notes: Sequence[str] = ()) -> Path:
        """Write ``sc`` to ``path`` (never half a file: see :func:`write_text_atomically`)."""
        return write_text_atomically(Path(path), self.render(sc, notes=tuple(notes)))


_SESSION_EXPORTERS: dict[str, SessionExporter] = {}


def _registered() -> dict[str, SessionExporter]:
    from . import registry  # noqa: F401  (its last lines register the built-in formats)

    return _SESSION_EXPORTERS


def register_session(exp: SessionExporter) -> SessionExporter:
    name = exp.name
    if not name or name != name.lower() or not name.isalnum():
        raise ValueError(f"a session format's name is a lower-case word, got {name!r}")
    if name in _SESSION_EXPORTERS:
        raise ValueError(f"the session format {name!r} is registered already")
    _SESSION_EXPORTERS[name] = exp
    return exp


def unregister_session(name: str) -> None:
    del _SESSION_EXPORTERS[name]


def session_exporters() -> tuple[SessionExporter, ...]:
    return tuple(_registered().values())


def session_exporter(name: str) -> SessionExporter:
    found = _registered().get(name.lower().lstrip("."))
    if found is None:
        choices = ", ".join(e.suffix for e in _SESSION_EXPORTERS.values())
        raise ValueError(f"the session can be written as {choices}, not {name!r}")
    return found


def session_exporter_for(path: str | Path) -> SessionExporter:
    """The session format ``path``'s suffix names; ValueError naming the choices if none."""
    suffix = Path(path).suffix.lower()
    found = _registered().get(suffix.lstrip(".")) if suffix else None
    if found is None:
        choices = " or ".join(e.suffix for e in _SESSION_EXPORTERS.values())
        raise ValueError(f"{path}: the file name must end in {choices}")
    return found


def write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place.

    A failure part way (a full disk, an error while writing) removes the temporary file and
    leaves ``path`` as it was, so no half-written export is ever left behind.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        # Name the file the user asked for, not the temporary one.
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
