"""SVG: vectors, text as text, repaired so that every SVG reader draws it like the PNG
(:mod:`attnsim.export.svg_repair`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .exporter import Exporter

if TYPE_CHECKING:
    from .figure import Figure

__all__ = ["EXPORTER", "write"]


def write(fig: Figure, path: Path, *, scale: float = 2.0, title: str = "attnsim figure") -> None:
    """Write ``fig`` as an SVG 1.1 file titled ``title`` (``scale`` does not apply)."""
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QPainter, QPicture
    from PySide6.QtSvg import QSvgGenerator

    from .figure import export_mode, paint
    from .svg_repair import clean_svg

    size = fig.size
    # Recorded first, then replayed: widget rendering draws children through redirected
    # painters whose clip rectangles QSvgGenerator writes without the child's offset
    # (text vanishes). A replayed picture reaches the generator as one plain painter.
    picture = QPicture()
    recorder = QPainter(picture)
    try:
        with export_mode(fig):
            paint(fig, recorder)
    finally:
        recorder.end()
    gen = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)  # 1.1 writes clip paths
    gen.setFileName(str(path))
    gen.setSize(size)
    gen.setViewBox(QRect(QPoint(0, 0), size))
    # Text was laid out at the screen's dpi: at the default 72 dpi font sizes would be
    # written in points and read as pixels (25 % small).
    gen.setResolution(picture.logicalDpiX())
    gen.setTitle(title)
    gen.setDescription("made with attnsim")
    painter = QPainter(gen)
    painter.drawPicture(0, 0, picture)
    painter.end()
    if path.exists():
        clean_svg(path)


EXPORTER = Exporter("svg", "SVG vector drawing, text kept as text", vector=True, write=write)
