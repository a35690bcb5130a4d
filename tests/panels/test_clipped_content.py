"""Content that must not be cut or run together at the size a panel gets in the main window at
1600x1000 (a right-hand dock: 922 x 429, a left-hand one: 666 x 429): the kernel stepper's
m / ℓ / accumulator table, the stepper's plane names at stage 3, the 3-D view's names in the
three-fields scenario, the linear memory's column names, the Projections' Wv grid, and the
Vectors table's header beside the plane's axis boxes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.engine.scenario import Scenario
from attnsim.panels.kernel_lab import KernelLabPanel
from attnsim.panels.kit.labels import rects_intersect
from attnsim.panels.linear_lab import LinearLabPanel
from attnsim.panels.projections import ProjectionsPanel
from attnsim.panels.space3d import Space3DPanel
from attnsim.panels.stepper import StepperPanel
from attnsim.panels.vectors import VectorEditorPanel

RIGHT = (922, 429)  # a panel in the right-hand docks of a 1600x1000 window
LEFT = (666, 429)  # and in the left-hand ones


def rect_in(widget: QWidget, ancestor: QWidget) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def settle(panel) -> None:
    QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


@pytest.mark.parametrize("scenario", ["river-bank", "tired-cat", "three-fields"])
def test_the_kernel_table_shows_every_row_of_its_block_without_scrolling(
    make_wb, show_panel, scenario
):
    panel = show_panel(KernelLabPanel(make_wb(scenario)), size=RIGHT)
    settle(panel)
    area = panel.tabs.currentWidget()
    view = area.viewport()
    assert area.widget().height() <= view.height()  # nothing below the fold
    cells = panel.table.cells
    assert len(panel.table.rows) == 1 + panel.data.block_q  # header + the block's rows
    shown = rect_in(cells, view)
    assert view.rect().contains(shown), (shown, view.rect())
    assert cells.height() >= cells.minimumSizeHint().height()  # every row gets its line


def test_stage_three_names_keep_a_gap_so_neighbours_do_not_read_as_one(make_wb, show_panel):
    panel = show_panel(StepperPanel(make_wb("river-bank")), size=RIGHT)
    panel.session.set_stage(3)
    settle(panel)
    panel.stage_view.repaint()
    QApplication.processEvents()
    rects = panel.stage_view.label_rects
    assert len(rects) == 9  # q, k and v of three tokens
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            (ax, ay, aw, ah), (bx, by, bw, bh) = rects[i], rects[j]
            gap_x = max(bx - (ax + aw), ax - (bx + bw))
            gap_y = max(by - (ay + ah), ay - (by + bh))
            # "q the" and "q bank" were drawn 0.3 px apart on one line: "q theq bank"
            assert gap_x >= 4.0 or gap_y >= 1.5, (i, j, rects[i], rects[j])


@pytest.mark.parametrize("others", [False, True])
def test_three_fields_3d_names_fit_their_boxes_and_never_meet(make_wb, show_panel, others):
    panel = show_panel(Space3DPanel(make_wb("three-fields")), size=LEFT)
    panel.controls.others_box.setChecked(others)
    settle(panel)
    canvas = panel.canvas
    g = canvas.geometry_now()
    sc = canvas.scene
    layers = canvas.layers
    shown = np.flatnonzero(g.label_visible)
    assert shown.size >= 8
    boxes = []
    for k in shown.tolist():
        (x, y), (w, h) = g.label_pos[k], g.label_size[k]
        font = layers.font_bold if sc.kind[k] == "query" else layers.font_label
        text_w = QFontMetricsF(font).horizontalAdvance(sc.label[k])
        # painted from x + 3: the text (the query's in bold) ends inside its box
        assert 3.0 + text_w <= w + 0.5, (sc.label[k], text_w, w)
        boxes.append((float(x), float(y), float(w), float(h)))
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not rects_intersect(boxes[i], boxes[j]), (boxes[i], boxes[j])


def test_linear_memory_columns_are_headed_by_their_axis_names(make_wb, show_panel):
    panel = show_panel(LinearLabPanel(make_wb("river-bank")), size=RIGHT)
    settle(panel)
    axes = ["finance", "water", "structure", "generic"]
    for canvas in (panel.memory_view.memory, panel.memory_view.term):
        assert canvas.col_labels == axes
        assert canvas.column_heads() == axes  # was "3" for structure


@pytest.mark.parametrize("scenario", ["river-bank", "tired-cat", "code-definition"])
def test_every_wv_cell_is_in_view_at_the_default_size(make_wb, show_panel, scenario):
    panel = show_panel(ProjectionsPanel(make_wb(scenario)), size=LEFT)
    settle(panel)
    grid = panel.blocks["Wv"].grid
    scroll = panel.scroll.viewport()
    visible = rect_in(scroll, panel)
    inside = rect_in(grid.viewport(), panel)
    model = grid.model()
    assert model.rowCount() >= 3
    for r in range(model.rowCount()):
        for c in range(model.columnCount()):
            cell = grid.visualRect(model.index(r, c))
            at = QRect(grid.viewport().mapTo(panel, cell.topLeft()), cell.size())
            assert visible.contains(at) and inside.contains(at), (scenario, r, c, at, visible)


def many_tokens(direct: bool) -> Scenario:
    rng = np.random.default_rng(4)
    n = 30
    names = tuple(f"a fairly long token name {i}" for i in range(n))
    if direct:
        return Scenario(
            name="many-direct", title="many", description="thirty tokens", tokens=names,
            mode="direct", query_tokens=names, Q=rng.normal(size=(n, 64)),
            K=rng.normal(size=(n, 64)), V=rng.normal(size=(n, 64)), mask="causal",
            receiving=n - 1,
        )  # fmt: skip
    from attnsim.resources import resolve_scenario

    base = resolve_scenario("river-bank")
    return base.replace(tokens=names, X=rng.uniform(-1, 1, (n, 4)), receiving=3)


@pytest.mark.parametrize("direct", [False, True])
def test_the_vectors_header_stays_clear_of_the_plane_boxes_with_many_tokens(
    make_wb, show_panel, direct
):
    panel = show_panel(VectorEditorPanel(make_wb(many_tokens(direct))), size=LEFT)
    settle(panel)
    header = rect_in(panel.table.horizontalHeader(), panel)
    assert header.height() > 0
    for combo in (panel.x_combo, panel.y_combo, panel.mode_combo, panel.receiving_combo):
        if combo.isVisible():
            assert not rect_in(combo, panel).intersects(header), (combo.toolTip(), header)
