"""The "Real model" panel (the panel and its sub-views).

``panel``: :class:`RealModelPanel`; ``controls``: model, text, Run / Cancel, metric, ablation,
probe and "Open head in workbench"; ``grid``: the layer x head grid of attention maps;
``tables``: heads ranked by metric, next-token predictions, the induction probe. The
view-model is :mod:`attnsim.viewmodels.real_model`.
"""

from __future__ import annotations

from .controls import ControlsView
from .grid import HeadGrid
from .panel import PROBE_JOB, RUN_JOB, RealModelPanel
from .tables import HeadsTable, PredictionsView, ProbeView

__all__ = [
    "PROBE_JOB",
    "RUN_JOB",
    "ControlsView",
    "HeadGrid",
    "HeadsTable",
    "PredictionsView",
    "ProbeView",
    "RealModelPanel",
]
