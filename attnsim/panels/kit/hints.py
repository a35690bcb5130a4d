"""Whether the panels show their how-to hints ("drag a tip to edit · wheel zooms").

On by default; presentation mode turns them off, so that the screen in a lecture hall shows
the content only, as a figure does. Panels read :func:`hints_shown` when they draw.
"""

from __future__ import annotations

__all__ = ["hints_shown", "set_hints_shown"]

_shown = True


def hints_shown() -> bool:
    return _shown


def set_hints_shown(shown: bool) -> None:
    global _shown
    _shown = bool(shown)
