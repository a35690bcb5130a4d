"""A large matrix's pooled image made off the window's thread: a mixin for the kit's
:class:`~attnsim.panels.kit.matrix_widget.MatrixCanvas` (the kernel stepper's tiles, the
precision lab's weights).

From :data:`POOL_LATER_CELLS` cells on, the image of the matrix pooled to the pixels on screen
(at n = 4,096: 20 to 50 ms a size) is made on the workbench's runner when the canvas is first
painted on screen at a size; the canvas says what it is drawing meanwhile and is painted again
when the image is ready. An export or a grab pools at once, as the kit does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter

from .kit.matrix_canvas import RECT_MAX, keep_pooled, pool_cells

POOL_LATER_CELLS = 1024 * 1024

# pool_later(work, done): run work() off the window's thread, then done(result) on it
PoolLater = Callable[[Callable[[], object], Callable[[object], None]], None]


class PoolsLater:
    """Mixed into a MatrixCanvas: ``pool_later`` (set by the panel; None: pool at the paint)
    and :meth:`pooled_soon`, which a ``paint_content`` asks first."""

    #: what the canvas says while its image is made
    drawing_text = "Drawing…"
    pool_later: PoolLater | None = None
    _pooling: tuple | None = None  # (values, key) of the image being made

    def pooled_soon(self, p: QPainter) -> bool:
        """True when this paint on screen must wait for the matrix's pooled image, whose making
        is then started on the runner (the canvas is redrawn when it is ready); False when the
        image is kept (or the matrix is small, or the paint goes to an export or a grab: those
        pool at once, as the kit does)."""
        v, scale = self.values, self.scale  # type: ignore[attr-defined]
        if self.pool_later is None or scale is None or v.size < POOL_LATER_CELLS:
            return False
        if max(v.shape) <= RECT_MAX or p.device() is not self:
            return False
        ppx = p.deviceTransform().m11() or 1.0
        g = self.grid_rect()  # type: ignore[attr-defined]
        key = (max(1, round(g.width() * ppx)), max(1, round(g.height() * ppx)))
        if key in self.cache.images:  # type: ignore[attr-defined]
            return False
        if self._pooling is None or self._pooling[0] is not v or self._pooling[1] != key:
            request = self._pooling = (v, key)
            forbidden, cache = self.forbidden, self.cache  # type: ignore[attr-defined]
            w_px, h_px = key

            def work() -> tuple[np.ndarray, tuple[int, int]]:
                allowed = None if forbidden is None else ~forbidden
                return pool_cells(v, allowed, scale, w_px, h_px, ppx)

            def done(result: object) -> None:
                if self._pooling is request:
                    self._pooling = None
                if result is None:  # failed: the next paint (an edit, a resize) asks again
                    return
                if self.cache is not cache or self.values is not v:  # type: ignore[attr-defined]
                    # the canvas shows other numbers (or the same ones set again, with a new
                    # cache): its next paint asks for them
                    self.update()  # type: ignore[attr-defined]
                    return
                keep_pooled(cache, key, *result)  # type: ignore[misc]
                self.update()  # type: ignore[attr-defined]

            self.pool_later(work, done)
        return True

    def paint_drawing(self, p: QPainter) -> None:
        """What the canvas shows while its image is made: the words, centred."""
        p.setPen(QColor(90, 90, 90))
        p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.drawing_text)  # type: ignore[attr-defined]
