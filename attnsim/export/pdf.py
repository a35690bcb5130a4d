"""PDF: one vector page the size of the figure."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .exporter import Exporter

if TYPE_CHECKING:
    from .figure import Figure

__all__ = ["EXPORTER", "write"]


def write(fig: Figure, path: Path, *, scale: float = 2.0, title: str = "attnsim figure") -> None:
    """Write ``fig`` as a one-page PDF titled ``title`` (``scale`` does not apply)."""
    from PySide6.QtCore import QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

    from .figure import export_mode, paint

    size = fig.size
    writer = QPdfWriter(str(path))
    writer.setTitle(title)
    writer.setCreator("attnsim")
    writer.setResolution(fig.dpi)
    page = QPageSize(
        QSizeF(size.width() * 72 / fig.dpi, size.height() * 72 / fig.dpi),
        QPageSize.Unit.Point,
    )
    writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
    painter = QPainter(writer)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    try:
        with export_mode(fig):
            paint(fig, painter)
    finally:
        painter.end()


EXPORTER = Exporter("pdf", "PDF document, one vector page", vector=True, write=write)
