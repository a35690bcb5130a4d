"""The "Long-context stability" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.context_lab`."""

from attnsim.viewmodels.context_lab import ContextLabState

from .panel import ContextLabPanel

__all__ = ["ContextLabPanel", "ContextLabState"]
