"""The dot-product explorer panel (:mod:`.panel`) and its sub-views: the vector choice row
(:mod:`.choice`), the plane (:mod:`.plane`), the readouts (:mod:`.readouts`), the length and
angle sliders (:mod:`.sliders`) and the softmax strip (:mod:`.softmax`).

The names below are imported when first asked for, so that the window can import the panel's
modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from attnsim.panels.lazy import lazy_names

IMPORT_STEPS = (
    "attnsim.viewmodels.explorer",
    "attnsim.panels.explorer.choice",
    "attnsim.panels.explorer.plane",
    "attnsim.panels.explorer.readouts",
    "attnsim.panels.explorer.sliders",
    "attnsim.panels.explorer.softmax",
    "attnsim.panels.explorer.panel",
)

_WHERE = {
    "A_DEFAULT": "attnsim.viewmodels.explorer",
    "B_DEFAULT": "attnsim.viewmodels.explorer",
    "SCORES_DEFAULT": "attnsim.viewmodels.explorer",
    "ExplorerState": "attnsim.viewmodels.explorer",
    "HOLD_LABELS": f"{__name__}.choice",
    "ChoiceRow": f"{__name__}.choice",
    "NOTES_MIN_WIDTH": f"{__name__}.panel",
    "ExplorerPanel": f"{__name__}.panel",
    "PICK_PX": f"{__name__}.plane",
    "ProductPlane": f"{__name__}.plane",
    "UNDEFINED": f"{__name__}.readouts",
    "ReadoutsView": f"{__name__}.readouts",
    "VectorSliders": f"{__name__}.sliders",
    "SoftmaxBars": f"{__name__}.softmax",
    "StripControls": f"{__name__}.softmax",
}

__all__, __getattr__ = lazy_names(__name__, _WHERE)
