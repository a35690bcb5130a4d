"""The one numbered-matrix canvas: cells coloured by value, numbers in the cells when they fit,
hatching over forbidden (masked) cells, a highlighted row and column, row and column labels, a
colour bar.

Paint functions over a ``QPainter`` and a rectangle, so a panel places matrices where its own
layout wants them (a heatmap's side-by-side stages, a box inside a block diagram):

- :func:`paint_matrix` paints the cells of one matrix into its grid rectangle (colours from a
  :class:`ColourScale`, one fill, or per-row fills; hatching; grid lines or gaps; numbers; a
  frame; a highlighted row and column). Small matrices are one image on screen and one
  rectangle per cell in vector output (SVG, PDF keep crisp cells and real text); large ones are
  pooled into one image at the device's pixel size, so n = 2048 costs a few ms.
- :func:`paint_row_labels` / :func:`paint_col_labels` write labels beside / above a grid
  (every k-th when they would overlap, the highlighted one bold and coloured).
- :func:`paint_scale_bar` draws a :class:`ColourScale` with :func:`~.colour_bar.paint_colour_bar`.

:class:`attnsim.panels.kit.matrix_widget.MatrixCanvas` puts them together in a QWidget for one
standalone matrix (title, labels, cells, a vertical colour bar, tooltips, clicks).

The arrays behind a drawing (cell colours, texts, images) are kept in a :class:`MatrixCache`
per matrix, so a repaint that only moves the highlight recomputes nothing. Numbers are written
with :func:`attnsim.panels.kit.numbers.fmt_number` unless the caller passes texts or a format.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPaintEngine,
    QPainter,
    QPen,
)

from attnsim.engine.head_trace import MaskedTable
from attnsim.viewmodels.heatmap_pixels import cell_colors, lut_argb, render_pixels, text_on_dark

from ..style import KEY, QUERY
from .colour_bar import paint_colour_bar
from .hidpi import line_width
from .numbers import MINUS, SCI_ABOVE, fmt_number

__all__ = [
    "HATCH",
    "MASKED_BG",
    "NUMBERS_MAX",
    "RECT_MAX",
    "ColourScale",
    "MatrixCache",
    "label_stride",
    "lut_from_cmap",
    "number_digits",
    "paint_col_labels",
    "paint_matrix",
    "paint_row_highlight",
    "paint_row_labels",
    "paint_scale_bar",
]

# Matrices up to this many rows/columns are drawn as cells (and can carry numbers); larger ones
# as one pooled image.
RECT_MAX = 32
# Cell numbers are written only up to this size (and only if they fit in the cell).
NUMBERS_MAX = 16
HATCH = QColor(128, 128, 128)
MASKED_BG = QColor(242, 242, 242)  # behind non-finite values (−∞ logits) and hatching
WHITE_INK, DARK_INK = QColor(255, 255, 255), QColor(20, 20, 20)
FRAME_PEN = QColor("#666666")
LABEL_INK = QColor("#222222")

Formatter = Callable[[float, int], str]


# ---- colours ------------------------------------------------------------------------------------
def lut_from_cmap(cmap) -> NDArray[np.uint32]:
    """A pyqtgraph ``ColorMap`` as a packed 256-entry 0xAARRGGBB table (low to high)."""
    return lut_argb(cmap.getLookupTable(nPts=256, alpha=False))


@dataclass(frozen=True, eq=False)
class ColourScale:
    """Values from ``lo`` to ``hi`` over a packed colour table ``lut`` (clipped outside)."""

    lut: NDArray[np.uint32]
    lo: float
    hi: float

    def colours(self, values: ArrayLike) -> NDArray[np.uint32]:
        """The packed colour of every value, shape like ``values``."""
        return cell_colors(values, self.lo, self.hi, self.lut)

    def qcolours(self, n: int = 9) -> list[QColor]:
        """``n`` colours evenly along the table, for a colour bar's gradient."""
        return list(_lut_qcolours(np.ascontiguousarray(self.lut, np.uint32).tobytes(), n))


@functools.lru_cache(maxsize=64)
def _lut_qcolours(lut: bytes, n: int) -> tuple[QColor, ...]:
    # Keyed by the table's bytes: a colour bar is drawn on every repaint, its table seldom
    # changes, and making QColors is most of its cost.
    table = np.frombuffer(lut, dtype=np.uint32)
    top = table.size - 1
    return tuple(_qcolor(table[round(s * top)]) for s in np.linspace(0, 1, n))


def _qcolor(argb: int) -> QColor:
    return QColor.fromRgb(int(argb) & 0xFFFFFFFF)


# ---- numbers that fit ---------------------------------------------------------------------------
def number_digits(
    cell_w: float, cell_h: float, digits: int, fm: QFontMetricsF, lowest: int = 1
) -> int | None:
    """The most decimals (``digits`` down to ``lowest``) whose numbers fit a cell, or None."""
    if fm.height() + 2 > cell_h:
        return None
    for d in range(max(digits, lowest, 1), max(lowest, 1) - 1, -1):
        if fm.horizontalAdvance("−0." + "0" * d) + 4 <= cell_w:
            return d
    return None


def _texts(values: np.ndarray, digits: int, fmt: Formatter) -> list[list[str]]:
    if fmt is not fmt_number:
        return [[fmt(v, digits) for v in row] for row in values.tolist()]
    # fmt_number inlined for ordinary magnitudes: a repaint of new numbers formats every cell.
    spec = f".{max(int(digits), 0)}f"
    out = []
    for row in values.tolist():
        texts = []
        for x in row:
            if -SCI_ABOVE < x < SCI_ABOVE:  # finite, fixed decimals
                t = format(x, spec)
                if t[0] == "-":
                    t = MINUS + t[1:] if float(t) != 0 else t[1:]  # no "−0.00"
                texts.append(t)
            else:
                texts.append(fmt_number(x, digits))
        out.append(texts)
    return out


@dataclass(eq=False)
class MatrixCache:
    """What one matrix's drawing computed, kept until its values change (a new cache).

    ``colors`` / ``dark`` per cell (packed colours, white text needed), ``texts`` at
    ``text_digits`` decimals, ``cell_image`` the cells as an image for raster painting and
    ``images`` the pooled image of a large matrix at the last pixel size; ``numbers_drawn``
    says whether the last paint wrote the numbers, ``block`` what one pooled pixel stands for.
    ``spare`` is an image array its owner no longer shows (the previous values' pooled image):
    the next pooled image of that size is written into it rather than into new memory.
    """

    colors: np.ndarray | None = None
    dark: np.ndarray | None = None
    texts: list[list[str]] | None = None
    text_digits: int | None = None
    numbers_drawn: bool = False
    cell_image: tuple[QImage, np.ndarray] | None = None
    images: dict[tuple[int, int], tuple[QImage, np.ndarray, tuple[int, int]]] = field(
        default_factory=dict
    )
    block: tuple[int, int] = (1, 1)
    spare: np.ndarray | None = None

    def pooled_arrays(self) -> list[np.ndarray]:
        """The pooled images' arrays (to hand to the next values' cache as its ``spare``)."""
        return [arr for _, arr, _ in self.images.values()]


@functools.cache
def _hatch_brush() -> QBrush:
    return QBrush(HATCH, Qt.BrushStyle.BDiagPattern)


# ---- cells --------------------------------------------------------------------------------------
def paint_matrix(
    p: QPainter,
    rect: QRectF,
    values: ArrayLike | MaskedTable,
    *,
    scale: ColourScale | None = None,
    fill: QColor | None = None,
    row_fills: Sequence[QColor | None] | None = None,
    forbidden: np.ndarray | None = None,
    allowed: np.ndarray | None = None,
    numbers: bool = True,
    digits: int = 2,
    min_digits: int = 1,
    font: QFont | None = None,
    texts: Sequence[Sequence[str]] | None = None,
    fmt: Formatter = fmt_number,
    fit_numbers: bool = True,
    numbers_max: int = NUMBERS_MAX,
    ink: QColor = DARK_INK,
    row_inks: Sequence[QColor | None] | None = None,
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignCenter,
    text_inset: float = 0.0,
    grid_lines: bool = True,
    gap: float = 0.0,
    frame: QPen | None = None,
    highlight_row: int | None = None,
    row_pen: QPen | None = None,
    row_outset: float = 1.0,
    highlight_col: int | None = None,
    col_pen: QPen | None = None,
    cache: MatrixCache | None = None,
) -> tuple[int, int]:
    """Paint the cells of ``values`` (n_rows, n_cols) into the grid ``rect``; return the pooling
    block (rows, columns) one drawn cell stands for ((1, 1): every cell is drawn).

    Cell colour: ``scale`` maps each value (non-finite values get a light background), else
    ``fill`` for every cell, with ``row_fills[i]`` (when not None) overriding row ``i``; with
    neither, cells are left unpainted. ``forbidden`` (bool, like ``values``) cells are hatched;
    or pass ``allowed`` (its complement, as the engine's mask is) and the rest are hatched.
    Between cells: thin white ``grid_lines`` once cells are 6 px, or ``gap`` px of background
    (the right and bottom of each cell left unfilled). Matrices over ``RECT_MAX`` rows or
    columns with a ``scale`` are pooled into one image (no numbers).

    Numbers (only up to ``numbers_max`` rows and columns, when ``numbers``): ``texts`` if given,
    else ``fmt(value, d)``; with ``fit_numbers`` the decimals ``d`` go from ``digits`` down to
    ``min_digits`` until they fit a cell and none are written if none fit, without it every text
    is written at ``digits``. Text is white on dark colours, else ``row_inks[i]`` or ``ink``,
    aligned by ``align`` in the cell less ``text_inset`` px on the right.

    Then ``frame`` around the grid, ``highlight_col`` (``col_pen``, dashed key colour by
    default) and ``highlight_row`` (``row_pen``, solid query colour by default) ``row_outset`` px
    outside the grid. ``cache`` keeps the computed arrays for the next paint of the same values.
    ``values`` may be a :class:`~attnsim.engine.head_trace.MaskedTable` (the masked
    logits): a pooled image then reads the unmasked values and the mask, not a masked copy.
    """
    # A masked table is made only when it is drawn cell by cell (small), never to be pooled.
    table = values if isinstance(values, MaskedTable) else np.asarray(values)
    n_q, n_k = table.shape
    c = cache if cache is not None else MatrixCache()
    if n_q == 0 or n_k == 0:
        c.numbers_drawn = False
        return (1, 1)
    if max(n_q, n_k) > RECT_MAX and scale is not None:
        if allowed is None and forbidden is not None:
            allowed = ~forbidden
        image, c.block = pooled_image(rect, p.deviceTransform().m11() or 1.0, table, scale,
                                      allowed, c)  # fmt: skip
        _draw_pooled(p, rect, image)
        c.numbers_drawn = False
    else:
        v = np.asarray(table)
        if forbidden is None and allowed is not None:
            forbidden = ~allowed
        _paint_cells(
            p, rect, v, scale=scale, fill=fill, row_fills=row_fills, forbidden=forbidden,
            grid_lines=grid_lines, gap=gap, cache=c,
        )  # fmt: skip
        c.block = (1, 1)
        c.numbers_drawn = False
        if numbers and max(n_q, n_k) <= numbers_max:
            _paint_numbers(
                p, rect, v, digits=digits, min_digits=min_digits, font=font, texts=texts,
                fmt=fmt, fit=fit_numbers, ink=ink, row_inks=row_inks, align=align, inset=text_inset,
                coloured=scale is not None, cache=c,
            )  # fmt: skip
    if frame is not None:
        p.setPen(frame)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(rect)
    if highlight_col is not None:
        cw = rect.width() / n_k
        dashed = QPen(KEY, line_width(1.5), Qt.PenStyle.DashLine)
        p.setPen(col_pen if col_pen is not None else dashed)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(rect.x() + highlight_col * cw, rect.y(), max(cw, 1.0), rect.height()))
    if highlight_row is not None:
        paint_row_highlight(
            p, rect, n_q, highlight_row,
            row_pen if row_pen is not None else QPen(QUERY, line_width(2.0)), row_outset,
        )  # fmt: skip
    return c.block


def paint_row_highlight(
    p: QPainter, rect: QRectF, n_rows: int, i: int, pen: QPen, outset: float = 1.0
) -> None:
    """A rectangle around row ``i`` of a grid, ``outset`` px outside it."""
    ch = rect.height() / max(n_rows, 1)
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(
        QRectF(
            rect.x() - outset, rect.y() + i * ch - outset,
            rect.width() + 2 * outset, max(ch, 1.0) + 2 * outset,
        )
    )  # fmt: skip


def _paint_cells(
    p: QPainter,
    rect: QRectF,
    v: np.ndarray,
    *,
    scale: ColourScale | None,
    fill: QColor | None,
    row_fills: Sequence[QColor | None] | None,
    forbidden: np.ndarray | None,
    grid_lines: bool,
    gap: float,
    cache: MatrixCache,
) -> None:
    n_q, n_k = v.shape
    cw, ch = rect.width() / n_k, rect.height() / n_q

    def cell(i: int, j: int) -> QRectF:
        return QRectF(rect.x() + j * cw, rect.y() + i * ch, cw, ch)

    p.save()
    p.setPen(Qt.PenStyle.NoPen)
    hatch = _hatch_brush()
    if scale is not None:
        if cache.colors is None:
            cache.colors = scale.colours(v)
            cache.dark = None  # made when numbers are written on these colours
        colors = cache.colors
        finite = np.isfinite(v)
        if p.paintEngine().type() == QPaintEngine.Type.Raster and gap == 0:
            # On screen (and in PNGs) one scaled image of the cells costs one call, not n²;
            # vector figures (SVG, PDF) keep one rectangle per cell, which stays crisp there.
            if cache.cell_image is None:
                argb = np.where(finite, colors, np.uint32(MASKED_BG.rgba())).astype(np.uint32)
                argb = np.ascontiguousarray(argb)
                cache.cell_image = (
                    QImage(argb.data, n_k, n_q, 4 * n_k, QImage.Format.Format_RGB32),
                    argb,
                )
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
            p.drawImage(rect, cache.cell_image[0])
            if forbidden is not None:
                for i, j in zip(*np.nonzero(forbidden), strict=True):
                    p.fillRect(cell(i, j), hatch)
        else:
            for i in range(n_q):
                for j in range(n_k):
                    r = cell(i, j).adjusted(0, 0, -gap, -gap)
                    p.fillRect(r, _qcolor(colors[i, j]) if finite[i, j] else MASKED_BG)
                    if forbidden is not None and forbidden[i, j]:
                        p.fillRect(r, hatch)
    elif fill is not None or row_fills is not None:
        x0, y0, w, h = rect.x(), rect.y(), cw - gap, ch - gap
        for i in range(n_q):
            colour = row_fills[i] if row_fills is not None and row_fills[i] is not None else fill
            if colour is None:
                continue
            y = y0 + i * ch
            for j in range(n_k):
                p.fillRect(QRectF(x0 + j * cw, y, w, h), colour)
    if scale is None and forbidden is not None:
        for i, j in zip(*np.nonzero(forbidden), strict=True):
            p.fillRect(cell(i, j).adjusted(0, 0, -gap, -gap), hatch)
    # Thin white grid lines separate cells of equal colour.
    if grid_lines and gap == 0 and scale is not None and cw >= 6 and ch >= 6:
        p.setPen(QPen(QColor(255, 255, 255), 1.0))
        # One call, with the lines kept per grid: on screen this is drawn at every repaint.
        p.drawLines(_grid_lines(rect.x(), rect.y(), rect.width(), rect.height(), n_q, n_k))
    p.restore()


@functools.lru_cache(maxsize=32)
def _grid_lines(x0: float, y0: float, w: float, h: float, n_q: int, n_k: int) -> list[QLineF]:
    """The inner lines between the cells of an ``n_q x n_k`` grid over (x0, y0, w, h)."""
    cw, ch = w / n_k, h / n_q
    x1, y1 = x0 + w, y0 + h
    lines = [QLineF(x0 + j * cw, y0, x0 + j * cw, y1) for j in range(1, n_k)]
    lines += [QLineF(x0, y0 + i * ch, x1, y0 + i * ch) for i in range(1, n_q)]
    return lines


def _paint_numbers(
    p: QPainter,
    rect: QRectF,
    v: np.ndarray,
    *,
    digits: int,
    min_digits: int,
    font: QFont | None,
    texts: Sequence[Sequence[str]] | None,
    fmt: Formatter,
    fit: bool,
    ink: QColor,
    row_inks: Sequence[QColor | None] | None,
    align: Qt.AlignmentFlag,
    inset: float,
    coloured: bool,
    cache: MatrixCache,
) -> None:
    n_q, n_k = v.shape
    cw, ch = rect.width() / n_k, rect.height() / n_q
    f = QFont(font) if font is not None else QFont(p.font())
    d: int | None = digits
    if fit:
        d = number_digits(cw, ch, digits, QFontMetricsF(f), min_digits)
        if d is None:
            return
    if texts is None:
        if cache.texts is None or cache.text_digits != d:
            cache.texts, cache.text_digits = _texts(v, int(d), fmt), d  # type: ignore[arg-type]
        texts = cache.texts
    cache.numbers_drawn = True
    p.save()
    p.setFont(f)
    finite = np.isfinite(v) if coloured else None
    if coloured and cache.dark is None and cache.colors is not None:
        cache.dark = text_on_dark(cache.colors)
    dark = cache.dark if coloured else None
    white = None if dark is None or finite is None else (dark & finite).tolist()
    x0, y0, w = rect.x(), rect.y(), cw - inset
    pen = None
    for i in range(n_q):
        row_ink = row_inks[i] if row_inks is not None and row_inks[i] is not None else ink
        y = y0 + i * ch
        row_white = white[i] if white is not None else None
        row_texts = texts[i]
        for j in range(n_k):
            want = WHITE_INK if row_white is not None and row_white[j] else row_ink
            if want is not pen:  # one setPen per change of ink, not per cell
                p.setPen(want)
                pen = want
            p.drawText(QRectF(x0 + j * cw, y, w, ch), align, row_texts[j])
    p.restore()


def pool_cells(
    v: np.ndarray | MaskedTable,
    allowed: np.ndarray | None,
    scale: ColourScale,
    w_px: int,
    h_px: int,
    ppx: float,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, tuple[int, int]]:
    """The matrix pooled into ``w_px`` × ``h_px`` pixels of a screen of ``ppx`` pixels a point:
    the pixels' colours and the block of cells each pools."""
    return render_pixels(
        v, allowed, scale.lo, scale.hi, scale.lut, h_px, w_px,
        hatch=HATCH.rgba(), background=MASKED_BG.rgba(), period=max(4, round(6 * ppx)), out=out,
    )  # fmt: skip


def keep_pooled(
    cache: MatrixCache, key: tuple[int, int], arr: np.ndarray, block: tuple[int, int]
) -> None:
    """Keep a pooled image in ``cache``: one size at a time, the last one is the one on screen."""
    w_px, h_px = key
    image = QImage(arr.data, w_px, h_px, 4 * w_px, QImage.Format.Format_RGB32)
    cache.images.clear()
    cache.images[key] = (image, arr, block)


def pooled_image(
    rect: QRectF,
    ppx: float,
    v: np.ndarray | MaskedTable,
    scale: ColourScale,
    allowed: np.ndarray | None,
    cache: MatrixCache,
) -> tuple[QImage, tuple[int, int]]:
    """The pooled image of a large matrix drawn into ``rect`` on a screen of ``ppx`` pixels a
    point, and the block of cells a pixel pools: from ``cache``, or pooled now and kept there
    (so that it can be made ahead of the paint that shows it)."""
    w_px = max(1, round(rect.width() * ppx))
    h_px = max(1, round(rect.height() * ppx))
    key = (w_px, h_px)
    if key not in cache.images:
        spare, cache.spare = cache.spare, None
        out = spare if spare is not None and spare.shape == (h_px, w_px) else None
        keep_pooled(cache, key, *pool_cells(v, allowed, scale, w_px, h_px, ppx, out=out))
    image, _, block = cache.images[key]
    return image, block


def _draw_pooled(p: QPainter, rect: QRectF, image: QImage) -> None:
    """A matrix too large for a rectangle per cell: its pooled image, each pixel a block of
    cells (see :func:`pooled_image`), drawn without smoothing."""
    p.save()
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
    p.drawImage(rect, image)
    p.restore()


# ---- labels -------------------------------------------------------------------------------------
def label_stride(cell_px: float, text_px: float) -> int:
    """Label every k-th row/column so labels never overlap."""
    return max(1, math.ceil(text_px / max(cell_px, 1e-9)))


def paint_row_labels(
    p: QPainter,
    rect: QRectF,
    texts: Sequence[str],
    *,
    font: QFont,
    fm: QFontMetricsF | None = None,
    highlight: int | None = None,
    highlight_ink: QColor | None = None,
    ink: QColor = LABEL_INK,
    pad: float = 6.0,
) -> int:
    """Right-aligned labels left of a grid whose rows span ``rect`` (vertically centred on their
    row, elided to ``rect``'s width less ``pad``); every k-th when rows are shorter than a line,
    and the ``highlight`` row always, bold in ``highlight_ink``. ``fm`` measures and elides
    (the bold font's metrics, so a label does not change length when it turns bold). Returns
    the stride."""
    n = len(texts)
    if n == 0:
        return 1
    bold = QFont(font)
    bold.setBold(True)
    fm = fm if fm is not None else QFontMetricsF(bold)
    ch = rect.height() / n
    stride = label_stride(ch, fm.height())
    room = rect.width() - pad
    shown = set(range(0, n, stride)) | ({highlight} if highlight is not None else set())
    for i in sorted(shown):
        hi = i == highlight
        if not hi and highlight is not None and stride > 1 and abs(i - highlight) < stride:
            continue  # keep the highlighted label readable
        p.setFont(bold if hi else font)
        p.setPen(highlight_ink if hi and highlight_ink is not None else ink)
        cell = QRectF(rect.x(), rect.y() + i * ch + ch / 2 - fm.height() / 2, room, fm.height())
        p.drawText(
            cell, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(texts[i], Qt.TextElideMode.ElideRight, room),
        )  # fmt: skip
    return stride


def paint_col_labels(
    p: QPainter,
    rect: QRectF,
    texts: Sequence[str],
    *,
    font: QFont,
    fm: QFontMetricsF | None = None,
    rotated: bool = False,
    highlight: int | None = None,
    highlight_ink: QColor | None = None,
    ink: QColor = LABEL_INK,
) -> None:
    """Labels above a grid whose columns span ``rect``: centred on their column and resting on
    ``rect``'s bottom, or ``rotated`` (reading upwards, every k-th when columns are narrower
    than a line, elided to ``rect``'s height); the ``highlight`` column always, bold in
    ``highlight_ink``."""
    n = len(texts)
    if n == 0:
        return
    bold = QFont(font)
    bold.setBold(True)
    fm = fm if fm is not None else QFontMetricsF(bold)
    cw = rect.width() / n
    lh = fm.height()
    stride = label_stride(cw, lh + 2) if rotated else 1
    drawn = set(range(0, n, stride))
    if highlight is not None:
        drawn.add(highlight)
    # The flags once, not per label: combining Qt's enums costs more than drawing a word.
    side = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    under = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom
    elide = Qt.TextElideMode.ElideRight
    room = rect.height() - 4
    for j in sorted(drawn):
        hi = j == highlight
        p.setFont(bold if hi else font)
        p.setPen(highlight_ink if hi and highlight_ink is not None else ink)
        if rotated:
            p.save()
            p.translate(rect.x() + (j + 0.5) * cw, rect.bottom() - 3)
            p.rotate(-90)
            p.drawText(QRectF(0, -lh / 2, room, lh), side, fm.elidedText(texts[j], elide, room))
            p.restore()
        else:
            p.drawText(QRectF(rect.x() + j * cw, rect.y(), cw, rect.height()), under, texts[j])


def paint_scale_bar(
    p: QPainter,
    bar: QRectF,
    scale: ColourScale,
    *,
    vertical: bool = False,
    fm: QFontMetricsF | None = None,
    digits: int = 2,
    labels: Sequence[tuple[float, str]] | None = None,
    steps: int = 9,
    frame: QColor = FRAME_PEN,
    ink: QColor = LABEL_INK,
    strip: bool = True,
) -> None:
    """The colour bar of ``scale``: low end left (bottom when ``vertical``); labelled with
    ``labels`` ((fraction, text) pairs) or, by default, the limits and the middle value;
    ``strip=False``: the labels only (see :func:`~.colour_bar.paint_colour_bar`)."""
    if labels is None:
        mid = (scale.lo + scale.hi) / 2
        labels = [
            (0.0, fmt_number(scale.lo, digits)),
            (0.5, fmt_number(mid, digits)),
            (1.0, fmt_number(scale.hi, digits)),
        ]
    paint_colour_bar(
        p, bar, scale.qcolours(steps) if strip else (), vertical=vertical, labels=labels, fm=fm,
        frame=frame, ink=ink, strip=strip,
    )  # fmt: skip
