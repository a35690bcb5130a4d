"""One grid of layers x heads: a cell per head (a small map or a value), laid out by the panel,
with everything else done once here.

:class:`LayerHeadGrid` keeps the cells' picture (:class:`~.painted.PaintCache`, so a figure or a
repaint while training copies it), hit-tests a point to its (layer, head), shows the tool tip
``tip(key, point)`` for the head under the mouse (elsewhere the widget's own tool tip), emits
``head_clicked(layer, head)`` on a left click, shows a pointing hand over a head (``hovered``;
a cursor, so no figure ever has it and a move repaints nothing), crosses out ablated heads and
frames the selected one.

A grid subclasses it and gives ``cell_rects()`` (where each head goes; :func:`lattice` lays out
the plain case), ``paint_cell(p, key, rect)`` and ``tip(key, point)``; optionally
``paint_around(p, rects)`` (labels, colour bars) and ``hit_rect`` (a band beside the cell that
belongs to it). ``refresh`` of the subclass stores its data and calls ``changed()``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from ..style import QUERY, weight_cmap
from .hidpi import line_width, points
from .matrix_canvas import ColourScale, lut_from_cmap
from .painted import KeptPicture, PaintCache

__all__ = ["ABLATED", "Key", "LayerHeadGrid", "lattice", "weight_scale"]

Key = tuple[int, int]  # (layer, head)
ABLATED = QColor("#B00020")  # the cross over an ablated head


@cache
def weight_scale() -> ColourScale:
    """Attention weights, 0 to 1, on the weight colour map: every head's map and its bar."""
    return ColourScale(lut_from_cmap(weight_cmap()), 0.0, 1.0)


def lattice(
    rows: int,
    cols: int,
    *,
    x0: float,
    y0: float,
    side: float,
    pitch_x: float,
    pitch_y: float,
    heads_across: bool = True,
) -> dict[Key, QRectF]:
    """Square cells ``side`` px, ``rows`` x ``cols`` of them from (x0, y0) at the given pitches;
    keyed (row, column) when heads go across, (column, row) when they go down."""
    out = {}
    for r in range(rows):
        for c in range(cols):
            key = (r, c) if heads_across else (c, r)
            out[key] = QRectF(x0 + c * pitch_x, y0 + r * pitch_y, side, side)
    return out


class LayerHeadGrid(KeptPicture, QWidget):
    """A cell per head; hit-test, tool tip, click, hover, marks and the kept picture."""

    head_clicked = Signal(int, int)

    font_pt: float | None = None  # the cells' font size (None: the widget's)
    select_ink: QColor = QUERY  # the selected head's frame, in the query colour of the panels
    select_width = 2.0
    select_outset = 2.0
    cross_width = 2.0
    kept = True  # copy the last painting (False: paint afresh, so SVG and PDF keep vectors)

    def __init__(self, parent: QWidget | None = None, *, minimum: tuple[int, int] = (0, 0)) -> None:
        super().__init__(parent)
        self.setMinimumSize(*minimum)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.picture = PaintCache()
        self.selected: Key | None = None
        self.ablated: tuple[Key, ...] = ()
        self.hovered: Key | None = None
        self.setMouseTracking(True)

    # ---- what a grid gives ----------------------------------------------------------------------
    def cell_rects(self) -> dict[Key, QRectF]:
        """Where each head's cell is drawn (widget coordinates)."""
        return {}

    def hit_rect(self, key: Key, rect: QRectF) -> QRectF:
        """The area that hits ``key`` (its cell, or more)."""
        return rect

    def tip(self, key: Key, point: QPointF | None = None) -> str:
        """The tool tip over head ``key`` at ``point`` ("" for the widget's own)."""
        return ""

    def paint_cell(self, p: QPainter, key: Key, rect: QRectF) -> None:
        """Paint head ``key``'s cell into ``rect``."""

    def paint_around(self, p: QPainter, rects: dict[Key, QRectF]) -> None:
        """Paint what is not a cell (labels, colour bars), after the cells."""

    def frame_rect(self, key: Key, rect: QRectF) -> QRectF:
        """The selected head's frame."""
        o = self.select_outset
        return rect.adjusted(-o, -o, o, o)

    # ---- state ----------------------------------------------------------------------------------
    def changed(self) -> None:
        """The grid's content changed: paint afresh."""
        self.picture.clear()
        self.update()

    def set_marks(self, selected: Key | None, ablated: Iterable[Key] = ()) -> None:
        self.selected, self.ablated = selected, tuple(ablated)

    def cell_font(self) -> QFont:
        f = QFont(self.font())
        if self.font_pt is not None:
            f.setPointSizeF(points(self.font_pt))  # grows with View ▸ Text size
        return f

    def head_at(self, x: float, y: float) -> Key | None:
        """The (layer, head) whose cell holds the widget point (x, y), or None."""
        point = QPointF(x, y)
        for key, rect in self.cell_rects().items():
            if self.hit_rect(key, rect).contains(point):
                return key
        return None

    # ---- events ---------------------------------------------------------------------------------
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and self.has_content():
            pos = QPointF(e.pos())  # type: ignore[attr-defined]
            hit = self.head_at(pos.x(), pos.y())
            text = self.tip(hit, pos) if hit is not None else ""
            if text:
                QToolTip.showText(e.globalPos(), text, self)  # type: ignore[attr-defined]
                return True
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        hit = self.head_at(e.position().x(), e.position().y())
        if e.button() == Qt.MouseButton.LeftButton and hit is not None and self.has_content():
            self.head_clicked.emit(*hit)
            e.accept()
            return
        super().mousePressEvent(e)

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        self._hover(
            self.head_at(e.position().x(), e.position().y()) if self.has_content() else None
        )
        super().mouseMoveEvent(e)

    def leaveEvent(self, e: QEvent) -> None:
        self._hover(None)
        super().leaveEvent(e)

    def _hover(self, key: Key | None) -> None:
        if key == self.hovered:
            return
        self.hovered = key
        if key is None:
            self.unsetCursor()
        else:
            self.setCursor(Qt.CursorShape.PointingHandCursor)

    # ---- painting -------------------------------------------------------------------------------
    def has_content(self) -> bool:
        return False

    def paint_content(self, p: QPainter) -> None:
        p.setFont(self.cell_font())
        rects = self.cell_rects()
        for key, rect in rects.items():
            self.paint_cell(p, key, rect)
            if key in self.ablated:
                p.setPen(QPen(ABLATED, line_width(self.cross_width)))
                p.drawLine(rect.topLeft(), rect.bottomRight())
                p.drawLine(rect.topRight(), rect.bottomLeft())
            if key == self.selected:
                p.setPen(QPen(self.select_ink, line_width(self.select_width)))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(self.frame_rect(key, rect))
        self.paint_around(p, rects)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.kept:
            super().paintEvent(event)
            return
        p = QPainter(self)
        self._paint_all(p)
        p.end()
