"""The "Precision and masks" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.views.precision_lab`."""

from attnsim.views.precision_lab import PrecisionLabState

from .panel import PrecisionLabPanel

__all__ = ["PrecisionLabPanel", "PrecisionLabState"]
