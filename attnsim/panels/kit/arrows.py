"""The one arrow painter. The shaft / head geometry is :func:`attnsim.engine.arrows.arrow_heads`
(Qt-free, shared with the vector plane's and the 3-D view's view-models); this module only turns
it into QPainter calls, so every panel's arrows have the same proportions.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from attnsim.engine.arrows import HEAD_FRACTION, arrow_head

from .hidpi import line_scale

__all__ = ["DOT_BELOW_PX", "PlotArrowHead", "head_polygon", "paint_arrow"]

# An arrow shorter than this has no direction a reader could see: it is drawn as a dot.
DOT_BELOW_PX = 0.5


def head_polygon(tri) -> QPolygonF:
    """A head triangle (three (x, y) points, or a (3, 2) array) as a polygon."""
    return QPolygonF([QPointF(float(x), float(y)) for x, y in tri])


def paint_arrow(
    p: QPainter,
    tail: QPointF,
    tip: QPointF,
    colour: QColor,
    width: float,
    *,
    head_px: float = 8.0,
    head_width_px: float | None = None,
    dashed: bool = False,
    max_fraction: float = HEAD_FRACTION,
) -> None:
    """A shaft from ``tail`` to ``tip`` and a filled head of ``head_px`` pixels, in screen
    coordinates; the head shrinks on a short arrow (see ``arrow_heads``)."""
    p.save()  # the caller's pen and brush survive: a ring drawn next must not come out filled
    try:
        # Strokes and heads grow with the text size (presentation mode), like the plots'.
        k = line_scale()
        wide = None if head_width_px is None else head_width_px * k
        _paint_arrow(p, tail, tip, colour, width * k, head_px * k, wide, dashed, max_fraction)
    finally:
        p.restore()


def _paint_arrow(
    p: QPainter,
    tail: QPointF,
    tip: QPointF,
    colour: QColor,
    width: float,
    head_px: float,
    head_width_px: float | None,
    dashed: bool,
    max_fraction: float,
) -> None:
    dx, dy = tip.x() - tail.x(), tip.y() - tail.y()
    if dx * dx + dy * dy < DOT_BELOW_PX * DOT_BELOW_PX:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        p.drawEllipse(tip, 2.0, 2.0)
        return
    end, head = arrow_head(
        (tail.x(), tail.y()),
        (tip.x(), tip.y()),
        head_px,
        0.9 * head_px if head_width_px is None else head_width_px,
        max_fraction=max_fraction,
    )
    pen = QPen(colour, width)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    p.setPen(pen)
    p.drawLine(tail, QPointF(*end))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    p.drawPolygon(head_polygon(head))


class PlotArrowHead(QGraphicsPathItem):
    """The head of an arrow drawn in a plot's data coordinates, ``head_px`` pixels long at any
    zoom: it ignores the view's scaling, like pyqtgraph's ArrowItem, but takes its triangle from
    ``arrow_heads`` so plot arrows and painted arrows have one shape. The plots it sits in keep
    one unit equally long on both axes, so a data direction is a screen direction (y flipped).
    """

    def __init__(self, head_px: float = 8.0, head_width_px: float | None = None) -> None:
        super().__init__()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.head_px = head_px
        self.head_width_px = head_width_px

    def point(self, tail, tip, colour: QColor | None = None, head_px: float | None = None) -> None:
        """Put the head on ``tip`` (x, y), pointing away from ``tail``; hidden when they meet."""
        dx, dy = float(tip[0]) - float(tail[0]), float(tip[1]) - float(tail[1])
        if head_px is not None:
            self.head_px = head_px
        if colour is not None:
            self.setBrush(QBrush(colour))
        n = (dx * dx + dy * dy) ** 0.5
        if not (n > 0 and n < float("inf")):
            self.setVisible(False)
            return
        # Only the direction matters here: a far tail keeps the head its full size.
        far = 1e3 * max(self.head_px, 1.0)
        _, head = arrow_head((-far * dx / n, far * dy / n), (0.0, 0.0), self.head_px,
                             self.head_width_px)  # fmt: skip
        path = QPainterPath()
        path.addPolygon(head_polygon(head))
        path.closeSubpath()
        self.setPath(path)
        self.setPos(float(tip[0]), float(tip[1]))
        self.setVisible(True)
