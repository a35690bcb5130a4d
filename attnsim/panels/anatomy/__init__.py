"""Multi-head anatomy: the panel, its block diagram and its counts calculator.

``panel`` holds :class:`AnatomyPanel`; ``diagram`` the painted diagram, ``painting`` how its
parts look, ``calculator`` the counts page. The layout itself is Qt-free, in
:mod:`attnsim.viewmodels.anatomy`; its names are re-exported here for the callers of the old module.

The names below are imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import lazy_names

IMPORT_STEPS = (
    "attnsim.viewmodels.anatomy",
    "attnsim.panels.kit.arrows",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.panels.anatomy.painting",
    "attnsim.panels.anatomy.calculator",
    "attnsim.viewmodels.heatmap",
    "attnsim.panels.kit.matrix_widget",
    "attnsim.panels.kit.kept_scroll",
    "attnsim.panels.anatomy.canvas",
    "attnsim.panels.anatomy.diagram",
    "attnsim.panels.anatomy.panel",
)

_WHERE = {
    "AnatomyPanel": f"{__name__}.panel",
    "BlockDiagram": f"{__name__}.diagram",
    "CELL_H": "attnsim.viewmodels.anatomy",
    "CELL_W": "attnsim.viewmodels.anatomy",
    "CountsCalculator": f"{__name__}.calculator",
    "best_fit": "attnsim.viewmodels.anatomy",
    "cell_text": f"{__name__}.painting",
    "data_flow": "attnsim.viewmodels.anatomy",
    "diagram_groups": "attnsim.viewmodels.anatomy",
    "layout_diagram": "attnsim.viewmodels.anatomy",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
