"""The three-fields lab (see :mod:`.panel`); its figures are sub-views with ``refresh(data)``.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.optimizers",
    "attnsim.engine.training",
    "attnsim.engine.experiments",
    "attnsim.viewmodels.fields_lab",
    "attnsim.engine.settings",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.fields_lab.canvas",
    "attnsim.panels.fields_lab.bars",
    "attnsim.panels.fields_lab.mixture",
    "attnsim.panels.fields_lab.off_page",
    "attnsim.panels.fields_lab.scatter",
    "attnsim.panels.fields_lab.sliders",
    "attnsim.panels.fields_lab.panel",
)

_WHERE = {
    "FieldsLabPanel": f"{__name__}.panel",
    "fit_points": "attnsim.viewmodels.fields_lab",
    "place_label": "attnsim.viewmodels.fields_lab",
    "stacked_segments": "attnsim.viewmodels.fields_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
