"""Multi-head anatomy: the panel, its block diagram and its counts calculator.

``panel`` holds :class:`AnatomyPanel`; ``diagram`` the painted diagram, ``painting`` how its
parts look, ``calculator`` the counts page. The layout itself is Qt-free, in
:mod:`attnsim.viewmodels.anatomy`; its names are re-exported here for the callers of the old module.
"""

from __future__ import annotations

from attnsim.viewmodels.anatomy import (
    CELL_H,
    CELL_W,
    best_fit,
    data_flow,
    diagram_groups,
    layout_diagram,
)

from .calculator import CountsCalculator
from .diagram import BlockDiagram
from .painting import cell_text
from .panel import AnatomyPanel

__all__ = [
    "CELL_H",
    "CELL_W",
    "AnatomyPanel",
    "BlockDiagram",
    "CountsCalculator",
    "best_fit",
    "cell_text",
    "data_flow",
    "diagram_groups",
    "layout_diagram",
]
