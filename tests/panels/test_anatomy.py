"""Multi-head anatomy: the block's matrices with the workbench's values, and the counts."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from attnsim.engine.attention import multi_head_counts
from attnsim.panels.anatomy import (
    CELL_H,
    CELL_W,
    AnatomyPanel,
    best_fit,
    cell_text,
    data_flow,
    diagram_groups,
    layout_diagram,
)
from attnsim.resources import preset_names
from attnsim.viewmodels.anatomy import count_lines


@pytest.fixture
def anatomy(make_wb, show_panel):
    def make(name="two-heads", size=(700, 450)):
        wb = make_wb(name)
        return wb, show_panel(AnatomyPanel(wb), size=size)

    return make


def widget_point(diagram, x: float, y: float) -> QPoint:
    """A diagram design coordinate as a widget pixel."""
    return QPoint(round(4 + x * diagram.scale), round(4 + y * diagram.scale))


def test_two_heads_shows_the_blocks_matrices_and_shapes(anatomy):
    wb, panel = anatomy()
    block = wb.result.block
    by = {m.key: m for m in panel.diagram.mats}
    np.testing.assert_array_equal(by["concat"].value, block.concat)
    np.testing.assert_array_equal(by["Y"].value, block.Y)
    np.testing.assert_array_equal(by["delta"].value, block.delta)
    np.testing.assert_array_equal(by["Wo"].value, wb.scenario.Wo)
    np.testing.assert_array_equal(by["A1"].value, wb.result.heads[1].weights)
    assert {k: by[k].shape for k in ("X", "Wq0", "Q0", "A0", "concat", "Wo", "Y")} == {
        "X": (3, 4), "Wq0": (4, 2), "Q0": (3, 2), "A0": (3, 3), "concat": (3, 4),
        "Wo": (4, 4), "Y": (3, 4),
    }  # fmt: skip
    # The diagram draws the focused head (head 1) and the block matrices, nothing else.
    assert set(panel.diagram.dia.boxes) == {
        "X", "Wq0", "Wk0", "Wv0", "Q0", "K0", "V0", "S0", "A0", "H0", "concat", "Wo",
        "delta", "Y",
    }  # fmt: skip
    assert cell_text(float(block.Y[2, 1])) == "1.09"
    assert panel.diagram.scale >= 0.9  # readable at 700 x 450
    # Learned amber / computed blue.
    assert by["Wq1"].kind == by["Wo"].kind == "learned"
    assert by["Q1"].kind == by["Y"].kind == "computed"


def test_the_counts_match_the_reference_table(anatomy):
    _, panel = anatomy()
    totals = multi_head_counts(3, 2, 4, 2, 2)["totals"]
    assert panel.counts() == totals
    caption, note = panel.caption()
    assert note == ""
    text = " ".join(caption)
    assert "6 learned Q/K/V projection matrices" in text
    assert "6 computed Q/K/V matrices" in text
    assert "18 computed vectors: 6 queries + 6 keys + 6 values" in text
    assert f"{totals['parameters']:,} learned parameters" in text


@pytest.mark.parametrize(
    "n,h,d,d_k,d_v,blocks",
    [(3, 2, 4, 2, 2, 1), (3, 2, 4, 2, 2, 4), (10, 8, 512, 64, 64, 6), (1, 1, 1, 1, 1, 1),
     (7, 3, 12, 5, 4, 2)],
)  # fmt: skip
def test_the_calculator_agrees_with_multi_head_counts(anatomy, n, h, d, d_k, d_v, blocks):
    _, panel = anatomy()
    calc = panel.calculator
    panel.show_view(1)
    assert panel.stack.currentIndex() == 1
    for key, val in zip(("n", "h", "d", "d_k", "d_v", "blocks"), (n, h, d, d_k, d_v, blocks),
                        strict=True):  # fmt: skip
        calc.spins[key].setValue(val)
    expected = multi_head_counts(n, h, d, d_k, d_v, blocks=blocks)
    rows = expected["rows"]
    assert calc.table.rowCount() == len(rows)
    for r, (name, kind, cnt, shape) in enumerate(rows):
        assert calc.table.item(r, 0).text() == name
        assert calc.table.item(r, 1).text() == kind
        assert calc.table.item(r, 2).text() == str(cnt)
        assert calc.table.item(r, 3).text() == f"{cnt * blocks:,}"
        assert calc.table.item(r, 4).text() == shape
    summary = calc.summary.text()
    for line in count_lines(expected["totals"], h, blocks):
        assert line in summary
    t = expected["totals"]
    assert t["qkv_projection_matrices"] == 3 * blocks * h and t["output_projections"] == blocks
    assert t["computed_vectors"] == 3 * n * h * blocks


def test_calculator_starts_from_the_scenario(anatomy):
    wb, panel = anatomy("tired-cat")
    assert panel.calculator.values() == {"n": 5, "h": 1, "d": 5, "d_k": 5, "d_v": 5,
                                         "blocks": 1}  # fmt: skip
    assert panel.counts() == multi_head_counts(5, 1, 5, 5, 5)["totals"]
    assert wb.undo_stack.count() == 0


def test_head_chips_and_rows_pick_the_focus(anatomy):
    wb, panel = anatomy()
    seen = []
    wb.selection_changed.connect(lambda: seen.append(1))
    dia = panel.diagram
    _, x, y, w, h = dia.dia.chips[1]
    QTest.mouseClick(dia, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     widget_point(dia, x + w / 2, y + h / 2))  # fmt: skip
    assert wb.focused_head == 1 and len(seen) == 1
    panel.flush()
    assert panel.head_combo.currentIndex() == 1
    assert "Wq1" in dia.dia.boxes and "Wq0" not in dia.dia.boxes
    by = {m.key: m for m in dia.mats}
    np.testing.assert_array_equal(by["H1"].value, wb.result.heads[1].output)
    # Click the row of "the" in X: it becomes the receiving token.
    box = dia.dia.boxes["X"]
    row = box.rows.index(0)
    QTest.mouseClick(dia, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     widget_point(dia, box.grid_x + CELL_W / 2,
                                  box.grid_y + (row + 0.5) * CELL_H))  # fmt: skip
    assert wb.receiving == 0
    panel.flush()
    assert panel.token_combo.currentIndex() == 0
    panel.head_combo.setCurrentIndex(0)
    assert wb.focused_head == 0
    assert wb.undo_stack.count() == 0  # selection is not an edit


def test_the_diagram_follows_edits(anatomy):
    from attnsim.engine import edits

    wb, panel = anatomy()
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.3, 0.0, 0.0, 1.0]), "move the")
    panel.flush()
    by = {m.key: m for m in panel.diagram.mats}
    np.testing.assert_array_equal(by["Y"].value, wb.result.block.Y)
    assert by["X"].value[0, 0] == 0.3


def test_direct_scenarios_explain_there_are_no_projections(anatomy):
    _, panel = anatomy("three-fields")
    _, note = panel.caption()
    assert "no projections" in note and "no Wq, Wk, Wv" in note
    assert panel.counts()["learned_matrices"] == 0
    assert set(panel.diagram.dia.boxes) == {"Q", "K", "V", "S", "A", "H"}
    assert not panel.head_combo.isEnabled()
    assert panel.diagram.dia.boxes["K"].rows == [0, 1, 2, 3, 4, 5, None, 11]


def test_a_single_head_without_wo_says_so(anatomy):
    _, panel = anatomy("code-definition")
    _, note = panel.caption()
    assert "No output projection" in note
    assert "concat" not in panel.diagram.dia.boxes


@pytest.mark.parametrize("name", preset_names())
def test_layout_boxes_never_overlap(anatomy, name):
    _, panel = anatomy(name)
    dia = panel.diagram
    boxes = list(dia.dia.boxes.values())
    for i, a in enumerate(boxes):
        assert a.x >= 0 and a.x + a.w <= dia.dia.width + 1e-6
        for b in boxes[i + 1 :]:
            apart = (a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y
                     or b.y + b.h <= a.y)  # fmt: skip
            assert apart, (a.key, b.key)
    assert 0.5 <= dia.scale <= 1.25


def test_layout_wraps_to_the_width():
    from attnsim.engine.scenario import compute
    from attnsim.resources import resolve_scenario
    from attnsim.viewmodels.anatomy import block_matrices

    sc = resolve_scenario("tired-cat")
    mats = block_matrices(sc, compute(sc))
    assert diagram_groups(mats, 0)[1] == ["Wq0", "Q0", "Wk0", "K0", "Wv0", "V0"]

    def width(text, bold):
        return 7.0 * len(text)

    wide = layout_diagram(mats, focused=0, receiving=4, max_width=5000, text_width=width)
    narrow = layout_diagram(mats, focused=0, receiving=4, max_width=600, text_width=width)
    assert wide.boxes["V0"].y == wide.boxes["Wq0"].y  # one line when there is room
    assert narrow.boxes["V0"].y > narrow.boxes["Wq0"].y  # wrapped
    assert narrow.width <= 600 and narrow.height > wide.height
    first_on_line = min(
        (b for b in narrow.boxes.values() if b.y == narrow.boxes["V0"].y), key=lambda b: b.x
    )
    assert first_on_line.label_w > 0  # a wrapped line starts with row labels
    scale, dia = best_fit(
        lambda w: layout_diagram(mats, focused=0, receiving=4, max_width=w, text_width=width),
        700,
        2000,
    )
    assert scale == pytest.approx(min(1.25, 700 / dia.width))


@pytest.mark.parametrize("name", ["two-heads", "three-fields"])
def test_exports_png_and_svg_with_text(anatomy, export_png_svg, name):
    _, panel = anatomy(name)
    text = export_png_svg(panel)
    assert "<text" in text and "learned parameter" in text


TRUE_FLOW = {
    ("X", "Q0"), ("Wq0", "Q0"), ("X", "K0"), ("Wk0", "K0"), ("X", "V0"), ("Wv0", "V0"),
    ("Q0", "S0"), ("K0", "S0"), ("S0", "A0"), ("A0", "H0"), ("V0", "H0"),
    ("H0", "concat"), ("concat", "delta"), ("Wo", "delta"), ("delta", "Y"), ("X", "Y"),
}  # fmt: skip


@pytest.mark.parametrize("size", [(700, 450), (420, 700), (1400, 500)])
def test_arrows_follow_the_real_data_flow(anatomy, size):
    _, panel = anatomy("two-heads", size=size)
    dia = panel.diagram.dia
    drawn = {(a.src, a.dst) for a in dia.arrows}
    assert drawn == TRUE_FLOW
    for bad in [("Wq0", "Wk0"), ("Wk0", "Wv0"), ("Wv0", "Q0"), ("Q0", "K0")]:
        assert bad not in drawn
    for a in dia.arrows:
        src, dst = dia.boxes[a.src], dia.boxes[a.dst]
        (x0, y0), (x1, y1) = a.points[0], a.points[-1]
        if a.kind == "next":  # between neighbours: from the source's right to the target's left
            assert src.x + src.w <= x0 < x1 <= dst.x and y0 == y1
        elif a.kind == "down":  # leaves the source's bottom, enters the target's top
            assert y0 == pytest.approx(src.y + src.h) and y1 < dst.y and x1 > dst.x
            assert src.x <= x0 <= src.x + src.w and x1 <= dst.x + dst.w
        else:
            assert a.kind == "stub" and a.label and y1 < dst.y
    # The second head: its own matrices, the same shape of flow.
    panel.pick_head(1)
    panel.flush()
    drawn = {(a.src, a.dst) for a in panel.diagram.dia.arrows}
    assert drawn == {(f.replace("0", "1"), t.replace("0", "1")) for f, t in TRUE_FLOW}


def test_direct_scenario_flow(anatomy):
    _, panel = anatomy("three-fields")
    edges = data_flow(panel.matrices(), 0)
    assert set(edges) == {("Q", "S"), ("K", "S"), ("S", "A"), ("A", "H"), ("V", "H")}
    assert {(a.src, a.dst) for a in panel.diagram.dia.arrows} == set(edges)


# ---- the sub-views on their own: they report gestures and never touch a workbench ----------
def test_the_diagram_reports_clicks_as_signals_only(make_wb, qtbot):
    from PySide6.QtCore import QSize

    from attnsim.panels.anatomy import BlockDiagram
    from attnsim.viewmodels.anatomy import DiagramData, block_matrices, chip_labels

    wb = make_wb("two-heads")
    diagram = BlockDiagram()
    qtbot.addWidget(diagram)
    diagram.resize(700, 450)
    diagram.set_avail(QSize(700, 450))
    chips = tuple(chip_labels(wb.scenario))
    diagram.refresh(DiagramData(mats=tuple(block_matrices(wb.scenario, wb.result)),
                                chip_labels=chips, receiving_label="the"))  # fmt: skip
    diagram.show()
    qtbot.waitExposed(diagram)
    heads, tokens = [], []
    before = (wb.focused_head, wb.receiving)
    diagram.head_picked.connect(heads.append)
    diagram.token_picked.connect(tokens.append)
    _, x, y, w, h = diagram.dia.chips[1]
    QTest.mouseClick(diagram, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     widget_point(diagram, x + w / 2, y + h / 2))  # fmt: skip
    box = diagram.dia.boxes["X"]
    QTest.mouseClick(diagram, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     widget_point(diagram, box.grid_x + CELL_W / 2,
                                  box.grid_y + 2.5 * CELL_H))  # fmt: skip
    box = diagram.dia.boxes["Wq0"]  # rows of features, not tokens: no pick
    QTest.mouseClick(diagram, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     widget_point(diagram, box.grid_x + CELL_W / 2,
                                  box.grid_y + CELL_H / 2))  # fmt: skip
    assert heads == [1] and tokens == [2]
    assert (wb.focused_head, wb.receiving) == before  # the diagram changed nothing itself
    assert wb.undo_stack.count() == 0


def test_use_this_scenario_asks_the_panel_which_refuses_a_direct_one(anatomy):
    _, panel = anatomy("routing-lab")
    calc = panel.calculator
    before = calc.values()
    asked = []
    calc.scenario_requested.connect(lambda: asked.append(1))
    panel.show_view(1)
    QTest.mouseClick(calc.from_scenario, Qt.MouseButton.LeftButton)
    assert asked == [1]
    assert calc.values() == before
    assert "direct scenario has no projections" in panel.last_refusal


def _picture(panel) -> bytes:
    from PySide6.QtGui import QColor, QImage

    image = QImage(panel.size(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    panel.render(image)
    return bytes(image.constBits())


def test_kept_cells_paint_what_a_fresh_diagram_paints(anatomy):
    # Boxes are copied, and rows repainted into their pictures, only where texts changed: after
    # edits of one token, a change of the receiving token and of the head, the long-lived panel
    # shows what a new one shows, pixel for pixel.
    from attnsim.engine import edits

    wb, panel = anatomy("tired-cat")
    for step in range(6):
        if step == 4:
            wb.set_receiving(1)
        elif step == 5:
            wb.set_focused_head(len(wb.scenario.heads) - 1)
        else:
            x = np.array(wb.scenario.X[2])
            x[0] += 0.3 * (step + 1)
            wb.edit(edits.set_vector(wb.scenario, "x", 2, x), "move")
        panel.flush()
        shown = _picture(panel)
        wb2, fresh = anatomy("tired-cat")
        wb2.edit(edits.set_vector(wb2.scenario, "x", 2, wb.scenario.X[2]), "same")
        wb2.set_receiving(wb.receiving)
        wb2.set_focused_head(wb.focused_head)
        fresh.flush()
        assert _picture(fresh) == shown, f"step {step}"
    assert panel.diagram.canvas.rows_painted > 0  # the row-by-row path was taken


def _big_scenario(n: int = 64, h: int = 8, d: int = 64, d_k: int = 8):
    from attnsim.engine.scenario import Head, Scenario

    rng = np.random.default_rng(0)
    return Scenario(
        name="big-anatomy",
        tokens=tuple(f"t{i}" for i in range(n)),
        X=rng.standard_normal((n, d)),
        heads=tuple(Head(*(rng.standard_normal((d, d_k)) for _ in range(3))) for _ in range(h)),
        Wo=rng.standard_normal((h * d_k, d)) / 8,
    )


@pytest.mark.parametrize("size", [(700, 450), (613, 377), (1234, 987)])
def test_the_kept_picture_is_what_painting_directly_paints(make_wb, show_panel, size):
    # The diagram keeps its picture and paints again only the rows whose numbers changed (and
    # the boxes that come into view): after edits of one token, a new receiving token, a new
    # focused head and a scroll, it shows what painting the whole diagram directly shows, pixel
    # for pixel, at scales that put the rows on whole pixels and at ones that do not.
    from attnsim.engine import edits

    wb = make_wb(_big_scenario())
    panel = show_panel(AnatomyPanel(wb), size=size)
    canvas = panel.diagram.canvas
    bar = panel.scroll.verticalScrollBar()
    for step in range(8):
        if step == 4:
            wb.set_receiving(5)
        elif step == 5:
            wb.set_focused_head(3)
        elif step == 6:
            bar.setValue(bar.maximum() // 2)
        x = np.array(wb.scenario.X[step % 3])
        x[step] += 0.25 * (step + 1)
        wb.edit(edits.set_vector(wb.scenario, "x", step % 3, x), "move")
        panel.flush()
        kept = _picture(panel)
        canvas.enabled = False
        direct = _picture(panel)
        canvas.enabled = True
        assert kept == direct, f"step {step}"
    assert canvas.image is not None
    assert canvas.rows_painted > 0


def test_boxes_out_of_sight_are_painted_when_they_come_into_view(make_wb, show_panel):
    # An edit changes S, A and H below the fold: they are not painted until scrolled to.
    from attnsim.engine import edits

    wb = make_wb(_big_scenario())
    panel = show_panel(AnatomyPanel(wb), size=(700, 450))
    canvas = panel.diagram.canvas
    _picture(panel)
    x = np.array(wb.scenario.X[0])
    x[0] += 1.0
    wb.edit(edits.set_vector(wb.scenario, "x", 0, x), "move")
    panel.flush()
    before = canvas.areas_painted
    _picture(panel)
    assert canvas.areas_painted == before  # only rows painted again: nothing new in view
    bar = panel.scroll.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())
    kept = _picture(panel)
    assert canvas.areas_painted == before + 1
    canvas.enabled = False
    assert _picture(panel) == kept


@pytest.mark.parametrize("offset", [(0, 0), (7, 0), (6, 40), (13, 13)])
def test_the_kept_picture_is_exact_wherever_the_diagram_sits_on_its_device(anatomy, offset):
    # A glyph's place within a pixel follows the device coordinates of its origin: at a scale
    # of 1.15 (tired-cat at 1100 x 900) a picture painted at the widget's own origin put some
    # numbers a sub-pixel step aside once the diagram sat 7 pixels from the device's edge.
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QImage

    _wb, panel = anatomy("tired-cat", size=(1100, 900))
    diagram = panel.diagram
    assert diagram.scale == pytest.approx(1.15)

    def picture() -> QImage:
        image = QImage(diagram.width() + 20, diagram.height() + 50,
                       QImage.Format.Format_ARGB32_Premultiplied)  # fmt: skip
        image.fill(QColor("white"))
        diagram.render(image, QPoint(*offset))
        return image

    kept = picture()
    assert diagram.canvas.image is not None
    diagram.canvas.enabled = False
    assert picture() == kept
