"""The "Real model" panel (the panel and its sub-views).

``panel``: :class:`RealModelPanel`; ``controls``: model, text, Run / Cancel, metric, ablation,
probe and "Open head in workbench"; ``grid``: the layer x head grid of attention maps;
``tables``: heads ranked by metric, next-token predictions, the induction probe. The
view-model is :mod:`attnsim.viewmodels.real_model`.

The names below are imported when first asked for, so that the window can import the panel's
modules one a turn of the event loop (``IMPORT_STEPS``, in an order where each comes after
those it needs) instead of all in one long turn.
"""

from __future__ import annotations

from importlib import import_module

IMPORT_STEPS = (
    "attnsim.engine.models",
    "attnsim.engine.models.layers",
    "attnsim.engine.models.contributions",
    "attnsim.engine.models.loaded",
    "attnsim.engine.models.scores",
    "attnsim.viewmodels.real_model",
    "attnsim.engine.settings",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.viewmodels.heatmap",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.panels.kit.matrix_widget",
    "attnsim.panels.kit.painted",
    "attnsim.panels.kit.tab_frame",
    "attnsim.panels.lab",
    "attnsim.panels.kit.head_grid",
    "attnsim.panels.real_model.token_map",
    "attnsim.panels.real_model.controls",
    "attnsim.panels.real_model.grid",
    "attnsim.panels.real_model.tables",
    "difflib",
    "attnsim.engine.models.compare",
    "attnsim.engine.models.flow",
    "attnsim.engine.models.interventions",
    "attnsim.engine.models.lens",
    "attnsim.viewmodels.real_heads",
    "attnsim.panels.real_model.pair_grid",
    "attnsim.panels.real_model.run_part",
    "attnsim.panels.real_model.patch_view",
    "attnsim.panels.real_model.lens_view",
    "attnsim.panels.real_model.pair_view",
    "attnsim.panels.real_model.two_texts",
    "attnsim.panels.real_model.panel",
)

_WHERE = {
    "PROBE_JOB": "panel",
    "RUN_JOB": "panel",
    "RealModelPanel": "panel",
    "ControlsView": "controls",
    "HeadGrid": "grid",
    "HeadsTable": "tables",
    "PredictionsView": "tables",
    "ProbeView": "tables",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name in _WHERE:
        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
