"""Widgets that keep their last painting.

While the induction lab trains, the window repaints many times between two chunks of training,
and most of what it repaints has not changed (nor does the linear memory lab's S_i when an edit
moves a later token): a canvas of 32 x 32 numbered cells costs milliseconds to
paint and nothing to copy. :class:`PaintCache` keeps one widget's picture, painted at the
device's scale with the painter's render hints, and copies it until its content, size, scale or
hints change; where a copy could differ from painting afresh (a rotation, a fractional offset
in device pixels) it paints afresh.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QWidget

from .hidpi import line_scale
from .matrix_widget import MatrixCanvas

__all__ = ["CachedCanvas", "KeptPicture", "PaintCache", "frame_image"]


SCREEN_FORMAT = QImage.Format.Format_ARGB32_Premultiplied  # the raster engine's own


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9


def copy_scale(p: QPainter, width: float, height: float) -> float | None:
    """The device pixels per logical pixel when a kept picture of a ``width`` x ``height``
    widget can be copied with ``p`` pixel for pixel (a plain scale, the widget on whole device
    pixels); None when it must be painted afresh (a rotation, a fractional place, no size)."""
    t = p.deviceTransform()
    s = t.m11()
    exact = (
        t.type().value <= QTransform.TransformationType.TxScale.value
        and s > 0 and abs(t.m22() - s) < 1e-12
        and _whole(t.dx()) and _whole(t.dy()) and _whole(width * s) and _whole(height * s)
    )  # fmt: skip
    return s if exact and width > 0 and height > 0 else None


def frame_image(
    view: QGraphicsView,
    p: QPainter,
    scale: float,
    hidden: list[QGraphicsItem],
    render: Callable[[QPainter], None],
) -> QImage:
    """A plot's frame: ``view`` rendered by ``render`` on white at ``scale`` device pixels a
    pixel, with ``p``'s render hints and without the ``hidden`` items (the curves, bars and
    lines that change; made transparent meanwhile, so the scene leaves them out). A plot keeps
    it and draws only its changing items over a copy. Opaque, so kept without alpha."""
    vp = view.viewport()
    image = QImage(round(vp.width() * scale), round(vp.height() * scale), SCREEN_FORMAT)
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    opacity = [c.opacity() for c in hidden]
    for c in hidden:
        c.setOpacity(0.0)
    q = QPainter(image)
    q.setRenderHints(p.renderHints())
    try:
        render(q)
    finally:
        q.end()
        for c, o in zip(hidden, opacity, strict=True):
            c.setOpacity(o)
    return image.convertToFormat(QImage.Format.Format_RGB32)


class PaintCache:
    """One widget's picture, reused while ``clear()`` has not been called and the widget's size,
    the device's scale and the painter's render hints are those it was painted with."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._pixmap: QImage | None = None  # the picture
        self.paints = 0  # how often the picture was painted afresh (tests count them)

    def clear(self) -> None:
        self._key = self._pixmap = None

    def paint(self, widget: QWidget, p: QPainter, paint: Callable[[QPainter], None]) -> None:
        """Draw the widget's picture with ``p``; ``paint(painter)`` paints it (background too)."""
        w, h = widget.width(), widget.height()
        scale = copy_scale(p, w, h)
        if scale is None:
            self.paints += 1
            paint(p)
            return
        t, s = p.deviceTransform(), scale
        # Hatching lines up with the device, so where the widget sits on it is part of the key.
        # The picture is painted in the format of the device it is first painted for (an
        # image scaled into cells is sampled a hair differently in each format), and kept
        # without alpha, which every device copies fast.
        key = (w, h, s, t.dx(), t.dy(), p.renderHints(), line_scale())
        if key != self._key or self._pixmap is None:
            target = p.paintEngine().paintDevice() if p.paintEngine() is not None else None
            fmt = target.format() if isinstance(target, QImage) else SCREEN_FORMAT
            image = QImage(round(w * s), round(h * s), fmt)
            image.setDevicePixelRatio(s)
            image.fill(QColor("white"))
            q = QPainter(image)
            q.setRenderHints(p.renderHints())
            q.setFont(p.font())
            q.setPen(p.pen())
            q.setBrush(p.brush())
            paint(q)
            q.end()
            # opaque (painted on white), so dropping alpha loses nothing
            self._pixmap = image.convertToFormat(QImage.Format.Format_RGB32)
            self._key = key
            self.paints += 1
        p.drawImage(0, 0, self._pixmap)


class KeptPicture:
    """For a widget class that paints through a :class:`PaintCache` (``self.picture``): white,
    then ``paint_content(p)`` when ``has_content()``; a font or palette change repaints. Put it
    before the Qt base class so its event handlers come first."""

    picture: PaintCache

    # The class using it defines has_content() and paint_content(p) (a MatrixCanvas has the
    # latter already, so the mixin must not define it: it comes first in the lookup).

    def changeEvent(self, e: QEvent) -> None:
        if e.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange):
            self.picture.clear()
        super().changeEvent(e)  # type: ignore[misc]

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)  # type: ignore[call-overload]
        self.picture.paint(self, p, self._paint_all)  # type: ignore[arg-type]
        p.end()

    def _paint_all(self, p: QPainter) -> None:
        p.fillRect(self.rect(), QColor("white"))  # type: ignore[attr-defined]
        if self.has_content():  # type: ignore[attr-defined]
            self.paint_content(p)  # type: ignore[attr-defined]


class CachedCanvas(KeptPicture, MatrixCanvas):
    """A :class:`MatrixCanvas` that repaints only when its matrix, size or scale changed."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.picture = PaintCache()
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def set_matrix(self, *args: object, **kwargs: object) -> None:
        self.picture.clear()
        super().set_matrix(*args, **kwargs)  # type: ignore[arg-type]

    def has_content(self) -> bool:
        return self.values.ndim == 2 and self.values.size > 0
