"""The live audit panel: all-pass on every preset, an unmissable failure, live updates."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits
from attnsim.engine.audit import Check, run_audit
from attnsim.panels.audit import AuditPanel, banner_text
from attnsim.resources import preset_names


def settle(panel: AuditPanel) -> None:
    QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


def rows(panel: AuditPanel) -> list[list[str]]:
    t = panel.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def row_of(panel: AuditPanel, name: str) -> int:
    return next(r for r, cells in enumerate(rows(panel)) if cells[1] == name)


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_passes(make_wb, name, show_panel):
    wb = make_wb(name)
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    n_heads = len(wb.result.heads)
    assert len(panel.checks) == 8 * n_heads
    assert all(c.passed for c in panel.checks)
    assert not panel.failed
    assert panel.banner.text().startswith(f"✓ All {8 * n_heads} checks pass")
    assert panel.table.rowCount() == 8 * n_heads
    assert all(cells[2] == "PASS ✓" for cells in rows(panel))
    # The panel shows the engine's audit, check by check.
    assert [(c.name, c.detail) for c in panel.checks] == [
        (c.name, c.detail) for c in run_audit(wb.scenario)
    ]


def test_zero_mask_fails_visibly_and_undo_clears_it(make_wb, show_panel):
    wb = make_wb("bank-river")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    assert not panel.failed
    wb.edit(wb.scenario.replace(mask_value=0.0), "Fill the mask with 0")
    settle(panel)
    assert panel.failed
    failing = {c.name for c in panel.checks if not c.passed}
    assert "masked keys get exactly 0" in failing
    banner = panel.banner.text()
    assert "FAIL" in banner and "masked keys get exactly 0" in banner
    assert "#b00020" in panel.banner.styleSheet() and "bold" in panel.banner.styleSheet()
    r = row_of(panel, "masked keys get exactly 0")
    item = panel.table.item(r, 2)
    assert item.text() == "FAIL ✗" and item.font().bold()
    assert "0.2741" in panel.table.item(r, 3).text()  # the number, not just a verdict
    assert "not −∞" in panel.context.text()
    passing = row_of(panel, "temperature keeps the ranking")
    assert not panel.table.item(passing, 1).font().bold()
    wb.undo_stack.undo()
    settle(panel)
    assert not panel.failed and panel.banner.text().startswith("✓")


def test_banner_counts_one_failure_in_the_singular():
    ok = Check("a", True, "fine", 0.0)
    bad = Check("masked keys get exactly 0", False, "leak 0.27", 0.27, 1)
    text, failed = banner_text([ok, bad], ["water", "finance"])
    assert failed and text == "1 check FAILS: masked keys get exactly 0 (finance)"
    text, failed = banner_text([bad, bad], ["direct"])
    assert text.startswith("2 checks FAIL: ")
    assert banner_text([ok], ["direct"]) == ("All 1 checks pass on 1 head", False)


def test_audit_follows_every_change(make_wb, show_panel):
    wb = make_wb("routing-lab")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    runs = panel.refresh_count
    wb.edit(edits.set_mask_cell(wb.scenario, 0, 1, False), "Mask B")
    settle(panel)
    assert panel.refresh_count == runs + 1
    r = row_of(panel, "masked keys get exactly 0")
    assert "largest weight on a masked key = 0" in panel.table.item(r, 3).text()
    wb.edit(wb.scenario.replace(mask_value=0.0), "zero fill")
    settle(panel)
    assert panel.failed
    assert wb.undo_stack.count() == 2  # the panel itself never edits


def test_multi_head_scenario_names_its_heads(make_wb, show_panel):
    wb = make_wb("two-heads")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    names = {cells[0] for cells in rows(panel)}
    assert len(names) == 2 and all(n for n in names)


def test_an_expensive_audit_waits_for_the_edits_to_pause(make_wb, qtbot, show_panel):
    wb = make_wb("bank-river")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    panel.last_ms = 1000.0  # pretend the last audit was slow
    runs = panel.refresh_count
    wb.edit(wb.scenario.replace(mask_value=0.0), "zero fill")
    qtbot.waitUntil(lambda: panel.refresh_count > runs, timeout=1000)
    assert panel.stale and "Auditing" in panel.banner.text()
    assert not panel.failed  # still the old state's table
    qtbot.waitUntil(lambda: not panel.stale, timeout=3000)
    assert panel.failed and "FAIL" in panel.banner.text()


def test_flush_runs_a_deferred_audit(make_wb, show_panel):
    wb = make_wb("bank-river")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    panel.last_ms = 1000.0
    wb.edit(wb.scenario.replace(mask_value=0.0), "zero fill")
    panel.flush()
    assert not panel.stale and panel.failed


def test_export_png_and_svg_with_text(make_wb, show_panel, export_png_svg):
    wb = make_wb("bank-river")
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    wb.edit(wb.scenario.replace(mask_value=0.0), "zero fill")
    text = export_png_svg(panel)
    assert "<text" in text and "FAIL" in text


@pytest.mark.numeric
def test_banner_names_a_skipped_check_apart_from_the_passes():
    ok = Check("a", True, "fine", 0.0)
    skipped = Check("reference loop = vectorised engine", True, "too large", 0.0, 0, True)
    text, failed = banner_text([ok, skipped], ["direct"])
    assert not failed
    assert text == "All 1 checks pass on 1 head (1 skipped: too large to check)"


def test_a_large_state_is_audited_in_the_background(show_panel, qtbot):
    from attnsim.engine.scenario import random_scenario
    from attnsim.model.workbench import Workbench
    from attnsim.panels.audit import audit_heads

    n = 300  # 90,000 weights: audited on the runner
    wb = Workbench(random_scenario(n, 8, mask="causal", receiving=n - 1))
    panel = show_panel(AuditPanel(wb), size=(700, 450))
    assert len(panel.checks) == 8 and not panel.stale
    before = panel.checks
    wb.edit(wb.scenario.replace(temperature=2.0), "T = 2")
    QApplication.processEvents()  # the event loop's redraw: it hands the audit to the runner
    assert panel.stale and panel.banner.text().startswith("Auditing the new state")
    assert panel.checks is before and wb.derived_pending(audit_heads)
    qtbot.waitUntil(lambda: not panel.stale, timeout=60000)
    assert panel.checks is not before and len(panel.checks) == 8
    assert panel.checks == wb.derived(audit_heads)
    assert panel.banner.text().startswith("✓ All")
