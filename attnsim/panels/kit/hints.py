"""Whether the panels show their how-to hints ("drag a tip to edit · wheel zooms").

On by default; presentation mode turns them off, so that the screen in a lecture hall shows
the content only, as a figure does, and a figure never has them (see :mod:`.figure_paint`).
Panels read :func:`hints_shown` when they draw.
"""

from __future__ import annotations

from .figure_paint import painting_figure

__all__ = ["hints_shown", "set_hints_shown"]

_shown = True


def hints_shown() -> bool:
    """True on screen outside presentation mode; False in presentation mode and in figures."""
    return _shown and not painting_figure()


def set_hints_shown(shown: bool) -> None:
    global _shown
    _shown = bool(shown)
