"""Scores, masked logits and weights as heatmaps (the panel and its sub-views).

``panel``: :class:`HeatmapPanel`; ``controls``: the view, mask and temperature controls;
``canvas``: the stages of the focused head (``layout`` places them, ``parts`` draws the colour
bars, entropy column and hover texts); ``head_grid``: one thumbnail per head; ``note``: the text
under the figure. The view-model is :mod:`attnsim.viewmodels.heatmap`; the cells are the kit's
numbered-matrix canvas.
"""

from __future__ import annotations

from .canvas import HeatmapCanvas
from .controls import MASKS, HeatmapControls
from .head_grid import HeadGrid, Thumb
from .panel import HeatmapPanel

__all__ = ["MASKS", "HeadGrid", "HeatmapCanvas", "HeatmapControls", "HeatmapPanel", "Thumb"]
