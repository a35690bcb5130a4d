"""The induction-head lab (the panel and its sub-views).

``panel``: :class:`InductionLabPanel`; ``controls``: settings and the training buttons;
``curves``: loss and score curves; ``patterns``: the layer x head grid and the enlarged head;
``heads``: per-head scores, ablation toggles and the ablation table; ``circuits``: QK / OV
circuits, copying and composition scores. The view-model is :mod:`attnsim.viewmodels.induction_lab`,
the training session :mod:`attnsim.model.induction_session`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from .controls import ControlsView
from .heads import HeadsView
from .panel import ABLATION_JOB, InductionLabPanel
from .patterns import PatternGrid, PatternsView

if TYPE_CHECKING:
    from .circuits import CircuitsView
    from .curves import CurvesView

# The plots and the circuits are imported when the lab builds them, each in a turn of the event
# loop of its own when the window opens the lab (see InductionLabPanel): not all in the turn
# that imports the lab.
_LATER = {"CircuitsView": ".circuits", "CurvesView": ".curves"}


def __getattr__(name: str) -> object:
    if name in _LATER:
        return getattr(import_module(_LATER[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
