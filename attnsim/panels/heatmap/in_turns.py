"""A heatmap canvas's large stages pooled one a turn (see :class:`StagesInTurns`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QRectF, QSize, QTimer
from PySide6.QtGui import QColor, QImage

from attnsim.engine.head_trace import MaskedTable
from attnsim.viewmodels.heatmap import CanvasContent

from ..base import in_turn_after_trace, next_turn_after_trace
from ..kit.matrix_canvas import RECT_MAX, pooled_image
from .parts import stage_scale

if TYPE_CHECKING:
    from .canvas import HeatmapCanvas


def large(content: CanvasContent) -> bool:
    """Whether the stages are drawn as pooled images (too many cells for a rectangle each)."""
    n_q, n_k = content.stages[0].shape
    return min(n_q, n_k) > 0 and max(n_q, n_k) > RECT_MAX


class StagesInTurns:
    """New large stages on screen are pooled into their images one a turn, about 20 ms a stage
    for a 4,096-token head (three in one paint held the window 60 ms), and then drawn in one
    paint. Meanwhile the canvas shows the picture before (white before the first).
    :meth:`finish` (the panel's flush: tests, exports) makes the next paint draw the new
    stages, pooling what is left then.

    ``token`` names the run under way (None when there is none), ``before`` is the picture
    shown meanwhile, ``drawn_size`` the size of the last paint on screen that drew every stage
    (from then on their images are kept, and a grab of the canvas pools nothing).
    """

    def __init__(self, canvas: HeatmapCanvas) -> None:
        self.canvas = canvas
        self.token: object | None = None
        self.before: QImage | None = None
        self.drawn_size: QSize | None = None

    def picture_now(self, content: CanvasContent) -> QImage | None:
        """Before the canvas takes ``content``: the picture to show while it is pooled, or
        None when it is drawn at once (small stages, a canvas off screen, or one whose
        picture could not be had without pooling)."""
        c = self.canvas
        if not (large(content) and c.isVisible()):
            return None
        if self.token is not None:
            return self.before  # still the last picture drawn whole
        if c.content is None:
            ratio = c.devicePixelRatioF()
            white = QImage(c.size() * ratio, QImage.Format.Format_RGB32)
            white.setDevicePixelRatio(ratio)
            white.fill(QColor("white"))
            return white
        if self.drawn_size == c.size():
            return c.grab().toImage()  # from the kept images: no pooling
        return None

    def start(self, before: QImage | None) -> bool:
        """Begin pooling the canvas's new stages a turn each, showing ``before`` meanwhile
        (True), or not at all when there is no picture before (False)."""
        self.drawn_size = None
        self.token, self.before = None, before
        if before is None:
            return False
        self.token = object()
        self._next_turn(0)
        return True

    def _next_turn(self, t: int) -> None:
        """Pool stage ``t`` in the next turn: after a trace came, in the panels' queue of turns
        (before the next panel's redraw, see panels.base), else on a timer of its own."""
        token = self.token
        if in_turn_after_trace():
            next_turn_after_trace(self.canvas, lambda: self.pool_next(token, t))
        else:
            QTimer.singleShot(0 if t == 0 else 1, self.canvas, lambda: self.pool_next(token, t))

    def pool_next(self, token: object, t: int) -> None:
        c = self.canvas
        if token is not self.token or c.content is None:
            return  # newer stages came, or the run was finished, meanwhile
        sd = c.content.stages[t]
        table = sd.table if isinstance(sd.table, MaskedTable) else np.asarray(sd.table)
        rect = QRectF(*c.geometry_now().tiles[t].matrix)
        pooled_image(rect, c.devicePixelRatioF(), table, stage_scale(sd), sd.allowed,
                     c.prepared[t])  # fmt: skip
        if t + 1 < len(c.content.stages):
            self._next_turn(t + 1)
        else:
            self.finish()

    def finish(self) -> None:
        """Draw the current stages from the next paint on."""
        if self.token is not None:
            self.token, self.before = None, None
            self.canvas.update()
