"""A scroll bar that copies its last painting while nothing it shows has changed.

The Fusion style fills a scroll bar's groove with a gradient, span by span, and the raster
engine splits a fill of 96 spans or more (a bar 96 pixels tall) across Qt's thread pool and
waits for it: about 1 ms a repaint of the anatomy's diagram on a busy 2-core machine, for a bar
that looks the same before and after an edit. :class:`KeptScrollBar` keeps the style's
painting, over the palette's window colour (what a window shows under its bars; the picture
is then opaque, so a copy is the painting pixel for pixel), and copies it while the bar's
size, range, position, state, palette and style stay (the kit's :class:`KeptRaster` keeps
and copies it, and paints afresh under a transform a copy could not reproduce). Under the
mouse or while dragged (where the style shows which part is hovered or pressed, which only
Qt's own paint knows) it paints as Qt does.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QScrollBar, QStyle, QStyleOptionSlider, QWidget

from .matrix_widget import KeptRaster

__all__ = ["KeptScrollBar"]


class KeptScrollBar(QScrollBar):
    """A :class:`QScrollBar` whose painting is kept and copied (see the module docstring)."""

    def __init__(
        self, orientation: Qt.Orientation = Qt.Orientation.Vertical, parent: QWidget | None = None
    ) -> None:
        super().__init__(orientation, parent)
        self._raster = KeptRaster()

    @property
    def paints(self) -> int:
        """How often painted afresh (tests count them)."""
        return self._raster.paints

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.underMouse() or self.isSliderDown():
            super().paintEvent(event)
            return
        opt = QStyleOptionSlider()
        self.initStyleOption(opt)
        opt.subControls = QStyle.SubControl.SC_All
        opt.activeSubControls = QStyle.SubControl.SC_None
        style = self.style()
        key = (
            self.width(), self.height(), opt.state.value, opt.minimum, opt.maximum,
            opt.sliderPosition, opt.sliderValue, opt.pageStep, opt.singleStep,
            opt.orientation.value, opt.upsideDown, opt.direction.value, opt.palette.cacheKey(),
            id(style),
        )  # fmt: skip

        def paint(q: QPainter) -> None:
            q.fillRect(self.rect(), opt.palette.window())
            style.drawComplexControl(QStyle.ComplexControl.CC_ScrollBar, opt, q, self)

        p = QPainter(self)
        self._raster.paint(p, QRectF(self.rect()), key, paint)
        p.end()
