"""Drawing a placed label with QPainter: its leader line (when it sits away from its anchor)
and its text. The placement itself is :func:`attnsim.panels.kit.labels.place_labels`."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFontMetrics, QFontMetricsF, QPainter, QPen

from .labels import Placement, leader_segment

LEADER = QColor("#AAAAAA")


def paint_placed_label(
    p: QPainter,
    placement: Placement,
    text: str,
    colour: QColor,
    fm: QFontMetrics | QFontMetricsF,
) -> None:
    """Draw ``text`` in its placed rectangle, with a thin grey leader back to its anchor."""
    if placement.leader:
        (x0, y0), (x1, y1) = leader_segment(placement)
        p.setPen(QPen(LEADER, 0.8))
        p.drawLine(QPointF(x0, y0), QPointF(x1, y1))
    p.setPen(colour)
    x, y, _, _ = placement.rect
    p.drawText(QPointF(x, y + fm.ascent()), text)


__all__ = ["LEADER", "paint_placed_label"]
