"""The kit's one layers x heads grid: a point maps to its (layer, head), the tool tip names the
head under the mouse, a click emits the cell, hovering shows a pointing hand and never reaches a
figure, ablated and selected heads are marked; and the three grids built on it (induction lab,
real model, heatmap) are that class."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QHelpEvent, QImage, QPainter
from PySide6.QtWidgets import QApplication, QToolTip

from attnsim.panels.kit.head_grid import ABLATED, LayerHeadGrid, lattice, weight_scale

LAYERS, HEADS, SIDE, PITCH = 2, 3, 30.0, 40.0


class Toy(LayerHeadGrid):
    """2 layers x 3 heads of 30 px squares, 10 px apart, from (10, 10); each cell one colour."""

    def __init__(self) -> None:
        super().__init__(minimum=(150, 100))
        self.painted: list[tuple[int, int]] = []

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        return lattice(LAYERS, HEADS, x0=10, y0=10, side=SIDE, pitch_x=PITCH, pitch_y=PITCH)

    def tip(self, key, point=None) -> str:
        return f"layer {key[0]}, head {key[1]}"

    def has_content(self) -> bool:
        return True

    def paint_cell(self, p: QPainter, key, rect: QRectF) -> None:
        self.painted.append(key)
        p.fillRect(rect, QColor("#dddddd"))


@pytest.fixture
def grid(qtbot):
    g = Toy()
    qtbot.addWidget(g)
    g.resize(200, 120)
    g.show()
    qtbot.waitExposed(g)
    return g


def centre(layer: int, head: int) -> QPoint:
    return QPoint(int(10 + head * PITCH + SIDE / 2), int(10 + layer * PITCH + SIDE / 2))


def test_a_point_maps_to_the_layer_and_head_of_its_cell(grid):
    for layer in range(LAYERS):
        for head in range(HEADS):
            c = centre(layer, head)
            assert grid.head_at(c.x(), c.y()) == (layer, head)
    assert grid.head_at(10 + 1 * PITCH + 1, 10 + 1 * PITCH + 1) == (1, 1)  # just inside
    assert grid.head_at(10 + SIDE + 5, 25) is None  # the gap between two heads
    assert grid.head_at(5, 5) is None  # the margin


def test_lattice_turned_keys_heads_down():
    cells = lattice(2, 3, x0=0, y0=0, side=10, pitch_x=12, pitch_y=12, heads_across=False)
    # rows are heads now: (layer 2, head 1) is in row 1, column 2
    assert cells[(2, 1)] == QRectF(24, 12, 10, 10) and len(cells) == 6


def test_tool_tip_names_the_head_under_the_mouse(grid):
    def tip_at(pos: QPoint) -> str:
        QToolTip.hideText()
        QApplication.sendEvent(grid, QHelpEvent(QEvent.Type.ToolTip, pos, grid.mapToGlobal(pos)))
        return QToolTip.text()

    assert tip_at(centre(1, 2)) == "layer 1, head 2"
    assert tip_at(centre(0, 0)) == "layer 0, head 0"
    grid.setToolTip("the whole grid")
    assert tip_at(QPoint(4, 4)) == "the whole grid"  # off the cells: the widget's own


def test_click_emits_the_cell_and_a_click_between_cells_nothing(qtbot, grid, record):
    seen = record(grid.head_clicked)
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=centre(1, 0))
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=centre(0, 2))
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=QPoint(int(10 + SIDE + 5), 25))
    qtbot.mouseClick(grid, Qt.MouseButton.RightButton, pos=centre(0, 1))
    assert seen == [(1, 0), (0, 2)]


def test_hover_shows_a_pointing_hand_over_a_head_and_repaints_nothing(qtbot, grid):
    grid.grab()
    paints = grid.picture.paints
    qtbot.mouseMove(grid, centre(1, 1))
    qtbot.waitUntil(lambda: grid.hovered == (1, 1), timeout=2000)
    assert grid.cursor().shape() == Qt.CursorShape.PointingHandCursor
    qtbot.mouseMove(grid, QPoint(int(10 + SIDE + 5), 25))  # between two heads
    qtbot.waitUntil(lambda: grid.hovered is None, timeout=2000)
    assert grid.cursor().shape() == Qt.CursorShape.ArrowCursor
    grid.grab()
    assert grid.picture.paints == paints  # the kept picture was copied, not painted again


def _image(grid) -> QImage:
    image = QImage(grid.size(), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    grid.render(image)
    return image


def test_a_figure_has_no_hover_frame(qtbot, grid, tmp_path):
    from attnsim.export import export_widget

    plain = QImage(str(export_widget(grid, tmp_path / "plain.png")))
    qtbot.mouseMove(grid, centre(0, 1))
    qtbot.waitUntil(lambda: grid.hovered == (0, 1), timeout=2000)
    hovered = QImage(str(export_widget(grid, tmp_path / "hovered.png")))
    assert not plain.isNull() and hovered == plain


def test_ablated_heads_are_crossed_and_the_selected_framed(grid):
    grid.set_marks((0, 0), [(1, 2)])
    grid.changed()
    image = _image(grid)
    r = grid.cell_rects()[(1, 2)]
    c = r.center().toPoint()
    assert QColor(image.pixel(c)) == ABLATED  # the cross goes through the centre
    other = grid.cell_rects()[(1, 1)].center().toPoint()
    assert QColor(image.pixel(other)) == QColor("#dddddd")
    sel = grid.cell_rects()[(0, 0)]
    edge = QPointF(sel.left() - grid.select_outset, sel.center().y()).toPoint()
    assert QColor(image.pixel(edge)) == grid.select_ink  # the frame around the selected head


def test_weight_scale_spans_zero_to_one():
    s = weight_scale()
    assert (s.lo, s.hi) == (0.0, 1.0)
    assert weight_scale() is s  # one scale for every grid and bar


def test_the_three_grids_are_the_kit_grid():
    from attnsim.panels.heatmap.head_grid import HeadGrid as HeatmapGrid
    from attnsim.panels.induction_lab.patterns import PatternGrid
    from attnsim.panels.real_model.grid import HeadGrid as RealGrid

    for cls in (HeatmapGrid, PatternGrid, RealGrid):
        assert issubclass(cls, LayerHeadGrid)
        # none keeps its own hit-test, tool tip or click handling
        for name in ("head_at", "event", "mousePressEvent"):
            assert name not in cls.__dict__, (cls.__name__, name)


def test_induction_grid_tip_and_click_through_the_kit(qtbot, record):
    from attnsim.engine.induction import init_params
    from attnsim.panels.induction_lab.patterns import PatternGrid, caption
    from attnsim.viewmodels.induction_lab import InductionLabState, lab_view

    state = InductionLabState(n_layers=2, n_heads=2, d_model=16, d_vocab=8, half_len=4)
    view = lab_view(init_params(state.config(), 0), state)
    g = PatternGrid()
    qtbot.addWidget(g)
    g.resize(300, 300)
    g.refresh(view, (0, 0))
    seen = record(g.head_clicked)
    key = (view.n_layers - 1, view.n_heads - 1)
    c = g.cell_rects()[key].center()
    assert g.head_at(c.x(), c.y()) == key
    assert g.tip(key) == caption(view, *key)
    qtbot.mouseClick(g, Qt.MouseButton.LeftButton, pos=c.toPoint())
    assert seen == [key]
    assert np.isfinite(view.patterns[key]).all()
