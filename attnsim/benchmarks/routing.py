"""Routing lab and live audit benchmarks: the cost of one edit-to-redraw cycle."""

from __future__ import annotations

import numpy as np

from . import Row, shown_panel, summarize, timeit


def _budget(quick: bool) -> dict[str, float | int]:
    return {"min_runs": 5, "budget_s": 0.3} if quick else {"min_runs": 30, "budget_s": 1.5}


def routing_lab(quick: bool = False) -> list[Row]:
    """``routing_lab_edit``: one query rotation through the workbench and the lab's full redraw
    (route, payload, key plane, the four-causes table with its 11-direction sweep, distractor
    readout) on the routing-lab preset. ``routing_engine``: ``lab_route`` + ``four_causes``
    alone."""
    from attnsim.panels.routing_lab import RoutingLabPanel
    from attnsim.resources import resolve_scenario
    from attnsim.viewmodels.routing_lab import four_causes, lab_route, rotate_query_to

    wb, panel = shown_panel(RoutingLabPanel, resolve_scenario("routing-lab"), (760, 520))
    angles = iter(np.tile(np.arange(-179, 180, 7), 1000))

    def edit_and_redraw() -> None:
        wb.edit(rotate_query_to(wb.scenario, float(next(angles))), "bench")
        panel.flush()

    rows = [summarize("routing_lab_edit", timeit(edit_and_redraw, **_budget(quick)))]
    sc = wb.scenario

    def engine() -> None:
        four_causes(lab_route(sc, 64))

    rows.append(summarize("routing_engine", timeit(engine, **_budget(quick))))
    panel.close()
    wb.undo_stack.clear()
    return rows


def live_audit(quick: bool = False) -> list[Row]:
    """``audit_refresh_small``: the live audit panel's redraw after an edit on bank-river
    (every check, including the reference loop). ``audit_refresh_two_heads``: the same on the
    two-head preset."""
    from attnsim.panels.audit import AuditPanel
    from attnsim.resources import resolve_scenario

    rows = []
    for name, preset in (("audit_refresh_small", "bank-river"), ("audit_refresh_two_heads",
                                                                  "two-heads")):  # fmt: skip
        wb, panel = shown_panel(AuditPanel, resolve_scenario(preset), (700, 450))
        temps = iter(np.tile([0.5, 1.0, 2.0], 10000))

        def edit_and_redraw(wb=wb, panel=panel, temps=temps) -> None:
            wb.edit(wb.scenario.replace(temperature=float(next(temps))), "bench")
            panel.flush()

        rows.append(summarize(name, timeit(edit_and_redraw, **_budget(quick))))
        panel.close()
        wb.undo_stack.clear()
    return rows


BENCHMARKS = {"routing_lab": routing_lab, "live_audit": live_audit}
