"""The "Linear memory" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``, their data
made in :mod:`attnsim.views.linear_lab`."""

from attnsim.views.linear_lab import LinearLabState

from .panel import LinearLabPanel

__all__ = ["LinearLabPanel", "LinearLabState"]
