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


def test_readout_with_zero_masking_states_the_right_ceiling(make_wb, qtbot):
    wb = make_wb("bank-river")
    wb.edit(wb.scenario.replace(mask_value=0.0), "mask with 0")
    panel = ReadoutPanel(wb)
    qtbot.addWidget(panel)
    wb.set_receiving(0)
    panel.flush()
    # every key takes weight now, so the ceiling is log2(3), not log2(1)
    assert "of 1.585 max" in panel.output.text()
    assert float(cell(panel, 2, 4)) > 0


def test_long_sequences_list_the_largest_weights(make_wb, qtbot):
    import numpy as np

    from attnsim.engine.scenario import random_scenario

    n = 300
    sc = random_scenario(n, 4, seed=1, receiving=5)
    wb = make_wb(sc)
    panel = ReadoutPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()
    assert panel.table.rowCount() == 64
    shown = [cell(panel, r, 0) for r in range(64)]
    top = np.argsort(-wb.trace.weights[5])[:64]
    assert set(shown) == {f"t{j}" for j in top}
    assert "64 largest weights of 300 keys shown" in panel.output.text()


def test_readout_tooltips_and_big_numbers_use_the_shared_format(make_wb, qtbot):
    wb = make_wb("river-bank")
    panel = ReadoutPanel(wb)
    qtbot.addWidget(panel)
    panel.flush()
    tip = panel.table.item(1, 4).toolTip()
    assert tip.startswith("bank → river (query 3, key 2): ")
    assert "np.float64" not in tip and "weight = 0.310" in tip
    sc = edits.set_vector(wb.scenario, "x", 0, [9e5, 0, 0, 0])
    wb.edit(sc, "big")
    panel.flush()
    texts = [cell(panel, 0, c) for c in range(1, 6)] + [panel.output.text()]
    assert all(len(t) < 80 for t in texts[:-1]), texts
    assert "e+" in " ".join(texts) and "00000000" not in " ".join(texts)
