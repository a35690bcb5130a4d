"""The query-map null-space lab (see :mod:`.panel`); its views and editors are sub-views with
``refresh(data)``, their data made in :mod:`attnsim.viewmodels.nullspace_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.viewmodels.nullspace_lab",
    "attnsim.engine.settings",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.nullspace_lab.controls",
    "attnsim.panels.kit.label_painter",
    "attnsim.panels.nullspace_lab.painting",
    "attnsim.panels.nullspace_lab.input_view",
    "attnsim.panels.kit.arrows",
    "attnsim.panels.nullspace_lab.query_view",
    "attnsim.panels.nullspace_lab.panel",
)

_WHERE = {
    "DEFAULT_T": "attnsim.viewmodels.nullspace_lab",
    "NullSpaceLabPanel": f"{__name__}.panel",
    "NullSpaceLabState": "attnsim.viewmodels.nullspace_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
