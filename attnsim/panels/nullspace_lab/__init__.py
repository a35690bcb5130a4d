"""The query-map null-space lab (see :mod:`.panel`); its views and editors are sub-views with
``refresh(data)``, their data made in :mod:`attnsim.viewmodels.nullspace_lab`."""

from attnsim.viewmodels.nullspace_lab import DEFAULT_T, NullSpaceLabState

from .panel import NullSpaceLabPanel

__all__ = ["DEFAULT_T", "NullSpaceLabPanel", "NullSpaceLabState"]
