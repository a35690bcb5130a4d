"""The vector editor's redraw of a long sequence: the plane's names placed once per refresh,
column and combo widths without measuring every row, the same widths as measuring them."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QComboBox

from attnsim.panels.array_table import cell_text
from attnsim.panels.vectors.editor import (
    EXTREMES_ROWS,
    MAX_COLUMN_PX,
    MEASURED_TEXTS,
    VectorTable,
    column_extremes,
    widest_text,
)
from attnsim.panels.vectors.plane_view import PlaneView


def test_a_view_laid_out_with_redraws_held_places_its_names_once(qtbot, monkeypatch):
    view = PlaneView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    qtbot.waitExposed(view)
    placed: list[int] = []
    place = view.labels.place
    monkeypatch.setattr(view.labels, "place", lambda groups: placed.append(1) or place(groups))
    tips = np.array([[1.0, 0.5], [-0.5, 2.0], [0.3, -1.5]])
    with view.redraws_held():
        view.set_arrows(tips, ["a", "b", "c"], highlight=0)
        view.fit(force=True)
        view.resize(520, 360)  # a layout pass: the view's size and range change
        view.fit(force=True)
        assert placed == [] and view.label_rects == []
    assert placed == [1] and len(view.label_rects) == 3
    once = list(view.label_rects)
    view._redraw()  # a redraw of the same view and range places them where they are
    assert view.label_rects == once


def test_the_widest_of_many_names_is_the_measured_widest(qtbot):
    fm = QFontMetrics(QFont())
    rng = np.random.default_rng(3)
    letters = list("abcdefijlmoTVWAy_ 0123456789")
    for count in (10, MEASURED_TEXTS + 1, 3000):
        names = tuple(
            "".join(rng.choice(letters, size=int(rng.integers(1, 14)))) for _ in range(count)
        )
        assert widest_text(fm, names) == max(fm.horizontalAdvance(t) for t in names)
    digits = tuple(f"t{i}" for i in range(4096))  # many names of (nearly) one width
    assert widest_text(fm, digits) == max(fm.horizontalAdvance(t) for t in digits)


def test_column_extremes_read_in_blocks_are_those_of_each_whole_column():
    # more rows than one block and not a whole number of blocks; a column of zeros, a column
    # whose smallest magnitude is a negative number, zeros among the rows of the last block
    rng = np.random.default_rng(3)
    M = rng.standard_normal((2 * EXTREMES_ROWS + 5, 4))
    M[:, 1] = 0.0
    M[7, 2] = -1e-9
    M[-2:, 3] = 0.0
    lo, hi, tiny, some = column_extremes(M)
    for j in range(M.shape[1]):
        col = M[:, j]
        assert lo[j] == col.min() and hi[j] == col.max()
        nonzero = np.abs(col[col != 0])
        assert some[j] == bool(nonzero.size)
        assert tiny[j] == (nonzero.min() if nonzero.size else np.inf)
    assert tiny[2] == 1e-9 and not some[1]
    empty = column_extremes(np.zeros((0, 3)))
    assert empty[3].tolist() == [False] * 3 and np.isinf(empty[2]).all()


def test_column_widths_come_from_each_columns_widest_texts(qtbot):
    table = VectorTable()
    qtbot.addWidget(table)
    rng = np.random.default_rng(0)
    M = rng.normal(size=(300, 4)) * [1.0, 1000.0, 1.0, 0.0]
    M[::7, 2] = 0.0
    M[5, 2] = 4e-7  # shown as 4.00e−07: the widest text of its column
    M[9, 0] = np.nan
    names = tuple(f"token{i}" for i in range(300))
    header = ("token", "x", "y", "z", "w")
    table.table.show_array(M, tuple(str(i + 1) for i in range(300)), header, names=names)
    table._fit_columns(M, names, header)
    t, pad = table.table, 14
    plain, head = t.fontMetrics(), t.horizontalHeader().fontMetrics()
    digits = t.array_model.digits
    for j in range(M.shape[1]):  # what measuring the column's extremes and tiniest gives
        col = M[:, j]
        picks = [col.min(), col.max(), *([-np.abs(col[col != 0]).min()] if col.any() else [])]
        w = max(plain.horizontalAdvance(cell_text(x, digits)) for x in picks) + pad
        want = min(max(w, head.horizontalAdvance(header[j + 1]) + pad), MAX_COLUMN_PX)
        assert t.columnWidth(j + 1) == max(want, t.horizontalHeader().minimumSectionSize()), j
    assert plain.horizontalAdvance(cell_text(-4e-7, digits)) + pad <= t.columnWidth(3)


def test_a_long_receiving_list_keeps_the_combo_as_wide_as_its_longest_name(qtbot):
    from attnsim.engine.scenario import random_scenario
    from attnsim.viewmodels.vectors import editor_data, target

    table = VectorTable()
    qtbot.addWidget(table)
    for n in (40, 600):
        sc = random_scenario(n, 4, seed=1, mask="causal", receiving=n - 1)
        t = target(sc, "x", n - 1, None)
        table.refresh(editor_data(sc, t, "x", n - 1, True, None))
        combo = table.receiving_combo
        assert combo.count() == n
        fm = combo.fontMetrics()
        widest = max(fm.horizontalAdvance(combo.itemText(i)) for i in range(n))
        assert combo.sizeHint().width() >= widest
        many = n > MEASURED_TEXTS
        policy = QComboBox.SizeAdjustPolicy
        assert (combo.sizeAdjustPolicy() == policy.AdjustToContents) == (not many)


def test_after_a_large_trace_the_table_comes_first_and_the_plane_a_turn_later(
    make_wb, show_panel, qtbot, monkeypatch
):
    from attnsim.engine import edits
    from attnsim.engine.scenario import random_scenario
    from attnsim.panels import base
    from attnsim.panels.vectors import VectorEditorPanel
    from attnsim.panels.vectors.panel import PLANE_LATER_TOKENS

    wb = make_wb(random_scenario(PLANE_LATER_TOKENS, 4, seed=1))
    panel = show_panel(VectorEditorPanel(wb), size=(900, 500))
    wb.edit(edits.set_vector(wb.scenario, "x", 3, [0.5, 0.25, 0.0, 0.0]), "edit")
    wb.finish_trace()
    monkeypatch.setattr(base, "_IN_TURN_AFTER_TRACE", [True])  # as _refresh_next does
    panel.flush()
    assert panel.editor.table.array_model.values[3, 0] == 0.5  # the table: this turn
    assert panel._plane_later and not np.allclose(panel.plane_view.tips[3], [0.5, 0.25])
    while base._after_trace and panel._plane_later:  # the turns after: the plane first
        base._refresh_next()
    assert not panel._plane_later
    assert np.allclose(panel.plane_view.tips[3], [0.5, 0.25])
