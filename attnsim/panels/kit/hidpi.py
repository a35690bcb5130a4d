"""Plot strokes that keep their weight on a high-density screen.

pyqtgraph draws with cosmetic pens, whose width Qt counts in device pixels: at 2x scale a
2-pixel curve comes out half as heavy as the text beside it. The window scales every cosmetic
pen pyqtgraph makes (ours and its own: axes, arrows) by the screen's device-pixel ratio.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QPen

_original: Callable[..., QPen] | None = None


def scale_plot_pens(factor: float) -> None:
    """Make pyqtgraph's ``mkPen`` widen cosmetic pens by ``factor`` (1 restores it)."""
    global _original
    import pyqtgraph as pg
    from pyqtgraph import functions as fn

    if _original is None:
        _original = fn.mkPen
    base = _original
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


__all__ = ["scale_plot_pens"]
