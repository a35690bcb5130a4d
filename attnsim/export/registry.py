"""The export formats, registered in one place.

Every place that offers a format (the Export panel dialog, File ▸ Export all panels, the command
line's ``--format``, :func:`attnsim.export.write_figure`) asks this module, at the moment it
needs them, for the registered :class:`~attnsim.export.exporter.Exporter` objects. A new format
is one module that defines an ``EXPORTER`` (see :mod:`attnsim.export.png`) and one
:func:`register` line in :func:`_built_in` at the bottom of this file.

The registry loads no Qt: the exporters import Qt when they write, so the command line can build
its parser (and list the formats in its help) without starting Qt.
"""

from __future__ import annotations

from pathlib import Path

from .exporter import Exporter

__all__ = [
    "DIALOG_FIRST",
    "Exporter",
    "exporter",
    "exporter_for",
    "exporters",
    "names",
    "register",
    "unregister",
]

_EXPORTERS: dict[str, Exporter] = {}

# The format the Export panel dialog starts on (then the others in registration order).
DIALOG_FIRST = "svg"


def register(exp: Exporter) -> Exporter:
    """Add ``exp`` to the registered formats (after those already there) and return it."""
    name = exp.name
    if not name or name != name.lower() or not name.isalnum():
        raise ValueError(f"an export format's name is a lower-case word, got {name!r}")
    if name in _EXPORTERS:
        raise ValueError(f"the export format {name!r} is registered already")
    _EXPORTERS[name] = exp
    return exp


def unregister(name: str) -> None:
    """Remove a registered format (tests that register a fake one take it out again)."""
    del _EXPORTERS[name]


def exporters() -> tuple[Exporter, ...]:
    """Every registered format, in registration order."""
    return tuple(_EXPORTERS.values())


def names() -> tuple[str, ...]:
    """The registered formats' names, in registration order: ("png", "svg", "pdf")."""
    return tuple(_EXPORTERS)


def exporter(name: str) -> Exporter:
    """The registered format called ``name`` (any case); ValueError naming the choices if none."""
    found = _EXPORTERS.get(name.lower())
    if found is None:
        raise ValueError(
            f"unknown figure format {name.lower()!r}; choose one of {', '.join(names())}"
        )
    return found


def exporter_for(path: str | Path, fmt: str | None = None) -> Exporter:
    """The format ``fmt`` names, or else the one ``path``'s suffix names."""
    if fmt is not None:
        return exporter(fmt)
    suffix = Path(path).suffix.lower()
    for exp in _EXPORTERS.values():
        if exp.suffix == suffix:
            return exp
    return exporter(suffix.lstrip("."))


def _built_in() -> None:
    from . import pdf, png, svg

    # The registration: one line per format, in the order the formats are listed.
    register(png.EXPORTER)
    register(svg.EXPORTER)
    register(pdf.EXPORTER)


_built_in()


def _built_in_sessions() -> None:
    # The session exporters (attnsim.export.session): the whole scenario as code, not a figure.
    from . import code_notebook, code_script
    from .session import register_session

    register_session(code_script.EXPORTER)
    register_session(code_notebook.EXPORTER)


_built_in_sessions()
