"""The "Linear memory" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``, their data
made in :mod:`attnsim.viewmodels.linear_lab`."""

from attnsim.viewmodels.linear_lab import LinearLabState

from .panel import LinearLabPanel

__all__ = ["LinearLabPanel", "LinearLabState"]
