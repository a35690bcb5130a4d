"""The numbered-matrix canvas as a widget: one standalone matrix with an optional title, row
labels left, column labels above, coloured numbered cells and a vertical colour bar right, drawn
with the painters of :mod:`attnsim.panels.kit.matrix_canvas`; a hover shows a tooltip and a
click emits ``cell_clicked``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QMouseEvent,
    QPaintEngine,
    QPainter,
    QPaintEvent,
    QTransform,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attnsim.viewmodels.heatmap import cell_at

from .hidpi import points
from .matrix_canvas import (
    LABEL_INK,
    RECT_MAX,
    ColourScale,
    MatrixCache,
    paint_col_labels,
    paint_matrix,
    paint_row_labels,
    paint_scale_bar,
)
from .numbers import fmt_number

__all__ = ["CanvasLayout", "MatrixCanvas", "canvas_layout"]


@dataclass(frozen=True)
class CanvasLayout:
    """Where the parts of a :class:`MatrixCanvas` go (x, y, w, h each); ``bar`` may be None."""

    title: tuple[float, float, float, float]
    grid: tuple[float, float, float, float]
    row_labels: tuple[float, float, float, float]
    col_labels: tuple[float, float, float, float]
    bar: tuple[float, float, float, float] | None


def canvas_layout(
    width: float,
    height: float,
    n_rows: int,
    n_cols: int,
    *,
    label_w: float,
    head_h: float,
    title_h: float = 0.0,
    bar_w: float = 0.0,
    bar_gap: float = 8.0,
    bar_label_w: float = 0.0,
    margin: float = 4.0,
    max_cell: float = 64.0,
    min_cell: float = 4.0,
    cell: float | None = None,
    min_col_w: float = 0.0,
) -> CanvasLayout:
    """Square cells as large as fit (``min_cell`` .. ``max_cell``; exactly ``cell`` if given),
    row labels left, column labels above, an optional title on top and a colour bar
    (``bar_w`` wide, ``bar_gap`` from the cells, ``bar_label_w`` for its labels) right.
    ``min_col_w``: columns at least that wide where the width allows (cells then wider than
    tall), so a column's name fits above it."""
    tail = bar_gap + bar_w + bar_label_w if bar_w > 0 else 0.0
    avail_w = width - label_w - tail - 2 * margin
    avail_h = height - title_h - head_h - 2 * margin
    if cell is None:
        cell = max(min_cell, min(avail_w / max(n_cols, 1), avail_h / max(n_rows, 1), max_cell))
    x0, y0 = margin + label_w, margin + title_h + head_h
    col_w = max(cell, min(min_col_w, avail_w / max(n_cols, 1)))
    gw, gh = col_w * n_cols, cell * n_rows
    return CanvasLayout(
        title=(margin, margin, width - 2 * margin, title_h),
        grid=(x0, y0, gw, gh),
        row_labels=(margin, y0, label_w, gh),
        col_labels=(x0, margin + title_h, gw, head_h),
        bar=(x0 + gw + bar_gap, y0, bar_w, gh) if bar_w > 0 else None,
    )


class KeptRaster:
    """A part of a painting (labels, a colour bar) kept as a transparent picture at the
    device's pixel ratio, and copied while what it shows and where it lands in device pixels
    stay the same: pixel for pixel what painting afresh gives. On a vector device (an SVG or
    PDF export), under a rotation or a scale other than the device's own, it paints afresh.
    ``paint(p, rect, key, paint)``: ``paint(painter)`` paints the part inside ``rect``;
    ``key`` says what it shows."""

    def __init__(self) -> None:
        self._kept: tuple[tuple, QImage] | None = None
        self.paints = 0  # how often painted afresh (tests count them)

    def clear(self) -> None:
        self._kept = None

    def paint(
        self, p: QPainter, rect: QRectF, key: tuple, paint: Callable[[QPainter], None]
    ) -> None:
        t = p.deviceTransform()
        engine = p.paintEngine()
        device = p.device()
        dpr = device.devicePixelRatio() if device is not None else 1.0
        plain = (
            engine is not None and engine.type() == QPaintEngine.Type.Raster
            and p.transform().type().value <= QTransform.TransformationType.TxTranslate.value
            and abs(t.m11() - dpr) < 1e-12 and abs(t.m22() - dpr) < 1e-12
        )  # fmt: skip
        if not plain:
            self.paints += 1
            paint(p)
            return
        box = t.mapRect(rect).toAlignedRect()  # device pixels, whole
        full = (key, rect.getRect(), dpr, t.dx(), t.dy(), box.getRect(), p.renderHints())
        if self._kept is None or self._kept[0] != full:
            # transparent, at the device's pixel ratio, painted as the device would be
            image = QImage(max(box.width(), 1), max(box.height(), 1),
                           QImage.Format.Format_ARGB32_Premultiplied)  # fmt: skip
            image.setDevicePixelRatio(dpr)
            image.fill(Qt.GlobalColor.transparent)
            q = QPainter(image)
            q.setRenderHints(p.renderHints())
            q.setFont(p.font())
            q.translate(-box.x() / dpr, -box.y() / dpr)
            q.setTransform(p.transform(), True)
            paint(q)
            q.end()
            self._kept = (full, image)
            self.paints += 1
        p.save()
        p.resetTransform()
        p.drawImage(QPointF(box.x() / dpr, box.y() / dpr), self._kept[1])
        p.restore()


def kept_scale_bar(
    raster: KeptRaster,
    p: QPainter,
    bar: QRectF,
    scale: ColourScale,
    *,
    fm: QFontMetricsF,
    labels: Sequence[tuple[float, str]],
    steps: int,
) -> None:
    """:func:`paint_scale_bar` (vertical, labels on the right) through ``raster``: the strip
    and its labels copied while the scale, the labels and the place stay the same."""
    h = fm.height()
    wide = max((fm.horizontalAdvance(text) for _, text in labels), default=0.0)
    room = QRectF(bar.x() - 2, bar.y() - h, bar.width() + wide + 10, bar.height() + 2 * h)
    lut = np.ascontiguousarray(scale.lut, np.uint32)
    key = (scale.lo, scale.hi, hash(lut.tobytes()), tuple(labels), steps, fm.height(),
           p.font().key())  # fmt: skip
    raster.paint(
        p, room, key,
        lambda q: paint_scale_bar(q, bar, scale, vertical=True, fm=fm, labels=labels,
                                  steps=steps),
    )  # fmt: skip


class MatrixCanvas(QWidget):
    """One numbered matrix as a widget: optional title, row labels left, column labels above,
    coloured numbered cells, an optional vertical colour bar right; a hover over a cell shows
    ``tooltip(i, j)`` (elsewhere the widget's own tooltip) and a click emits ``cell_clicked(i,
    j)``.

    Column labels that do not fit their column fall back to the column's number (and the row
    labels then carry "number name", so the two can be matched)."""

    cell_clicked = Signal(int, int)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        colour_bar: bool = True,
        font_pt: float = 8.0,
        max_cell: float = 64.0,
        min_cell: float = 4.0,
        label_max_w: float = 80.0,
        fit_col_labels: bool = False,
    ) -> None:
        super().__init__(parent)
        # widen the columns (where the width allows) until every column's name fits above it,
        # instead of numbering the columns
        self.fit_col_labels = fit_col_labels
        self.values = np.zeros((0, 0))
        # the widest row label, kept for the labels and font it was measured with
        self._longest_for: tuple[object, ...] | None = None
        self._longest = 0.0
        self._layout_key: tuple | None = None  # what the kept layout was made for
        self._layout: CanvasLayout | None = None
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.scale: ColourScale | None = None
        self.forbidden: np.ndarray | None = None
        self.title = ""
        self.highlight_row: int | None = None
        self.highlight_col: int | None = None
        self.digits, self.min_digits = 2, 1
        self.bar_labels: Sequence[tuple[float, str]] | None = None
        self.tooltip: Callable[[int, int], str] | None = None
        self.cache = MatrixCache()
        # the row labels' and the colour bar's last paintings (see KeptRaster)
        self.row_raster = KeptRaster()
        self.bar_raster = KeptRaster()
        self.keep_row_labels = True  # False: paint them afresh every time (tests compare)
        self.colour_bar = colour_bar
        self.font_pt = font_pt
        self.max_cell, self.min_cell, self.label_max_w = max_cell, min_cell, label_max_w
        self.setMinimumSize(120, 80)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(280, 220)

    def set_matrix(
        self,
        values: ArrayLike,
        *,
        row_labels: Sequence[str] = (),
        col_labels: Sequence[str] | None = None,
        scale: ColourScale | None = None,
        forbidden: np.ndarray | None = None,
        title: str = "",
        highlight_row: int | None = None,
        highlight_col: int | None = None,
        digits: int = 2,
        min_digits: int = 1,
        bar_labels: Sequence[tuple[float, str]] | None = None,
        tooltip: Callable[[int, int], str] | None = None,
    ) -> None:
        """Show ``values`` (labels default to none; ``col_labels`` to ``row_labels``)."""
        v = np.asarray(values)
        # float32 tables (the precision lab's low-precision weights) are drawn as they are: a
        # float64 copy of a 4,096 x 4,096 table would be 134 MB
        self.values = v if v.dtype in (np.float32, np.float64) else v.astype(float)
        self.row_labels = list(row_labels)
        self.col_labels = list(row_labels if col_labels is None else col_labels)
        self.scale, self.forbidden, self.title = scale, forbidden, title
        self.highlight_row, self.highlight_col = highlight_row, highlight_col
        self.digits, self.min_digits = digits, min_digits
        self.bar_labels, self.tooltip = bar_labels, tooltip
        self.cache = MatrixCache()
        self.update()

    # ---- geometry -----------------------------------------------------------------------------
    def cell_font(self) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(points(self.font_pt))  # grows with View ▸ Text size
        return f

    def scale_labels(self) -> list[tuple[float, str]]:
        """The colour bar's labels: as given, or the scale's top, middle and bottom."""
        if self.bar_labels is not None:
            return list(self.bar_labels)
        s = self.scale
        if s is None:
            return []
        mid = (s.lo + s.hi) / 2
        return [(1.0, fmt_number(s.hi, 2)), (0.5, fmt_number(mid, 2)), (0.0, fmt_number(s.lo, 2))]

    def canvas_layout(self) -> CanvasLayout:
        """Where title, labels, cells and colour bar go at the widget's current size."""
        font = self.cell_font()
        n_q, n_k = self.values.shape if self.values.ndim == 2 else (0, 0)
        bar = self.colour_bar and self.scale is not None
        texts = tuple(t for _, t in self.scale_labels()) if bar else ()
        # A paint asks for the layout three or four times (cells, heads, overlays): it is made
        # once per size, shape, labels and font.
        labels = tuple(self.row_labels)
        key = (
            self.width(), self.height(), n_q, n_k, font.key(), labels, bar, texts, bool(self.title),
            tuple(self.col_labels) if self.fit_col_labels else bool(self.col_labels),
            self.label_max_w, self.max_cell, self.min_cell,
        )  # fmt: skip
        if key == self._layout_key and self._layout is not None:
            return self._layout
        fm = QFontMetricsF(font)
        # Measured once per set of labels and font: at n = 64 measuring every label each time
        # was a fifth of the kernel stepper's tiles.
        # In bold: the receiving row's label is drawn bold, in the same room.
        bold = QFont(font)
        bold.setBold(True)
        fm_bold = QFontMetricsF(bold)
        if self._longest_for != (labels, key[4]):
            self._longest_for = (labels, key[4])
            self._longest = max((fm_bold.horizontalAdvance(s) for s in labels), default=0.0)
        longest = self._longest
        label_w = min(self.label_max_w, longest + 6) if self.row_labels else 0.0
        bar_w = bar_label_w = 0.0
        if bar:
            bar_w = 12.0
            bar_label_w = max((fm.horizontalAdvance(t) for t in texts), default=0.0) + 6
        line = fm.height() + 4
        col_w = 0.0
        if self.fit_col_labels and self.col_labels:
            col_w = max(fm.horizontalAdvance(s) for s in self.col_labels) + 6

        def lay_out(label_w: float) -> CanvasLayout:
            return canvas_layout(
                float(self.width()), float(self.height()), n_q, n_k, label_w=label_w,
                head_h=line if self.col_labels else 0.0, title_h=line if self.title else 0.0,
                bar_w=bar_w, bar_label_w=bar_label_w, max_cell=self.max_cell,
                min_cell=self.min_cell, min_col_w=col_w,
            )  # fmt: skip

        lay = lay_out(label_w)
        if self.row_labels and label_w < self.label_max_w and self._numbered(lay, fm):
            # The rows are numbered ("2 river"): room for the numbers too, so that a name the
            # column would hold is not cut to "2 r…" (the precision lab in a short dock).
            digits = fm_bold.horizontalAdvance(f"{len(labels)} ")
            wider = min(self.label_max_w, longest + digits + 6)
            if wider > label_w:
                lay = lay_out(wider)
        self._layout = lay
        self._layout_key = key
        return self._layout

    def _numbered(self, lay: CanvasLayout, fm: QFontMetricsF) -> bool:
        """Whether the rows are numbered: when a column's name does not fit its cells, the
        columns show numbers and the rows their numbers beside their names."""
        n_k = self.values.shape[1] if self.values.ndim == 2 else 0
        if not n_k:
            return False
        cell = lay.grid[2] / n_k
        return any(fm.horizontalAdvance(s) > cell - 2 for s in self.col_labels)

    def column_heads(self) -> list[str]:
        """The texts painted above the columns: each column's name where it fits its column,
        else the column's number; none when even the numbers do not fit."""
        if self.values.ndim != 2 or not self.values.size or not self.col_labels:
            return []
        fm = QFontMetricsF(self.cell_font())
        cell = self.canvas_layout().grid[2] / self.values.shape[1]
        heads = [
            s if fm.horizontalAdvance(s) <= cell - 2 else str(j + 1)
            for j, s in enumerate(self.col_labels)
        ]
        return heads if all(fm.horizontalAdvance(h) <= cell for h in heads) else []

    def grid_rect(self) -> QRectF:
        """The cells' rectangle in widget coordinates (tests click inside it)."""
        return QRectF(*self.canvas_layout().grid)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """The (row, column) under a widget point, or None."""
        if self.values.ndim != 2 or not self.values.size:
            return None
        n_q, n_k = self.values.shape
        return cell_at(x, y, self.canvas_layout().grid, n_q, n_k)

    def cell_center(self, i: int, j: int) -> QPointF:
        g = self.grid_rect()
        n_q, n_k = self.values.shape
        return QPointF(g.x() + (j + 0.5) * g.width() / n_k, g.y() + (i + 0.5) * g.height() / n_q)

    # ---- events -------------------------------------------------------------------------------
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and self.tooltip is not None:
            pos = e.pos()  # type: ignore[attr-defined]
            hit = self.cell_at(pos.x(), pos.y())
            if hit is not None:
                QToolTip.showText(e.globalPos(), self.tooltip(*hit), self)  # type: ignore[attr-defined]
                return True
        # Off the cells: the widget's own tooltip, if it has one.
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        hit = self.cell_at(e.position().x(), e.position().y())
        if e.button() == Qt.MouseButton.LeftButton and hit is not None:
            self.cell_clicked.emit(*hit)
            e.accept()
            return
        super().mousePressEvent(e)

    # ---- painting -----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if self.values.ndim == 2 and self.values.size:
            self.paint_content(p)
        p.end()

    def _paint_rows(
        self, p: QPainter, rect: QRectF, rows: list[str], font: QFont, fm: QFontMetricsF
    ) -> None:
        """The row labels: a copy of their last painting while they stay the same (a canvas of
        33 labelled rows paints them in about a millisecond, and a training lab repaints it
        with every chunk); a highlighted row paints them afresh."""
        if not self.keep_row_labels or self.highlight_row is not None:
            paint_row_labels(p, rect, rows, font=font, fm=fm, pad=4.0, highlight=self.highlight_row)
            return
        self.row_raster.paint(
            p, rect, (tuple(rows), font.key()),
            lambda q: paint_row_labels(q, rect, rows, font=font, fm=fm, pad=4.0),
        )  # fmt: skip

    def paint_content(self, p: QPainter) -> None:
        """Everything but the background (export paints it into other devices too)."""
        lay = self.canvas_layout()
        font = self.cell_font()
        fm = QFontMetricsF(font)
        p.setFont(font)
        grid = QRectF(*lay.grid)
        if self.title:
            p.setPen(LABEL_INK)
            t = QRectF(*lay.title)
            p.drawText(
                t, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(self.title, Qt.TextElideMode.ElideRight, t.width()),
            )  # fmt: skip
        paint_matrix(
            p, grid, self.values, scale=self.scale, forbidden=self.forbidden, font=font,
            digits=self.digits, min_digits=self.min_digits, numbers_max=RECT_MAX,
            highlight_row=self.highlight_row, highlight_col=self.highlight_col,
            cache=self.cache,
        )  # fmt: skip
        numbered = self._numbered(lay, fm)
        heads = self.column_heads()
        if self.row_labels:
            rows = [f"{i + 1} {s}" if numbered else s for i, s in enumerate(self.row_labels)]
            self._paint_rows(p, QRectF(*lay.row_labels), rows, font, fm)
        if heads:
            paint_col_labels(
                p, QRectF(*lay.col_labels), heads, font=font, fm=fm,
                highlight=self.highlight_col,
            )  # fmt: skip
        if lay.bar is not None and self.scale is not None:
            bar, scale, labels = QRectF(*lay.bar), self.scale, self.scale_labels()
            if not self.keep_row_labels:
                paint_scale_bar(p, bar, scale, vertical=True, fm=fm, labels=labels, steps=17)
            else:
                kept_scale_bar(self.bar_raster, p, bar, scale, fm=fm, labels=labels, steps=17)
