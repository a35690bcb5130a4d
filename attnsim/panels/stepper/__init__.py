"""The training stepper: the panel and its sub-views.

``panel`` holds :class:`StepperPanel`; ``controls`` the control bar and the divergence alert,
``stage_view`` the painted stage (its blocks in ``number_blocks``, its plane in
``stage_plane``), ``curves`` the training curves, ``dataset_editor`` the dataset page. What a
stage shows is worked out in :mod:`attnsim.viewmodels.stepper`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import lazy_names

IMPORT_STEPS = (
    "attnsim.engine.optimizers",
    "attnsim.engine.training",
    "attnsim.viewmodels.stepper.dataset",
    "attnsim.viewmodels.stepper.snapshot",
    "attnsim.viewmodels.stepper.plane",
    "attnsim.viewmodels.stepper.stages",
    "attnsim.viewmodels.stepper.status",
    "attnsim.viewmodels.stepper",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.panels.stepper.number_blocks",
    "attnsim.model.training_session",
    "attnsim.panels.stepper.controls",
    "attnsim.panels.stepper.curves",
    "attnsim.panels.stepper.dataset_editor",
    "attnsim.panels.kit.label_painter",
    "attnsim.panels.kit.arrows",
    "attnsim.panels.stepper.stage_plane",
    "attnsim.panels.stepper.stage_view",
    "attnsim.panels.stepper.panel",
)

_WHERE = {
    "StageView": f"{__name__}.stage_view",
    "StepperPanel": f"{__name__}.panel",
    "build_stage": f"{__name__}.panel",
    "fmt_num": f"{__name__}.number_blocks",
    "parse_num": f"{__name__}.number_blocks",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
