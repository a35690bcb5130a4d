"""Precision and masks: the current scenario's weights in float64 / float32 / float16 /
bfloat16 with a Boolean or an additive mask (leaks outlined, NaN rows marked, the whole
precision table beside it), and dropout on the weights in training and in evaluation.

The two parts are tabs; every setting is the lab's :class:`PrecisionLabState`, changed through
the edit helper, so each is one undo step (a drag of the p slider merges into one).
"""

from __future__ import annotations

from dataclasses import asdict, replace

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from attnsim.engine.precision import PrecisionRow
from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.viewmodels.precision_lab import (
    SETTINGS,
    DropoutData,
    LabInputs,
    PrecisionData,
    PrecisionLabState,
    TableData,
    dropout_data,
    lab_inputs,
    padding_problem,
    precision_data,
    table_data,
    table_rows,
)

from .dropout_view import DropoutControls, DropoutView
from .mask_view import MaskControls, PrecisionView, leak_runs

POOL_JOB = "precision_lab.weights"  # a large head's weights pooled to the pixels on screen


class PrecisionLabPanel(LabPanel):
    """Mask semantics, reduced precision and dropout on the current scenario's head."""

    panel_id = "precision_lab"
    title = "Precision and masks"

    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        # The table is derived by the workbench from the head, the padding and the large logit
        # (value and cell), not the dtype or style: switching those reuses its 16 heads.
        self._table_due = False
        self._table_timer = QTimer(self)
        self._table_timer.setSingleShot(True)
        self._table_timer.setInterval(0)
        self._table_timer.timeout.connect(self._compute_table)
        self.precision: PrecisionData | None = None
        self.table: TableData | None = None
        self.dropout: DropoutData | None = None

        self.mask_controls = self.connect_controls(MaskControls())
        self.view = PrecisionView()
        self.view.cell_clicked.connect(self.put_logit_at)
        self.view.canvas.pool_later = self._pool_later
        # In a short dock the page scrolls rather than shrink the heatmap to a few pixels.
        self.add_page("Masks and precision", self.mask_controls, self.view, min_height=330)

        self.dropout_controls = self.connect_controls(DropoutControls())
        self.dropout_view = DropoutView()
        self.add_page("Dropout", self.dropout_controls, self.dropout_view, min_height=330)

    def _pool_later(self, work, done) -> None:
        """The weights' image of a large head pooled to the pixels on screen, made on the runner
        (a newer one supersedes it): the canvas says it is drawing meanwhile."""
        job = self.wb.run(lambda _progress, _cancelled: work(), key=POOL_JOB)
        job.finished.connect(done)
        job.failed.connect(lambda _why: done(None))

    # ---- edits --------------------------------------------------------------------------------
    def scenario_problem(self, state: PrecisionLabState, name: str) -> str:
        return padding_problem(state, int(self.wb.trace.weights.shape[1]))

    def put_logit_at(self, row: int, key: int) -> bool:
        """Add the large logit at (row, key), switching it on: one undoable edit."""
        st = self.state()
        new = replace(st, boost=True, boost_row=int(row), boost_key=int(key))
        if new == st:
            return True
        labels = self.wb.scenario.query_labels, self.wb.scenario.tokens
        text = f"Precision lab: large logit on {labels[0][row]} → {labels[1][key]}"
        return self.propose(lambda: SETTINGS.check(new), text)

    def show_refusal(self, text: str) -> None:
        # The refused box still holds the typed text: the redraw puts the stored value back.
        self.schedule_refresh()
        self.refusal.show_refusal(text)

    def clear_refusal(self) -> None:
        self.refusal.hide()

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        with self.computing_now():  # a figure shows the finished views, never a grey one
            if self._table_due or self.view.table.stale:
                self._table_timer.stop()
                self._table_due = True
                self._compute_table()
            parts = self.view.parts if self.tabs.currentIndex() == 0 else (self.dropout_view,)
            return content_parts(self, *parts)

    def refresh(self) -> None:
        wb, st = self.wb, self.state()
        values = asdict(st)
        if self.tabs.currentIndex() == 0:
            with self.updating():
                self.mask_controls.show_state(st, int(wb.trace.weights.shape[1]))
            shown = self.derive_soon(precision_shown)  # None while made in the background
            if shown is not None:
                self.precision, runs = shown
                self.view.refresh(self.precision, runs)
            if wb.derived_ready(lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS):
                self._show_table(st)
            elif self.is_large():
                # Seconds at this size: made on the runner, the old table greyed and said
                # to be old until the new one arrives; the window keeps answering meanwhile.
                self._table_due = False
                self.view.table.set_stale(True)
                self.view.table_caption.setText(COMPUTING)
                wb.derived_soon(
                    lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS,
                    then=self.schedule_refresh,
                )  # fmt: skip
            else:
                # The table's 16 heads cost more than the heatmap: they follow one pass of the
                # event loop later (the old table greyed until then), so the edit itself
                # repaints within a frame.
                self._table_due = True
                self.view.table.set_stale(True)
                self._table_timer.start()
        else:
            held = self.drag_of("p") is not None and self.dropout_controls.p_slider.isSliderDown()
            with self.updating():
                self.dropout_controls.refresh(values, held)
            dropout = self.derive_soon(dropout_view)
            if dropout is not None:
                self.dropout = dropout
                self.dropout_view.refresh(dropout)

    def _compute_table(self) -> None:
        if not self._table_due:
            return
        self._table_due = False
        self._show_table(self.state())

    def _show_table(self, st: PrecisionLabState) -> None:
        rows = self.wb.derived(lab_table, lab=PrecisionLabState, fields=INPUT_FIELDS)
        self.table = table_data(rows, st)
        self.view.refresh_table(self.table)


# ---- the view-models, derived by the workbench from the scenario, the receiving query, the
# focused head and the lab's settings ----------------------------------------------------------
# What the lab's inputs (and so the table) read of the settings: not the dtype, style or dropout.
INPUT_FIELDS = ("pad", "boost", "logit", "boost_row", "boost_key")
COMPUTING = "Computing the table for these settings… (the numbers shown are the previous ones)"


def lab_view_inputs(wb: Workbench) -> LabInputs:
    """The focused head as the lab computes it: padded mask, large logit."""
    return lab_inputs(wb.trace, wb.receiving, wb.lab_state(PrecisionLabState))


def precision_view(wb: Workbench) -> PrecisionData:
    """The weights in the lab's dtype and mask style."""
    sc, i, st = wb.scenario, wb.receiving, wb.lab_state(PrecisionLabState)
    inp = wb.derived(lab_view_inputs, lab=PrecisionLabState, fields=INPUT_FIELDS)
    return precision_data(inp, i, tuple(sc.query_labels), tuple(sc.tokens), st)


def precision_shown(wb: Workbench) -> tuple[PrecisionData, list[tuple[int, int, int]]]:
    """The weights in the lab's dtype and mask style with the runs of their leaked cells (at
    n = 4,096 finding those took 300 ms: with the weights, on the runner for a large head)."""
    data = wb.derived(precision_view, lab=PrecisionLabState)
    cells = data.leaked_cells
    return data, leak_runs(cells) if cells.any() else []


def lab_table(wb: Workbench) -> tuple[PrecisionRow, ...]:
    """The precision table's rows (every dtype and mask style) on the lab's inputs."""
    inp = wb.derived(lab_view_inputs, lab=PrecisionLabState, fields=INPUT_FIELDS)
    return table_rows(inp, float(wb.lab_state(PrecisionLabState).logit))


def dropout_view(wb: Workbench) -> DropoutData:
    """Dropout on the focused head's weights with the lab's p, seed and mode."""
    sc, i, st = wb.scenario, wb.receiving, wb.lab_state(PrecisionLabState)
    rows, cols = tuple(sc.query_labels), tuple(sc.tokens)
    return dropout_data(wb.trace, i, rows, cols, tuple(sc.v_axes), st)
