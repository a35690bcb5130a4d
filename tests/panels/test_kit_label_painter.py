"""The kit's placed-label painter: text in its rectangle, a leader only when pushed away."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter

from attnsim.panels.kit.label_painter import paint_placed_label
from attnsim.panels.kit.labels import Placement, leader_segment


def _draw(placement: Placement) -> np.ndarray:
    img = QImage(120, 80, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    font = QFont()
    font.setPixelSize(12)
    p.setFont(font)
    paint_placed_label(p, placement, "key", QColor("#D62728"), QFontMetricsF(font))
    p.end()
    ptr = img.constBits()
    rows = np.frombuffer(ptr, dtype=np.uint8).reshape(80, img.bytesPerLine())
    return rows[:, : 120 * 4].copy()  # the image, and its buffer, go when this returns


def _reddish(px: np.ndarray) -> np.ndarray:
    b, g, r = px[..., 0].astype(int), px[..., 1].astype(int), px[..., 2].astype(int)
    return (r - g > 60) & (r - b > 60)


def _greyish(px: np.ndarray) -> np.ndarray:
    b, g, r = px[..., 0].astype(int), px[..., 1].astype(int), px[..., 2].astype(int)
    return (abs(r - g) < 8) & (abs(r - b) < 8) & (r < 235) & (r > 120)


def test_text_lands_in_its_rectangle_in_its_colour(qapp) -> None:
    rect = (60.0, 40.0, 30.0, 16.0)
    px = _draw(Placement(rect, anchor=(60.0, 48.0), leader=False)).reshape(80, 120, 4)
    red = _reddish(px)
    ys, xs = np.nonzero(red)
    assert len(xs) > 10
    assert xs.min() >= 59 and xs.max() <= 92 and ys.min() >= 39 and ys.max() <= 57
    assert not _greyish(px).any()  # no leader when the label sits at its anchor


def test_a_pushed_label_gets_a_leader_to_its_anchor(qapp) -> None:
    pl = Placement((70.0, 50.0, 30.0, 16.0), anchor=(10.0, 10.0), leader=True)
    px = _draw(pl).reshape(80, 120, 4)
    (x0, y0), (x1, y1) = leader_segment(pl)
    grey = _greyish(px)
    assert grey.any()
    # the grey pixels lie along the leader segment, between the anchor and the label
    _, xs = np.nonzero(grey)
    assert xs.min() >= min(x0, x1) - 2 and xs.max() <= max(x0, x1) + 2
    mid = (round((y0 + y1) / 2), round((x0 + x1) / 2))
    assert grey[mid[0] - 1 : mid[0] + 2, mid[1] - 1 : mid[1] + 2].any()
