"""The "Linear memory" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``, their data
made in :mod:`attnsim.viewmodels.linear_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.linear",
    "attnsim.engine.settings",
    "attnsim.viewmodels.linear_lab",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.kit.control_row",
    "attnsim.panels.linear_lab.plots",
    "attnsim.panels.linear_lab.compare_view",
    "attnsim.panels.linear_lab.growth_view",
    "attnsim.panels.linear_lab.memory_view",
    "attnsim.panels.linear_lab.panel",
)

_WHERE = {
    "LinearLabPanel": f"{__name__}.panel",
    "LinearLabState": "attnsim.viewmodels.linear_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
