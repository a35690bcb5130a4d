"""Figures out of panels and widgets, one exporter module per format.

- :mod:`.figure`: what a figure is (a panel's content on white, or the whole panel) and
  :func:`write_figure`, which hands it to the format's exporter;
- :mod:`.registry`: the registered formats, the one list the dialog, the window and the command
  line offer; :mod:`.exporter`: what a format declares;
- :mod:`.png`, :mod:`.svg`, :mod:`.pdf`: the exporters; :mod:`.svg_repair`: what makes
  QSvgGenerator's output read the same everywhere.

The drawing names below load with :mod:`.figure` (and Qt) on first use, so importing this package
or its registry (``attnsim.export.registry``) starts no Qt.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .figure import (
        MODES,
        Figure,
        NothingToDrawError,
        copy_to_clipboard,
        export_panel,
        export_widget,
        figure_of,
        grab_image,
        hidpi_hint,
        render_image,
        write_figure,
    )
    from .svg_repair import clean_svg

_LAZY = {
    "MODES": "figure",
    "Figure": "figure",
    "NothingToDrawError": "figure",
    "copy_to_clipboard": "figure",
    "export_panel": "figure",
    "export_widget": "figure",
    "figure_of": "figure",
    "grab_image": "figure",
    "hidpi_hint": "figure",
    "render_image": "figure",
    "write_figure": "figure",
    "clean_svg": "svg_repair",
}

__all__ = [
    "MODES",
    "Figure",
    "NothingToDrawError",
    "clean_svg",
    "copy_to_clipboard",
    "export_panel",
    "export_widget",
    "figure_of",
    "grab_image",
    "hidpi_hint",
    "render_image",
    "write_figure",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
