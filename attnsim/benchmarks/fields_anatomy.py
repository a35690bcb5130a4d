"""Three-fields lab and multi-head anatomy: an undoable edit in, the panel repainted.

What is timed: one edit pushed through the workbench (the engine recomputes), the panel's
coalesced refresh (``flush``), and a synchronous repaint of the whole panel (700x450 px) into a
premultiplied ARGB32 QImage, the format of a window's backing store, as the screen would show it.

- ``fields_lab_slider_edit``: on the three-fields preset, the receiving query's
  "control theory" share set to a new value (as one slider step does); the lab recomputes the
  per-field sums, the mixture and the 2-D plane (PCA) and redraws bars, mixture and scatter.
- ``anatomy_edit_two_heads`` / ``anatomy_edit_tired_cat``: one X row moved; the anatomy lists
  every matrix of the block, lays the diagram out (trying several scales) and repaints it.
- ``anatomy_edit_n64_h8``: 64 tokens, 8 heads, d = 64: matrices are shown truncated to 8x8, so
  the cost stays bounded.
"""

from __future__ import annotations

import numpy as np

from . import Row, qt_app, shown_panel, summarize, timeit

SIZE = (700, 450)


def _paint(panel) -> None:
    from PySide6.QtGui import QImage

    image = QImage(panel.width(), panel.height(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0xFFFFFFFF)
    panel.render(image)


def _panel(cls, scenario):
    return shown_panel(cls, scenario, SIZE, events=3)


def _budget(quick: bool) -> dict[str, float | int]:
    return {"min_runs": 5, "max_runs": 30, "budget_s": 0.3} if quick else {"budget_s": 1.5}


def fields_lab(quick: bool = False) -> list[Row]:
    qt_app()
    from attnsim.panels.fields_lab import FieldsLabPanel
    from attnsim.resources import resolve_scenario

    wb, panel = _panel(FieldsLabPanel, resolve_scenario("three-fields"))
    wb.set_receiving(0)
    panel.flush()
    shares = iter(np.tile(np.linspace(0.05, 0.95, 19), 1000))

    def step() -> None:
        panel.set_field_share(1, float(next(shares)))
        panel.flush()
        _paint(panel)

    times = timeit(step, **_budget(quick))
    rows = [summarize("fields_lab_slider_edit", times, target_ms=16.0)]
    wb.undo_stack.clear()
    panel.close()
    return rows


def anatomy(quick: bool = False) -> list[Row]:
    qt_app()
    from attnsim.engine import edits
    from attnsim.engine.scenario import Head, Scenario
    from attnsim.panels.anatomy import AnatomyPanel
    from attnsim.resources import resolve_scenario

    rng = np.random.default_rng(0)
    n, h, d, dk = 64, 8, 64, 8
    big = Scenario(
        name="bench-anatomy",
        tokens=tuple(f"t{i}" for i in range(n)),
        X=rng.standard_normal((n, d)),
        heads=tuple(Head(*(rng.standard_normal((d, dk)) for _ in range(3))) for _ in range(h)),
        Wo=rng.standard_normal((h * dk, d)) / 8,
    )
    rows = []
    for label, sc in (("two_heads", resolve_scenario("two-heads")),
                      ("tired_cat", resolve_scenario("tired-cat")), ("n64_h8", big)):  # fmt: skip
        wb, panel = _panel(AnatomyPanel, sc)
        offsets = iter(np.tile(np.linspace(-0.5, 0.5, 21), 1000))
        base = np.array(wb.scenario.X[0])

        def step(wb=wb, panel=panel, base=base, offsets=offsets) -> None:
            x = base.copy()
            x[0] += float(next(offsets))
            wb.edit(edits.set_vector(wb.scenario, "x", 0, x), "bench")
            panel.flush()
            _paint(panel)

        times = timeit(step, **_budget(quick))
        target = 8.0 if label == "n64_h8" else 16.0  # issue 25: every lab edit at n = 64 in 8 ms
        rows.append(summarize(f"anatomy_edit_{label}", times, target_ms=target))
        wb.undo_stack.clear()
        panel.close()
    return rows


BENCHMARKS = {"fields_lab": fields_lab, "anatomy": anatomy}
