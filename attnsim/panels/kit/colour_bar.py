"""The one colour bar: a gradient strip with a thin frame and value labels along it.

Panels decide what the labels say (limits, a centre, how many decimals fit); the bar decides
where they go: right of a vertical bar, centred on their value, or under a horizontal one, the
first left-aligned, the last right-aligned and any other centred on its value.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetrics,
    QFontMetricsF,
    QLinearGradient,
    QPainter,
    QPen,
)

__all__ = ["paint_colour_bar"]

LABEL_GAP = 2.0  # px between the bar and its labels
FRAME = QColor("#666666")
INK = QColor("#333333")


def paint_colour_bar(
    p: QPainter,
    bar: QRectF,
    colours: Sequence[QColor],
    *,
    vertical: bool = False,
    labels: Sequence[tuple[float, str]] = (),
    fm: QFontMetrics | QFontMetricsF | None = None,
    frame: QColor = FRAME,
    ink: QColor = INK,
    strip: bool = True,
) -> None:
    """Fill ``bar`` with ``colours`` spread evenly from the low end (left, or bottom when
    ``vertical``) to the high end, frame it, and write each ``(fraction, text)`` of ``labels``
    at that fraction of the way from the low end (``fm`` is the current font's metrics).

    ``strip=False`` writes only the labels (a caller that keeps the strip in a cached layer
    draws it once with ``labels=()``)."""
    if strip:
        _paint_strip(p, bar, colours, vertical=vertical, frame=frame)
    if not labels or fm is None:
        return
    _paint_labels(p, bar, labels, vertical=vertical, fm=fm, ink=ink)


def _paint_strip(
    p: QPainter, bar: QRectF, colours: Sequence[QColor], *, vertical: bool, frame: QColor
) -> None:
    if vertical:
        grad = QLinearGradient(QPointF(0, bar.bottom()), QPointF(0, bar.top()))
    else:
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
    last = max(len(colours) - 1, 1)
    for k, c in enumerate(colours):
        grad.setColorAt(k / last, c)
    p.fillRect(bar, QBrush(grad))
    p.setPen(QPen(frame, 0.8))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(bar)


def _paint_labels(
    p: QPainter,
    bar: QRectF,
    labels: Sequence[tuple[float, str]],
    *,
    vertical: bool,
    fm: QFontMetrics | QFontMetricsF,
    ink: QColor,
) -> None:
    p.setPen(ink)
    h = float(fm.height())
    if vertical:
        for frac, text in labels:
            y = bar.bottom() - frac * bar.height()
            width = float(fm.horizontalAdvance(text)) + 2
            at = QRectF(bar.right() + LABEL_GAP, y - h / 2, width, h)
            p.drawText(at, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        return
    row = QRectF(bar.x(), bar.bottom() + 1, bar.width(), h)
    for frac, text in labels:
        if frac <= 0:
            p.drawText(row, Qt.AlignmentFlag.AlignLeft, text)
        elif frac >= 1:
            p.drawText(row, Qt.AlignmentFlag.AlignRight, text)
        else:
            width = float(fm.horizontalAdvance(text)) + 2
            x = bar.x() + frac * bar.width() - width / 2
            p.drawText(QRectF(x, row.y(), width, h), Qt.AlignmentFlag.AlignHCenter, text)
