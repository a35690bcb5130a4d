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
from attnsim.views.precision_lab import (
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
from .mask_view import MaskControls, PrecisionView


class PrecisionLabPanel(LabPanel):
    """Mask semantics, reduced precision and dropout on the current scenario's head."""

    panel_id = "precision_lab"
    title = "Precision and masks"

    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        # One entry: the table depends on the scenario's head, the padding and the large logit
        # (value and cell), not on the dtype or style: switching those reuses its 16 heads.
        self._table_key: tuple[object, ...] | None = None
        self._table_rows: tuple[PrecisionRow, ...] = ()
        self._table_job: tuple[tuple[object, ...], LabInputs] | None = None
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
        # In a short dock the page scrolls rather than shrink the heatmap to a few pixels.
        self.add_page("Masks and precision", self.mask_controls, self.view, min_height=330)

        self.dropout_controls = self.connect_controls(DropoutControls())
        self.dropout_view = DropoutView()
        self.add_page("Dropout", self.dropout_controls, self.dropout_view, min_height=330)

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
        if self._table_job is not None:  # a figure shows the finished table, never a grey one
            self._table_timer.stop()
            self._compute_table()
        parts = self.view.parts if self.tabs.currentIndex() == 0 else (self.dropout_view,)
        return content_parts(self, *parts)

    def refresh(self) -> None:
        wb, st = self.wb, self.state()
        sc, tr, i = wb.scenario, wb.trace, wb.receiving
        values = asdict(st)
        rows, cols = tuple(sc.query_labels), tuple(sc.tokens)
        if self.tabs.currentIndex() == 0:
            inp = lab_inputs(tr, i, st)
            self.precision = precision_data(inp, i, rows, cols, st)
            with self.updating():
                self.mask_controls.show_state(st, int(tr.weights.shape[1]))
            self.view.refresh(self.precision)
            # The trace itself (not its id) is in the key: a new scenario is a new trace, and
            # holding it keeps its id from being reused by another.
            key = (tr, st.pad, inp.boost, st.logit)
            if key == self._table_key:
                self._show_table(st)
            else:
                # The table's 16 heads cost more than the heatmap: they follow one pass of the
                # event loop later (the old table greyed until then), so the edit itself
                # repaints within a frame.
                self._table_job = (key, inp)
                self.view.table.set_stale(True)
                self._table_timer.start()
        else:
            self.dropout = dropout_data(tr, i, rows, cols, tuple(sc.v_axes), st)
            held = self.drag_of("p") is not None and self.dropout_controls.p_slider.isSliderDown()
            with self.updating():
                self.dropout_controls.refresh(values, held)
            self.dropout_view.refresh(self.dropout)

    def _compute_table(self) -> None:
        if self._table_job is None:
            return
        (key, inp), self._table_job = self._table_job, None
        self._table_rows = table_rows(inp, float(key[3]))  # type: ignore[arg-type]
        self._table_key = key
        self._show_table(self.state())

    def _show_table(self, st: PrecisionLabState) -> None:
        self.table = table_data(self._table_rows, st)
        self.view.refresh_table(self.table)
