"""PNG: the figure rendered at 1 to 4 times its on-screen size.

This module is also the model of an exporter: an ``EXPORTER`` with a name, a description,
vector or not, and a ``write(fig, path, *, scale, title)`` that writes the file (raising OSError
when it cannot), then one :func:`~attnsim.export.registry.register` line in the registry. Qt is
imported inside ``write``, so registering a format loads no Qt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .exporter import Exporter

if TYPE_CHECKING:
    from .figure import Figure

__all__ = ["EXPORTER", "write"]


def write(fig: Figure, path: Path, *, scale: float = 2.0, title: str = "") -> None:
    """Write ``fig`` as a PNG at ``scale`` (1 to 4) times its size; ``title`` is not stored."""
    from .figure import render_image

    if not 1.0 <= scale <= 4.0:
        raise ValueError(f"PNG scale must be between 1 and 4, got {scale}")
    if not render_image(fig, scale).save(str(path), "PNG"):
        raise OSError(f"could not write {path}")


EXPORTER = Exporter("png", "PNG image, 1 to 4 pixels per screen pixel", vector=False, write=write)
