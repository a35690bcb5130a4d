"""The dockable panels. Each is one module; this list is the one place they are registered.

The main window, ``attnsim export`` and the tests build panels from this list, in this order.
"""

from __future__ import annotations

from importlib import import_module
from typing import NamedTuple

from .base import Panel


class PanelSpec(NamedTuple):
    """Where a panel lives, and its id and title, known before its module is imported.

    The main window names every dock at start-up but imports a panel's module only when the
    panel is first seen; a test checks that id and title match the class.
    """

    module: str
    cls: str
    panel_id: str
    title: str
    # The dock's name on its tab and title bar, when the title is too long for a tab among
    # eight others (the View menu, figures and exports keep the full title).
    tab: str = ""

    @property
    def dock_name(self) -> str:
        return self.tab or self.title

    def load(self) -> type[Panel]:
        return getattr(import_module(self.module), self.cls)


# Every panel, in registry order (the main window groups them; see app.DOCK_GROUPS).
PANEL_SPECS: list[PanelSpec] = [
    PanelSpec("attnsim.panels.readout", "ReadoutPanel", "readout", "Receiving token"),
    PanelSpec("attnsim.panels.vectors", "VectorEditorPanel", "vectors", "Vectors"),
    PanelSpec("attnsim.panels.projections", "ProjectionsPanel", "projections",
              "Projections Wq · Wk · Wv"),
    PanelSpec("attnsim.panels.explorer", "ExplorerPanel", "explorer", "Dot-product explorer",
              "Dot products"),
    PanelSpec("attnsim.panels.space3d", "Space3DPanel", "space3d", "Query/key space"),
    PanelSpec("attnsim.panels.stepper", "StepperPanel", "stepper", "Training stepper", "Training"),
    PanelSpec("attnsim.panels.scaling_lab", "ScalingLabPanel", "scaling_lab",
              "Scaling and temperature", "Scaling"),
    PanelSpec("attnsim.panels.nullspace_lab", "NullSpaceLabPanel", "nullspace_lab",
              "Query-map null space", "Null space"),
    PanelSpec("attnsim.panels.routing_lab", "RoutingLabPanel", "routing_lab", "Routing lab",
              "Routing"),
    PanelSpec("attnsim.panels.audit", "AuditPanel", "audit", "Live audit"),
    PanelSpec("attnsim.panels.heatmap", "HeatmapPanel", "heatmap", "Scores and weights"),
    PanelSpec("attnsim.panels.fields_lab", "FieldsLabPanel", "fields_lab", "Three fields"),
    PanelSpec("attnsim.panels.anatomy", "AnatomyPanel", "anatomy", "Multi-head anatomy"),
    PanelSpec("attnsim.panels.induction_lab", "InductionLabPanel", "induction_lab",
              "Induction heads", "Induction"),
    PanelSpec("attnsim.panels.position_lab", "PositionLabPanel", "position_lab",
              "Position and sharing", "Positions"),
    PanelSpec("attnsim.panels.kernel_lab", "KernelLabPanel", "kernel_lab", "Kernel stepper",
              "Kernels"),
    PanelSpec("attnsim.panels.precision_lab", "PrecisionLabPanel", "precision_lab",
              "Precision and masks", "Precision"),
    PanelSpec("attnsim.panels.linear_lab", "LinearLabPanel", "linear_lab", "Linear memory"),
    PanelSpec("attnsim.panels.context_lab", "ContextLabPanel", "context_lab",
              "Long-context stability", "Long context"),
    PanelSpec("attnsim.panels.real_model", "RealModelPanel", "real_model", "Real model"),
    PanelSpec("attnsim.panels.lessons", "LessonsPanel", "lessons", "Lessons"),
]  # fmt: skip

# Built and tested, not yet in the window (moving a spec up into PANEL_SPECS registers it).
PENDING_PANEL_SPECS: list[PanelSpec] = []


def panel_classes() -> list[type[Panel]]:
    """Import and return the registered panel classes."""
    return [spec.load() for spec in PANEL_SPECS]


__all__ = ["PANEL_SPECS", "PENDING_PANEL_SPECS", "Panel", "PanelSpec", "panel_classes"]
