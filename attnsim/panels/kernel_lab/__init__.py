"""The "Kernel stepper" lab (see :mod:`.panel`).

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.kernels",
    "attnsim.engine.linear",
    "attnsim.engine.settings",
    "attnsim.engine.kernel_scaling",
    "attnsim.viewmodels.kernel_lab",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.kit.control_row",
    "attnsim.panels.kernel_lab.scaling_view",
    "attnsim.panels.kernel_lab.tiles",
    "attnsim.panels.kernel_lab.stepper_view",
    "attnsim.panels.kernel_lab.panel",
)

_WHERE = {
    "KernelLabPanel": f"{__name__}.panel",
    "KernelLabState": "attnsim.viewmodels.kernel_lab",
    "SCALING": f"{__name__}.panel",
    "scaling_job": f"{__name__}.panel",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
