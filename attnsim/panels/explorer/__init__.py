"""The dot-product explorer panel (:mod:`.panel`) and its sub-views: the vector choice row
(:mod:`.choice`), the plane (:mod:`.plane`), the readouts (:mod:`.readouts`), the length and
angle sliders (:mod:`.sliders`) and the softmax strip (:mod:`.softmax`)."""

from __future__ import annotations

from attnsim.viewmodels.explorer import A_DEFAULT, B_DEFAULT, SCORES_DEFAULT, ExplorerState

from .choice import HOLD_LABELS, ChoiceRow
from .panel import NOTES_MIN_WIDTH, ExplorerPanel
from .plane import PICK_PX, ProductPlane
from .readouts import UNDEFINED, ReadoutsView
from .sliders import VectorSliders
from .softmax import SoftmaxBars, StripControls

__all__ = [
    "A_DEFAULT",
    "B_DEFAULT",
    "HOLD_LABELS",
    "NOTES_MIN_WIDTH",
    "PICK_PX",
    "SCORES_DEFAULT",
    "UNDEFINED",
    "ChoiceRow",
    "ExplorerPanel",
    "ExplorerState",
    "ProductPlane",
    "ReadoutsView",
    "SoftmaxBars",
    "StripControls",
    "VectorSliders",
]
