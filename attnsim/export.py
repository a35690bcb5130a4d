"""Figures out of panels: PNG (1x-4x), SVG (vectors, text as text), PDF, and the clipboard.

Everything goes through Qt paint devices rendering the panel's widget, so a figure looks like
the screen. pyqtgraph's own SVG exporter is not used: 0.14.0 raises ValueError on Qt >= 6.11.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMarginsF, QPoint, QRect, QSize, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
)
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QWidget

FORMATS = ("png", "svg", "pdf")

__all__ = ["FORMATS", "copy_to_clipboard", "export_widget", "grab_image"]


def _settle(widget: QWidget) -> None:
    # Layouts and pyqtgraph axis widths settle in the event loop; render after they have.
    if widget.layout() is not None:
        widget.layout().activate()
    for _ in range(3):
        QApplication.processEvents()
    flush = getattr(widget, "flush", None)
    if callable(flush):
        flush()


def _size(widget: QWidget) -> QSize:
    size = widget.size()
    if size.width() < 10 or size.height() < 10:
        size = widget.sizeHint().expandedTo(QSize(400, 300))
        widget.resize(size)
    return size


def _render(widget: QWidget, painter: QPainter) -> None:
    widget.render(
        painter,
        QPoint(0, 0),
        widget.rect(),
        QWidget.RenderFlag.DrawChildren | QWidget.RenderFlag.DrawWindowBackground,
    )


def grab_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """The widget as an image at ``scale`` times its size (device pixel ratio = scale)."""
    _settle(widget)
    size = _size(widget)
    image = QImage(
        round(size.width() * scale), round(size.height() * scale), QImage.Format.Format_ARGB32
    )
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    _render(widget, painter)
    painter.end()
    return image


def export_widget(widget: QWidget, path: str | Path, fmt: str | None = None, *, scale: float = 2.0,
                  title: str = "attnsim figure") -> Path:  # fmt: skip
    """Write ``widget`` to ``path`` as PNG, SVG or PDF (from the suffix unless ``fmt`` is given).

    PNG is rendered at ``scale`` (1 to 4) times the on-screen size; SVG and PDF are vector.
    """
    p = Path(path)
    kind = (fmt or p.suffix.lstrip(".")).lower()
    if kind not in FORMATS:
        raise ValueError(f"unknown figure format {kind!r}; choose one of {', '.join(FORMATS)}")
    if kind == "png":
        if not 1.0 <= scale <= 4.0:
            raise ValueError(f"PNG scale must be between 1 and 4, got {scale}")
        image = grab_image(widget, scale)
        if not image.save(str(p), "PNG"):
            raise OSError(f"could not write {p}")
        return p
    _settle(widget)
    size = _size(widget)
    if kind == "svg":
        gen = QSvgGenerator()
        gen.setFileName(str(p))
        gen.setSize(size)
        gen.setViewBox(QRect(QPoint(0, 0), size))
        gen.setTitle(title)
        gen.setDescription("made with attnsim")
        painter = QPainter(gen)
        _render(widget, painter)
        painter.end()
    else:
        writer = QPdfWriter(str(p))
        writer.setTitle(title)
        writer.setCreator("attnsim")
        writer.setResolution(96)
        page = QPageSize(
            QSizeF(size.width() * 72 / 96, size.height() * 72 / 96), QPageSize.Unit.Point
        )
        writer.setPageLayout(
            QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
        )
        painter = QPainter(writer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _render(widget, painter)
        painter.end()
    if not p.exists() or p.stat().st_size == 0:
        raise OSError(f"could not write {p}")
    return p


def copy_to_clipboard(widget: QWidget, scale: float = 2.0) -> QImage:
    image = grab_image(widget, scale)
    QGuiApplication.clipboard().setImage(image)
    return image


def hidpi_hint() -> None:
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
