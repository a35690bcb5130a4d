"""The stepper's stage, painted with QPainter (fast, and an SVG export keeps every number as
text): a title, captions, blocks of numbers and an arrow plane.

``refresh(content)`` takes a :class:`~attnsim.viewmodels.stepper.StageContent` from
:func:`attnsim.viewmodels.stepper.build_stage`; the blocks are measured and painted by
:class:`~.number_blocks.NumberBlocks`, the plane by :func:`~.stage_plane.paint_plane`.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QAbstractScrollArea, QSizePolicy, QToolTip, QWidget

from attnsim.viewmodels.stepper import Block, StageContent, arrow_extent, nice_extent

from ..kit.hidpi import points
from .number_blocks import NumberBlocks, Placed
from .stage_plane import paint_plane


class StageView(QWidget):
    """Paints a :class:`StageContent`: a title, captions, number blocks and an arrow plane."""

    MARGIN = 8.0
    GAP = 14.0
    BASE_SIZE = NumberBlocks.BASE_SIZE
    MIN_SIZE = NumberBlocks.MIN_SIZE

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.content: StageContent | None = None
        self.label_rects: list[tuple[float, float, float, float]] = []  # plane names, as drawn
        self._make_fonts()
        self.extent = 1.0
        self.extents: dict[int, float] = {}
        self._placed: list[Placed] = []
        self._plane = QRectF()
        self._header_h = 0.0
        self._content_h = 0.0
        self._content_w = 0.0
        self._layout_w = -1
        self._viewport: QWidget | None = None
        self._title_rect = QRectF()
        self._lines: list[tuple[QRectF, str]] = []
        self._box = QRectF()

    def _make_fonts(self) -> None:
        # In points at normal text size; View ▸ Text size and presentation mode make them grow.
        self.title_font = QFont(self.font())
        self.title_font.setPointSizeF(points(10.5))
        self.title_font.setBold(True)
        self.text_font = QFont(self.font())
        self.text_font.setPointSizeF(points(8.5))
        self.blocks = NumberBlocks(self.font())
        self.small_font = QFont(self.font())
        self.small_font.setPointSizeF(points(7.5))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._make_fonts()
            self.update()
        super().changeEvent(event)

    @property
    def num_font(self) -> QFont:
        return self.blocks.num_font

    @property
    def head_font(self) -> QFont:
        return self.blocks.head_font

    @property
    def number_size(self) -> float:
        return self.blocks.number_size

    # ---- content ------------------------------------------------------------------------------
    def refresh(self, content: StageContent, *, rescale: bool = False) -> None:
        """Show ``content``; the plane keeps its scale unless the arrows outgrow it or shrink a
        lot (so arrows visibly move during training instead of the axes jumping)."""
        self.content = content
        m = arrow_extent(content.arrows)
        want = nice_extent(m * 1.08)
        # Each stage keeps its own scale, so stepping between stages of different magnitude
        # never shows a tiny bunch of arrows.
        current = self.extents.get(content.stage, 0.0)
        if rescale or want > current or want < current / 2:
            self.extents[content.stage] = want
        self.extent = self.extents[content.stage]
        self._layout_w = -1
        self._relayout()
        self.update()

    set_content = refresh

    def reset_scale(self) -> None:
        """Fit the plane again at the next content (a new model or projection)."""
        self.extents.clear()

    def sizeHint(self) -> QSize:
        return QSize(480, 360)

    def fit_to(self, viewport: QWidget) -> None:
        """Lay out for ``viewport``'s width (a scroll area's viewport), not this widget's own:
        this widget may be wider than what is visible when a block needs the room."""
        self._viewport = viewport
        viewport.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if obj is self._viewport and event.type() == QEvent.Type.Resize:
            self._relayout()
            self.update()
        return False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._relayout()

    def _available_width(self) -> int:
        vp = self._viewport
        if vp is None:
            return self.width()
        area = vp.parentWidget()
        if not isinstance(area, QAbstractScrollArea):
            return vp.width()
        # The width the viewport has with its vertical scroll bar shown, shown or not. Laid out
        # for the viewport's own width, a stage that needs the bar narrows the viewport, the
        # narrower layout may not need it, and the two alternate (once 2 s of relayouts).
        bar = area.verticalScrollBar()
        shown = bar.width() if bar.isVisible() else 0
        return vp.width() + shown - bar.sizeHint().width()

    def _relayout(self) -> None:
        w = self._available_width()
        if w == self._layout_w or self.content is None:
            return
        self._layout_w = w
        self._layout(float(w))
        # Let a scroll area know how tall (and wide) the content needs to be.
        mh = math.ceil(self._content_h)
        mw = math.ceil(self._content_w)
        if self.minimumHeight() != mh or self.minimumWidth() != mw:
            self.setMinimumSize(mw, mh)

    def _block_sizes(self, blocks: list[Block], inner: float) -> list[tuple]:
        """Every block's size; text width scales with the point size, so when the widest
        block is too wide one more pass at a smaller size fits it."""
        nb = self.blocks
        nb.set_number_size(self.BASE_SIZE)
        sizes = [nb.size(b) for b in blocks]
        widest = max((sz[3] for sz in sizes), default=0.0)
        if widest > inner:
            nb.set_number_size(max(self.MIN_SIZE, self.BASE_SIZE * inner / widest * 0.97))
            sizes = [nb.size(b) for b in blocks]
        return sizes

    def _layout(self, width: float) -> None:
        """Title on top; the plane top right with the captions wrapped to its left; then the
        blocks, flowing left to right beside the plane and below it."""
        c = self.content
        assert c is not None
        m, gap = self.MARGIN, self.GAP
        inner = max(width - 2 * m, 200.0)
        fm_t = QFontMetrics(self.title_font)
        fm = QFontMetrics(self.text_font)
        fm_s = QFontMetrics(self.small_font)
        # The title wraps in a narrow view instead of running past its right edge.
        title_r = fm_t.boundingRect(0, 0, int(inner), 1000, Qt.TextFlag.TextWordWrap, c.title)
        self._title_rect = QRectF(m, m, inner, max(title_r.height(), fm_t.height()))
        y0 = self._title_rect.bottom() + 4
        sizes = self._block_sizes(c.blocks, inner)
        beside = inner >= 380
        side = min(260.0, max(170.0, inner * 0.42)) if beside else min(inner, 260.0)
        caption = f"plane: {c.plane}. {c.legend}"
        cap_h = fm_s.boundingRect(0, 0, int(side), 1000, Qt.TextFlag.TextWordWrap, caption)
        plane_h = side + cap_h.height() + 4
        text_w = inner - side - gap if beside else inner
        self._lines = []
        y = y0
        for line in c.lines:
            r = fm.boundingRect(0, 0, int(text_w), 10_000, Qt.TextFlag.TextWordWrap, line)
            self._lines.append((QRectF(m, y, text_w, r.height()), line))
            y += r.height() + 2
        y += 6
        if beside:
            self._plane = QRectF(m + inner - side, y0, side, plane_h)
            right_limit = self._plane.left() - gap
        else:
            self._plane = QRectF(m, y, side, plane_h)
            y = self._plane.bottom() + gap
            right_limit = m + inner
        self._header_h = y
        placed: list[Placed] = []
        x, row_h = m, 0.0
        max_right = self._plane.right()
        for blk, (lw, cw, nw, bw, bh) in zip(c.blocks, sizes, strict=True):
            limit = right_limit if y < self._plane.bottom() else m + inner
            if x > m and (blk.break_before or x + bw > limit):
                y += row_h + gap
                x, row_h = m, 0.0
                limit = right_limit if y < self._plane.bottom() else m + inner
            if x == m and bw > limit - m and y < self._plane.bottom():
                y = self._plane.bottom() + gap  # does not fit beside the plane: go below it
            placed.append(Placed(blk, x, y, lw, cw, nw, bw, bh))
            max_right = max(max_right, x + bw)
            x += bw + gap
            row_h = max(row_h, bh)
        self._placed = placed
        self._content_h = max(y + row_h, self._plane.bottom()) + m + 4
        self._content_w = max_right + m

    # ---- paint ------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        exposed = QRectF(event.rect())
        p.fillRect(exposed, QColor("white"))
        if self.content is not None:
            self._relayout()
            self.paint_content(p, exposed)
        p.end()

    def paint_content(self, p: QPainter, exposed: QRectF | None = None) -> None:
        """Paint everything, or (in a scroll area) only the blocks meeting ``exposed``."""
        c = self.content
        assert c is not None
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setPen(QColor("#111111"))
        p.setFont(self.title_font)
        p.drawText(self._title_rect, Qt.TextFlag.TextWordWrap, c.title)
        p.setFont(self.text_font)
        p.setPen(QColor("#333333"))
        for rect, line in self._lines:
            p.drawText(rect, Qt.TextFlag.TextWordWrap, line)
        for pl in self._placed:
            if exposed is None or exposed.intersects(QRectF(pl.x, pl.y, pl.w, pl.h)):
                self.blocks.paint(p, pl)
        if exposed is None or exposed.intersects(self._plane):
            self._box, self.label_rects = paint_plane(
                p, self._plane, c, self.extent, self.small_font
            )

    # ---- exact values on hover ------------------------------------------------------------
    def cell_at(self, x: float, y: float) -> tuple[Block, int, int] | None:
        """The block cell under a widget point, or None."""
        return self.blocks.cell_at(self._placed, x, y)

    def event(self, ev) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            hit = self.cell_at(ev.pos().x(), ev.pos().y())
            if hit is not None:
                b, i, j = hit
                v = float(b.values[i, j])
                col = b.col_labels[j] if j < len(b.col_labels) else str(j)
                QToolTip.showText(ev.globalPos(),
                                  f"{b.title}[{b.row_labels[i]}, {col}] = {v!r}", self)  # fmt: skip
            else:
                QToolTip.hideText()
            return True
        return super().event(ev)
