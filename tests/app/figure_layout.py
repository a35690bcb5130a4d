"""Where a figure puts its text and its lines, recorded while it paints.

The figure is painted as every exporter paints it (recorded into a QPicture, as the SVG exporter
does, then replayed) onto a paint device whose engine draws nothing and keeps, in figure
coordinates, every text item's ink box (``QFontMetricsF.tightBoundingRect`` of its font, mapped
through the painter's transform), the clip it was drawn under, and every stroked segment
(lines, polylines, outlines of polygons, rectangles and paths) with its pen's colour. Qt hands
every piece of text to the engine, whoever draws it (a QLabel, a header, pyqtgraph, a panel's
own QPainter code), so the check covers what C++ widgets draw too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QPaintDevice,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPicture,
)

from attnsim.export.figure import Figure, export_mode, paint

# Pens lighter than this, once blended with white by their alpha, are backgrounds a text may
# sit on, as in any plot: the grid, a plot's zero lines (#b0b0b0), a table's cell lines. Arrows,
# curves, dashed guides, ticks and frames are darker.
LINE_MAX_LIGHTNESS = 170


@dataclass(frozen=True)
class Text:
    text: str
    box: QRectF  # the ink, in figure pixels
    clip: QRectF | None  # the clip it was drawn under, in figure pixels


@dataclass(frozen=True)
class Segment:
    line: QLineF
    lightness: float  # 0 (black) to 255 (white), the pen blended on white


@dataclass
class Layout:
    width: float
    height: float
    texts: list[Text] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)

    def lines(self) -> list[QLineF]:
        return [s.line for s in self.segments if s.lightness < LINE_MAX_LIGHTNESS]


def _lightness(colour: QColor) -> float:
    a = colour.alphaF()
    grey = 0.299 * colour.red() + 0.587 * colour.green() + 0.114 * colour.blue()
    return a * grey + (1 - a) * 255


class _Engine(QPaintEngine):
    def __init__(self, layout: Layout) -> None:
        super().__init__(QPaintEngine.PaintEngineFeature.AllFeatures)
        self.layout = layout
        self.region: QRectF | None = None  # the part of the figure being painted

    def begin(self, device) -> bool:
        return True

    def end(self) -> bool:
        return True

    def updateState(self, state) -> None:
        pass

    def type(self) -> QPaintEngine.Type:
        return QPaintEngine.Type.User

    def drawPixmap(self, r, pm, sr) -> None:
        pass

    def drawImage(self, r, image, sr, flags=None) -> None:
        pass

    def drawTiledPixmap(self, r, pixmap, s) -> None:
        pass

    # ---- text --------------------------------------------------------------------------------
    def drawTextItem(self, p: QPointF, ti) -> None:
        text = ti.text()
        if not text.strip():
            return
        painter = self.painter()
        t = painter.transform()
        fm = QFontMetricsF(ti.font())
        # The ink's height; across, the ink within the run's advance (runs of rich text are
        # laid out by advance, and hinted ink boxes round outwards by a pixel or two).
        ink = fm.tightBoundingRect(text)
        left, right = max(ink.left(), 0.0), min(ink.right(), fm.horizontalAdvance(text))
        ink = QRectF(left, ink.top(), max(right - left, 0.0), ink.height()).translated(p)
        clip = self.region
        if painter.hasClipping():
            own = t.mapRect(painter.clipBoundingRect())
            clip = own if clip is None else clip.intersected(own)
        self.layout.texts.append(Text(text, t.mapRect(ink), clip))

    # ---- strokes ------------------------------------------------------------------------------
    def _stroke(self, points: list[QPointF], closed: bool) -> None:
        painter = self.painter()
        pen = painter.pen()
        if pen.style() == Qt.PenStyle.NoPen or pen.brush().style() == Qt.BrushStyle.NoBrush:
            return
        light = _lightness(pen.color())
        t = painter.transform()
        pts = [t.map(QPointF(p)) for p in points]
        if closed and len(pts) > 2:
            pts.append(pts[0])
        # What the clip cuts away is not drawn: a plot's line runs on past its view box.
        clip = self.region
        if painter.hasClipping():
            own = t.mapRect(painter.clipBoundingRect())
            clip = own if clip is None else clip.intersected(own)
        for a, b in pairwise(pts):
            line = QLineF(a, b) if clip is None else _clipped(QLineF(a, b), clip)
            if line is not None:
                self.layout.segments.append(Segment(line, light))

    def drawLines(self, lines, count=None) -> None:
        for line in lines if isinstance(lines, (list, tuple)) else [lines]:
            ln = QLineF(line)
            self._stroke([ln.p1(), ln.p2()], False)

    def drawPolygon(self, points, count=None, mode=None) -> None:
        pts = list(points) if isinstance(points, (list, tuple)) else [points]
        self._stroke(pts, mode != QPaintEngine.PolygonDrawMode.PolylineMode)

    def drawRects(self, rects, count=None) -> None:
        for r in rects if isinstance(rects, (list, tuple)) else [rects]:
            r = QRectF(r)
            self._stroke([r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft()], True)

    def drawEllipse(self, r) -> None:
        path = QPainterPath()
        path.addEllipse(QRectF(r))
        self.drawPath(path)

    def drawPath(self, path: QPainterPath) -> None:
        for poly in path.toSubpathPolygons():
            self._stroke(list(poly), False)

    def drawPoints(self, points, count=None) -> None:
        pass


class _Device(QPaintDevice):
    def __init__(self, width: int, height: int, dpi: int, layout: Layout) -> None:
        super().__init__()
        self._size = (width, height, dpi)
        self._engine = _Engine(layout)

    def paintEngine(self) -> QPaintEngine:
        return self._engine

    @property
    def region(self) -> QRectF | None:
        return self._engine.region

    @region.setter
    def region(self, value: QRectF | None) -> None:
        self._engine.region = value

    def metric(self, m: QPaintDevice.PaintDeviceMetric) -> int:
        w, h, dpi = self._size
        M = QPaintDevice.PaintDeviceMetric
        values = {
            M.PdmWidth: w,
            M.PdmHeight: h,
            M.PdmWidthMM: round(w * 25.4 / dpi),
            M.PdmHeightMM: round(h * 25.4 / dpi),
            M.PdmDpiX: dpi,
            M.PdmDpiY: dpi,
            M.PdmPhysicalDpiX: dpi,
            M.PdmPhysicalDpiY: dpi,
            M.PdmDepth: 32,
            M.PdmNumColors: 0x7FFFFFFF,
            M.PdmDevicePixelRatio: 1,
            M.PdmDevicePixelRatioScaled: round(QPaintDevice.devicePixelRatioFScale()),
        }
        return values.get(m, 0)


def _replay(fig: Figure, layout: Layout, region: QRectF | None) -> None:
    picture = QPicture()
    recorder = QPainter(picture)
    try:
        with export_mode(fig):
            paint(fig, recorder)
    finally:
        recorder.end()
    device = _Device(fig.size.width(), fig.size.height(), picture.logicalDpiX(), layout)
    device.region = region
    painter = QPainter(device)
    painter.drawPicture(0, 0, picture)
    painter.end()


def record(fig: Figure) -> Layout:
    """The text boxes and stroked segments ``fig`` paints.

    Each piece is painted alone, so that what it draws outside its own part of the widget
    (which the exporters clip away) counts as cut: a widget's render region is a system clip,
    which the painter does not report.
    """
    layout = Layout(fig.size.width(), fig.size.height())
    _replay(Figure([], fig.size, fig.title, fig.title_font, dpi=fig.dpi), layout, None)
    for widget, pos, part in fig.pieces:
        piece = Figure([(widget, pos, part)], fig.size, "", fig.title_font,
                       window_background=fig.window_background, dpi=fig.dpi,
                       tables=fig.tables)  # fmt: skip
        _replay(piece, layout, QRectF(pos.x(), pos.y(), part.width(), part.height()))
    return layout


# ---- the checks ---------------------------------------------------------------------------------
SLACK = 0.75  # px: glyph boxes that touch (antialiasing, rounding) do not overlap


def _shrunk(r: QRectF) -> QRectF:
    return r.adjusted(SLACK, SLACK, -SLACK, -SLACK)


def _visible(t: Text) -> QRectF:
    r = _shrunk(t.box)
    return r if t.clip is None else r.intersected(t.clip)


def overlapping_texts(layout: Layout) -> list[tuple[str, str]]:
    """Pairs of texts whose ink boxes overlap."""
    out = []
    texts = layout.texts
    shown = [_visible(t) for t in texts]
    for i, a in enumerate(texts):
        for j in range(i + 1, len(texts)):
            if shown[i].intersects(shown[j]):
                out.append((a.text, texts[j].text))
    return out


def _crosses(line: QLineF, r: QRectF) -> bool:
    """Whether the segment passes through the inside of ``r``."""
    return not r.isEmpty() and _clipped(line, r) is not None


def _clipped(line: QLineF, r: QRectF) -> QLineF | None:
    """The part of the segment inside ``r`` (None when it misses ``r``)."""
    # Liang-Barsky clipping of the segment against the rectangle.
    x0, y0, dx, dy = line.x1(), line.y1(), line.dx(), line.dy()
    t0, t1 = 0.0, 1.0
    for p, q in (
        (-dx, x0 - r.left()),
        (dx, r.right() - x0),
        (-dy, y0 - r.top()),
        (dy, r.bottom() - y0),
    ):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return QLineF(x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy)


def texts_through_lines(layout: Layout) -> list[str]:
    """Texts a line (a dark enough stroke) passes through."""
    lines = layout.lines()
    out = []
    for t in layout.texts:
        r = _visible(t)
        if any(_crosses(line, r) for line in lines):
            out.append(t.text)
    return out


def cut_texts(layout: Layout, margin: float = 1.0) -> list[str]:
    """Texts not wholly inside the figure, or cut by the clip they were drawn under."""
    page = QRectF(0, 0, layout.width, layout.height)
    out = []
    for t in layout.texts:
        r = _shrunk(t.box)
        inside = page.contains(r)
        if t.clip is not None:
            inside = inside and t.clip.adjusted(-margin, -margin, margin, margin).contains(r)
        if not inside:
            out.append(t.text)
    return out
