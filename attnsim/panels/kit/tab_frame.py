"""A tab widget whose frame is painted once per size and state, then copied.

The Fusion style draws a tab widget's pane as an antialiased rounded rectangle filled with the
frame colour: about 1 ms for a lab's 800 x 560 pane on this machine, on every repaint of the
lab, though the frame changes only when the widget's size, state, palette or tabs do.
:class:`FramedTabs` keeps that frame in a transparent image and copies it (0.2 ms), pixel for
pixel the same; under a transform a copy could not reproduce (a rotation, a fractional
offset) it paints afresh.

The copy is made a rectangle of the paint's region at a time, each under its own rectangular
clip. The region is a ring (the page inside is painted by the page), and under a clip that is
not one rectangle the raster engine blends an image span by span, split across Qt's thread
pool from 96 spans on: the main thread then waits for the pool (about 1 ms a repaint of a
lab on a busy 2-core machine, for a copy that takes 0.03 ms in one thread).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QStyle, QStyleOptionTabWidgetFrame, QTabWidget

from .painted import copy_scale

__all__ = ["FramedTabs"]


class FramedTabs(QTabWidget):
    """A :class:`QTabWidget` that copies its frame while nothing it depends on changed."""

    _frame_key: tuple | None = None
    _frame: QImage | None = None

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.documentMode():  # draws the tab bar's base, not the frame: as Qt does
            super().paintEvent(event)
            return
        opt = QStyleOptionTabWidgetFrame()
        self.initStyleOption(opt)
        style = self.style()
        # QTabWidget::paintEvent draws the frame in the pane its layout computed, this rect
        opt.rect = style.subElementRect(QStyle.SubElement.SE_TabWidgetTabPane, opt, self)
        p = QPainter(self)
        w, h = self.width(), self.height()
        scale = copy_scale(p, w, h)
        if scale is None:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_FrameTabWidget, opt, p, self)
            p.end()
            return
        s = scale
        key = (
            w, h, s, opt.rect.getRect(), opt.state.value, opt.palette.cacheKey(),
            opt.tabBarRect.getRect(), opt.selectedTabRect.getRect(), opt.shape.value,
            opt.lineWidth, opt.midLineWidth, opt.direction.value, id(style),
        )  # fmt: skip
        if key != self._frame_key or self._frame is None:
            image = QImage(round(w * s), round(h * s), QImage.Format.Format_ARGB32_Premultiplied)
            image.setDevicePixelRatio(s)
            image.fill(Qt.GlobalColor.transparent)
            q = QPainter(image)
            style.drawPrimitive(QStyle.PrimitiveElement.PE_FrameTabWidget, opt, q, self)
            q.end()
            self._frame, self._frame_key = image, key
        copy_region(p, self._frame, event.region(), s)
        p.end()


def copy_region(p: QPainter, image: QImage, region, scale: float) -> None:
    """Draw ``image`` (``scale`` device pixels a pixel, placed at the origin) where ``region``
    is, a rectangle at a time under that rectangle as the clip: see the module's docstring. A
    scale that is not whole (a rectangle's edge between two of the image's pixels) draws the
    image at once, as painted."""
    rects = list(region)
    if len(rects) <= 1 or abs(scale - round(scale)) > 1e-9:
        p.drawImage(0, 0, image)
        return
    s = round(scale)
    for r in rects:
        p.setClipRect(r)
        p.drawImage(QRectF(r), image, QRectF(r.x() * s, r.y() * s, r.width() * s, r.height() * s))
    p.setClipping(False)
