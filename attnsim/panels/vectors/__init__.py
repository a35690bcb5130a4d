"""The vector editor panel (see :mod:`.panel`) and the names its users import from here."""

from __future__ import annotations

from ..widgets import parse_number
from .editor import ADD_TIP, MAX_COLUMN_PX, VectorTable
from .panel import VectorEditorPanel
from .plane_controls import PlaneControls
from .plane_view import PlaneView

__all__ = [
    "ADD_TIP",
    "MAX_COLUMN_PX",
    "PlaneControls",
    "PlaneView",
    "VectorEditorPanel",
    "VectorTable",
    "parse_number",
]
