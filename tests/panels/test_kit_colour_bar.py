"""The one colour bar: gradient from the low end, a frame, labels where their values are."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter

from attnsim.panels.kit.colour_bar import paint_colour_bar

RED, BLUE = QColor("#ff0000"), QColor("#0000ff")


def _paint(**kw) -> QImage:
    img = QImage(120, 120, QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setFont(QFont())
    paint_colour_bar(p, fm=QFontMetricsF(p.font()), **kw)
    p.end()
    return img


def test_horizontal_bar_runs_low_to_high_left_to_right(qapp):
    img = _paint(bar=QRectF(10, 10, 100, 10), colours=[RED, BLUE])
    left, right = img.pixelColor(13, 15), img.pixelColor(107, 15)
    assert left.red() > 200 and left.blue() < 60
    assert right.blue() > 200 and right.red() < 60


def test_vertical_bar_runs_low_to_high_bottom_to_top_with_labels_beside_it(qapp):
    img = _paint(
        bar=QRectF(10, 10, 10, 100), colours=[RED, BLUE], vertical=True, labels=[(1.0, "1")]
    )
    top, bottom = img.pixelColor(15, 13), img.pixelColor(15, 107)
    assert top.blue() > 200 and bottom.red() > 200
    near_top = [img.pixelColor(x, y) for x in range(22, 40) for y in range(2, 20)]
    assert any(c.lightness() < 128 for c in near_top)  # the "1" is written beside the top
    near_bottom = [img.pixelColor(x, y) for x in range(22, 40) for y in range(95, 115)]
    assert all(c == QColor("white") for c in near_bottom)
