"""The "Position and sharing" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.position_lab`."""

from attnsim.viewmodels.position_lab import PositionLabState

from .panel import PositionLabPanel

__all__ = ["PositionLabPanel", "PositionLabState"]
