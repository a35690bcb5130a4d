"""The 3-D query/key space panel, split into its parts.

``panel`` (the Panel: layout, workbench, gestures), ``controls`` (the rows above the view),
``canvas`` (the QPainter view and its camera), ``projection`` (the scene in screen pixels),
``painting`` (the layers, back to front) and ``texts`` (the header, tooltips and messages).
"""

from attnsim.viewmodels.space3d import DEFAULT_CAMERA, DRAGGABLE, PRESET_VIEWS, TOP_CAMERA

from .canvas import PICK_RADIUS, SpaceCanvas
from .controls import Space3DControls
from .painting import LEAK, SceneLayers
from .panel import DRAG_THRESHOLD, ORBIT_DEG_PER_PX, DragState, Space3DPanel
from .projection import COLORBAR_W, ScreenGeometry

__all__ = [
    "COLORBAR_W",
    "DEFAULT_CAMERA",
    "DRAGGABLE",
    "DRAG_THRESHOLD",
    "LEAK",
    "ORBIT_DEG_PER_PX",
    "PICK_RADIUS",
    "PRESET_VIEWS",
    "TOP_CAMERA",
    "DragState",
    "SceneLayers",
    "ScreenGeometry",
    "Space3DControls",
    "Space3DPanel",
    "SpaceCanvas",
]
