"""The one tip-dragging plane view box: a left drag that starts within a few pixels of a tip
grabs it; the box reports started / moved / finished with one drag id (so the workbench merges
the whole drag into one undo step) and whether Shift is held (for snapping).

The panel says what is under a scene point (``pick``) and what a move means; the box only
turns mouse events into those signals, so every plane drags the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal

from attnsim.model.workbench import new_drag_id

__all__ = ["TipDragBox"]


class TipDragBox(pg.ViewBox):
    """A ViewBox, aspect locked, that hands left drags starting on a tip to its panel.

    Signals
    -------
    drag_started(key, drag id, x, y)         the tip ``pick`` found, where the press was (data)
    drag_moved(key, drag id, x, y, shift)    where the pointer is now (data), Shift held
    drag_finished(key, drag id)
    tip_clicked(key)                         a click (no drag) on a tip

    With ``fixed`` (the default) pan and zoom are off, so a drag always means an edit and any
    other drag or wheel turn is ignored; with ``hover_cursor`` the cursor is an open hand over a
    tip.
    """

    drag_started = Signal(object, int, float, float)
    drag_moved = Signal(object, int, float, float, bool)
    drag_finished = Signal(object, int)
    tip_clicked = Signal(object)

    def __init__(
        self,
        pick: Callable[[QPointF], Hashable | None],
        *,
        fixed: bool = True,
        hover_cursor: bool = False,
    ) -> None:
        super().__init__(enableMenu=False)
        self.setAspectLocked(True)
        self._pick = pick
        self._fixed = fixed
        self._hover_cursor = hover_cursor
        if fixed:
            self.setMouseEnabled(False, False)
        self.grab: tuple[Hashable, int] | None = None  # (key, drag id) while a tip is held

    def mouseDragEvent(self, ev, axis=None) -> None:  # pyqtgraph's name
        if ev.button() != Qt.MouseButton.LeftButton:
            self._not_mine(ev, axis)
            return
        if ev.isStart():
            key = self._pick(ev.buttonDownScenePos())
            if key is not None:
                self.grab = (key, new_drag_id())
                down = self.mapSceneToView(ev.buttonDownScenePos())
                self.drag_started.emit(key, self.grab[1], down.x(), down.y())
        if self.grab is None:
            self._not_mine(ev, axis)
            return
        ev.accept()
        key, drag = self.grab
        p = self.mapSceneToView(ev.scenePos())
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        self.drag_moved.emit(key, drag, p.x(), p.y(), shift)
        if ev.isFinish():
            self.grab = None
            self.drag_finished.emit(key, drag)

    def _not_mine(self, ev, axis) -> None:
        """A drag that grabbed no tip: a fixed box ignores it, a free one pans or zooms."""
        if self._fixed:
            ev.ignore()
        else:
            super().mouseDragEvent(ev, axis)

    def mouseClickEvent(self, ev) -> None:  # pyqtgraph's name
        if ev.button() == Qt.MouseButton.LeftButton:
            key = self._pick(ev.scenePos())
            if key is not None:
                ev.accept()
                self.tip_clicked.emit(key)
                return
        if self._fixed:
            ev.accept()  # no context menu, no auto-range on click
        else:
            super().mouseClickEvent(ev)

    def wheelEvent(self, ev, axis=None) -> None:  # pyqtgraph's name
        if self._fixed:
            ev.ignore()
        else:
            super().wheelEvent(ev, axis)

    def hoverEvent(self, ev) -> None:  # pyqtgraph's name
        if not self._hover_cursor:
            return
        view = self.getViewWidget()
        if view is None:
            return
        grab = not ev.isExit() and self._pick(ev.scenePos()) is not None
        shape = Qt.CursorShape.OpenHandCursor if grab else Qt.CursorShape.ArrowCursor
        view.viewport().setCursor(shape)
