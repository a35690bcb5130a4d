"""A scroll bar that copies its last painting while nothing it shows has changed.

The Fusion style fills a scroll bar's groove with a gradient, span by span, and the raster
engine splits a fill of 96 spans or more (a bar 96 pixels tall) across Qt's thread pool and
waits for it: about 1 ms a repaint of the anatomy's diagram on a busy 2-core machine, for a bar
that looks the same before and after an edit. :class:`KeptScrollBar` keeps the style's
painting, over the palette's window colour (what a window shows under its bars; the picture
is then opaque, so a copy is the painting pixel for pixel), and copies it while the bar's
size, range, position, state, palette and style stay. Under the mouse or while dragged (where
the style shows which part is hovered or pressed, which only Qt's own paint knows) and under
a transform a copy could not reproduce, it paints as Qt does.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QScrollBar, QStyle, QStyleOptionSlider, QWidget

from .painted import copy_scale

__all__ = ["KeptScrollBar"]


class KeptScrollBar(QScrollBar):
    """A :class:`QScrollBar` whose painting is kept and copied (see the module docstring)."""

    def __init__(
        self, orientation: Qt.Orientation = Qt.Orientation.Vertical, parent: QWidget | None = None
    ) -> None:
        super().__init__(orientation, parent)
        self._kept: tuple[tuple, QImage] | None = None
        self.paints = 0  # how often painted afresh into the kept picture (tests count them)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.underMouse() or self.isSliderDown():
            super().paintEvent(event)
            return
        opt = QStyleOptionSlider()
        self.initStyleOption(opt)
        opt.subControls = QStyle.SubControl.SC_All
        opt.activeSubControls = QStyle.SubControl.SC_None
        p = QPainter(self)
        w, h = self.width(), self.height()
        s = copy_scale(p, w, h)
        style = self.style()
        if s is None:
            p.end()
            super().paintEvent(event)
            return
        key = (
            w, h, s, opt.state.value, opt.minimum, opt.maximum, opt.sliderPosition,
            opt.sliderValue, opt.pageStep, opt.singleStep, opt.orientation.value, opt.upsideDown,
            opt.direction.value, opt.palette.cacheKey(), id(style), p.renderHints(),
        )  # fmt: skip
        if self._kept is None or self._kept[0] != key:
            image = QImage(round(w * s), round(h * s), QImage.Format.Format_ARGB32_Premultiplied)
            image.setDevicePixelRatio(s)
            image.fill(Qt.GlobalColor.transparent)
            q = QPainter(image)
            q.setRenderHints(p.renderHints())
            q.fillRect(self.rect(), opt.palette.window())
            style.drawComplexControl(QStyle.ComplexControl.CC_ScrollBar, opt, q, self)
            q.end()
            self._kept = (key, image)
            self.paints += 1
        p.drawImage(0, 0, self._kept[1])
        p.end()
