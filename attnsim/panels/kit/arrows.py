"""The one arrow painter. The shaft / head geometry is :func:`attnsim.engine.arrows.arrow_heads`
(Qt-free, shared with the vector plane's and the 3-D view's view-models); this module only turns
it into QPainter calls, so every panel's arrows have the same proportions.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF

from attnsim.engine.arrows import HEAD_FRACTION, arrow_heads

__all__ = ["DOT_BELOW_PX", "head_polygon", "paint_arrow"]

# An arrow shorter than this has no direction a reader could see: it is drawn as a dot.
DOT_BELOW_PX = 0.5


def head_polygon(tri) -> QPolygonF:
    """A head triangle (3, 2) as a polygon."""
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
        _paint_arrow(p, tail, tip, colour, width, head_px, head_width_px, dashed, max_fraction)
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
    ends, heads = arrow_heads(
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
    p.drawLine(tail, QPointF(float(ends[0, 0]), float(ends[0, 1])))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    p.drawPolygon(head_polygon(heads[0]))
