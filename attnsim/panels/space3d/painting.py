"""The painting layers of the 3-D view, back to front: grid and axes, the cloud, arrows,
labels, the colour bar and the text lines. Pens and brushes are pooled across scenes, because a
drag builds a new scene on every mouse move."""

from __future__ import annotations

import numpy as np
import pyqtgraph.functions as pgfn
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF

from attnsim.viewmodels.space3d import Scene

from ..kit.colour_bar import paint_colour_bar
from ..kit.hidpi import layer_scale, line_scale, line_width
from ..style import KEY, MUTED, QUERY, TOKEN, VALUE, weight_cmap
from .projection import ScreenGeometry, TextMetrics, colorbar_rect
from .strokes import TranslucentLines

LEAK = "#b00020"  # labels of forbidden keys that still get weight (mask value 0)
HINT = "drag a tip to edit · drag space to orbit · wheel zooms"
Style = tuple[QPen, QPen, QBrush, QPen]  # shaft pen, head outline pen, head brush, label pen


def _lut() -> list[QColor]:
    cmap = weight_cmap()
    return [cmap.map(v, mode="qcolor") for v in np.linspace(0.0, 1.0, 101)]


ABSENT_LABEL = "#767676"  # a key not in the sentence: the darkest grey that still reads as muted


class SceneLayers:
    """Fonts, colours and the painting of each layer; knows nothing of widgets or gestures."""

    def __init__(self, base: QFont | None = None) -> None:
        self._widths: dict[str, float] = {}
        self.set_fonts(QFont() if base is None else base)
        self._lut = _lut()
        self._styles_for: Scene | None = None
        self._style_cache: list[Style | None] = []
        self._style_pool: dict[tuple, Style] = {}
        self.lines = TranslucentLines()  # the see-through query shaft, the leader lines

    def set_fonts(self, base: QFont) -> None:
        """Labels a little smaller than ``base`` (the widget's font: 8.5 and 7.5 points beside
        the usual 9), so that they grow with View ▸ Text size and in presentation mode."""
        size = base.pointSizeF() if base.pointSizeF() > 0 else 9.0
        self.font_label = QFont(base)
        self.font_label.setPointSizeF(size * 8.5 / 9.0)
        self.font_small = QFont(base)
        self.font_small.setPointSizeF(size * 7.5 / 9.0)
        self.font_bold = QFont(self.font_label)
        self.font_bold.setBold(True)
        self.fm_label = QFontMetricsF(self.font_label)
        self.fm_small = QFontMetricsF(self.font_small)
        self.fm_bold = QFontMetricsF(self.font_bold)
        self.metrics = TextMetrics(self.text_width, self.fm_label.height(), self.fm_label.ascent(),
                                   self.bold_width)  # fmt: skip
        self._widths.clear()

    def text_width(self, text: str) -> float:
        """Width of ``text`` in the label font (cached: labels repeat on every repaint)."""
        width = self._widths.get(text)
        if width is None:
            if len(self._widths) > 4096:
                self._widths.clear()
            width = self._widths[text] = self.fm_label.horizontalAdvance(text)
        return width

    def bold_width(self, text: str) -> float:
        """Width of ``text`` in the bold label font (the query's name is painted in it)."""
        width = self._widths.get("\0bold" + text)  # (no label holds a NUL)
        if width is None:
            width = self._widths["\0bold" + text] = self.fm_bold.horizontalAdvance(text)
        return width

    def color(self, w: float) -> QColor:
        return self._lut[round(min(max(w, 0.0), 1.0) * 100)]

    def paint_grid_and_axes(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        p.setPen(QPen(QColor("#e4e4e4"), 1.0))
        grid = g.grid
        p.drawLines([QPointF(*grid[k, e]) for k in range(grid.shape[0]) for e in (0, 1)])
        o = g.origin
        names = sc.frame.axis_names
        p.setFont(self.font_label)
        for a in range(3):
            neg, pos = g.axes[a]
            if not names[a]:  # a padded axis (d_k < 3): a faint line, no name
                p.setPen(QPen(QColor("#d0d0d0"), 1.0, Qt.PenStyle.DashLine))
                p.drawLine(QPointF(*neg), QPointF(*pos))
                continue
            p.setPen(QPen(QColor("#c4c4c4"), 1.0))
            p.drawLine(QPointF(*neg), QPointF(*o))
            p.setPen(QPen(QColor("#6b6b6b"), line_width(1.3)))
            p.drawLine(QPointF(*o), QPointF(*pos))
            p.setPen(QColor("#444444"))
            p.drawText(QPointF(*g.axis_text[a]), names[a])

    def paint_cloud(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        # Thousands of dots: small squares without antialiasing are ten times cheaper and look
        # the same at this size.
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        if g.points.shape[0]:
            p.setPen(QPen(QColor(130, 130, 130, 120), 2.0))
            poly = pgfn.create_qpolygonf(g.points.shape[0])
            pgfn.ndarray_from_qpolygonf(poly)[:] = g.points
            p.drawPoints(poly)
        # Keys beyond the arrow limit: points shaded by the engine's weight, 8 shades (a
        # forbidden key that gets nothing is light grey); other queries and values beyond it:
        # points in their own faded colour.
        rest = np.flatnonzero(~sc.arrow)
        if rest.size:
            kinds = sc.kinds[rest]
            keys = rest[kinds == "key"]
            nothing = sc.masked[keys] & ~sc.leaks[keys]
            groups: list[tuple[QColor, np.ndarray]] = []
            if nothing.any():
                groups.append((QColor(200, 200, 200), keys[nothing]))
            shaded = keys[~nothing]
            bins = np.minimum((np.nan_to_num(sc.weight[shaded]) * 8).astype(int), 7)
            # (bincount, not np.unique: NumPy's unique imports numpy.ma, 60 ms, the first time)
            for b in np.flatnonzero(np.bincount(bins, minlength=8)).tolist():
                groups.append((QColor(self.color((b + 0.5) / 8)), shaded[bins == b]))
            for kind, base in (("other_query", QUERY), ("value", VALUE)):
                sel = rest[kinds == kind]
                if sel.size:
                    col = QColor(base)
                    col.setAlpha(110)
                    groups.append((col, sel))
            for col, sel in groups:
                p.setPen(QPen(col, line_width(3.5)))
                poly = pgfn.create_qpolygonf(sel.size)
                pgfn.ndarray_from_qpolygonf(poly)[:] = g.tips[sel]
                p.drawPoints(poly)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)

    def _color_of(self, kind: str, masked: bool, leaks: bool) -> tuple[QColor, Qt.PenStyle]:
        if kind == "query":
            return QColor(QUERY), Qt.PenStyle.SolidLine
        if kind == "other_query":
            c = QColor(QUERY)
            c.setAlpha(95)
            return c, Qt.PenStyle.SolidLine
        if kind == "key":
            if masked and leaks:
                # Forbidden, yet weighted (mask value 0): dashed but at full strength.
                return QColor(KEY), Qt.PenStyle.DashLine
            if masked:
                c = QColor(KEY)
                c.setAlpha(110)
                return c, Qt.PenStyle.DashLine
            return QColor(KEY), Qt.PenStyle.SolidLine
        if kind == "absent":
            c = QColor(MUTED)
            c.setAlpha(150)
            return c, Qt.PenStyle.DashLine
        return QColor(VALUE), Qt.PenStyle.SolidLine

    def _styles(self, sc: Scene) -> list[tuple[QPen, QPen, QBrush, QPen] | None]:
        """Per item: shaft pen, head outline pen, head brush, label pen (cached per scene).

        Only items drawn as arrows get a style (None for cloud points).
        """
        if self._styles_for is sc:
            return self._style_cache
        pool = self._style_pool
        if len(pool) > 2048:
            pool.clear()
        arrows = np.flatnonzero(sc.arrow)
        out: list[tuple[QPen, QPen, QBrush, QPen] | None] = [None] * len(sc.kind)
        widths = np.round(sc.width[arrows] * line_scale(), 2).tolist()
        shades = np.round(np.nan_to_num(sc.weight[arrows]) * 100).astype(int).tolist()
        masked = sc.masked[arrows].tolist()
        leaks = sc.leaks[arrows].tolist()
        for a, k in enumerate(arrows.tolist()):
            kind = sc.kind[k]
            # Pens are reused across scenes: a drag makes a new scene on every move.
            key = (kind, masked[a], leaks[a], widths[a], shades[a])
            style_k = pool.get(key)
            if style_k is None:
                col, pen_style = self._color_of(kind, masked[a], leaks[a])
                shaft = QPen(col, widths[a], pen_style, Qt.PenCapStyle.FlatCap)
                outline = QPen(col, line_width(1.0))
                if kind == "key" and (not masked[a] or leaks[a]):
                    # The head is shaded by the weight the key gets (viridis, see colour bar).
                    brush = QBrush(self._lut[min(max(shades[a], 0), 100)])
                    # A leaking forbidden key's label is in the warning colour.
                    text = QPen(QColor(LEAK if leaks[a] else TOKEN))
                elif kind == "query":
                    # An open head and a see-through shaft: a key lying along the query (the
                    # same token's key, say) still shows under it, told apart by its head.
                    shaft.setColor(QColor(col.red(), col.green(), col.blue(), 170))
                    outline = QPen(col, line_width(1.6))
                    brush = QBrush(QColor("white"))
                    text = QPen(col)
                elif kind == "absent":
                    # a faded arrow, but a label still readable on a slide (4.5 : 1 on white)
                    brush = QBrush(col)
                    text = QPen(QColor(ABSENT_LABEL))
                else:
                    brush = QBrush(col)
                    text = QPen(col)
                style_k = pool[key] = (shaft, outline, brush, text)
            out[k] = style_k
        self._styles_for, self._style_cache = sc, out
        return out

    def paint_arrows(self, p: QPainter, sc: Scene, g: ScreenGeometry, ringed: set[int]) -> None:
        """Arrows far to near, then a ring around each item in ``ringed`` (the hovered item
        and the focused key, arrow or cloud point)."""
        o = QPointF(*g.origin)
        styles = self._styles(sc)
        order = g.order.tolist()
        # Python lists of the drawn arrows only (the cloud's thousands stay in NumPy).
        ends = g.shaft_end[g.order].tolist()
        heads = g.heads[g.order].tolist()
        ppx = layer_scale(p)
        for a, k in enumerate(order):
            style = styles[k]
            if style is None:  # pragma: no cover - the order holds arrows only
                continue
            shaft, outline, brush, _ = style
            self.lines.draw(p, shaft, o, QPointF(*ends[a]), ppx)
            (x0, y0), (x1, y1), (x2, y2) = heads[a]
            p.setPen(outline)
            p.setBrush(brush)
            p.drawPolygon(QPolygonF((QPointF(x0, y0), QPointF(x1, y1), QPointF(x2, y2))))
        for k in sorted(r for r in ringed if r < len(sc.kind)):
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor("#222222"), 1.0, Qt.PenStyle.DotLine))
            p.drawEllipse(QPointF(*g.tips[k]), 7.0, 7.0)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(QColor("#222222")))
        p.drawEllipse(o, 2.5, 2.5)

    def paint_labels(self, p: QPainter, sc: Scene, g: ScreenGeometry) -> None:
        ascent = self.fm_label.ascent()
        styles = self._styles(sc)
        backdrop = QColor(255, 255, 255, 200)
        shown = g.order[g.label_visible[g.order]]  # far to near
        pos = g.label_pos[shown].tolist()
        size = g.label_size[shown].tolist()
        tips = g.tips[shown].tolist()
        font = None
        leader = QPen(QColor(150, 150, 150, 170), 0.8)
        ppx = layer_scale(p)
        for a, k in enumerate(shown.tolist()):
            (x, y), (bw, bh) = pos[a], size[a]
            # A label pushed away from its tip gets a faint leader line back to it.
            tx, ty = tips[a]
            nx, ny = min(max(tx, x), x + bw), min(max(ty, y), y + bh)
            if (nx - tx) ** 2 + (ny - ty) ** 2 > 14.0**2:
                self.lines.draw(p, leader, QPointF(tx, ty), QPointF(nx, ny), ppx)
            p.fillRect(QRectF(x, y, bw, bh), backdrop)
            want = self.font_bold if sc.kind[k] == "query" else self.font_label
            if want is not font:
                p.setFont(want)
                font = want
            style = styles[k]
            assert style is not None
            p.setPen(style[3])
            p.drawText(QPointF(x + 3.0, y + 1.0 + ascent), sc.label[k])

    def paint_colorbar(self, p: QPainter, w: float, h: float) -> None:
        rect = colorbar_rect(w, h)
        if rect is None:
            return
        p.setFont(self.font_small)
        ink = QColor("#444444")
        paint_colour_bar(
            p,
            rect,
            [self.color(float(v)) for v in np.linspace(0, 1, 6)],
            vertical=True,
            labels=[(v, f"{v:g}") for v in (1.0, 0.5, 0.0)],
            fm=self.fm_small,
            ink=ink,
        )
        p.setPen(ink)
        # whole, however large the text: never past the canvas's right edge
        x = min(rect.left() - 6, w - 4 - self.fm_small.horizontalAdvance("weight"))
        p.drawText(QPointF(x, rect.top() - 6), "weight")

    def paint_text(
        self, p: QPainter, sc: Scene, header: str, w: float, h: float, *, hint: bool
    ) -> None:
        """The header above, the notes below, and (with ``hint``) how to use the view."""
        p.setFont(self.font_label)
        fm = self.fm_label
        p.setPen(QColor("#222222"))
        p.drawText(QPointF(6, 4 + fm.ascent()), header)
        p.setFont(self.font_small)
        fs = self.fm_small
        p.setPen(QColor("#555555"))
        y = h - 4 - fs.descent()
        for note in reversed(sc.notes):
            p.drawText(QPointF(6, y), fs.elidedText(note, Qt.TextElideMode.ElideRight, w - 12))
            y -= fs.height()
        # How to use the view: on screen only, never in an exported figure.
        if hint:
            hw = fs.horizontalAdvance(HINT)
            if hw + fm.horizontalAdvance(header) + 30 < w:
                p.setPen(QColor("#8a8a8a"))
                p.drawText(QPointF(w - hw - 6, 4 + fm.ascent()), HINT)
