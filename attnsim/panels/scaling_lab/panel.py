"""Why divide by sqrt(d_k), and what saturation does to the softmax's derivatives.

Left: the entropy experiment (attention entropy over n random keys vs d_k, with and without
the 1/sqrt(d_k) divisor, and the spread of the raw scores next to sqrt(d_k)). It runs on the
workbench's background runner, with progress, so the window never freezes; its settings are
undoable sandbox state (the lab state :class:`ScalingLabState`).

Right: the softmax Jacobian of the workbench's receiving row and how its size collapses as the
row's logits are multiplied by a growing factor (a sharper, saturating row).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from attnsim.model.runner import Job
from attnsim.model.workbench import Workbench
from attnsim.viewmodels.scaling_lab import (
    ExperimentShown,
    JacobianData,
    SaturationCurve,
    jacobian_data,
)

from ..base import content_parts
from ..lab import LabPanel
from ..widgets import AdaptiveSplit
from .experiment import (
    EXPERIMENT,
    FIRST_RUN_DELAY_MS,
    ScalingLabState,
    experiment_job,
    params_key,
)
from .experiment_view import ExperimentView
from .jacobian_view import JacobianView


class ScalingLabPanel(LabPanel):
    """The entropy-vs-d_k experiment and the softmax Jacobian of the receiving row.

    A lab whose settings come from one experiment form as a whole state (several at once), so
    it keeps its own edit and shares the rest of :class:`LabPanel`."""

    panel_id = "scaling_lab"
    title = "Scaling and temperature"
    state_type = ScalingLabState

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self._job: Job | None = None
        self._job_key: tuple | None = None
        self._shown_key: tuple | None = None
        self._shown_error: str | None = None
        self.result: dict | None = None  # the experiment now on screen (the engine's dict)
        self.progress_updates = 0
        self.jacobian_keys = np.zeros(0, dtype=int)
        self.jacobian = np.zeros((0, 0))  # empty when the row is too long to draw J
        self.jacobian_sizes = (0.0, 0.0)  # (‖J‖_F, max |J|) of the receiving row
        self.curve: SaturationCurve | None = None
        self._deferred: dict[str, object] | None = None
        self._defer_timer = QTimer(self)
        self._defer_timer.setSingleShot(True)
        self._defer_timer.setInterval(FIRST_RUN_DELAY_MS)
        self._defer_timer.timeout.connect(self._start_deferred)
        # A closed panel's run is of no use to anyone; the workbench's runner outlives it.
        self.destroyed.connect(lambda *_, r=workbench.runner: r.cancel(EXPERIMENT))

        self._jacobian_shown: JacobianData | None = None
        self._jacobian_wanted = False  # a long row's Jacobian is on its way (see derived_soon)

        # While the window opens the lab in steps, each of its four pyqtgraph plots and the
        # Jacobian's map are made in turns of their own (each about 20 ms at most).
        self.experiment = ExperimentView(later=True)
        self.experiment.edited.connect(self._settings_edited)
        self.experiment.refused.connect(lambda why: self.refuse(ValueError(why)))
        # The parts tests and the export reach for.
        e = self.experiment
        self.keys_spin, self.trials_spin, self.seed_spin = e.keys_spin, e.trials_spin, e.seed_spin
        self.rng_combo, self.dk_checks, self.progress, self.status = (
            e.rng_combo, e.dk_checks, e.progress, e.status,
        )  # fmt: skip
        self.table = e.table
        self.build_later(self._build_entropy_plot)
        self.build_later(self._build_sd_plot)
        self.build_later(self._build_jacobian)
        self.build_later(self._build_saturation_plot)

    def _build_entropy_plot(self) -> None:
        e = self.experiment
        e.add_entropy_plot()
        self.entropy_plot = e.entropy_plot
        self.unscaled_curve, self.scaled_curve = e.unscaled_curve, e.scaled_curve
        self.max_line, self.max_text, self.entropy_texts = e.max_line, e.max_text, e.entropy_texts

    def _build_sd_plot(self) -> None:
        e = self.experiment
        e.add_sd_plot()
        self.sd_plot, self.sd_curve, self.sqrt_curve = e.sd_plot, e.sd_curve, e.sqrt_curve

    def _build_saturation_plot(self) -> None:
        j = self.jacobian_view
        j.add_saturation_plot()
        self.sat_plot, self.sat_texts, self.unscaled_line = j.sat_plot, j.sat_texts, j.unscaled_line

    def _build_jacobian(self) -> None:
        j = self.jacobian_view = JacobianView(later=True)
        self.jac_title, self.jac_map, self.jac_stats = j.jac_title, j.jac_map, j.jac_stats
        layout = self.lab_layout
        # Side by side in a wide dock (the experiment keeps 58 % of the width until the user
        # drags the handle), stacked in a tall narrow one, on two tabs in a small one.
        self.split = AdaptiveSplit(
            self.experiment,
            self.jacobian_view,
            ("Entropy vs d_k", "Softmax Jacobian"),
            ratio=0.58,
            side_width=640,
            stack_height=640,
        )
        layout.addWidget(self.split)
        layout.addWidget(self.refusal)
        self.splitter = self.split.splitter

    # ---- state --------------------------------------------------------------------------------
    def params(self) -> dict[str, object]:
        """The experiment settings (the workbench's ScalingLabState, as a dict)."""
        return asdict(self.state())

    def _settings_edited(self, state: ScalingLabState) -> None:
        if self.is_updating:
            return
        old, new = self.params(), asdict(state)
        changed = [k for k in new if new[k] != old.get(k)]
        if not changed:
            return
        what = ", ".join(f"{k} {old.get(k)} → {new[k]}" for k in changed if k != "dks")
        if "dks" in changed:
            what = (what + ", " if what else "") + "d_k " + " ".join(map(str, new["dks"]))
        self.wb.set_lab_state(state, f"Entropy experiment: {what}")

    # ---- the experiment job -------------------------------------------------------------------
    def is_computing(self) -> bool:
        """True while a run is waiting to start or running."""
        return self._deferred is not None or (self._job is not None and not self._job.done)

    def _ensure_job(self, params: dict[str, object], *, now: bool = False) -> None:
        key = params_key(params)
        if self._job is not None and self._job_key == key:
            return
        if self._job is None and not now:
            # The very first run waits a moment: a worker thread holding the GIL while the
            # main window paints its first frame would slow the start-up.
            self._deferred = params
            self._defer_timer.start()
            return
        self._deferred = None
        self._defer_timer.stop()
        job = self.wb.run(experiment_job(key), key=EXPERIMENT, memo=key)  # cancels the older run
        self._job, self._job_key = job, key
        job.progress.connect(self._job_progressed)
        job.finished.connect(self._job_ended)
        job.failed.connect(self._job_ended)

    def _start_deferred(self) -> None:
        if self._deferred is not None:
            params, self._deferred = self._deferred, None
            self._ensure_job(params, now=True)

    def _job_progressed(self, fraction: float) -> None:
        self.progress_updates += 1
        self.experiment.show_progress(fraction, f"running {fraction:.0%}")

    def _job_ended(self, *_: object) -> None:
        self.status.setText("")
        self.schedule_refresh()

    def wait_for_experiment(self, timeout_s: float = 60.0) -> None:
        """Block until the running experiment is done (export uses it; the GUI never does)."""
        self._start_deferred()
        job = self._job
        if job is not None and not job.done and job.wait(timeout_s):
            job.deliver()
        self.flush()

    def figure_widget(self) -> QWidget:
        self.flush()
        self.wait_for_experiment()
        if self._jacobian_wanted:  # a figure never shows a row's Jacobian still on its way
            self._now = True
            try:
                self._refresh_jacobian()
            finally:
                self._now = False
        return self

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        self.figure_widget()  # the experiment's numbers first
        return content_parts(
            self, self.table, self.entropy_plot, self.sd_plot,
            self.jac_title, self.jac_map, self.jac_stats, self.sat_plot,
        )  # fmt: skip

    def refresh(self) -> None:
        params = self.params()
        with self.updating():
            self.experiment.show_settings(self.state())
        self._refresh_experiment(params)
        self._refresh_jacobian()

    def _refresh_experiment(self, params: dict[str, object]) -> None:
        key = params_key(params)
        result = self.wb.runner.recall(EXPERIMENT, key)
        error = None
        job = self._job
        if result is None and job is not None and self._job_key == key and job.done:
            error = job.error
        if result is None and error is None:
            self._ensure_job(params)
        if result is not None:
            # Nothing to compute for these settings: drop a pending or stale run.
            self._deferred = None
            self._defer_timer.stop()
            if job is not None and self._job_key != key and not job.done:
                job.cancel()
            took = f"done in {job.elapsed:.1f} s" if job and self._job_key == key else "done"
            self.experiment.show_progress(1.0, took)
        elif error is not None:
            self.status.setText("failed")
        if key == self._shown_key and result is self.result and error == self._shown_error:
            return
        self._shown_key, self._shown_error = key, error
        self.result = result
        n_keys, trials, seed, rng, dks = key
        fraction = self._job.fraction if self._job else 0.0
        self.experiment.refresh(
            ExperimentShown(n_keys, trials, seed, rng, dks, result, error, fraction)
        )
        if result is None and error is not None:
            self.wb.say(f"Entropy experiment failed: {error}")

    def table_text(self) -> list[list[str]]:
        """The numbers the table shows, row by row (for tests and copy)."""
        return self.experiment.table_text()

    def _refresh_jacobian(self) -> None:
        # A long row's saturation curve (121 softmaxes over n keys: about 35 ms at n = 4,096)
        # is made on the runner; the view says so meanwhile and keeps the row before.
        if self._now or not self.is_large():
            d = self.wb.derived(jacobian_view)
        else:
            d = self.wb.derived_soon(jacobian_view, then=self.schedule_refresh)
        self._jacobian_wanted = d is None
        if d is None:
            self._jacobian_shown = None
            self.jacobian_view.show_waiting(self.wb.scenario.query_labels[self.wb.receiving])
            return
        if d is self._jacobian_shown:
            return  # drawn already (a refresh for the experiment's sake)
        self._jacobian_shown = d
        self.jacobian_keys = d.keys
        self.jacobian = d.matrix
        self.jacobian_sizes = (d.frobenius, d.max_abs)
        self.curve = d.curve
        self.jacobian_view.refresh(d)


def jacobian_view(wb: Workbench) -> JacobianData:
    """The softmax Jacobian of the receiving query's row of the focused head."""
    sc, i = wb.scenario, wb.receiving
    return jacobian_data(wb.trace, i, sc.tokens, sc.query_labels[i])
