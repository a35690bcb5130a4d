"""Extreme values in the panels: typed values beyond ±MAX_ABS_VALUE are refused in the cell,
every panel draws any accepted value without an exception or an error log, an undo restores the
picture exactly, and huge numbers never widen the window or blank the table."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from attnsim.engine.scenario import MAX_ABS_VALUE, Head
from attnsim.panels.array_table import cell_text
from attnsim.panels.projections import ProjectionsPanel
from attnsim.panels.vectors import VectorEditorPanel
from attnsim.resources import resolve_scenario

B, TINY = MAX_ABS_VALUE, 1e-6


def bound_scenarios():
    """A token and a direct scenario whose entries sit at ±MAX_ABS_VALUE next to 1e-6 and 0."""
    X = np.array([[B, -B, TINY, 0.0], [0.0, TINY, B, -B], [B, B, B, B]])
    W = np.array(
        [[B, 0.0, 0.0, TINY], [0.0, -B, 0.0, 0.0], [TINY, 0.0, B, 0.0], [0.0, 0.0, 0.0, B]]
    )
    tokens = resolve_scenario("river-bank").replace(
        X=X, heads=(Head(W, W, W, "at the bound"),), absent={"money": np.array([B, -B, TINY, 0.0])}
    )
    only_x = resolve_scenario("river-bank").replace(X=X)
    direct = resolve_scenario("routing-lab").replace(
        Q=np.array([[B, TINY]]),
        K=np.array([[B, 0.0], [TINY, -B], [0.0, 0.0]]),
        V=np.array([[B, -B], [TINY, 0.0], [-B, B]]),
    )
    return {"tokens": tokens, "tokens-x": only_x, "direct": direct}


def settle(panel) -> None:
    for _ in range(4):
        QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


# ---- refused in place, naming the cell ------------------------------------------------------------
@pytest.mark.parametrize(
    ("typed", "shown"), [("1e200", "1e+200"), ("2e6", "2e+06"), ("-1.5e6", "-1.5e+06")]
)
def test_vectors_cell_beyond_the_bound_is_refused_naming_the_cell(
    make_wb, show_panel, record, typed, shown
):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    before = wb.scenario
    changes = record(wb.changed)
    panel.table.item(2, 2).setText(typed)  # bank, water
    assert wb.scenario is before and wb.undo_stack.count() == 0 and changes == []
    assert panel.table.item(2, 2).text() == "0.500"
    assert panel.message.isVisible()
    assert f"bank · water: {shown} is outside ±1e+06" in panel.message.text()


def test_vectors_cell_at_the_bound_is_accepted(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    panel.table.item(2, 2).setText("-1e6")
    assert wb.scenario.X[2, 1] == -B and wb.undo_stack.count() == 1
    panel.flush()
    assert panel.table.item(2, 2).text() == "−1.00e+06"


@pytest.mark.parametrize(("typed", "shown"), [("1e200", "1e+200"), ("2e6", "2e+06")])
def test_projections_cell_beyond_the_bound_is_refused_naming_the_cell(
    make_wb, show_panel, record, typed, shown
):
    wb = make_wb("river-bank")
    panel = show_panel(ProjectionsPanel(wb))
    before = wb.scenario
    changes = record(wb.changed)
    panel.blocks["Wq"].grid.item(0, 1).setText(typed)
    assert wb.scenario is before and wb.undo_stack.count() == 0 and changes == []
    assert panel.blocks["Wq"].grid.item(0, 1).text() == "0.00"
    assert f"Wq[1, 2]: {shown} is outside ±1e+06" in panel.message.text()


# ---- compact cells -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [(0.5, 3, "0.500"), (-1.25, 2, "−1.25"), (0.0, 3, "0.000"), (99999.0, 3, "99999.000"),
     (1e6, 3, "1.00e+06"), (-1e6, 2, "−1.0e+06"), (1e-6, 3, "1.00e−06"), (-4e-7, 3, "−4.00e−07"),
     (0.0004, 3, "4.00e−04"), (0.0005, 3, "0.001"), (1e200, 3, "1.00e+200")],
)  # fmt: skip
def test_cell_text_is_compact_and_never_reads_as_zero(x, digits, text):
    assert cell_text(x, digits) == text


def test_cell_text_parses_back_close_to_the_value():
    from attnsim.panels.widgets import parse_number

    for x in (1e6, -1e6, 1e-6, -3.25e-5, 123456.0):
        assert parse_number(cell_text(x, 3)) == pytest.approx(x, rel=5e-3)


def test_huge_numbers_never_widen_the_vectors_table(make_wb, show_panel):
    from attnsim.panels.vectors import MAX_COLUMN_PX

    wb = make_wb(bound_scenarios()["tokens-x"])
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    t = panel.table
    metrics = t.fontMetrics()
    for c in range(1, t.columnCount()):
        assert t.columnWidth(c) <= MAX_COLUMN_PX
        for r in range(t.rowCount()):  # and every number fits its column
            assert metrics.horizontalAdvance(t.item(r, c).text()) + 6 <= t.columnWidth(c)
    assert panel.minimumSizeHint().width() <= 480


def test_a_preset_opened_after_a_file_of_the_same_shape_gets_its_own_column_widths(
    make_wb, show_panel
):
    """The Vectors columns stayed blank: a preset of the same shape and names as the file open
    before kept that file's column widths, and its right-aligned numbers sat off screen."""
    fresh = show_panel(VectorEditorPanel(make_wb("river-bank")), size=(760, 480))
    want = [fresh.table.columnWidth(c) for c in range(fresh.table.columnCount())]
    wb = make_wb(bound_scenarios()["tokens-x"])
    panel = show_panel(VectorEditorPanel(wb), size=(760, 480))
    wide = [panel.table.columnWidth(c) for c in range(panel.table.columnCount())]
    assert wide != want  # the bound's numbers need wider columns...
    wb.load(resolve_scenario("river-bank"))
    settle(panel)
    assert [panel.table.columnWidth(c) for c in range(panel.table.columnCount())] == want


# ---- every panel draws every accepted value ----------------------------------------------------
@pytest.fixture
def no_errors(monkeypatch, caplog, capfd):
    """Fails the test on an uncaught exception, a WARNING+ log record, or a traceback printed
    to stderr (pyqtgraph prints the exceptions of its paint methods itself)."""
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda *exc: seen.append(exc))
    caplog.set_level(logging.WARNING)
    yield seen
    assert seen == []
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err[-3000:]


PANEL_VARIANTS = {
    "explorer": [("set_mode", "linked"), ("set_mode", "free")],
    "vectors": [("set_plane", "best"), ("set_plane", "axes")],
}


@pytest.mark.parametrize("which", ["tokens", "tokens-x", "direct"])
def test_every_panel_draws_scenarios_at_the_bound(qtbot, make_wb, which, no_errors):
    from attnsim.panels import panel_classes

    sc = bound_scenarios()[which]
    for cls in panel_classes():
        wb = make_wb(sc)
        panel = cls(wb)
        qtbot.addWidget(panel)
        panel.resize(760, 520)
        panel.show()
        settle(panel)
        assert not panel.grab().isNull()
        for method, arg in PANEL_VARIANTS.get(cls.panel_id, []):
            getattr(panel, method)(arg)
            settle(panel)
            panel.grab()
        # Every receiving token, and a refresh after each.
        for r in range(sc.n_queries):
            wb.set_receiving(r)
            settle(panel)
        panel.grab()
        panel.close()
