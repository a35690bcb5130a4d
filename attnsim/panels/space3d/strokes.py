"""Translucent lines on screen without Qt's painting threads.

Qt's raster engine blends a translucent colour over more than about a hundred spans of pixels
(a long see-through line) by handing the spans to its thread pool and waiting for it: the
receiving query's see-through shaft and the labels' grey leader lines cost several times an
opaque line that way, and far more on a busy machine, where the wait is for a free core.

Here such a line is first drawn, with the same pen at the same sub-pixel position, into a kept
transparent picture in "source" mode (the line's colour times its coverage, a plain loop), and
that picture is then laid over the canvas: per pixel the very sum Qt's own blend makes
(colour × coverage + what was there × (1 - its alpha)), so the pixels are the same.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QPen, QTransform

# Lines with fewer spans than go to the threads are drawn directly (the picture costs about as
# much as a short line's threads), in device pixels: a line over 1 px wide shorter than
# DIRECT_BELOW (the longer of its width and height), a hairline over fewer than HAIRLINE_ROWS
# rows (it blends about two spans a row, and along a row as it goes, without the threads).
DIRECT_BELOW = 24.0
HAIRLINE_ROWS = 45.0


class TranslucentLines:
    """Draws lines through a kept picture when Qt would blend them on its threads."""

    def __init__(self) -> None:
        self._image: QImage | None = None
        self.through_picture = 0  # how many lines went through the picture (tests read it)

    def draw(self, p: QPainter, pen: QPen, a: QPointF, b: QPointF, ppx: float | None) -> None:
        """Draw the line ``a``-``b`` with ``pen`` on ``p``, whose device pixels per unit are
        ``ppx`` (None: not plain raster pixels, e.g. an SVG or a PDF, drawn directly)."""
        if (
            ppx is None
            or pen.color().alpha() == 255
            or pen.style() != Qt.PenStyle.SolidLine
            or _few_spans(pen, a, b, ppx)
        ):
            p.setPen(pen)
            p.drawLine(a, b)
            return
        # The line's box in device pixels, whole pixels, with room for its width and caps.
        m = pen.widthF() / 2 + 2.0
        left = math.floor((min(a.x(), b.x()) - m) * ppx)
        top = math.floor((min(a.y(), b.y()) - m) * ppx)
        w = math.ceil((max(a.x(), b.x()) + m) * ppx) - left + 1
        h = math.ceil((max(a.y(), b.y()) + m) * ppx) - top + 1
        image = self._image
        if image is None or image.width() < w or image.height() < h:
            size = (w, h) if image is None else (max(w, image.width()), max(h, image.height()))
            image = self._image = QImage(*size, QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(1.0)
        q = QPainter(image)
        q.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
        q.fillRect(0, 0, w, h, Qt.GlobalColor.transparent)
        q.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        q.setTransform(QTransform(ppx, 0.0, 0.0, ppx, -left, -top))
        q.setPen(pen)
        q.drawLine(a, b)
        q.end()
        image.setDevicePixelRatio(ppx)
        p.drawImage(QRectF(left / ppx, top / ppx, w / ppx, h / ppx), image, QRectF(0, 0, w, h))
        self.through_picture += 1


def _few_spans(pen: QPen, a: QPointF, b: QPointF, ppx: float) -> bool:
    """Whether Qt blends the line ``a``-``b`` without its threads (see the constants), on a
    device of ``ppx`` pixels per unit."""
    dx, dy = abs(b.x() - a.x()) * ppx, abs(b.y() - a.y()) * ppx
    if pen.widthF() * ppx <= 1.0:
        return dy < HAIRLINE_ROWS or dy < dx
    return max(dx, dy) < DIRECT_BELOW
