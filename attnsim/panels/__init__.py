"""The dockable panels. Each is one module; this list is the one place they are registered.

The main window, ``attnsim export`` and the tests build panels from this list, in this order.
"""

from __future__ import annotations

from importlib import import_module

from .base import Panel

# (module, class) of every panel, in the order their docks appear.
PANEL_SPECS: list[tuple[str, str]] = [
    ("attnsim.panels.readout", "ReadoutPanel"),
    ("attnsim.panels.vectors", "VectorEditorPanel"),
    ("attnsim.panels.projections", "ProjectionsPanel"),
    ("attnsim.panels.explorer", "ExplorerPanel"),
    ("attnsim.panels.space3d", "Space3DPanel"),
    ("attnsim.panels.stepper", "StepperPanel"),
    ("attnsim.panels.scaling_lab", "ScalingLabPanel"),
    ("attnsim.panels.nullspace_lab", "NullSpaceLabPanel"),
    ("attnsim.panels.routing_lab", "RoutingLabPanel"),
    ("attnsim.panels.audit", "AuditPanel"),
    ("attnsim.panels.heatmap", "HeatmapPanel"),
    ("attnsim.panels.fields_lab", "FieldsLabPanel"),
    ("attnsim.panels.anatomy", "AnatomyPanel"),
]


def panel_classes() -> list[type[Panel]]:
    """Import and return the registered panel classes."""
    return [getattr(import_module(mod), cls) for mod, cls in PANEL_SPECS]


__all__ = ["PANEL_SPECS", "Panel", "panel_classes"]
