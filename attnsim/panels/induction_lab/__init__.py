"""The induction-head lab (the panel and its sub-views).

``panel``: :class:`InductionLabPanel`; ``controls``: settings and the training buttons;
``curves``: loss and score curves; ``patterns``: the layer x head grid and the enlarged head;
``heads``: per-head scores, ablation toggles and the ablation table; ``circuits``: QK / OV
circuits, copying and composition scores. The view-model is :mod:`attnsim.viewmodels.induction_lab`,
the training session :mod:`attnsim.model.induction_session`.
"""

from __future__ import annotations

from .circuits import CircuitsView
from .controls import ControlsView
from .curves import CurvesView
from .heads import HeadsView
from .panel import ABLATION_JOB, InductionLabPanel
from .patterns import PatternGrid, PatternsView

__all__ = [
    "ABLATION_JOB",
    "CircuitsView",
    "ControlsView",
    "CurvesView",
    "HeadsView",
    "InductionLabPanel",
    "PatternGrid",
    "PatternsView",
]
