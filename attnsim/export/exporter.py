"""What an export format is: a name, a line of description, vector or raster, and the function
that writes a figure in it. Qt-free, like the registry (:mod:`attnsim.export.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Exporter", "Writer"]

# Writes a figure to a path: (figure, path, *, scale, title). ``scale`` is the raster scale
# (pixels per screen pixel); ``title`` the document's metadata title where the format has one.
Writer = Callable[..., None]


@dataclass(frozen=True)
class Exporter:
    """One export format."""

    name: str  # what the user types and picks: "png"
    description: str  # one line, e.g. for a file dialog's filter or a help text
    vector: bool  # vector output ignores the scale; raster output is drawn at it
    write: Writer  # write(fig, path, *, scale, title): writes the file or raises OSError

    @property
    def suffix(self) -> str:
        """The file name suffix, with its dot: ".png"."""
        return f".{self.name}"

    @property
    def label(self) -> str:
        """How a dialog shows the format: "PNG"."""
        return self.name.upper()
