"""The stepper's arrow plane: a square with the stage's arrows, their names and a caption."""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen

from attnsim.panels.kit.label_painter import paint_placed_label
from attnsim.viewmodels.stepper import Arrow, StageContent

from ..kit.arrows import paint_arrow
from ..kit.labels import place_labels, segment_marks
from ..style import KEY, MUTED, OUTPUT, QUERY, TOKEN, VALUE
from .number_blocks import ABSENT_FG

ROLE_COLOUR = {
    "x": TOKEN,
    "absent": MUTED,
    "q": QUERY,
    "k": KEY,
    "v": VALUE,
    "mix": OUTPUT,
    "class": QColor("#E69F00"),
    "step": QColor("#D55E00"),
    "old": QColor("#BBBBBB"),
    "new": TOKEN,
}
ROLE_WIDTH = {"mix": 2.6, "class": 2.2, "step": 1.6, "old": 1.2}

ToPixels = Callable[[tuple[float, float]], QPointF]


def paint_plane(
    p: QPainter, rect: QRectF, content: StageContent, extent: float, font: QFont
) -> tuple[QRectF, list[tuple[float, float, float, float]]]:
    """Paint the plane in ``rect`` (a square on top, the caption below it) at half-width
    ``extent``; returns the square and the rectangles of the arrow names, as drawn."""
    fm = QFontMetrics(font)
    p.setFont(font)
    side = rect.width()
    box = QRectF(rect.left(), rect.top(), side, side)
    caption_h = rect.height() - side
    p.setPen(QPen(QColor("#BBBBBB"), 1))
    p.setBrush(QColor("#FCFCFC"))
    p.drawRect(box)
    e = extent
    cx, cy = box.center().x(), box.center().y()
    half = side / 2 - 14
    scale = half / e

    def to_px(v: tuple[float, float]) -> QPointF:
        return QPointF(cx + v[0] * scale, cy - v[1] * scale)

    # half-extent grid lines and axes through the origin
    p.setPen(QPen(QColor("#EEEEEE"), 1))
    for f in (-0.5, 0.5):
        p.drawLine(QPointF(cx + f * half, box.top()), QPointF(cx + f * half, box.bottom()))
        p.drawLine(QPointF(box.left(), cy - f * half), QPointF(box.right(), cy - f * half))
    p.setPen(QPen(QColor("#AAAAAA"), 1))
    p.drawLine(QPointF(box.left(), cy), QPointF(box.right(), cy))
    p.drawLine(QPointF(cx, box.top()), QPointF(cx, box.bottom()))
    p.setPen(QColor("#777777"))
    p.drawText(QPointF(cx + half - fm.horizontalAdvance(f"{e:g}") + 2, cy + fm.ascent() + 1),
               f"{e:g}")  # fmt: skip
    p.drawText(QPointF(cx + 3, cy - half + fm.ascent() - 2), f"{e:g}")
    for a in content.arrows:
        _paint_arrow(p, a, to_px)
    label_rects = _paint_labels(p, content.arrows, to_px, box, fm)
    # caption: what the plane is and what the colours mean
    p.setPen(QColor("#555555"))
    cap = QRectF(rect.left(), box.bottom() + 2, rect.width(), caption_h)
    p.drawText(cap, Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter,
               f"plane: {content.plane}. {content.legend}")  # fmt: skip
    return box, label_rects


def _paint_arrow(p: QPainter, a: Arrow, to_px: ToPixels) -> None:
    colour = ROLE_COLOUR.get(a.role, TOKEN)
    width = ROLE_WIDTH.get(a.role, 1.8)
    dashed = a.role == "absent"
    paint_arrow(p, to_px(a.tail), to_px(a.head), colour, width, dashed=dashed, max_fraction=0.5)


def _paint_labels(
    p: QPainter, arrows: list[Arrow], to_px: ToPixels, box: QRectF, fm: QFontMetrics
) -> list[tuple[float, float, float, float]]:
    """Every arrow's name beyond its tip, on the side it points to, placed together so
    that none covers another (q, k and v of one token often end close together)."""
    named = [a for a in arrows if a.label]
    anchors, sizes, dirs = [], [], []
    shafts = []
    for a in arrows:
        t, h = to_px(a.tail), to_px(a.head)
        shafts += segment_marks((t.x(), t.y()), (h.x(), h.y()))
    for a in named:
        t, h = to_px(a.tail), to_px(a.head)
        dx, dy = h.x() - t.x(), h.y() - t.y()
        n = math.hypot(dx, dy)
        anchors.append((h.x(), h.y()))
        sizes.append((float(fm.horizontalAdvance(a.label)), float(fm.height())))
        dirs.append((dx / n, dy / n) if n >= 0.5 else (0.7071, -0.7071))
    placed = place_labels(
        anchors, sizes, directions=dirs, gap=3.0, obstacles=shafts,
        bounds=(box.left() + 1, box.top() + 1, box.width() - 2, box.height() - 2),
    )  # fmt: skip
    for a, pl in zip(named, placed, strict=True):
        colour = ROLE_COLOUR.get(a.role, TOKEN)
        fg = colour.darker(115) if a.role not in ("absent", "old") else ABSENT_FG
        paint_placed_label(p, pl, a.label, fg, fm)
    return [pl.rect for pl in placed]
