"""The induction-head lab (the panel and its sub-views).

``panel``: :class:`InductionLabPanel`; ``controls``: settings and the training buttons;
``curves``: loss and score curves; ``patterns``: the layer x head grid and the enlarged head;
``heads``: per-head scores, ablation toggles and the ablation table; ``circuits``: QK / OV
circuits, copying and composition scores. The view-model is :mod:`attnsim.viewmodels.induction_lab`,
the training session :mod:`attnsim.model.induction_session`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import lazy_names

IMPORT_STEPS = (
    "attnsim.engine.induction_step",
    "attnsim.engine.optimizers",
    "attnsim.engine.training",
    "attnsim.engine.induction",
    "attnsim.engine.induction_circuits",
    "attnsim.engine.settings",
    "attnsim.viewmodels.induction_lab",
    "attnsim.panels.induction_lab.steady",
    "attnsim.panels.induction_lab.controls",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.viewmodels.heatmap",
    "attnsim.panels.kit.matrix_widget",
    "attnsim.panels.kit.painted",
    "attnsim.panels.kit.head_grid",
    "attnsim.panels.induction_lab.patterns",
    "attnsim.panels.induction_lab.heads",
    "attnsim.model.induction_session",
    "attnsim.panels.kit.tab_frame",
    "attnsim.panels.lab",
    "attnsim.panels.induction_lab.stages",
    "attnsim.panels.induction_lab.panel",
    "attnsim.panels.induction_lab.curves",
    "attnsim.panels.induction_lab.circuits",
)

_WHERE = {
    "ABLATION_JOB": f"{__name__}.panel",
    "CircuitsView": f"{__name__}.circuits",
    "ControlsView": f"{__name__}.controls",
    "CurvesView": f"{__name__}.curves",
    "HeadsView": f"{__name__}.heads",
    "InductionLabPanel": f"{__name__}.panel",
    "PatternGrid": f"{__name__}.patterns",
    "PatternsView": f"{__name__}.patterns",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
