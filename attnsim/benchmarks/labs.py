"""Scaling lab and null-space lab: redraw cost per edit, and the entropy experiment's run time."""

from __future__ import annotations

import time

from . import Row, qt_app, shown_panel, summarize, timeit


def _render(widget) -> None:
    from PySide6.QtGui import QColor, QImage

    image = QImage(widget.width(), widget.height(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    widget.render(image)


def scaling_lab_edit(quick: bool = False) -> list[Row]:
    """One vector edit in river-bank, then the scaling lab's refresh (Jacobian heatmap and the
    121-point saturation curve; the experiment is cached and not redrawn) and a repaint of
    the Jacobian column, the part an edit changes, with the panel at 700x450."""
    import numpy as np

    from attnsim.engine import edits
    from attnsim.model.workbench import Workbench
    from attnsim.panels.scaling_lab import ScalingLabPanel, ScalingLabState
    from attnsim.resources import resolve_scenario

    app = qt_app()
    wb = Workbench(resolve_scenario("river-bank"))
    wb.set_lab_state(ScalingLabState(rng="numpy", trials=20), "bench")
    panel = ScalingLabPanel(wb)
    panel.resize(700, 450)
    panel.show()
    app.processEvents()
    panel.wait_for_experiment()
    x0 = np.array(wb.scenario.X[2])
    k = [0]

    def step() -> None:
        k[0] += 1
        x = x0 + 0.05 * np.sin(k[0]) * np.array([1.0, -1.0, 0.5, 0.0])
        wb.edit(edits.set_vector(wb.scenario, "x", 2, x), "bench")
        panel.flush()
        _render(panel.jac_map.parentWidget())

    times = timeit(step, budget_s=0.5 if quick else 2.0)
    return [summarize("scaling_lab_edit_700x450", times, target_ms=16.0)]


def nullspace_lab_drag(quick: bool = False) -> list[Row]:
    """One drag step of the null-space lab: set t (merged drag), refresh (spaces, probe,
    attention readout) and repaint the whole panel at 700x450."""
    from attnsim.model.workbench import new_drag_id
    from attnsim.panels.nullspace_lab import NullSpaceLabPanel
    from attnsim.resources import resolve_scenario

    _wb, panel = shown_panel(NullSpaceLabPanel, resolve_scenario("river-bank"), (700, 450))
    drag = new_drag_id()
    k = [0]

    def step() -> None:
        k[0] += 1
        panel.set_param("t", (k[0] % 500) / 100 - 2.5, drag=drag)
        panel.flush()
        _render(panel)

    times = timeit(step, budget_s=0.5 if quick else 2.0)
    return [summarize("nullspace_lab_drag_700x450", times, target_ms=16.0)]


def entropy_experiment(quick: bool = False) -> list[Row]:
    """The full entropy table (d_k 16..1024, 16 keys, 200 trials): numpy and reference streams,
    as the lab's worker runs it (stepped)."""
    from attnsim.viewmodels.scaling_lab import entropy_vs_dk_steps

    rows = []
    for rng, runs in (("numpy", 3 if quick else 7), ("reference", 1 if quick else 3)):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            for _frac, _res in entropy_vs_dk_steps(rng=rng):
                pass
            times.append((time.perf_counter() - t0) * 1000)
        rows.append(summarize(f"entropy_table_{rng}", times))
    return rows


BENCHMARKS = {
    "scaling_lab_edit": scaling_lab_edit,
    "nullspace_lab_drag": nullspace_lab_drag,
    "entropy_experiment": entropy_experiment,
}
