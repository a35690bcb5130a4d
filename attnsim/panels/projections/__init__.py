"""The projections panel (see :mod:`.panel`); its grids are a sub-view with ``refresh(data)``,
their data made in :mod:`attnsim.viewmodels.projections`."""

from attnsim.panels.array_table import CHANGED
from attnsim.panels.widgets import parse_number
from attnsim.viewmodels.projections import changed_cells, preset_matrix

from .grid import MatrixGrid
from .panel import ProjectionsPanel

__all__ = ["CHANGED", "MatrixGrid", "ProjectionsPanel", "changed_cells", "parse_number",
           "preset_matrix"]  # fmt: skip
