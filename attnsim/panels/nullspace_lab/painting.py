"""What the lab's two painted views share: colours and how a paint starts."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.hidpi import points
from attnsim.panels.style import VALUE

NULL_COLOUR = QColor("#E69F00")  # orange: the null space and the line of equal queries
ROW_COLOUR = VALUE  # bluish green: the row space, what the query sees
INPUT_COLOUR = QColor("#333333")


def start_painting(widget: QWidget) -> tuple[QPainter, QFontMetrics]:
    """An antialiased painter on ``widget``, its background white, in the widget's font at
    8.5 pt; and that font's metrics."""
    p = QPainter(widget)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.fillRect(widget.rect(), QColor("white"))
    font = QFont(widget.font())
    font.setPointSizeF(points(8.5))
    p.setFont(font)
    return p, QFontMetrics(font)
