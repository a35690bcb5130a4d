"""Training stepper benchmarks: one optimizer step alone, and one step with a full redraw.

``train_step_sense2d``: the engine only (``Trainer.apply_update`` on sense-2d).
``train_step_panel``: one step through the stepper's session, then everything the panel shows
redrawn (stage numbers, arrow plane, both curves) and a synchronous grab of the whole panel,
offscreen, at 900x600. Variants at the heaviest stage (8, the update: old/new/change of every
parameter) and for the 8-coordinate model. Steps per second = 1000 / median.
"""

from __future__ import annotations

import os

from . import Row, summarize, timeit

TARGET_STEPS_PER_SECOND = 30.0


def _rate(median_ms: float) -> float:
    return 1000.0 / median_ms if median_ms > 0 else float("inf")


def train_step_sense2d(quick: bool = False) -> list[Row]:
    from attnsim.engine.training import MODELS, Trainer

    trainer = Trainer(MODELS["sense-2d"])
    times = timeit(trainer.apply_update, budget_s=0.3 if quick else 1.0, max_runs=2000)
    row = summarize("train_step_sense2d", times)
    row["steps_per_s"] = _rate(float(row["median_ms"]))  # type: ignore[arg-type]
    return [row]


def train_step_panel(quick: bool = False) -> list[Row]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from attnsim.model.workbench import Workbench
    from attnsim.panels.stepper import StepperPanel
    from attnsim.resources import resolve_scenario

    app = QApplication.instance() or QApplication([])
    rows: list[Row] = []
    cases = [
        ("train_step_panel", "sense-2d", 3),
        ("train_step_panel_stage8", "sense-2d", 8),
        ("train_step_panel_8d_stage8", "sense-8d", 8),
    ]
    for name, model, stage in cases:
        panel = StepperPanel(Workbench(resolve_scenario("river-bank")))
        panel.resize(900, 600)
        panel.show()
        session = panel.session
        if model != "sense-2d":
            session.set_model(model)
        session.set_stage(stage)
        for _ in range(3):
            app.processEvents()
        panel.flush()

        def step(panel=panel, session=session) -> None:
            session.train(1)  # what one timer tick of Play does at <= 60 steps/s
            panel.flush()
            panel.grab()  # synchronous repaint of every child: stage view, plots, controls

        times = timeit(step, budget_s=0.5 if quick else 2.0, max_runs=400)
        row = summarize(name, times, model=model, stage=stage)
        rate = _rate(float(row["median_ms"]))  # type: ignore[arg-type]
        row["steps_per_s"] = rate
        row["target_steps_per_s"] = TARGET_STEPS_PER_SECOND
        row["meets_target"] = rate >= TARGET_STEPS_PER_SECOND
        rows.append(row)
        panel.close()
        panel.deleteLater()
        app.processEvents()
    return rows


BENCHMARKS = {
    "train_step_sense2d": train_step_sense2d,
    "train_step_panel": train_step_panel,
}
