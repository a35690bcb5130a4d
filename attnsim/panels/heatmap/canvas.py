"""The stage matrices of one head side by side: titles, key and query labels, the kit's
numbered-matrix cells, colour bars, the entropy column; clicks and hover texts.

A plain QWidget painted with QPainter, so an export to SVG/PDF keeps the cell numbers and labels
as text (the kit draws small matrices as rectangles there, large ones as one pooled image).
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QImage,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attnsim.viewmodels.heatmap import CanvasContent, StageData, TileLayout, cell_at

from ..kit.figure_paint import painting_figure
from ..kit.hidpi import layer_scale as _layer_scale
from ..kit.hints import hints_shown
from ..kit.matrix_canvas import (
    NUMBERS_MAX,
    RECT_MAX,
    MatrixCache,
    paint_col_labels,
    paint_matrix,
    paint_row_labels,
)
from ..style import KEY, QUERY
from .in_turns import StagesInTurns
from .layout import LABELLED_MAX, CanvasGeometry, Fonts, fit_canvas
from .parts import paint_corner, paint_entropy, paint_stage_bar, stage_scale, tooltip_text

NUMBERS_HIDDEN = "Numbers need larger cells: widen the panel, or show one stage."
FRAME = QPen(QColor("#666666"), 0.8)


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
        # Every paint covers the whole canvas (white first): what lies under it is not
        # painted again when only the canvas changed (every step of a drag).
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.content: CanvasContent | None = None
        self.prepared: list[MatrixCache] = []  # per stage: what its drawing computed
        self.blocks: list[tuple[int, int]] = []
        # (key, geometry): the layout is a function of the key (see _geometry_key).
        self._geometry: tuple[tuple, CanvasGeometry] | None = None
        # (key, image): what stays on screen while the numbers change (see _paint_fixed).
        self._layer: tuple[tuple, QImage] | None = None
        self.numbers_hidden = False  # numbers are on but no cell can hold them
        self.in_turns = StagesInTurns(self)  # large stages pooled a turn each (see refresh)

    # ---- content ------------------------------------------------------------------------------
    def refresh(self, content: CanvasContent) -> None:
        """Draw new stages (their drawn arrays are computed afresh on the next paint; large
        ones a turn each, see :class:`StagesInTurns`)."""
        before = self.in_turns.picture_now(content)
        self.content = content
        # The old pooled images are not shown again: the new ones are written into them.
        spares = [a for prep in self.prepared for a in prep.pooled_arrays()]
        self.prepared = [
            MatrixCache(spare=spares[t] if t < len(spares) else None)
            for t in range(len(content.stages))
        ]
        self.blocks = [(1, 1)] * len(content.stages)
        if not self.in_turns.start(before):
            self.update()

    def set_selection(self, receiving: int, focused_key: int | None) -> None:
        """Move the receiving row / focused key without recomputing any drawn array."""
        assert self.content is not None
        self.content = dataclasses.replace(
            self.content, receiving=receiving, focused_key=focused_key
        )
        self.update()

    # ---- geometry -----------------------------------------------------------------------------
    def _geometry_key(self, c: CanvasContent, figure: bool) -> tuple:
        """Everything :func:`fit_canvas` reads: a new trace of the same scenario (every step
        of a drag) keeps its layout."""
        n_q = c.stages[0].shape[0]
        return (
            self.width(), self.height(), self.font().key(), figure,
            tuple((sd.stage, sd.shape, sd.title) for sd in c.stages), c.entropy is not None,
            c.row_labels, c.col_labels, c.receiving if n_q > LABELLED_MAX else None,
            c.show_numbers, c.digits,
        )  # fmt: skip

    def geometry_now(self) -> CanvasGeometry:
        """The layout at the current size (cached per size, fonts and what the content
        lays out: labels, titles, shapes)."""
        c = self.content
        assert c is not None
        figure = painting_figure()  # labels whole, no notice about the screen
        key = self._geometry_key(c, figure)
        g = self._geometry
        if g is None or g[0] != key:
            fonts = Fonts.of(self.font())
            g = (
                key,
                fit_canvas(c, float(self.width()), float(self.height()), fonts, figure=figure),
            )
            self._geometry = g
        return g[1]

    def layout_tiles(self) -> tuple[list[TileLayout], tuple[float, float, float, float], bool]:
        """Tile rectangles for the current size, the row-label rectangle, rotated key labels."""
        g = self.geometry_now()
        return g.tiles, g.rows, g.rotated

    @property
    def row_texts(self) -> list[str]:
        """The query labels as drawn (shortened to fit, distinct)."""
        return self.geometry_now().row_texts if self.content is not None else []

    @property
    def col_texts(self) -> list[str]:
        return self.geometry_now().col_texts if self.content is not None else []

    @property
    def notice_line(self) -> bool:
        """A line under the bars says the numbers need larger cells."""
        return self.content is not None and self.geometry_now().notice_line

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
        kind, _, i, j = hit
        return tooltip_text(self.content, kind, i, j)

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
        if self.in_turns.before is not None:  # new stages still being pooled
            p.drawImage(QRectF(self.rect()), self.in_turns.before)
            p.end()
            return
        if self.content is None or not self._layer_covers(p):
            p.fillRect(self.rect(), QColor("white"))
        if self.content is not None:
            self.paint_content(p)
            self.in_turns.drawn_size = self.size()
        p.end()

    def _layer_covers(self, p: QPainter) -> bool:
        """Whether the kept layer, opaque and white under everything, covers every pixel ``p``
        paints (then the white fill under it is not needed: a drag's every step)."""
        ppx = _layer_scale(p)
        return (
            ppx is not None
            and (self.width() * ppx).is_integer()
            and (self.height() * ppx).is_integer()
        )

    def paint_content(self, p: QPainter) -> None:
        c = self.content
        assert c is not None
        fonts = Fonts.of(self.font())
        fs = QFontMetricsF(fonts.small)
        geo = self.geometry_now()
        tiles, rows_rect = geo.tiles, geo.rows
        n_q, n_k = c.stages[0].shape
        ppx = _layer_scale(p)
        if ppx is None:  # vector output (SVG, PDF) or a transformed painter: draw it all
            self._paint_fixed(p, c, geo, fonts)
        else:
            key = self._layer_key(c, geo, ppx)
            if self._layer is None or self._layer[0] != key:
                self._layer = (key, self._fixed_image(c, geo, fonts, ppx))
            p.drawImage(QPointF(0, 0), self._layer[1])
        for t, (sd, tl) in enumerate(zip(c.stages, tiles, strict=True)):
            self.blocks[t] = paint_matrix(
                p, QRectF(*tl.matrix), sd.table, scale=stage_scale(sd), allowed=sd.allowed,
                numbers=c.show_numbers, digits=c.digits, font=fonts.small, frame=FRAME,
                highlight_row=c.receiving, highlight_col=c.focused_key, cache=self.prepared[t],
            )  # fmt: skip
            p.setFont(fonts.small)
            if not _fixed_scale(sd):  # (a fixed scale's limits are drawn with the rest that stays)
                paint_stage_bar(p, QRectF(*tl.bar), sd, fs, "numbers")
            if tl.entropy is not None and c.entropy is not None:
                paint_entropy(p, QRectF(*tl.entropy), QRectF(*tl.col_labels), c, fs, fonts.small,
                              "numbers")  # fmt: skip
        self.numbers_hidden = (
            c.show_numbers
            and max(n_q, n_k) <= NUMBERS_MAX
            and not all(prep.numbers_drawn for prep in self.prepared)
        )
        footnote = ""
        if self.numbers_hidden and geo.notice_line and hints_shown():
            footnote = NUMBERS_HIDDEN  # about the screen: a figure drops the numbers silently
        if max(n_q, n_k) > RECT_MAX:
            pooled = [b for b in self.blocks if b != (1, 1)]
            kr, kc = max(pooled) if pooled else (1, 1)
            footnote = (
                f"Each pixel shows the largest value of a {kr}×{kc} block of cells; "
                "hover for a cell's exact numbers."
                if pooled
                else "Hover over a cell for its exact numbers."
            )
        if footnote:
            bar = tiles[0].bar
            p.setFont(fonts.small)
            p.setPen(QColor("#555555"))
            p.drawText(
                QRectF(rows_rect[0], bar[1] + bar[3] - fs.height(), self.width(), fs.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, footnote,
            )  # fmt: skip

    # ---- what stays while the numbers change --------------------------------------------------
    def _layer_key(self, c: CanvasContent, geo: CanvasGeometry, ppx: float) -> tuple:
        """Everything :meth:`_paint_fixed` reads besides the layout (kept while it is)."""
        return (
            self._geometry[0] if self._geometry is not None else None, ppx,
            c.receiving, c.focused_key,
            tuple((sd.kind, sd.legend, sd.allowed is not None) for sd in c.stages),
            tuple((sd.lo, sd.hi) for sd in c.stages if _fixed_scale(sd)),
            c.entropy_top if c.entropy is not None else None,
        )  # fmt: skip

    def _fixed_image(
        self, c: CanvasContent, geo: CanvasGeometry, fonts: Fonts, ppx: float
    ) -> QImage:
        """The fixed part on white, at the device's pixels (drawn 1:1 under the cells)."""
        image = QImage(
            max(1, round(self.width() * ppx)), max(1, round(self.height() * ppx)),
            QImage.Format.Format_RGB32,  # opaque: drawn by copying, not blending
        )  # fmt: skip
        image.setDevicePixelRatio(ppx)
        image.fill(QColor("white"))
        q = QPainter(image)
        self._paint_fixed(q, c, geo, fonts)
        q.end()
        return image

    def _paint_fixed(
        self, p: QPainter, c: CanvasContent, geo: CanvasGeometry, fonts: Fonts
    ) -> None:
        """Titles, key and query labels, the corner, the colour strips and legends, the entropy
        column's header and scale: what a new trace of the same scenario leaves as it was."""
        fs, fb = QFontMetricsF(fonts.small), QFontMetricsF(fonts.bold)
        tiles, rows_rect = geo.tiles, geo.rows
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        wrap = flags | Qt.TextFlag.TextWordWrap
        for sd, tl in zip(c.stages, tiles, strict=True):
            p.setFont(fonts.bold)
            p.setPen(QColor("#222222"))
            title = QRectF(*tl.title)
            if fb.boundingRect(title, wrap, sd.title).height() <= title.height():
                p.drawText(title, wrap, sd.title)  # a figure's two-line title
            else:
                p.drawText(title, flags, fb.elidedText(sd.title, Qt.TextElideMode.ElideRight,
                                                       title.width()))  # fmt: skip
            paint_col_labels(
                p, QRectF(*tl.col_labels), geo.col_texts or list(c.col_labels), font=fonts.base,
                fm=fb, rotated=geo.rotated, highlight=c.focused_key, highlight_ink=KEY,
            )  # fmt: skip
            p.setFont(fonts.small)
            paint_stage_bar(p, QRectF(*tl.bar), sd, fs, "all" if _fixed_scale(sd) else "fixed")
            if tl.entropy is not None and c.entropy is not None:
                paint_entropy(p, QRectF(*tl.entropy), QRectF(*tl.col_labels), c, fs, fonts.small,
                              "fixed")  # fmt: skip
        stride = paint_row_labels(
            p, QRectF(*rows_rect), geo.row_texts, font=fonts.base, fm=fb,
            highlight=c.receiving, highlight_ink=QUERY,
        )  # fmt: skip
        first = tiles[0].col_labels
        # End half a line above the matrix: the first row's label may reach up that far.
        bottom = first[1] + first[3] - (fb.height() / 2 if stride > 1 else 0)
        paint_corner(p, QRectF(rows_rect[0], bottom - first[3], rows_rect[2] - 6, first[3]),
                     fonts.small)  # fmt: skip


def _fixed_scale(sd: StageData) -> bool:
    """Whether a stage's colour limits stay while its numbers change (the weights' 0 to 1):
    its limits are drawn with the kept layer then, not on every repaint."""
    return sd.kind == "unit"
