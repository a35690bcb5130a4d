"""The "Precision and masks" lab (see :mod:`.panel`); its sub-views have ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.precision_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.precision",
    "attnsim.engine.settings",
    "attnsim.viewmodels.precision_lab",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.precision_lab.dropout_view",
    "attnsim.panels.kit.control_row",
    "attnsim.panels.precision_lab.mask_view",
    "attnsim.panels.precision_lab.panel",
)

_WHERE = {
    "PrecisionLabPanel": f"{__name__}.panel",
    "PrecisionLabState": "attnsim.viewmodels.precision_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
