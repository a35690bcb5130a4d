"""Redraws held while a refresh lays a view out: one redraw at the end of it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class HeldRedraws:
    """A mixin for a view whose ``_redraw`` (grid, arrowheads, names) follows its range and
    size: inside :meth:`redraws_held` a redraw only marks the view stale, and the last one out
    redraws once. A first refresh at n = 4,096 placed the names 8 times, once per layout pass
    (the splitter's fit, the axis's new width, the fit of the range)."""

    _held = 0
    _stale = False

    @contextlib.contextmanager
    def redraws_held(self) -> Iterator[None]:
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._stale:
                self._stale = False
                self._redraw()

    def _redraw_waits(self) -> bool:
        """True (and the view marked stale) while redraws are held."""
        if self._held:
            self._stale = True
        return bool(self._held)

    def _redraw(self) -> None:  # pragma: no cover - the view's own
        raise NotImplementedError
