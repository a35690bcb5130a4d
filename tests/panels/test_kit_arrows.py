"""One arrow geometry (Qt-free) and the one painter that every QPainter panel uses."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPainter

from attnsim.engine.arrows import HEAD_FRACTION, arrow_head, arrow_heads
from attnsim.panels.kit.arrows import PlotArrowHead, head_polygon, paint_arrow


def test_heads_point_along_the_arrow_from_any_tail():
    ends, heads = arrow_heads([[10.0, 10.0], [0.0, 0.0]], [[10.0, 110.0], [-50.0, 0.0]], 10.0, 6.0)
    np.testing.assert_allclose(heads[0], [[10, 110], [7, 100], [13, 100]])
    np.testing.assert_allclose(ends[0], [10, 100])
    np.testing.assert_allclose(heads[1, 0], [-50, 0])
    np.testing.assert_allclose(heads[1, 1:, 0], [-40, -40])


def test_a_short_arrow_keeps_a_shaft_and_a_head_of_the_same_shape():
    ends, heads = arrow_heads((0.0, 0.0), [[5.0, 0.0]], 10.0, 6.0)
    length = 5.0 - heads[0, 1, 0]
    assert length == pytest.approx(HEAD_FRACTION * 5.0)
    assert heads[0, 1, 1] - heads[0, 2, 1] == pytest.approx(0.6 * length)
    np.testing.assert_allclose(ends[0], heads[0, 1:].mean(axis=0))


def test_shaft_inset_stops_the_shaft_under_the_head_and_zero_arrows_collapse():
    ends, heads = arrow_heads((1.0, 1.0), [[11.0, 1.0], [1.0, 1.0]], 2.0, shaft_inset=0.5)
    np.testing.assert_allclose(ends[0], [10.0, 1.0])
    np.testing.assert_allclose(heads[1], np.ones((3, 2)))
    np.testing.assert_allclose(ends[1], [1.0, 1.0])
    assert heads[0, 1, 1] - heads[0, 2, 1] == pytest.approx(0.55 * 2.0)


@pytest.mark.parametrize(
    ("tail", "tip", "head_len", "head_width", "inset", "frac"),
    [
        ((10.0, 10.0), (10.0, 110.0), 10.0, 6.0, 1.0, HEAD_FRACTION),
        ((3.0, -2.0), (-47.0, 31.0), 8.0, None, 0.7, HEAD_FRACTION),
        ((0.0, 0.0), (5.0, 0.0), 10.0, 6.0, 1.0, HEAD_FRACTION),
        ((1.0, 1.0), (1.0, 1.0), 2.0, None, 0.5, 1.0),
        ((0.0, 0.0), (0.3, -0.4), 6.0, 6.0, 1.0, 1.0),
    ],
)
def test_one_arrow_in_plain_floats_is_the_array_geometry(
    tail, tip, head_len, head_width, inset, frac
):
    # The painters' one-arrow path and the view-models' array path must draw the same shape.
    end, head = arrow_head(tail, tip, head_len, head_width, shaft_inset=inset, max_fraction=frac)
    ends, heads = arrow_heads(
        tail, [tip], head_len, head_width, shaft_inset=inset, max_fraction=frac
    )
    np.testing.assert_allclose(end, ends[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(head, heads[0], rtol=1e-12, atol=1e-12)


def _painted(draw) -> QImage:
    img = QImage(60, 60, QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    draw(p)
    p.end()
    return img


def test_painter_draws_the_shaft_and_head_and_leaves_the_pen_and_brush_alone():
    seen = {}

    def draw(p: QPainter) -> None:
        p.setBrush(QColor("#00ff00"))
        paint_arrow(p, QPointF(5, 30), QPointF(55, 30), QColor("#ff0000"), 2.0, head_px=10)
        seen["brush"] = p.brush().color().name()

    img = _painted(draw)
    assert seen["brush"] == "#00ff00"
    assert img.pixelColor(20, 30).red() > 200 and img.pixelColor(20, 30).green() < 80
    assert img.pixelColor(47, 32).green() < 80  # inside the head, off the shaft's line
    assert img.pixelColor(20, 40) == QColor("white")


def test_a_zero_length_arrow_is_a_dot_and_a_head_polygon_has_three_corners():
    img = _painted(lambda p: paint_arrow(p, QPointF(30, 30), QPointF(30, 30), QColor("red"), 1.0))
    assert img.pixelColor(30, 30).green() < 80
    assert head_polygon(np.zeros((3, 2))).size() == 3


def test_plot_head_points_along_the_data_direction_at_a_fixed_pixel_size(qtbot):
    head = PlotArrowHead(head_px=10.0)
    head.point((0.0, 0.0), (3.0, 0.0), QColor("red"))
    assert head.isVisible() and (head.pos().x(), head.pos().y()) == (3.0, 0.0)
    box = head.path().boundingRect()
    assert box.left() == pytest.approx(-10.0) and box.right() == pytest.approx(0.0)
    assert box.height() == pytest.approx(5.5)
    head.point((0.0, 0.0), (0.0, 2.0))  # up in data is up on screen: y flips
    box = head.path().boundingRect()
    assert box.top() == pytest.approx(0.0) and box.bottom() == pytest.approx(10.0)
    head.point((1.0, 1.0), (1.0, 1.0))
    assert not head.isVisible()
