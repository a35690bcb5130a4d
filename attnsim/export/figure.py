"""Figures out of panels, in every registered format (:mod:`attnsim.export.registry`: PNG at
1x-4x, SVG with text as text, PDF), and to the clipboard.

Two kinds of export. A *figure* draws only a panel's content (the widgets its
:meth:`~attnsim.panels.base.Panel.figure_widgets` names: matrices, plots, the 3-D view) on
white, arranged as on screen with the controls' room taken out, under an optional title. A
*panel* export is the whole panel as on screen, controls included.

Everything goes through Qt paint devices rendering widgets, so a figure looks like the
screen. pyqtgraph's own SVG exporter is not used: 0.14.0 raises ValueError on Qt >= 6.11.
QSvgGenerator's output is repaired so that browsers, librsvg and CairoSVG all draw it like
the PNG: see :mod:`attnsim.export.svg_repair`. Each format is written by its own module
(:mod:`~attnsim.export.png`, :mod:`~attnsim.export.svg`, :mod:`~attnsim.export.pdf`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QGradient,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPalette,
    QRegion,
)
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsView,
    QHeaderView,
    QLabel,
    QTableView,
    QWidget,
)

from attnsim.panels.kit.figure_paint import figure_painting

from . import tables
from .registry import exporter_for

if TYPE_CHECKING:
    from attnsim.panels.base import Panel

MODES = ("figure", "panel")
MARGIN = 8  # px of white around a figure
GAP = 8  # px between content blocks once the controls between them are taken out

__all__ = [
    "MODES",
    "Figure",
    "NothingToDrawError",
    "copy_to_clipboard",
    "export_mode",
    "export_panel",
    "export_widget",
    "figure_of",
    "grab_image",
    "hidpi_hint",
    "paint",
    "render_image",
    "write_figure",
]


class NothingToDrawError(ValueError):
    """A panel shows nothing a figure could hold for the current scenario (the message says
    why, as a sentence): exports of several panels skip it with that note."""


@dataclass
class Figure:
    """What to draw: parts of widgets at positions on a white page of ``size``, and a title."""

    pieces: list[tuple[QWidget, QPoint, QRect]]  # widget, where, which part of it
    size: QSize
    title: str = ""
    title_font: QFont = field(default_factory=QFont)
    window_background: bool = False  # panel exports keep the panel's own background
    dpi: int = 96
    # tables (and texts) drawn larger than on screen, so that every cell (and line) shows:
    # (table, by how much)
    tables: list[tuple[QTableView | QLabel, QSize]] = field(default_factory=list)


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


def _title_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setBold(True)
    font.setPointSizeF(base.pointSizeF() * 1.25)
    return font


def _title_height(fig_title: str, font: QFont) -> int:
    return QFontMetrics(font).height() + 6 if fig_title else 0


def _collapse(intervals: list[tuple[int, int]]) -> dict[int, int]:
    """Where each interval's start goes once empty stretches between intervals shrink to GAP.

    ``intervals`` are (start, end) along one axis; returns start -> new start.
    """
    merged: list[list[int]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1] + GAP:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    shift = {}
    pos = MARGIN
    for a, b in merged:
        shift[a] = pos
        pos += b - a + GAP
    out = {}
    for a, _ in intervals:
        block = max(m for m in merged if m[0] <= a)
        out[a] = shift[block[0]] + a - block[0]
    return out


def figure_of(panel: Panel, mode: str = "figure", title: str | None = None) -> Figure:
    """The figure of ``panel``: its content widgets (``mode="figure"``) or all of it."""
    if mode not in MODES:
        raise ValueError(f"unknown export mode {mode!r}; choose one of {', '.join(MODES)}")
    _settle(panel)
    heading = (title or "").strip()
    font = _title_font(panel.font())
    top = _title_height(heading, font) + (MARGIN if heading else 0)
    if mode == "panel":
        # a panel with work in flight (the scaling lab's experiment) finishes it first, so a
        # full-panel figure shows numbers, not "running…"
        panel.figure_widget()
        _settle(panel)
        size = _size(panel)
        return Figure(
            [(panel, QPoint(0, top), panel.rect())],
            QSize(size.width(), size.height() + top),
            heading,
            font,
            window_background=True,
            dpi=panel.logicalDpiX(),
        )
    # Asking may finish work in flight (the scaling lab's experiment): let the layouts and the
    # plots' axes settle on the result, then ask again for what is on show now.
    panel.figure_widgets()
    _settle(panel)
    widgets = [w for w in panel.figure_widgets() if w is not None]
    if not widgets:
        raise NothingToDrawError(f"the {panel.title} panel shows nothing for this scenario")
    origin = panel.mapToGlobal(QPoint(0, 0))
    # Tables show every cell and texts every line: they grow, and what is right of or below
    # them moves along.
    owners = [tables.owner_of(w) for w in widgets]
    grown = {id(t): (t, tables.growth(t)) for t in owners if t is not None}
    placed = [QRect(w.mapToGlobal(QPoint(0, 0)) - origin, w.size()) for w in widgets]
    with tables.grown(list(grown.values())):
        used = [tables.used_rect(w) for w in widgets]
    grows = {key: g for key, (_, g) in grown.items()}
    rects = [
        QRect(r.topLeft(), u.size())
        for r, u in zip(tables.shifted(placed, owners, grows), used, strict=True)
    ]
    xs = _collapse([(r.left(), r.left() + r.width()) for r in rects])
    ys = _collapse([(r.top(), r.top() + r.height()) for r in rects])
    pieces = [
        (w, QPoint(xs[r.left()], ys[r.top()] + top), u)
        for w, r, u in zip(widgets, rects, used, strict=True)
    ]
    right = max(p.x() + u.width() for _, p, u in pieces) + MARGIN
    bottom = max(p.y() + u.height() for _, p, u in pieces) + MARGIN
    if heading:
        right = max(right, QFontMetrics(font).horizontalAdvance(heading) + 2 * MARGIN)
    return Figure(pieces, QSize(right, bottom), heading, font, dpi=panel.logicalDpiX(),
                  tables=list(grown.values()))  # fmt: skip


def _widget_figure(widget: QWidget) -> Figure:
    _settle(widget)
    size = _size(widget)
    return Figure(
        [(widget, QPoint(0, 0), QRect(QPoint(0, 0), size))],
        size,
        window_background=True,
        dpi=widget.logicalDpiX(),
    )


@contextmanager
def export_mode(fig: Figure, scale: float = 1.0) -> Iterator[None]:
    """pyqtgraph items draw for export while inside: scatter symbols as paths, not fragments
    of a cached pixmap atlas (QSvgGenerator writes the whole atlas for each symbol)."""
    items = []
    for widget, _, _ in fig.pieces:
        views = [widget, *widget.findChildren(QGraphicsView)]
        for view in views:
            if isinstance(view, QGraphicsView) and view.scene() is not None:
                items.extend(i for i in view.scene().items() if hasattr(i, "setExportMode"))
    opts = {"antialias": True, "resolutionScale": scale}
    for item in items:
        item.setExportMode(True, opts)
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


@contextmanager
def _white(fig: Figure) -> Iterator[None]:
    """Content pieces paint their own background (a scroll area's page does) in white."""
    if fig.window_background:
        yield
        return
    saved = []
    for widget, _, _ in fig.pieces:
        own = widget.testAttribute(Qt.WidgetAttribute.WA_SetPalette)
        saved.append((widget, QPalette(widget.palette()) if own else None))
        palette = QPalette(widget.palette())
        for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
            palette.setColor(role, QColor("white"))
        widget.setPalette(palette)
    try:
        yield
    finally:
        for widget, palette in saved:
            # A default palette hands the widget back to its parent's, as it was.
            widget.setPalette(palette if palette is not None else QPalette())


def _header_gradient(palette: QPalette, flat: bool) -> QLinearGradient:
    """The shading the style gives header sections, with every stop an RGB colour.

    The style mixes HSV and RGB stops, which a PDF cannot hold (Qt warns on the terminal and
    leaves the section unshaded); a gradient in the palette's window brush is used instead.
    A figure's (``flat``) is the white of its page: a PDF also fills the header's empty part
    with it, past the last section, where a shade would show as a grey strip.
    """
    button = palette.color(QPalette.ColorRole.Button)
    top, bottom = (
        (QColor("white"), QColor("white")) if flat else (button.lighter(112), button.darker(102))
    )
    grad = QLinearGradient(0, 0, 0, 1)
    grad.setCoordinateMode(QGradient.CoordinateMode.ObjectMode)
    grad.setColorAt(0, top.toRgb())
    grad.setColorAt(1, bottom.toRgb())
    return grad


@contextmanager
def _plain_headers(fig: Figure) -> Iterator[None]:
    """Table headers shaded by RGB gradients while inside (see :func:`_header_gradient`)."""
    headers: list[QWidget] = []
    for widget, _, _ in fig.pieces:
        for w in (widget, *widget.findChildren(QWidget)):
            # a table's corner button paints a header section too
            if isinstance(w, QHeaderView) or w.objectName() == "qt_tableview_cornerbutton":
                headers.append(w)
    saved = []
    for header in headers:
        own = header.testAttribute(Qt.WidgetAttribute.WA_SetPalette)
        saved.append((header, QPalette(header.palette()) if own else None))
        palette = QPalette(header.palette())
        grad = _header_gradient(palette, flat=not fig.window_background)
        palette.setBrush(QPalette.ColorRole.Window, QBrush(grad))
        header.setPalette(palette)
    try:
        yield
    finally:
        for header, palette in saved:
            header.setPalette(palette if palette is not None else QPalette())


def paint(fig: Figure, painter: QPainter) -> None:
    painter.fillRect(QRect(QPoint(0, 0), fig.size), QColor("white"))
    if fig.title:
        painter.save()
        painter.setFont(fig.title_font)
        painter.setPen(QColor("#111111"))
        height = _title_height(fig.title, fig.title_font)
        painter.drawText(
            QRect(MARGIN, MARGIN, fig.size.width() - 2 * MARGIN, height),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            fig.title,
        )
        painter.restore()
    flags = QWidget.RenderFlag.DrawChildren
    if fig.window_background:
        flags |= QWidget.RenderFlag.DrawWindowBackground
    with (
        figure_painting(not fig.window_background),
        tables.grown(fig.tables),
        _white(fig),
        _plain_headers(fig),
    ):
        for widget, pos, part in fig.pieces:
            # QWidget's render, also for graphics views (whose own render() scales a scene).
            QWidget.render(widget, painter, pos, QRegion(part), flags)


def render_image(fig: Figure, scale: float = 1.0) -> QImage:
    """``fig`` as an image at ``scale`` times its size (device pixel ratio = scale)."""
    image = QImage(
        round(fig.size.width() * scale),
        round(fig.size.height() * scale),
        QImage.Format.Format_ARGB32,
    )
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        # resolutionScale stays 1: the image's device pixel ratio already scales what pyqtgraph
        # draws in pixels (a scatter symbol after resetTransform), so markers keep their
        # on-screen size, as in SVG and PDF.
        with export_mode(fig):
            paint(fig, painter)
    finally:
        painter.end()
    return image


def grab_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """The widget as an image at ``scale`` times its size (device pixel ratio = scale)."""
    return render_image(_widget_figure(widget), scale)


def write_figure(fig: Figure, path: str | Path, fmt: str | None = None, *, scale: float = 2.0,
                 title: str = "attnsim figure") -> Path:  # fmt: skip
    """Write ``fig`` to ``path`` in a registered format (from the suffix unless ``fmt`` is given).

    PNG is rendered at ``scale`` (1 to 4) times the on-screen size; SVG and PDF are vector.
    ``title`` is the document title (metadata) of SVG and PDF files.
    """
    p = Path(path)
    exporter_for(p, fmt).write(fig, p, scale=scale, title=title)
    if not p.exists() or p.stat().st_size == 0:
        raise OSError(f"could not write {p}")
    return p


def export_widget(widget: QWidget, path: str | Path, fmt: str | None = None, *, scale: float = 2.0,
                  title: str = "attnsim figure") -> Path:  # fmt: skip
    """Write ``widget`` as on screen to ``path`` as PNG, SVG or PDF (see :func:`write_figure`)."""
    return write_figure(_widget_figure(widget), path, fmt, scale=scale, title=title)


def export_panel(panel: Panel, path: str | Path, fmt: str | None = None, *, scale: float = 2.0,
                 mode: str = "figure", title: str | None = None) -> Path:  # fmt: skip
    """Write the figure (``mode="figure"``) or the whole panel (``"panel"``) of ``panel``.

    ``title``, when given, is drawn above the figure; the file's metadata title is the
    panel's title either way.
    """
    fig = figure_of(panel, mode, title)
    return write_figure(fig, path, fmt, scale=scale, title=title or panel.title)


def copy_to_clipboard(widget: QWidget, scale: float = 2.0) -> QImage:
    image = grab_image(widget, scale)
    QGuiApplication.clipboard().setImage(image)
    return image


def hidpi_hint() -> None:
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
