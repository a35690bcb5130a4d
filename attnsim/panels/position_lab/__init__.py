"""The "Position and sharing" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.position_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.settings",
    "attnsim.engine.variants",
    "attnsim.viewmodels.position_lab",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.kit.control_row",
    "attnsim.panels.position_lab.mask_view",
    "attnsim.panels.kit.arrows",
    "attnsim.panels.position_lab.rope_view",
    "attnsim.panels.position_lab.sharing_view",
    "attnsim.panels.position_lab.panel",
)

_WHERE = {
    "PositionLabPanel": f"{__name__}.panel",
    "PositionLabState": "attnsim.viewmodels.position_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
