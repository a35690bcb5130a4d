"""Kernel stepper: the tiled online-softmax kernel walked one key block at a time on the
current scenario's focused head, and a scaling plot of plain, tiled and linear attention.

Every setting, the step position included, is the lab's :class:`KernelLabState`, changed
through the edit helper, so Step / Back / Reset / a tile click are each one undo step: undo
walks the kernel backwards like Back does. The scaling run is work, not a setting: Run starts
it on the workbench's background runner (progress, Cancel), and its result is kept by the
runner for the settings it was measured with.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from attnsim.engine.kernel_scaling import scaling_sizes, scaling_steps
from attnsim.model.runner import Job
from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.viewmodels.kernel_lab import (
    SETTINGS,
    KernelLabState,
    KernelRun,
    ScalingShown,
    StepperData,
    kernel_run,
    moved,
    scaling_shown,
    stepper_data,
)

from .scaling_view import ScalingControls, ScalingPlots
from .stepper_view import MemoryBar, OutputView, RowTable, StepperControls
from .tiles import TileCanvas

SCALING = "kernel_lab.scaling"  # the runner's slot: a new run supersedes the one before
TILES = "kernel_lab.tiles"  # the large head's pooled image of the logits (the same)


def scaling_job(n_max: int, repeats: int, d: int):
    """The scaling measurement as a runner job: progress in whole percents, stops between runs."""
    sizes = scaling_sizes(n_max)

    def work(progress, cancelled):
        reported = -1.0
        for frac, result in scaling_steps(sizes, d=d, repeats=repeats):
            if cancelled():
                return None
            if frac - reported >= 0.01 or result is not None:
                progress(frac)
                reported = frac
            if result is not None:
                return result
        return None

    return work


class KernelLabPanel(LabPanel):
    """The tiled kernel step by step on the scenario, and time / memory against n."""

    panel_id = "kernel_lab"
    title = "Kernel stepper"
    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.data: StepperData | None = None
        self.shown: ScalingShown | None = None
        self.job: Job | None = None
        self._job_memo: tuple[int, int, int] | None = None
        self.destroyed.connect(lambda *_, r=workbench.runner: r.cancel(SCALING))
        self.destroyed.connect(lambda *_, r=workbench.runner: r.cancel(TILES))

        self.controls = self.connect_controls(StepperControls())
        self.controls.move.connect(self.move)
        middle = QHBoxLayout()
        self.tiles = TileCanvas()
        self.tiles.cell_clicked.connect(self._tile_clicked)
        self.tiles.pool_later = self._pool_later
        middle.addWidget(self.tiles, 1)
        right = QVBoxLayout()
        self.output = OutputView()
        right.addWidget(self.output)
        self.memory = MemoryBar()
        right.addWidget(self.memory)
        right.addStretch(1)
        middle.addLayout(right, 1)
        self.table = RowTable()
        stepper = self.add_page(
            "Stepper", self.controls, middle, self.table, grow=1, min_height=300
        )
        stepper.setSpacing(3)
        # The scaling tab (two pyqtgraph plots, about 50 ms) is not on screen at first: it is
        # made when first raised (or when a run is started), so the first show builds only the
        # stepper.
        page = QWidget()
        self._scaling_page: QVBoxLayout | None = QVBoxLayout(page)
        self._scaling_page.setContentsMargins(2, 2, 2, 2)
        self.tabs.addTab(page, "Scaling with n")
        self.tabs.currentChanged.connect(lambda i: i == 1 and self._build_scaling())

    def _build_scaling(self) -> None:
        """Make the scaling tab's controls and plots if they are not made yet."""
        col, self._scaling_page = self._scaling_page, None
        if col is None:
            return
        self.scaling_controls = self.connect_controls(ScalingControls())
        self.scaling_controls.run.connect(self.start_scaling)
        self.scaling_controls.cancel.connect(self.cancel_scaling)
        self.plots = ScalingPlots()
        col.addWidget(self.scaling_controls)
        col.addWidget(self.plots, 1)

    def _pool_later(self, work, done) -> None:
        """The tiles' pooled image of a large head, made on the runner (a newer one supersedes
        it): the canvas says it is drawing meanwhile."""
        job = self.wb.run(lambda _progress, _cancelled: work(), key=TILES)
        job.finished.connect(done)
        job.failed.connect(lambda _why: done(None))

    # ---- edits --------------------------------------------------------------------------------
    def move(self, how: str) -> bool:
        """Back / Step / Reset / To end as one undoable edit (False when there is no move)."""
        d = self.data
        if d is None or d.message:
            return False
        q, s = moved(self.state(), d.n_query_blocks, d.n_key_blocks, how)
        return self._go(q, s)

    def _go(self, q: int, s: int) -> bool:
        st, d = self.state(), self.data
        if d is None or (q, s) == (d.q_block, d.step):
            return False
        text = f"Kernel stepper: query block {q + 1}, {s} of {d.n_key_blocks} key blocks"
        return self.propose(lambda: SETTINGS.check(replace(st, q_block=q, step=s)), text)

    def _tile_clicked(self, i: int, j: int) -> None:
        hit = self.tiles.tile_at(i, j)
        if hit is not None:
            self._go(hit[0], hit[1] + 1)

    # ---- the scaling run ----------------------------------------------------------------------
    def _memo(self) -> tuple[int, int, int]:
        st = self.state()
        return st.n_max, st.repeats, st.d

    def start_scaling(self) -> Job:
        """Time the sizes of the current settings on the workbench's runner."""
        self._build_scaling()
        memo = self._memo()
        job = self.wb.run(scaling_job(*memo), key=SCALING, memo=memo)
        self.job, self._job_memo = job, memo
        job.progress.connect(self._progressed)
        job.finished.connect(self.schedule_refresh)
        job.failed.connect(self._failed)
        self.scaling_controls.show_running(True, 0.0, "starting")
        return job

    def cancel_scaling(self) -> None:
        if self.job is not None and not self.job.done:
            self.job.cancel()
        self.schedule_refresh()

    def running(self) -> bool:
        return self.job is not None and not self.job.cancelled and not self.job.done

    def _progressed(self, fraction: float) -> None:
        self._build_scaling()
        self.scaling_controls.show_running(True, fraction, f"running {fraction:.0%}")

    def _failed(self, error: str) -> None:
        self.wb.say(f"Scaling run failed: {error}")
        self.schedule_refresh()

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        with self.computing_now():
            if self.tabs.currentIndex() == 1:
                self._build_scaling()
                return content_parts(self, self.plots)
            return content_parts(self, self.tiles, self.output, self.memory, self.table)

    def kernel(self) -> KernelRun:
        """The kernel on the focused head at the state's block sizes (derived once)."""
        return self.wb.derived(lab_kernel, lab=KernelLabState, fields=KERNEL_FIELDS)

    def refresh(self) -> None:
        if self.tabs.currentIndex() == 1:
            self._refresh_scaling()
            return
        d = self.derive_soon(stepper_view)
        if d is None:
            return  # made in the background: the previous picture stays, the busy line says so
        self.data = d
        with self.updating():
            self.controls.show_stepper(self.state(), d)
        n_heads = len(self.wb.scenario.heads)
        self.tiles.refresh(d, f" of head {self.wb.focused_head + 1}" if n_heads > 1 else "")
        self.output.refresh(d)
        self.memory.refresh(d)
        self.table.refresh(d)

    def _refresh_scaling(self) -> None:
        self._build_scaling()
        st = self.state()
        with self.updating():
            self.scaling_controls.refresh(st)
        memo = self._memo()
        result = self.wb.runner.recall(SCALING, memo)
        job = self.job
        if self.running() and job is not None:
            other = "" if self._job_memo == memo else " (for other settings)"
            self.scaling_controls.show_running(True, job.fraction, f"running{other}")
        elif result is not None:
            took = f"done in {job.elapsed:.1f} s" if job and self._job_memo == memo else "done"
            self.scaling_controls.show_running(False, 1.0, took)
        else:
            cancelled = job is not None and job.cancelled and self._job_memo == memo
            failed = job is not None and job.error and self._job_memo == memo
            why = "cancelled" if cancelled else ("failed" if failed else "")
            self.scaling_controls.show_running(False, 0.0, why)
        self.shown = scaling_shown(result, st)
        self.plots.refresh(self.shown)


# What the kernel's run reads of the lab's settings: Step / Back within a query block keep it.
KERNEL_FIELDS = ("block_q", "block_k", "q_block")


def lab_kernel(wb: Workbench) -> KernelRun:
    """The tiled kernel on the focused head at the lab's block sizes (see ``wb.derived``)."""
    st = wb.lab_state(KernelLabState)
    return kernel_run(wb.trace, st.block_q, st.block_k, st.q_block)


def stepper_view(wb: Workbench) -> StepperData:
    """The kernel at the lab's step, for the workbench's scenario and focused head."""
    sc, st = wb.scenario, wb.lab_state(KernelLabState)
    run = wb.derived(lab_kernel, lab=KernelLabState, fields=KERNEL_FIELDS)
    return stepper_data(wb.trace, run, tuple(sc.query_labels), tuple(sc.tokens), st)
