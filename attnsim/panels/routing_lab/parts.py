"""Small widgets and text helpers the routing lab's sub-views share."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QWidget


def rich_label(text: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setTextFormat(Qt.TextFormat.RichText)
    return lab


def scrolling(page: QWidget) -> QScrollArea:
    """``page`` in a frameless vertical scroll area: in a short dock a tab's controls scroll
    instead of being squeezed on top of each other."""
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def esc(s: str) -> str:
    """``s`` safe inside rich text."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
