"""Plot strokes that keep their weight on a high-density screen and in larger text.

pyqtgraph draws with cosmetic pens, whose width Qt counts in device pixels: at 2x scale a
2-pixel curve comes out half as heavy as the text beside it. The window scales every cosmetic
pen pyqtgraph makes (ours and its own: axes, arrows) by the screen's device-pixel ratio times
the text size (View ▸ Text size, presentation mode): :func:`set_stroke_scale` widens the pens
made from then on and the pens of every plot already drawn.

The canvases that paint themselves (matrices, the 3-D view, the heads' diagram) ask
:func:`line_width` for each stroke given in logical pixels, and :func:`cosmetic_width` for one
given in device pixels: both grow with the text size as the plots' strokes do.
:func:`layer_scale` says whether a picture kept at the device's pixels can be copied onto a
painter 1:1 (the heatmap's and the 3-D view's kept layers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPaintEngine, QPainter, QPen
from PySide6.QtWidgets import QGraphicsView, QWidget

_original: Callable[..., QPen] | None = None
_factor = [1.0]  # what scale_plot_pens set last
_text = [1.0]  # the text size's part of it (set_stroke_scale's text_scale)


def scale_plot_pens(factor: float) -> None:
    """Make pyqtgraph's ``mkPen`` widen cosmetic pens by ``factor`` (1 restores it)."""
    global _original
    import pyqtgraph as pg
    from pyqtgraph import functions as fn

    if _original is None:
        _original = fn.mkPen
    base = _original
    _factor[0] = max(1.0, factor)
    if factor <= 1.0:
        fn.mkPen = pg.mkPen = base
        return

    def mkPen(*args, **kargs) -> QPen:
        pen = base(*args, **kargs)
        if len(args) == 1 and isinstance(args[0], QPen | dict):
            return pen  # a copy of a pen, or a dict (made through this function already)
        if pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen and pen.widthF() > 0:
            pen.setWidthF(pen.widthF() * factor)
        return pen

    fn.mkPen = pg.mkPen = mkPen


def stroke_scale() -> float:
    return _factor[0]


def line_width(width: float) -> float:
    """A painted stroke of ``width`` logical pixels at today's text size."""
    return width * _text[0]


def cosmetic_width(width: float) -> float:
    """A cosmetic (device-pixel) stroke of ``width`` at the screen's scale and the text size."""
    return width * _factor[0]


def points(size: float) -> float:
    """A font size given in points at normal text size, at today's text size."""
    return size * _text[0]


def line_scale() -> float:
    """How much the text size widens painted strokes (1 at normal size)."""
    return _text[0]


def _wider(pen: QPen | None, ratio: float) -> QPen | None:
    if pen is None or not isinstance(pen, QPen):
        return None
    if not pen.isCosmetic() or pen.style() == Qt.PenStyle.NoPen or pen.widthF() <= 0:
        return None
    out = QPen(pen)
    out.setWidthF(pen.widthF() * ratio)
    return out


def set_stroke_scale(
    factor: float, widgets: Iterable[QWidget], text_scale: float | None = None
) -> None:
    """Every cosmetic pen of pyqtgraph at ``factor`` times its width: the pens made from now
    on, and those of the curves, lines and axes already in ``widgets``' plots. ``text_scale``
    (the part of ``factor`` that is the text size) widens the painted canvases' strokes."""
    import pyqtgraph as pg

    text_ratio = 1.0
    if text_scale is not None:
        text_ratio = max(1.0, text_scale) / _text[0]
        _text[0] = max(1.0, text_scale)

    ratio = max(1.0, factor) / _factor[0]
    scale_plot_pens(factor)
    if abs(ratio - 1.0) < 1e-9:
        return
    scenes = set()
    for w in widgets:
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            scenes.add(w.scene())
    grow_text = abs(text_ratio - 1.0) > 1e-9
    for scene in scenes:
        for item in scene.items():
            _widen_pen(pg, item, ratio)
            if grow_text:
                _grow_text(pg, item, text_ratio)


def _widen_pen(pg, item, ratio: float) -> None:
    if isinstance(item, pg.PlotDataItem):  # it keeps its pen as a QPen (mkPen's)
        pen = _wider(item.opts.get("pen"), ratio)
    elif isinstance(item, pg.InfiniteLine):
        pen = _wider(item.pen, ratio)
    elif isinstance(item, pg.AxisItem):
        pen = _wider(item.pen(), ratio)
    else:
        return
    if pen is not None:
        item.setPen(pen)


def _grow_text(pg, item, ratio: float) -> None:
    if isinstance(item, pg.AxisItem):
        if item.label is not None:
            item.label.setFont(_larger(item.label.font(), ratio))  # its title
            update = getattr(item, "_updateLabel", None)
            if update is not None:
                update()
    elif isinstance(item, pg.LabelItem):
        _resize_label(item, ratio)
    elif isinstance(item, pg.TextItem):
        item.setFont(_larger(item.textItem.font(), ratio))  # labels in a plot


def _larger(font: QFont, ratio: float) -> QFont:
    out = QFont(font)
    if font.pointSizeF() > 0:
        out.setPointSizeF(font.pointSizeF() * ratio)
    elif font.pixelSize() > 0:
        out.setPixelSize(max(1, round(font.pixelSize() * ratio)))
    return out


def title_size(size: float = 9.0) -> str:
    """A plot title's or legend's size for pyqtgraph ("9pt" at normal text size)."""
    return f"{points(size):g}pt"


def _resize_label(item, ratio: float) -> None:
    # plot titles and legend entries carry their size in points ("9pt"): they grow as the
    # text does, like every widget's font
    size = item.opts.get("size")
    if isinstance(size, str) and size.endswith("pt"):
        try:
            pt = float(size[:-2])
        except ValueError:
            return
        item.setText(item.text, size=f"{pt * ratio:g}pt")


__all__ = [
    "cosmetic_width",
    "line_scale",
    "line_width",
    "points",
    "scale_plot_pens",
    "set_stroke_scale",
    "stroke_scale",
    "title_size",
]


def layer_scale(p: QPainter) -> float | None:
    """The device pixels per unit when ``p`` paints raster pixels with no more than a scale and
    a whole-pixel shift (a kept image then lands 1:1 on them), else None."""
    if p.paintEngine().type() != QPaintEngine.Type.Raster:
        return None
    t = p.deviceTransform()
    s = t.m11()
    if s <= 0 or t.m22() != s or t.m12() != 0 or t.m21() != 0:
        return None
    if t.dx() != round(t.dx()) or t.dy() != round(t.dy()):
        return None
    return s
