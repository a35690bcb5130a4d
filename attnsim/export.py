"""Figures out of panels: PNG (1x-4x), SVG (vectors, text as text), PDF, and the clipboard.

Two kinds of export. A *figure* draws only a panel's content (the widgets its
:meth:`~attnsim.panels.base.Panel.figure_widgets` names: matrices, plots, the 3-D view) on
white, arranged as on screen with the controls' room taken out, under an optional title. A
*panel* export is the whole panel as on screen, controls included.

Everything goes through Qt paint devices rendering widgets, so a figure looks like the
screen. pyqtgraph's own SVG exporter is not used: 0.14.0 raises ValueError on Qt >= 6.11.
QSvgGenerator's output is repaired so that browsers, librsvg and CairoSVG all draw it like
the PNG: see :func:`clean_svg`.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QMarginsF, QPoint, QRect, QSize, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontInfo,
    QFontMetrics,
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPalette,
    QPdfWriter,
    QPicture,
    QRegion,
)
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QGraphicsView, QHeaderView, QTableView, QWidget

if TYPE_CHECKING:
    from attnsim.panels.base import Panel

FORMATS = ("png", "svg", "pdf")
MODES = ("figure", "panel")
# Fallbacks after the family Qt actually used, so any SVG reader finds a similar face.
FONT_FALLBACKS = ("DejaVu Sans", "Arial", "Helvetica")
MARGIN = 8  # px of white around a figure
GAP = 8  # px between content blocks once the controls between them are taken out

__all__ = [
    "FORMATS",
    "MODES",
    "Figure",
    "clean_svg",
    "copy_to_clipboard",
    "export_panel",
    "export_widget",
    "figure_of",
    "grab_image",
    "render_image",
    "write_figure",
]

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"


@dataclass
class Figure:
    """What to draw: parts of widgets at positions on a white page of ``size``, and a title."""

    pieces: list[tuple[QWidget, QPoint, QRect]]  # widget, where, which part of it
    size: QSize
    title: str = ""
    title_font: QFont = field(default_factory=QFont)
    window_background: bool = False  # panel exports keep the panel's own background
    dpi: int = 96


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


def _used_rect(w: QWidget) -> QRect:
    """The part of ``w`` with something in it: tables and their headers end at the last cell."""
    rect = w.rect()
    parent = w.parentWidget()
    if isinstance(w, QHeaderView):
        if w.orientation() == Qt.Orientation.Horizontal:
            rect.setWidth(min(rect.width(), w.length() + 1))
        else:
            rect.setHeight(min(rect.height(), w.length() + 1))
    elif isinstance(parent, QTableView) and w is parent.viewport():
        rect.setWidth(min(rect.width(), parent.horizontalHeader().length() + 1))
        rect.setHeight(min(rect.height(), parent.verticalHeader().length() + 1))
    elif isinstance(w, QTableView):
        frame = 2 * w.frameWidth()
        hh, vh = w.horizontalHeader(), w.verticalHeader()
        width = hh.length() + (vh.width() if vh.isVisibleTo(w) else 0) + frame
        height = vh.length() + (hh.height() if hh.isVisibleTo(w) else 0) + frame
        rect.setWidth(min(rect.width(), width))
        rect.setHeight(min(rect.height(), height))
    return rect


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
    widgets = [w for w in panel.figure_widgets() if w is not None]
    if not widgets:
        raise ValueError(f"the {panel.title} panel has nothing to draw as a figure")
    origin = panel.mapToGlobal(QPoint(0, 0))
    used = [_used_rect(w) for w in widgets]
    rects = [
        QRect(w.mapToGlobal(QPoint(0, 0)) - origin, u.size())
        for w, u in zip(widgets, used, strict=True)
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
    return Figure(pieces, QSize(right, bottom), heading, font, dpi=panel.logicalDpiX())


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
def _export_mode(fig: Figure, scale: float = 1.0) -> Iterator[None]:
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


def _paint(fig: Figure, painter: QPainter) -> None:
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
    with _white(fig):
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
        with _export_mode(fig, scale):
            _paint(fig, painter)
    finally:
        painter.end()
    return image


def grab_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """The widget as an image at ``scale`` times its size (device pixel ratio = scale)."""
    return render_image(_widget_figure(widget), scale)


def write_figure(fig: Figure, path: str | Path, fmt: str | None = None, *, scale: float = 2.0,
                 title: str = "attnsim figure") -> Path:  # fmt: skip
    """Write ``fig`` to ``path`` as PNG, SVG or PDF (from the suffix unless ``fmt`` is given).

    PNG is rendered at ``scale`` (1 to 4) times the on-screen size; SVG and PDF are vector.
    ``title`` is the document title (metadata) of SVG and PDF files.
    """
    p = Path(path)
    kind = (fmt or p.suffix.lstrip(".")).lower()
    if kind not in FORMATS:
        raise ValueError(f"unknown figure format {kind!r}; choose one of {', '.join(FORMATS)}")
    if kind == "png":
        if not 1.0 <= scale <= 4.0:
            raise ValueError(f"PNG scale must be between 1 and 4, got {scale}")
        if not render_image(fig, scale).save(str(p), "PNG"):
            raise OSError(f"could not write {p}")
        return p
    size = fig.size
    if kind == "svg":
        # Recorded first, then replayed: widget rendering draws children through redirected
        # painters whose clip rectangles QSvgGenerator writes without the child's offset
        # (text vanishes). A replayed picture reaches the generator as one plain painter.
        picture = QPicture()
        recorder = QPainter(picture)
        try:
            with _export_mode(fig):
                _paint(fig, recorder)
        finally:
            recorder.end()
        gen = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)  # 1.1 writes clip paths
        gen.setFileName(str(p))
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
        if p.exists():
            clean_svg(p)
    else:
        writer = QPdfWriter(str(p))
        writer.setTitle(title)
        writer.setCreator("attnsim")
        writer.setResolution(fig.dpi)
        page = QPageSize(
            QSizeF(size.width() * 72 / fig.dpi, size.height() * 72 / fig.dpi),
            QPageSize.Unit.Point,
        )
        writer.setPageLayout(
            QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
        )
        painter = QPainter(writer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            with _export_mode(fig):
                _paint(fig, painter)
        finally:
            painter.end()
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


# ---- SVG repair ---------------------------------------------------------------------------------
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PATH_TOKEN = re.compile(rf"[A-Za-z]|{_NUMBER}")
_BAKEABLE_PATH = set("MLCQSTZ")  # absolute commands whose arguments are all points


def _matrix(text: str | None) -> tuple[float, ...] | None:
    if not text:
        return None
    m = re.fullmatch(r"\s*matrix\(([^)]*)\)\s*", text)
    if not m:
        return None
    values = tuple(float(v) for v in re.findall(_NUMBER, m.group(1)))
    return values if len(values) == 6 else None


def _num(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def _point(m: tuple[float, ...], x: float, y: float) -> str:
    a, b, c, d, e, f = m
    return f"{_num(a * x + c * y + e)},{_num(b * x + d * y + f)}"


def _bake_path(d: str, m: tuple[float, ...]) -> str | None:
    tokens = _PATH_TOKEN.findall(d)
    out: list[str] = []
    nums: list[float] = []

    def flush() -> bool:
        if len(nums) % 2:
            return False
        out.extend(_point(m, nums[i], nums[i + 1]) for i in range(0, len(nums), 2))
        nums.clear()
        return True

    for tok in tokens:
        if tok.isalpha():
            if tok not in _BAKEABLE_PATH or not flush():
                return None
            out.append(tok)
        else:
            nums.append(float(tok))
    if not flush():
        return None
    return " ".join(out)


def _bake_points(points: str, m: tuple[float, ...]) -> str | None:
    nums = [float(v) for v in re.findall(_NUMBER, points)]
    if len(nums) % 2:
        return None
    return " ".join(_point(m, nums[i], nums[i + 1]) for i in range(0, len(nums), 2))


def _bake_group(group: ET.Element, m: tuple[float, ...]) -> bool:
    """Move ``m`` into the coordinates of the group's shapes; False if a shape can't be."""
    baked: list[tuple[ET.Element, str, str, str]] = []  # element, new tag, attribute, value
    for child in group:
        tag = child.tag.removeprefix(f"{{{_SVG_NS}}}")
        if tag == "path":
            value = _bake_path(child.get("d", ""), m)
            baked.append((child, "path", "d", value or ""))
        elif tag in ("polyline", "polygon"):
            value = _bake_points(child.get("points", ""), m)
            baked.append((child, tag, "points", value or ""))
        elif tag == "rect":
            x, y = float(child.get("x", 0)), float(child.get("y", 0))
            w, h = float(child.get("width", 0)), float(child.get("height", 0))
            value = _bake_path(f"M{x},{y} L{x + w},{y} L{x + w},{y + h} L{x},{y + h} Z", m)
            baked.append((child, "path", "d", value or ""))
        else:
            return False
        if not baked[-1][3]:
            return False
    for child, tag, attr, value in baked:
        for name in ("x", "y", "width", "height"):
            if tag != "rect":
                child.attrib.pop(name, None)
        child.tag = f"{{{_SVG_NS}}}{tag}"
        child.set(attr, value)
        child.attrib.pop("vector-effect", None)
    group.set("transform", "matrix(1,0,0,1,0,0)")
    return True


def _font_families(root: ET.Element) -> dict[str, str]:
    out = {}
    for el in root.iter():
        name = el.get("font-family")
        if name is None or name in out:
            continue
        info = QFontInfo(QFont(name))
        generic = "monospace" if info.fixedPitch() else "sans-serif"
        names = [info.family(), *([] if generic == "monospace" else FONT_FALLBACKS)]
        unique = list(dict.fromkeys(n for n in names if n))
        out[name] = ", ".join([*(f"'{n}'" if " " in n else n for n in unique), generic])
    return out


def clean_svg(path: str | Path) -> None:
    """Repair what QSvgGenerator writes so that every SVG reader draws what the screen shows.

    - ``font-family`` becomes the face Qt really used plus fallbacks and a CSS generic family
      (Qt writes its own alias, e.g. "Sans Serif", which no SVG reader knows).
    - Cosmetic (``vector-effect="non-scaling-stroke"``) strokes under a scaling transform, as
      pyqtgraph draws plot curves in data units, get the transform baked into their
      coordinates: librsvg and CairoSVG ignore ``vector-effect`` and would widen a 1 px line
      by the data-to-pixel scale (huge blobs).
    """
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", _XLINK_NS)
    p = Path(path)
    tree = ET.parse(p)
    root = tree.getroot()
    families = _font_families(root)
    for el in root.iter():
        name = el.get("font-family")
        if name is not None:
            el.set("font-family", families[name])
    for group in root.iter(f"{{{_SVG_NS}}}g"):
        m = _matrix(group.get("transform"))
        if m is None or m[:4] == (1.0, 0.0, 0.0, 1.0):
            continue
        if not any(ch.get("vector-effect") == "non-scaling-stroke" for ch in group):
            continue
        uses_paint_server = "url(" in (group.get("fill", "") + group.get("stroke", ""))
        if not uses_paint_server and _bake_group(group, m):
            continue
        # Cannot bake (text, images, gradients): at least keep the stroke near its width.
        scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2])) or 1.0
        width = float(group.get("stroke-width", "1") or 1)
        group.set("stroke-width", _num(width / scale))
    tree.write(p, encoding="UTF-8", xml_declaration=True)
