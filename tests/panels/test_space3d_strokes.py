"""The 3-D view's translucent lines drawn through a kept picture: the very pixels of drawing them
directly, on any background, at any device pixel ratio, and on the whole canvas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from attnsim.panels.kit.hidpi import layer_scale
from attnsim.panels.space3d import Space3DPanel, strokes
from attnsim.panels.space3d.strokes import TranslucentLines

SHAFT = QPen(QColor(31, 119, 180, 170), 3.4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap)
LEADER = QPen(QColor(150, 150, 150, 170), 0.8)
FAINT = QPen(QColor(200, 30, 30, 95), 2.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap)


def _pixels(image: QImage) -> np.ndarray:
    raw = np.frombuffer(
        image.constBits(), dtype=np.uint8, count=image.bytesPerLine() * image.height()
    )
    return raw.reshape(image.height(), -1)[:, : image.width() * 4].copy()


def _background(rng: np.random.Generator, ppx: float, fmt: QImage.Format) -> QImage:
    image = QImage(round(300 * ppx), round(200 * ppx), fmt)
    image.setDevicePixelRatio(ppx)
    image.fill(QColor("white"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for _ in range(15):  # coloured lines under the translucent one
        p.setPen(QPen(QColor(*rng.integers(0, 255, 3).tolist()), float(rng.uniform(1, 5))))
        p.drawLine(QPointF(*rng.uniform(0, 200, 2)), QPointF(*rng.uniform(0, 200, 2)))
    p.end()
    return image


@pytest.mark.parametrize("ppx", [1.0, 2.0, 1.5])
@pytest.mark.parametrize(
    "fmt", [QImage.Format.Format_RGB32, QImage.Format.Format_ARGB32_Premultiplied]
)
def test_a_line_through_the_picture_is_the_line_drawn_directly(qapp, ppx, fmt):
    rng = np.random.default_rng(7)
    lines = TranslucentLines()
    for trial in range(24):
        pen = (SHAFT, LEADER, FAINT)[trial % 3]
        # long enough to go through the picture: steeper than 45 degrees, over 50 rows
        a = QPointF(rng.uniform(60, 240), rng.uniform(10, 60))
        b = QPointF(a.x() + rng.uniform(-50, 50), a.y() + rng.uniform(50, 130))
        ground = _background(rng, ppx, fmt)
        shots = []
        for through in (False, True):
            image = ground.copy()
            p = QPainter(image)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            if through:
                assert layer_scale(p) == ppx
                lines.draw(p, pen, a, b, layer_scale(p))
            else:
                p.setPen(pen)
                p.drawLine(a, b)
            p.end()
            shots.append(_pixels(image))
        assert (shots[0] != _pixels(ground)).any()  # the line was drawn
        np.testing.assert_array_equal(shots[1], shots[0])
    assert lines.through_picture == 24


def test_opaque_short_or_vector_lines_are_drawn_directly(qapp):
    lines = TranslucentLines()
    image = QImage(100, 100, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    p = QPainter(image)
    far, near = QPointF(90, 80), QPointF(20, 25)
    lines.draw(p, QPen(QColor(31, 119, 180), 3.0), QPointF(10, 10), far, 1.0)  # opaque
    lines.draw(p, SHAFT, QPointF(10, 10), near, 1.0)  # 10 px: too short for the threads
    lines.draw(p, LEADER, QPointF(10, 10), QPointF(90, 40), 1.0)  # a hairline along the rows
    lines.draw(p, LEADER, QPointF(10, 10), QPointF(30, 50), 1.0)  # steep but 40 rows
    lines.draw(p, SHAFT, QPointF(10, 10), far, None)  # not plain pixels (SVG, PDF)
    assert lines.through_picture == 0
    lines.draw(p, SHAFT, QPointF(10, 10), far, 1.0)
    lines.draw(p, LEADER, QPointF(10, 10), QPointF(30, 90), 1.0)  # steep, 80 rows
    p.end()
    assert lines.through_picture == 2


def test_the_canvas_paints_the_same_through_the_picture(make_wb, show_panel, monkeypatch):
    panel = show_panel(Space3DPanel(make_wb("river-bank")))
    canvas = panel.canvas
    shots = []
    for below, rows in ((math.inf, math.inf), (strokes.DIRECT_BELOW, strokes.HAIRLINE_ROWS)):
        monkeypatch.setattr(strokes, "DIRECT_BELOW", below)
        monkeypatch.setattr(strokes, "HAIRLINE_ROWS", rows)
        image = QImage(canvas.width(), canvas.height(), QImage.Format.Format_RGB32)
        image.fill(0)
        p = QPainter(image)
        canvas.paint(p)
        p.end()
        shots.append(_pixels(image))
    assert canvas.layers.lines.through_picture >= 1  # the receiving query's see-through shaft
    np.testing.assert_array_equal(shots[1], shots[0])
