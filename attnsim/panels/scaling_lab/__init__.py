"""Why divide by sqrt(d_k), and what saturation does to the softmax's derivatives (the panel
and its sub-views).

``panel``: :class:`ScalingLabPanel`; ``experiment``: the lab state and the background run;
``experiment_view``: its controls, table and plots; ``jacobian_view``: the receiving row's
softmax Jacobian (the kit's numbered-matrix canvas) and its saturation curve; ``plots``: the
lab's log2 plots. The view-model is :mod:`attnsim.viewmodels.scaling_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import lazy_names

IMPORT_STEPS = (
    "attnsim.engine.optimizers",
    "attnsim.engine.training",
    "attnsim.engine.experiments",
    "attnsim.engine.jacobian",
    "attnsim.viewmodels.scaling_lab",
    "attnsim.panels.scaling_lab.experiment",
    "attnsim.panels.kit.plot_labels",
    "attnsim.panels.scaling_lab.plots",
    "attnsim.panels.scaling_lab.experiment_view",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.viewmodels.heatmap",
    "attnsim.panels.kit.matrix_widget",
    "attnsim.panels.scaling_lab.jacobian_view",
    "attnsim.engine.settings",
    "attnsim.panels.kit.painted",
    "attnsim.panels.kit.tab_frame",
    "attnsim.panels.lab",
    "attnsim.panels.scaling_lab.panel",
)

_WHERE = {
    "DEFAULT_PARAMS": f"{__name__}.experiment",
    "EXPERIMENT": f"{__name__}.experiment",
    "ExperimentView": f"{__name__}.experiment_view",
    "FIRST_RUN_DELAY_MS": f"{__name__}.experiment",
    "GENERATORS": f"{__name__}.experiment",
    "JacobianMap": f"{__name__}.jacobian_view",
    "JacobianView": f"{__name__}.jacobian_view",
    "OPTIONAL_DKS": f"{__name__}.experiment",
    "ScalingLabPanel": f"{__name__}.panel",
    "ScalingLabState": f"{__name__}.experiment",
    "TABLE_ROWS": f"{__name__}.experiment_view",
    "params_key": f"{__name__}.experiment",
    "size_text": f"{__name__}.jacobian_view",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
