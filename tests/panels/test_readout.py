"""The receiving-token panel shows the engine's numbers for the selected query."""

from __future__ import annotations

from attnsim.engine import edits
from attnsim.panels.readout import ReadoutPanel


def cell(panel, r, c):
    return panel.table.item(r, c).text()


def test_readout_shows_the_trace_and_follows_selection(make_wb, qtbot):
    wb = make_wb("river-bank")
    panel = ReadoutPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()
    assert [cell(panel, j, 0) for j in range(3)] == ["the", "river", "bank"]
    assert [cell(panel, j, 4) for j in range(3)] == ["0.2619", "0.3105", "0.4276"]
    assert cell(panel, 1, 1) == "0.540"
    panel.picker.setCurrentIndex(0)  # a user picks "the"
    assert wb.receiving == 0
    panel.flush()
    assert float(cell(panel, 0, 4)) == round(float(wb.trace.weights[0, 0]), 4)


def test_readout_marks_masked_keys_and_redraws_once(make_wb, qtbot):
    wb = make_wb("bank-river")
    panel = ReadoutPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()
    assert cell(panel, 2, 3) == "−∞" and cell(panel, 2, 4) == "0.0000"
    n = panel.refresh_count
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0, 0, 0.5, 1]), "a")
    wb.edit(wb.scenario.replace(temperature=2.0), "b")
    qtbot.waitUntil(lambda: panel.refresh_count == n + 1)
    assert "T = 2.000" in panel.formula.text()
