"""The "Precision and masks" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.precision_lab`."""

from attnsim.viewmodels.precision_lab import PrecisionLabState

from .panel import PrecisionLabPanel

__all__ = ["PrecisionLabPanel", "PrecisionLabState"]
