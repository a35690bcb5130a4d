"""The "Long-context stability" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.context_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.long_context",
    "attnsim.engine.routing",
    "attnsim.engine.settings",
    "attnsim.viewmodels.context_lab",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.kit.control_row",
    "attnsim.panels.context_lab.controls",
    "attnsim.panels.context_lab.plots",
    "attnsim.panels.context_lab.panel",
)

_WHERE = {
    "ContextLabPanel": f"{__name__}.panel",
    "ContextLabState": "attnsim.viewmodels.context_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
