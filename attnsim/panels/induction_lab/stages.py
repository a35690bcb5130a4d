"""One training chunk's redraw spread over a few frames of the window.

While the lab trains, a chunk of new weights lands a few times a second, and redrawing all it
changes in one turn of the event loop (the scores and the pattern grid, the curves, the
enlarged head, the circuits) made the frames in which it landed two to three times as dear as
the others: the dearest few frames of the lab. :class:`Stages` holds the parts left of one
redraw and draws one per turn, :data:`STAGE_GAP_MS` apart, so that the window paints between
them: each part is drawn whole, from the numbers its chunk measured, and the lab is in step
again a few frames after the chunk landed. A pause, an edit or an export draws what is left at
once (:meth:`Stages.finish`), and a newer chunk replaces the parts an older one left
(:meth:`Stages.start`), beginning where the older one stopped: on a machine so slow that
chunks land before their parts are all drawn, every part still comes round in turn (none is
left waiting for ever behind the first ones).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QTimer

# Between two parts: less than a frame at 60 a second, and long enough that the window's
# repaint (posted when a part changes a widget) comes first.
STAGE_GAP_MS = 8


class Stages(QObject):
    """Parts of one redraw, each drawn in a turn of the event loop of its own."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._parts: list[Callable[[], None]] = []
        self._round: list[Callable[[], None]] = []  # the parts of the last start(), in order
        self._first = 0  # which of the parts given to the last start() it began with
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(STAGE_GAP_MS)
        self._timer.timeout.connect(self._next)

    @property
    def pending(self) -> int:
        """How many parts are left to draw."""
        return len(self._parts)

    def start(self, parts: Iterable[Callable[[], None]]) -> None:
        """Draw ``parts`` one per turn from the next turn on, in place of those an earlier
        start left, from the first the earlier one did not draw (parts added since stay)."""
        new = list(parts)
        left = [p for p in self._parts if any(p is r for r in self._round)]
        added = [p for p in self._parts if not any(p is r for r in self._round)]
        first = 0
        if left and new:  # the part the earlier start stopped before, counted as given
            first = (self._first + len(self._round) - len(left)) % len(new)
            new = new[first:] + new[:first]
        self._round, self._first = list(new), first
        self._parts = new + added
        if self._parts:
            self._timer.start()
        else:
            self._timer.stop()

    def add(self, part: Callable[[], None]) -> None:
        """Draw ``part`` after those left (in the next turn if none are)."""
        self._parts.append(part)
        if not self._timer.isActive():
            self._timer.start()

    def cancel(self) -> None:
        """Forget the parts left (a redraw that draws everything itself comes instead)."""
        self._parts, self._round = [], []
        self._timer.stop()

    def finish(self) -> None:
        """Draw every part left, now."""
        self._timer.stop()
        while self._parts:
            self._parts.pop(0)()

    def _next(self) -> None:
        if self._parts:
            self._parts.pop(0)()
        if self._parts and not self._timer.isActive():
            self._timer.start()
