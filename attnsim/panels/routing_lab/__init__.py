"""The routing lab panel (:mod:`.panel`) and its sub-views: the plots (:mod:`.plots`,
:mod:`.key_plane`), the change line, the controls, the four-causes table and the distractor
tab, each with ``refresh(data)`` taking a frozen dataclass of
:mod:`attnsim.viewmodels.routing_lab`.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import MATRIX_LAB_STEPS, lazy_names

IMPORT_STEPS = (
    "attnsim.engine.routing",
    "attnsim.viewmodels.routing_lab.lab",
    "attnsim.viewmodels.routing_lab.display",
    "attnsim.viewmodels.routing_lab",
    "attnsim.engine.settings",
    *MATRIX_LAB_STEPS,
    "attnsim.panels.routing_lab.parts",
    "attnsim.panels.routing_lab.causes",
    "attnsim.panels.routing_lab.change_line",
    "attnsim.panels.kit.log_slider",
    "attnsim.panels.routing_lab.controls",
    "attnsim.panels.routing_lab.distractors",
    "attnsim.panels.kit.arrows",
    "attnsim.panels.kit.plot_labels",
    "attnsim.panels.routing_lab.plot_layer",
    "attnsim.panels.routing_lab.titled_plot",
    "attnsim.panels.routing_lab.key_plane",
    "attnsim.panels.routing_lab.plots",
    "attnsim.panels.routing_lab.panel",
)

_WHERE = {
    "RoutingLabPanel": f"{__name__}.panel",
    "RoutingLabState": "attnsim.viewmodels.routing_lab",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
