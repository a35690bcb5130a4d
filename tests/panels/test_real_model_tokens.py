"""Readable token labels on the Real model panel's map, and one picked token highlighted in
every head: the labels are the whole pieces with their positions (elided only when they cannot
fit), the picker tells a repeated word apart by its position, and its row and column are
outlined in the same place in every head of the grid.

The panel tests use the installed MiniLM files, as ``test_real_model.py`` does."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from attnsim.engine.scenario import random_scenario
from attnsim.model.workbench import Workbench
from attnsim.panels.real_model import RealModelPanel
from attnsim.panels.real_model.token_map import LABEL_SHARE, TokenMap, TokenPicker, shown_piece
from attnsim.viewmodels import real_model as rm
from attnsim.viewmodels.real_model import RealModelState

WAIT_MS = 60_000
TEXT = "I went to the bank to deposit my money, then we sat on the river bank near the museum."


@pytest.fixture
def panel(qtbot, show_panel):
    if rm.missing_files("minilm"):
        pytest.fail(rm.missing_files("minilm"))
    wb = Workbench(random_scenario(4, 3, seed=1))
    wb.set_lab_state(RealModelState(model="minilm", text=TEXT), "start")
    wb.undo_stack.clear()
    p = show_panel(RealModelPanel(wb), size=(1024, 700))
    p.run_text()
    qtbot.waitUntil(lambda: not p.busy and p.result is not None, timeout=WAIT_MS)
    p.flush()
    p.show_tab(p.enlarged)
    p.flush()
    yield p
    assert wb.runner.shutdown(10)


def test_every_label_is_the_whole_piece_with_its_position_at_a_normal_size(panel):
    m, r = panel.enlarged, panel.result
    assert m.isVisible() and m.width() >= 300
    lay = m.canvas_layout()
    rows, cols = m.labels(lay.row_labels[2]), m.labels(lay.col_labels[3])
    want = [f"{i} {shown_piece(p)}" for i, p in enumerate(r.pieces)]
    assert [lab.text for lab in rows] == want
    assert [lab.text for lab in cols] == want  # the columns show words too, not numbers
    assert all(lab.whole and "…" not in lab.piece for lab in rows + cols)
    # the two "bank"s are told apart by their position
    banks = [lab.text for lab in rows if lab.piece == "bank"]
    assert banks == ["5 bank", "17 bank"]


def test_a_label_is_elided_only_when_it_cannot_fit(qtbot):
    m = TokenMap(font_pt=7.0, max_cell=28.0, min_cell=2.0)
    qtbot.addWidget(m)
    long = "·" + "internationalisation" * 3
    m.set_map(np.full((3, 3), 1 / 3), ["a", long, "b"])
    m.resize(1600, 900)
    assert all(lab.whole for lab in m.labels())  # room enough: whole
    m.resize(220, 200)
    labels = m.labels()
    assert m.label_room()[0] == pytest.approx(LABEL_SHARE * 220, abs=0.01)
    assert [lab.whole for lab in labels] == [True, False, True]
    assert labels[1].prefix == "1" and labels[1].piece.endswith("…")  # the position stays
    assert labels[0].text == "0 a" and labels[2].text == "2 b"


def test_the_picker_lists_tokens_by_position_and_emits_the_position(qtbot, record):
    picker = TokenPicker()
    qtbot.addWidget(picker)
    seen = record(picker.token_picked)
    picker.show_tokens((" the", " bank", " the"), None)
    assert [picker.itemText(i) for i in range(picker.count())] == [
        TokenPicker.NONE,
        "0 ·the",
        "1 ·bank",
        "2 ·the",
    ]
    assert seen == [] and picker.token() is None  # showing emits nothing
    picker.setCurrentIndex(3)
    assert seen == [(2,)] and picker.token() == 2
    picker.setCurrentIndex(0)
    assert seen[-1] == (-1,) and picker.token() is None


def _grid_image(grid) -> QImage:
    image = QImage(grid.size(), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    grid.render(image)
    return image


def test_picking_the_second_bank_highlights_its_row_and_column_in_every_head(panel):
    r, grid, picker = panel.result, panel.grid, panel.controls.token_picker
    n = len(r.ids)
    second = [i for i, p in enumerate(r.pieces) if p == "bank"][1]
    plain = _grid_image(grid)
    steps = panel.wb.undo_stack.count()
    picker.setCurrentIndex(picker.findText(f"{second} bank"))
    panel.flush()
    assert panel.token == second and grid.token == second
    m = panel.enlarged
    assert m.highlight_row == second and m.highlight_col == second and m.token == second
    assert panel.wb.undo_stack.count() == steps  # a highlight, not an edit
    marked = _grid_image(grid)
    a = np.frombuffer(plain.constBits(), np.uint32).reshape(plain.height(), -1)[:, : plain.width()]
    b = np.frombuffer(marked.constBits(), np.uint32).reshape(marked.height(), -1)[
        :, : marked.width()
    ]
    changed = a != b
    rects = grid.cell_rects()
    assert len(rects) == 72
    allowed = np.zeros_like(changed)
    for rect in rects.values():
        pitch = rect.height() / n
        row = QRectF(rect.left(), rect.top() + second * pitch, rect.width(), pitch)
        col = QRectF(rect.left() + second * pitch, rect.top(), pitch, rect.height())
        inside = np.zeros_like(changed)
        for band in (row, col):
            y0, y1 = int(band.top()) - 2, int(np.ceil(band.bottom())) + 2
            x0, x1 = int(band.left()) - 2, int(np.ceil(band.right())) + 2
            inside[max(y0, 0) : y1, max(x0, 0) : x1] = True
        # every head shows the outline, at the same query row and key column of its map
        assert (changed & inside).sum() > 0.5 * rect.width()
        allowed |= inside
    assert not (changed & ~allowed).any()  # and nothing else on the grid changed


def test_a_new_text_drops_the_picked_token(qtbot, panel):
    picker = panel.controls.token_picker
    picker.setCurrentIndex(picker.findText("5 bank"))
    panel.flush()
    assert panel.token == 5
    panel.controls.text_edit.setPlainText("the cat sat on the mat")
    panel.run_text()
    qtbot.waitUntil(lambda: not panel.busy and panel.result.key[1] != TEXT, timeout=WAIT_MS)
    panel.flush()
    assert panel.token is None and panel.grid.token is None and picker.currentIndex() == 0
    assert picker.count() == 1 + len(panel.result.ids)


def test_the_exported_head_of_attnsim_export_model_shows_whole_labels(qtbot):
    from attnsim.cli.real_models import head_canvas

    pieces = ["I", " went", " to", " the", " internationalisation", " bank", "\n", " bank"]
    n = len(pieces)
    canvas = head_canvas("smollm2", pieces, np.tril(np.full((n, n), 1.0 / n)), 3, 2, kv_head=0)
    qtbot.addWidget(canvas)
    lay = canvas.canvas_layout()
    rows, cols = canvas.labels(lay.row_labels[2]), canvas.labels(lay.col_labels[3])
    assert all(lab.whole for lab in rows + cols)
    assert [lab.text for lab in rows][4:] == [
        "4 ·internationalisation",
        "5 ·bank",
        "6 ↵",
        "7 ·bank",
    ]
    assert canvas.forbidden is not None and canvas.forbidden[0, 1]  # causal: the future hatched
