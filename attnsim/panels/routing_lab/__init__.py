"""The routing lab panel (:mod:`.panel`) and its sub-views: the plots (:mod:`.plots`,
:mod:`.key_plane`), the change line, the controls, the four-causes table and the distractor
tab, each with ``refresh(data)`` taking a frozen dataclass of
:mod:`attnsim.viewmodels.routing_lab`."""

from __future__ import annotations

from attnsim.viewmodels.routing_lab import RoutingLabState

from .panel import RoutingLabPanel

__all__ = ["RoutingLabPanel", "RoutingLabState"]
