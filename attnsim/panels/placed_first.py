"""A panel's first redraw in a turn of the event loop after the one that placed it.

When the window has made a panel in steps (``app/docks.py``), its last step puts the panel in
its dock (the layout's first pass over it) and tells it it came into view. The base class then
redraws it at the next zero timer, which the event loop serves in the same pass as the
placing: the layout, the first redraw and the first paint held the window in one turn (at
n = 4,096 about 90 ms for the induction lab, 70 for the stepper and the projections). Waiting
a 1 ms timer instead lets the window's own timers (an animation, a drag's pacing) run between
the placing and the redraw.
"""

from __future__ import annotations

AFTER_MS = 1


class RedrawsAfterPlacing:
    """Mixed in before :class:`~attnsim.panels.base.Panel`."""

    came_into_view_ms = AFTER_MS
