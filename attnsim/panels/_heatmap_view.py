"""The painted parts of the heatmap panel: the stage matrices and the grid of head thumbnails.

Both are plain QWidgets painted with QPainter, so an export to SVG/PDF keeps the cell numbers
and labels as text. Small matrices are drawn as rectangles (crisp in vector output); large
ones as one image per matrix, built at the screen's pixel size by
:func:`attnsim.views.heatmap.render_pixels` (pooled, so n = 2048 costs a few ms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QMouseEvent,
    QPaintEngine,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attnsim.engine.attention import HeadTrace
from attnsim.views.heatmap import (
    StageData,
    TileLayout,
    cell_at,
    cell_colors,
    cell_texts,
    lut_argb,
    render_pixels,
    text_on_dark,
    thumb_grid,
)

from .kit.colour_bar import paint_colour_bar
from .kit.labels import distinct_elide
from .kit.numbers import fmt_number
from .style import KEY, MUTED, QUERY, score_cmap, weight_cmap

# Matrices up to this many rows/columns are drawn as rectangles (and can carry numbers).
RECT_MAX = 32
# Cell numbers are written only up to this size (and only if they fit in the cell).
NUMBERS_MAX = 16
ENTROPY_W = 46.0
HATCH = QColor(128, 128, 128)
MASKED_BG = QColor(242, 242, 242)
LABEL_MAX_W = 96.0
# A cell may be this many times wider than tall (or taller than wide) to fill its area.
MAX_CELL_ASPECT = 4.0
# Rotated key labels take at most this share of the canvas height.
ROTATED_LABEL_SHARE = 0.22
NUMBERS_HIDDEN = "Numbers need larger cells: widen the panel, or show one stage."


def fit_tile_layout(
    width: float,
    height: float,
    n_q: int,
    n_k: int,
    n_tiles: int,
    *,
    row_label_w: float,
    col_label_h: float,
    title_h: float,
    bar_h: float,
    entropy_w: tuple[float, ...],
    gap: float = 14.0,
    margin: float = 6.0,
    max_cell: float = 84.0,
    max_aspect: float = MAX_CELL_ASPECT,
) -> tuple[list[TileLayout], tuple[float, float, float, float]]:
    """Like :func:`attnsim.views.heatmap.tile_layout`, but cells fill the area: width
    and height are sized separately (a wide, short dock gets wide cells that can hold their
    numbers), up to ``max_aspect`` : 1 either way."""
    if len(entropy_w) != n_tiles:
        raise ValueError(f"entropy_w needs {n_tiles} widths, got {len(entropy_w)}")
    fixed_w = 2 * margin + row_label_w + (n_tiles - 1) * gap + sum(entropy_w)
    avail_w = max(width - fixed_w, 1.0)
    avail_h = max(height - 2 * margin - title_h - col_label_h - bar_h, 1.0)
    cw = max(min(avail_w / (n_tiles * n_k), max_cell), 0.05)
    ch = max(min(avail_h / n_q, max_cell), 0.05)
    cw, ch = min(cw, ch * max_aspect), min(ch, cw * max_aspect)
    mw, mh = cw * n_k, ch * n_q
    used = fixed_w - 2 * margin + n_tiles * mw
    x = margin + max((width - 2 * margin - used) / 2, 0.0)
    top = margin + max((height - 2 * margin - title_h - col_label_h - mh - bar_h) / 2, 0.0)
    rows = (x, top + title_h + col_label_h, row_label_w, mh)
    x += row_label_w
    tiles = []
    for t in range(n_tiles):
        my = top + title_h + col_label_h
        ent = entropy_w[t]
        tiles.append(
            TileLayout(
                matrix=(x, my, mw, mh),
                title=(x, top, mw + ent, title_h),
                col_labels=(x, top + title_h, mw, col_label_h),
                bar=(x, my + mh, mw, bar_h),
                entropy=(x + mw, my, ent, mh) if ent > 0 else None,
            )
        )
        x += mw + ent + gap
    return tiles, rows


def number_digits(cell_w: float, cell_h: float, digits: int, fm: QFontMetricsF) -> int | None:
    """The most decimals (``digits`` down to 1) whose numbers fit a cell, or None."""
    if fm.height() + 2 > cell_h:
        return None
    for d in range(max(digits, 1), 0, -1):
        if fm.horizontalAdvance("−0." + "0" * d) + 4 <= cell_w:
            return d
    return None


@cache
def _lut(kind: str) -> np.ndarray:
    """Packed 256-entry colour table: viridis for weights/norms, diverging for signed scores."""
    cmap = score_cmap() if kind == "signed" else weight_cmap()
    return lut_argb(cmap.getLookupTable(nPts=256, alpha=False))


def _qcolor(argb: int) -> QColor:
    return QColor.fromRgb(int(argb) & 0xFFFFFFFF)


def _rect(r: tuple[float, float, float, float]) -> QRectF:
    return QRectF(*r)


def _stride(cell_px: float, text_px: float) -> int:
    """Label every k-th row/column so labels never overlap."""
    return max(1, math.ceil(text_px / max(cell_px, 1e-9)))


@dataclass(eq=False)
class CanvasContent:
    """Everything the canvas draws, taken from the workbench in one place (the panel)."""

    trace: HeadTrace
    stages: list[StageData]
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    receiving: int
    focused_key: int | None = None
    entropy: np.ndarray | None = None  # (n_q,) bits, drawn right of the weights
    entropy_max: np.ndarray | None = None  # (n_q,) each row's ceiling (trace.max_entropy)
    show_numbers: bool = True
    digits: int = 2

    @property
    def entropy_top(self) -> float:
        """The full width of the entropy bars: the largest row ceiling (at least 1 bit)."""
        if self.entropy_max is not None and np.size(self.entropy_max):
            top = float(np.max(self.entropy_max))
        else:
            top = math.log2(max(len(self.col_labels), 1))
        return max(top, 1.0)


@dataclass(eq=False)
class _Prepared:
    """Per-stage drawing arrays, computed once per content (rectangles) or per size (image)."""

    colors: np.ndarray | None = None  # (n_q, n_k) packed colours (rectangle mode)
    dark: np.ndarray | None = None  # (n_q, n_k) white text needed
    texts: list[list[str]] | None = None
    text_digits: int | None = None
    numbers_drawn: bool = False
    # (image, the array it views) of the cells' colours for raster painting
    cell_image: tuple[QImage, np.ndarray] | None = None
    images: dict[tuple[int, int], tuple[QImage, np.ndarray, tuple[int, int]]] = field(
        default_factory=dict
    )


def _draw_colorbar(p: QPainter, rect: QRectF, sd: StageData, fm: QFontMetricsF) -> None:
    """A horizontal colour bar with its limits, and a legend (hatch swatch if cells are hatched)."""
    bar = QRectF(rect.x(), rect.y() + 6, rect.width(), 8)
    lut = _lut(sd.kind)
    colours = [_qcolor(lut[round(s * 255)]) for s in np.linspace(0, 1, 9)]
    lh = fm.height()
    ticks = QRectF(rect.x(), bar.bottom() + 1, rect.width(), lh)
    mid = (sd.lo + sd.hi) / 2
    lo, hi = fmt_number(sd.lo, 2), fmt_number(sd.hi, 2)
    if fm.horizontalAdvance(lo) + fm.horizontalAdvance(hi) + 4 > rect.width():
        # A narrow bar: one decimal, so the two limits do not run into each other.
        lo, hi = fmt_number(sd.lo, 1), fmt_number(sd.hi, 1)
    marks = [(0.0, lo), (1.0, hi)]
    if rect.width() > 3 * fm.horizontalAdvance("−0.00"):
        marks.insert(1, (0.5, fmt_number(mid, 2)))
    paint_colour_bar(p, bar, colours, labels=marks, fm=fm, frame=QColor("#555555"))
    legend = QRectF(rect.x(), ticks.bottom(), rect.width(), lh)
    x = legend.x()
    if sd.allowed is not None:
        sw = QRectF(x, legend.y() + 2, 14, lh - 4)
        p.fillRect(sw, MASKED_BG)
        p.fillRect(sw, QBrush(HATCH, Qt.BrushStyle.BDiagPattern))
        p.setPen(QPen(QColor("#777777"), 0.8))
        p.drawRect(sw)
        x += 18
    text = sd.legend
    p.setPen(QColor("#555555"))
    room = max(legend.right() - x, 0.0)
    p.drawText(
        QRectF(x, legend.y(), room, lh),
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
        fm.elidedText(text, Qt.TextElideMode.ElideRight, room),
    )


def draw_matrix(
    p: QPainter,
    rect: QRectF,
    sd: StageData,
    prep: _Prepared,
    *,
    numbers: bool,
    digits: int,
    font: QFont,
) -> tuple[int, int]:
    """Draw one stage's cells into ``rect``; return the pooling block (1, 1 = every cell)."""
    n_q, n_k = sd.shape
    if max(n_q, n_k) > RECT_MAX:
        return _draw_pooled(p, rect, sd, prep)
    if prep.colors is None:
        prep.colors = cell_colors(sd.values, sd.lo, sd.hi, _lut(sd.kind))
        prep.dark = text_on_dark(prep.colors)
    colors, dark = prep.colors, prep.dark
    assert dark is not None
    cw, ch = rect.width() / n_k, rect.height() / n_q

    def cell(i: int, j: int) -> QRectF:
        return QRectF(rect.x() + j * cw, rect.y() + i * ch, cw, ch)

    finite = np.isfinite(sd.values)
    forbidden = sd.forbidden
    p.save()
    p.setPen(Qt.PenStyle.NoPen)
    hatch = QBrush(HATCH, Qt.BrushStyle.BDiagPattern)
    if p.paintEngine().type() == QPaintEngine.Type.Raster:
        # On screen (and in PNGs) one scaled image of the cells costs one call, not n²;
        # vector figures (SVG, PDF) keep one rectangle per cell, which stays crisp there.
        if prep.cell_image is None:
            argb = np.where(finite, colors, np.uint32(MASKED_BG.rgba())).astype(np.uint32)
            argb = np.ascontiguousarray(argb)
            prep.cell_image = (
                QImage(argb.data, n_k, n_q, 4 * n_k, QImage.Format.Format_RGB32),
                argb,
            )
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        p.drawImage(rect, prep.cell_image[0])
        if forbidden is not None:
            for i, j in zip(*np.nonzero(forbidden), strict=True):
                p.fillRect(cell(i, j), hatch)
    else:
        for i in range(n_q):
            for j in range(n_k):
                r = cell(i, j)
                p.fillRect(r, _qcolor(colors[i, j]) if finite[i, j] else MASKED_BG)
                if forbidden is not None and forbidden[i, j]:
                    p.fillRect(r, hatch)
    # Thin white grid lines separate cells of equal colour.
    if cw >= 6 and ch >= 6:
        p.setPen(QPen(QColor(255, 255, 255), 1.0))
        for j in range(1, n_k):
            x = rect.x() + j * cw
            p.drawLine(QPointF(x, rect.y()), QPointF(x, rect.bottom()))
        for i in range(1, n_q):
            y = rect.y() + i * ch
            p.drawLine(QPointF(rect.x(), y), QPointF(rect.right(), y))
    prep.numbers_drawn = False
    if numbers and max(n_q, n_k) <= NUMBERS_MAX:
        fit = number_digits(cw, ch, digits, QFontMetricsF(font))
        if fit is not None:
            if prep.texts is None or prep.text_digits != fit:
                prep.texts, prep.text_digits = cell_texts(sd.values, fit), fit
            prep.numbers_drawn = True
            p.setFont(font)
            white, black = QColor(255, 255, 255), QColor(20, 20, 20)
            for i in range(n_q):
                for j in range(n_k):
                    masked_bg = not finite[i, j]
                    p.setPen(white if dark[i, j] and not masked_bg else black)
                    p.drawText(cell(i, j), Qt.AlignmentFlag.AlignCenter, prep.texts[i][j])
    p.restore()
    return (1, 1)


def _draw_pooled(p: QPainter, rect: QRectF, sd: StageData, prep: _Prepared) -> tuple[int, int]:
    """A matrix too large for a rectangle per cell: one image, each pixel pooling a block of
    cells (cached per pixel size); returns the block."""
    scale = p.deviceTransform().m11() or 1.0
    w_px = max(1, round(rect.width() * scale))
    h_px = max(1, round(rect.height() * scale))
    key = (w_px, h_px)
    if key not in prep.images:
        arr, block = render_pixels(
            sd.values, sd.allowed, sd.lo, sd.hi, _lut(sd.kind), h_px, w_px,
            hatch=HATCH.rgba(), background=MASKED_BG.rgba(), period=max(4, round(6 * scale)),
        )  # fmt: skip
        image = QImage(arr.data, w_px, h_px, 4 * w_px, QImage.Format.Format_RGB32)
        prep.images.clear()  # one size at a time: the last one is the one on screen
        prep.images[key] = (image, arr, block)
    image, _, block = prep.images[key]
    p.save()
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
    p.drawImage(rect, image)
    p.restore()
    return block


class HeatmapCanvas(QWidget):
    """One head's stages side by side, with labels, colour bars and the entropy column."""

    cell_clicked = Signal(int, int, int)  # tile, query, key
    row_clicked = Signal(int)
    col_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        # Small enough that a laptop-sized dock never squeezes the note below onto it.
        self.setMinimumSize(240, 110)
        self.setAutoFillBackground(False)
        self.content: CanvasContent | None = None
        self.prepared: list[_Prepared] = []
        self.blocks: list[tuple[int, int]] = []
        self._layout_cache: tuple[object, list[TileLayout], tuple] | None = None
        self.row_texts: list[str] = []  # the labels as drawn (shortened to fit, distinct)
        self.col_texts: list[str] = []
        self.numbers_hidden = False  # numbers are on but no cell can hold them
        self.notice_line = False  # a line under the bars says so

    # ---- content ------------------------------------------------------------------------------
    def set_content(self, content: CanvasContent) -> None:
        self.content = content
        self.prepared = [_Prepared() for _ in content.stages]
        self.blocks = [(1, 1)] * len(content.stages)
        self._layout_cache = None
        self.update()

    def set_selection(self, receiving: int, focused_key: int | None) -> None:
        """Move the receiving row / focused key without recomputing any drawn array."""
        assert self.content is not None
        self.content.receiving, self.content.focused_key = receiving, focused_key
        self._layout_cache = None  # the receiving label is bold: row labels may widen
        self.update()

    # ---- geometry -----------------------------------------------------------------------------
    def _fonts(self) -> tuple[QFont, QFont, QFont]:
        base = QFont(self.font())
        small = QFont(base)
        small.setPointSizeF(max(base.pointSizeF() * 0.85, 6.5))
        bold = QFont(base)
        bold.setBold(True)
        return base, small, bold

    def layout_tiles(self) -> tuple[list[TileLayout], tuple[float, float, float, float], bool]:
        """Tile rectangles for the current size, the row-label rectangle, rotated key labels."""
        assert self.content is not None
        key = (self.width(), self.height(), id(self.content))
        if self._layout_cache is not None and self._layout_cache[0] == key:
            return self._layout_cache[1], *self._layout_cache[2]  # type: ignore[return-value]
        c = self.content
        base, small, bold = self._fonts()
        fm, fs, fb = QFontMetricsF(base), QFontMetricsF(small), QFontMetricsF(bold)
        n_q, n_k = c.stages[0].shape
        measure = fb.horizontalAdvance
        # Labels are shortened so that they stay distinct ("contr…ry 1", not "control t…" x4).
        self.row_texts = (
            distinct_elide(c.row_labels, measure, LABEL_MAX_W) if n_q <= 64 else list(c.row_labels)
        )
        show = self.row_texts if n_q <= 64 else (self.row_texts[c.receiving],)
        row_w = max([measure(t) for t in show] + [fs.horizontalAdvance("query ↓")]) + 8
        ent = tuple(ENTROPY_W if sd.stage == "weights" and c.entropy is not None else 0.0
                    for sd in c.stages)  # fmt: skip
        w, h = float(self.width()), float(self.height())

        def fit(col_label_h: float, footer: float) -> tuple[list[TileLayout], tuple]:
            return fit_tile_layout(
                w, h, n_q, n_k, len(c.stages), row_label_w=row_w, col_label_h=col_label_h,
                title_h=fb.height() + 4, bar_h=6 + 8 + 1 + 2 * fs.height() + footer,
                entropy_w=ent,
            )  # fmt: skip

        # Large matrices get one more line under the bars: what a pixel stands for.
        footer = fs.height() if max(n_q, n_k) > RECT_MAX else 0.0
        tiles, rows = fit(fm.height() + 2, footer)
        cw = tiles[0].matrix[2] / n_k
        flat = distinct_elide(c.col_labels, measure, cw - 4) if n_k <= 64 else []
        readable = n_k <= 64 and all(
            len(short.replace("…", "")) >= min(3, len(full))
            for short, full in zip(flat, c.col_labels, strict=True)
        )
        rotated = not readable
        if rotated:
            longest = max(measure(t) for t in (c.col_labels if n_k <= 64 else ("t0000",)))
            room = min(longest, LABEL_MAX_W, max(ROTATED_LABEL_SHARE * h, 2 * fb.height()))
            self.col_texts = (
                distinct_elide(c.col_labels, measure, room) if n_k <= 64 else list(c.col_labels)
            )
            tiles, rows = fit(room + 6, footer)
        else:
            self.col_texts = flat
        self.notice_line = False
        if c.show_numbers and max(n_q, n_k) <= NUMBERS_MAX and not footer:
            m = tiles[0].matrix
            if number_digits(m[2] / n_k, m[3] / n_q, c.digits, QFontMetricsF(small)) is None:
                # The numbers cannot be shown: say so under the bars, if that leaves cells.
                with_note = fit(tiles[0].col_labels[3], fs.height())
                if with_note[0][0].matrix[3] >= 6 * n_q:
                    tiles, rows = with_note
                    self.notice_line = True
        self._layout_cache = (key, tiles, (rows, rotated))
        return tiles, rows, rotated

    def hit(self, x: float, y: float) -> tuple[str, int, int, int] | None:
        """What is under (x, y): ("cell", tile, i, j), ("row", -1, i, -1), ("col", -1, -1, j)."""
        if self.content is None:
            return None
        tiles, rows, _ = self.layout_tiles()
        n_q, n_k = self.content.stages[0].shape
        for t, tl in enumerate(tiles):
            ij = cell_at(x, y, tl.matrix, n_q, n_k)
            if ij is not None:
                return ("cell", t, ij[0], ij[1])
            hit_col = cell_at(x, y, tl.col_labels, 1, n_k)
            if hit_col is not None:
                return ("col", -1, -1, hit_col[1])
        rx, ry, rw, rh = rows
        grab = (rx - 4, ry, rw + 4, rh)  # a little slack on the left edge
        hit_row = cell_at(x, y, grab, n_q, 1)
        if hit_row is not None:
            return ("row", -1, hit_row[0], -1)
        return None

    def cell_center(self, tile: int, i: int, j: int) -> QPointF:
        """Widget coordinates of cell (i, j) of a tile (tests click here)."""
        assert self.content is not None
        tiles, _, _ = self.layout_tiles()
        n_q, n_k = self.content.stages[0].shape
        x, y, w, h = tiles[tile].cell_rect(i, j, n_q, n_k)
        return QPointF(x + w / 2, y + h / 2)

    def row_label_center(self, i: int) -> QPointF:
        assert self.content is not None
        _, (rx, ry, rw, rh), _ = self.layout_tiles()
        n_q = self.content.stages[0].shape[0]
        return QPointF(rx + rw / 2, ry + (i + 0.5) * rh / n_q)

    def tooltip_at(self, x: float, y: float) -> str:
        """The hover text: the token pair and every number of that cell, or ''."""
        hit = self.hit(x, y)
        if hit is None or self.content is None:
            return ""
        c = self.content
        tr = c.trace
        kind, _, i, j = hit
        if kind == "row":
            ent = (
                "" if c.entropy is None else f"\nentropy {fmt_number(float(c.entropy[i]), 3)} bits"
            )
            return (
                f"query {c.row_labels[i]} (row {i + 1}): click to make it the receiving token{ent}"
            )
        if kind == "col":
            return f"key {c.col_labels[j]} (column {j + 1}): click to focus it"
        allowed = bool(tr.mask[i, j])
        lines = [
            f"{c.row_labels[i]} → {c.col_labels[j]}   (query {i + 1}, key {j + 1})"
            + ("" if allowed else "   forbidden by the mask"),
            f"q·k = {fmt_number(float(tr.scores[i, j]), 4)}",
            f"logit = {fmt_number(float(tr.logits[i, j]), 4)}",
            f"masked logit = {fmt_number(float(tr.masked_logits[i, j]), 4)}",
            f"weight = {fmt_number(float(tr.weights[i, j]), 4)}",
            f"‖w·v‖ = {fmt_number(float(tr.contribution_norms[i, j]), 4)}",
        ]
        if c.entropy is not None:
            line = f"row entropy = {fmt_number(float(c.entropy[i]), 3)} bits"
            if c.entropy_max is not None:
                line += f" (at most {fmt_number(float(c.entropy_max[i]), 3)})"
            lines.append(line)
        return "\n".join(lines)

    # ---- events -------------------------------------------------------------------------------
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            pos = e.position() if hasattr(e, "position") else QPointF(e.pos())  # type: ignore[attr-defined]
            text = self.tooltip_at(pos.x(), pos.y())
            if text:
                QToolTip.showText(e.globalPos(), text, self)  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(e)
        pos = e.position()
        hit = self.hit(pos.x(), pos.y())
        if hit is None:
            return super().mousePressEvent(e)
        kind, t, i, j = hit
        if kind == "cell":
            self.cell_clicked.emit(t, i, j)
        elif kind == "row":
            self.row_clicked.emit(i)
        else:
            self.col_clicked.emit(j)
        e.accept()

    # ---- painting -----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if self.content is not None:
            self.paint_content(p)
        p.end()

    def paint_content(self, p: QPainter) -> None:
        c = self.content
        assert c is not None
        base, small, bold = self._fonts()
        _fm, fs, fb = QFontMetricsF(base), QFontMetricsF(small), QFontMetricsF(bold)
        tiles, rows_rect, rotated = self.layout_tiles()
        n_q, n_k = c.stages[0].shape
        for t, (sd, tl) in enumerate(zip(c.stages, tiles, strict=True)):
            mrect = _rect(tl.matrix)
            p.setFont(bold)
            p.setPen(QColor("#222222"))
            title = _rect(tl.title)
            p.drawText(
                title, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fb.elidedText(sd.title, Qt.TextElideMode.ElideRight, title.width()),
            )  # fmt: skip
            block = draw_matrix(
                p, mrect, sd, self.prepared[t], numbers=c.show_numbers, digits=c.digits, font=small
            )
            self.blocks[t] = block
            p.setPen(QPen(QColor("#666666"), 0.8))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(mrect)
            self._draw_selection(p, mrect, n_q, n_k, c)
            self._draw_col_labels(p, _rect(tl.col_labels), c, rotated, fb, base)
            p.setFont(small)
            _draw_colorbar(p, _rect(tl.bar), sd, fs)
            if tl.entropy is not None and c.entropy is not None:
                self._draw_entropy(p, _rect(tl.entropy), _rect(tl.col_labels), c, fs, small)
        self._draw_row_labels(p, _rect(rows_rect), c, fb, base, small, tiles[0])
        pooled = [b for b in self.blocks if b != (1, 1)]
        self.numbers_hidden = (
            c.show_numbers
            and max(n_q, n_k) <= NUMBERS_MAX
            and not all(prep.numbers_drawn for prep in self.prepared)
        )
        if self.numbers_hidden and self.notice_line:
            bar = tiles[0].bar
            p.setFont(small)
            p.setPen(QColor("#555555"))
            p.drawText(
                QRectF(rows_rect[0], bar[1] + bar[3] - fs.height(), self.width(), fs.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, NUMBERS_HIDDEN,
            )  # fmt: skip
        if max(n_q, n_k) > RECT_MAX:
            kr, kc = max(pooled) if pooled else (1, 1)
            text = (
                f"Each pixel shows the largest value of a {kr}×{kc} block of cells; "
                "hover for a cell's exact numbers."
                if pooled
                else "Hover over a cell for its exact numbers."
            )
            bar = tiles[0].bar
            p.setFont(small)
            p.setPen(QColor("#555555"))
            p.drawText(
                QRectF(rows_rect[0], bar[1] + bar[3] - fs.height(), self.width(), fs.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text,
            )  # fmt: skip

    def _draw_selection(self, p: QPainter, m: QRectF, n_q: int, n_k: int, c: CanvasContent) -> None:
        ch, cw = m.height() / n_q, m.width() / n_k
        if c.focused_key is not None:
            pen = QPen(KEY, 1.5, Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRectF(m.x() + c.focused_key * cw, m.y(), max(cw, 1.0), m.height()))
        i = c.receiving
        p.setPen(QPen(QUERY, 2.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(m.x() - 1, m.y() + i * ch - 1, m.width() + 2, max(ch, 1.0) + 2))

    def _draw_col_labels(
        self, p: QPainter, r: QRectF, c: CanvasContent, rotated: bool, fb: QFontMetricsF,
        base: QFont,
    ) -> None:  # fmt: skip
        n_k = len(c.col_labels)
        cw = r.width() / n_k
        lh = fb.height()
        stride = _stride(cw, lh + 2) if rotated else 1
        bold = QFont(base)
        bold.setBold(True)
        # Only the labels that are drawn: every stride-th, and the focused key.
        drawn = set(range(0, n_k, stride))
        if c.focused_key is not None:
            drawn.add(c.focused_key)
        for j in sorted(drawn):
            focused = j == c.focused_key
            p.setFont(bold if focused else base)
            p.setPen(KEY if focused else QColor("#222222"))
            text = self.col_texts[j] if j < len(self.col_texts) else c.col_labels[j]
            if rotated:
                p.save()
                p.translate(r.x() + (j + 0.5) * cw, r.bottom() - 3)
                p.rotate(-90)
                room = r.height() - 4
                p.drawText(
                    QRectF(0, -lh / 2, room, lh),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    fb.elidedText(text, Qt.TextElideMode.ElideRight, room),
                )
                p.restore()
            else:
                p.drawText(
                    QRectF(r.x() + j * cw, r.y(), cw, r.height()),
                    Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom,
                    text,
                )

    def _draw_row_labels(
        self, p: QPainter, r: QRectF, c: CanvasContent, fb: QFontMetricsF, base: QFont,
        small: QFont, first: TileLayout,
    ) -> None:  # fmt: skip
        n_q = len(c.row_labels)
        ch = r.height() / n_q
        stride = _stride(ch, fb.height())
        bold = QFont(base)
        bold.setBold(True)
        room = r.width() - 6
        for i in sorted(set(range(0, n_q, stride)) | {c.receiving}):
            receiving = i == c.receiving
            if not receiving and stride > 1 and abs(i - c.receiving) < stride:
                continue  # keep the receiving label readable
            p.setFont(bold if receiving else base)
            p.setPen(QUERY if receiving else QColor("#222222"))
            cell = QRectF(r.x(), r.y() + i * ch + ch / 2 - fb.height() / 2, room, fb.height())
            p.drawText(
                cell, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                fb.elidedText(self.row_texts[i], Qt.TextElideMode.ElideRight, room),
            )  # fmt: skip
        # Which way the matrix reads, in the corner above the query labels.
        p.setFont(small)
        p.setPen(MUTED)
        fs = QFontMetricsF(small)
        # End half a line above the matrix: the first row's label may reach up that far.
        bottom = first.col_labels[1] + first.col_labels[3] - (fb.height() / 2 if stride > 1 else 0)
        corner = QRectF(r.x(), bottom - first.col_labels[3], room, first.col_labels[3])
        p.drawText(
            QRectF(corner.x(), corner.bottom() - 2 * fs.height(), corner.width(), fs.height()),
            Qt.AlignmentFlag.AlignRight, "key →",
        )  # fmt: skip
        p.drawText(
            QRectF(corner.x(), corner.bottom() - fs.height(), corner.width(), fs.height()),
            Qt.AlignmentFlag.AlignRight, "query ↓",
        )  # fmt: skip

    def _draw_entropy(
        self, p: QPainter, r: QRectF, header: QRectF, c: CanvasContent, fs: QFontMetricsF,
        small: QFont,
    ) -> None:  # fmt: skip
        assert c.entropy is not None
        ent = np.asarray(c.entropy, dtype=float)
        n_q = ent.size
        ch = r.height() / n_q
        x0, w = r.x() + 6, r.width() - 8
        top = max(c.entropy_top, 1e-9)
        p.setFont(small)
        p.setPen(QColor("#333333"))
        p.drawText(
            QRectF(x0 - 2, header.y(), w + 4, header.height()),
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, "H bits",
        )  # fmt: skip
        fill = QColor("#c6d4e6")
        if ch >= fs.height():
            for i in range(n_q):
                y = r.y() + i * ch
                bar = QRectF(x0, y + ch * 0.2, w * min(ent[i] / top, 1.0), ch * 0.6)
                p.fillRect(bar, fill)
                p.setPen(QColor("#222222"))
                p.drawText(
                    QRectF(x0, y, w, ch), Qt.AlignmentFlag.AlignCenter, fmt_number(float(ent[i]), 2)
                )
        else:
            # Too many rows for numbers: the entropy profile, one point per row.
            # Built from arrays by pyqtgraph (one call, not one QPointF per row).
            ys = np.concatenate(([r.y()], r.y() + (np.arange(n_q) + 0.5) * ch, [r.bottom()]))
            xs = np.concatenate(([x0], x0 + w * np.minimum(ent / top, 1.0), [x0]))
            p.setPen(QPen(QColor("#4a6a94"), 0.8))
            p.setBrush(fill)
            p.drawPath(pg.arrayToQPath(xs, ys))
            p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor("#999999"), 0.8))
        p.drawLine(QPointF(x0, r.y()), QPointF(x0, r.bottom()))
        p.setPen(QColor("#555555"))
        p.drawText(
            QRectF(x0 - 4, r.bottom() + 4, w + 8, fs.height()),
            Qt.AlignmentFlag.AlignHCenter, f"0–{fmt_number(top, 1)}",
        )  # fmt: skip


@dataclass(eq=False)
class Thumb:
    title: str
    weights: StageData


class HeadGrid(QWidget):
    """Small weight heatmaps, one per head; click one to focus that head everywhere."""

    head_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.thumbs: list[Thumb] = []
        self.focused = 0
        self.receiving = 0
        self.prepared: list[_Prepared] = []
        self.max_thumb = 72.0  # the panel lowers it when it is short
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("Each head's attention weights; click one to focus it")

    def set_heads(self, thumbs: list[Thumb], focused: int, receiving: int) -> None:
        # Keep the drawn thumbnails when the engine's arrays are the very same objects.
        same = len(thumbs) == len(self.thumbs) and all(
            a.weights.values is b.weights.values for a, b in zip(thumbs, self.thumbs, strict=True)
        )
        if not same:
            self.prepared = [_Prepared() for _ in thumbs]
        self.thumbs, self.focused, self.receiving = thumbs, focused, receiving
        self._fit_height()
        self.update()

    def _metrics(self) -> tuple[int, int, float, float, float]:
        """Columns, rows, thumbnail size, horizontal pitch and label height."""
        fm = QFontMetricsF(self.font())
        label_w = max((fm.horizontalAdvance(t.title) for t in self.thumbs), default=0.0)
        cols, rows, size, pitch = thumb_grid(
            len(self.thumbs), max(self.width() - 12.0, 50.0), max_size=self.max_thumb,
            min_size=min(36.0, self.max_thumb),
            gap=14.0, label_w=min(label_w + 4, 170.0),
        )  # fmt: skip
        return cols, rows, size, pitch, fm.height() + 2

    def set_max_thumb(self, size: float) -> None:
        """Largest thumbnail side (px): smaller thumbnails leave a short panel its heatmaps."""
        if size != self.max_thumb:
            self.max_thumb = float(size)
            self._fit_height()
            self.update()

    def _fit_height(self) -> None:
        if not self.thumbs:
            self.setFixedHeight(0)
            return
        _, rows, size, _, lh = self._metrics()
        self.setFixedHeight(int(rows * (size + lh + 10) + 4))

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._fit_height()

    def thumb_rect(self, h: int) -> QRectF:
        """The matrix rectangle of head ``h`` (tests click its centre)."""
        cols, _, size, pitch, lh = self._metrics()
        r, c = divmod(h, cols)
        n_q, n_k = self.thumbs[h].weights.shape
        w = size if n_k >= n_q else size * n_k / n_q
        hh = size if n_q >= n_k else size * n_q / n_k
        return QRectF(6 + c * pitch, 2 + r * (size + lh + 10), w, hh)

    def head_at(self, x: float, y: float) -> int | None:
        _, _, size, pitch, lh = self._metrics()
        for h in range(len(self.thumbs)):
            r = self.thumb_rect(h)
            if QRectF(r.x() - 3, r.y() - 3, pitch - 8, size + lh + 6).contains(QPointF(x, y)):
                return h
        return None

    def mousePressEvent(self, e: QMouseEvent) -> None:
        h = self.head_at(e.position().x(), e.position().y())
        if e.button() == Qt.MouseButton.LeftButton and h is not None:
            self.head_clicked.emit(h)
            e.accept()
            return
        super().mousePressEvent(e)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        fm = QFontMetricsF(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        for h, th in enumerate(self.thumbs):
            r = self.thumb_rect(h)
            draw_matrix(p, r, th.weights, self.prepared[h], numbers=False, digits=2,
                        font=self.font())  # fmt: skip
            n_q = th.weights.shape[0]
            ch = r.height() / n_q
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QUERY, 1.2))
            p.drawRect(QRectF(r.x(), r.y() + self.receiving * ch, r.width(), max(ch, 1.0)))
            focused = h == self.focused
            p.setPen(QPen(QColor("#111111"), 3.0 if focused else 0.8))
            p.drawRect(r.adjusted(-1, -1, 1, 1))
            p.setFont(bold if focused else self.font())
            p.setPen(QColor("#111111") if focused else QColor("#555555"))
            pitch = self._metrics()[3]
            label = QRectF(r.x(), r.y() + self._metrics()[2] + 3, pitch - 8, fm.height())
            p.drawText(
                label, Qt.AlignmentFlag.AlignLeft,
                fm.elidedText(th.title, Qt.TextElideMode.ElideRight, label.width()),
            )  # fmt: skip
        p.end()
