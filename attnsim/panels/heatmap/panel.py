"""Scores, masked logits and weights as heatmaps: rows are queries, columns are keys.

The panel edits the scenario's mask, mask value, temperature and scaling (so every panel
follows), lets a click choose the receiving query or toggle a custom mask cell, and shows one
thumbnail per head in multi-head scenarios. Everything drawn comes from the workbench's traces.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnsim.engine import edits
from attnsim.engine.attention import HeadTrace
from attnsim.model.workbench import Workbench
from attnsim.viewmodels.heatmap import VIEWS, canvas_content, controls_data, stage_data

from ..base import Panel, content_parts
from ..kit.numbers import fmt_fixed
from .canvas import HeatmapCanvas
from .controls import HeatmapControls
from .head_grid import HeadGrid, Thumb
from .note import NoteBox, heatmap_note

SMALL_THUMBS_BELOW = 400  # panel height (px) under which the head thumbnails shrink
SHORT_PANEL_BELOW = 300  # panel height (px) under which the note under the figure is hidden
SIDE_HEADS_MIN_CANVAS_W = 360  # the heatmaps keep this width when the thumbnails go beside them


class HeatmapPanel(Panel):
    """The score → masked logit → weight pipeline of the focused head, as heatmaps."""

    panel_id = "heatmap"
    title = "Scores and weights"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.view = "stages"
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)

        self.controls = HeatmapControls()
        c = self.controls
        c.view_picked.connect(self._view_picked)
        c.mask_picked.connect(self._mask_picked)
        c.zero_toggled.connect(self._zero_toggled)
        c.scale_toggled.connect(self._scale_toggled)
        c.numbers_toggled.connect(lambda _: self.schedule_refresh())
        c.temperature_set.connect(self._set_temperature)
        # Snap the slider to the committed temperature.
        c.temperature_released.connect(self.schedule_refresh)
        c.refused.connect(
            lambda why: self.show_refusal(self.refuse(ValueError(f"temperature: {why}")))
        )
        # The controls, where tests and the export find them.
        self.view_box, self.mask_box, self.zero_box = c.view_box, c.mask_box, c.zero_box
        self.t_slider, self.t_spin = c.t_slider, c.t_spin
        self.scale_box, self.numbers_box = c.scale_box, c.numbers_box
        layout.addWidget(c)

        # The figure: what an export shows (no controls).
        self.figure = QWidget()
        self.figure.setObjectName("heatmap-figure")
        self.figure.setAutoFillBackground(True)
        pal = self.figure.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor("white"))
        self.figure.setPalette(pal)
        fig = QVBoxLayout(self.figure)
        fig.setContentsMargins(0, 0, 0, 0)
        fig.setSpacing(2)
        self._figure_layout = fig
        self.heads = HeadGrid()
        self.heads.head_clicked.connect(self._head_clicked)
        fig.addWidget(self.heads)
        self.canvas = HeatmapCanvas()
        self.canvas.cell_clicked.connect(self._cell_clicked)
        self.canvas.row_clicked.connect(self._row_clicked)
        self.canvas.col_clicked.connect(self._col_clicked)
        # The head thumbnails go above the heatmaps, or beside them in a short, wide panel.
        self._matrices_row = QHBoxLayout()
        self._matrices_row.setContentsMargins(0, 0, 0, 0)
        self._matrices_row.setSpacing(4)
        self._matrices_row.addWidget(self.canvas, 1)
        fig.addLayout(self._matrices_row, 1)
        self.note = NoteBox()
        fig.addWidget(self.note)
        layout.addWidget(self.figure, 1)
        self.refusal = QLabel()
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #b00020;")
        self.refusal.hide()
        layout.addWidget(self.refusal)
        self.schedule_refresh()

    def flush_in_turn(self) -> None:
        Panel.flush(self)  # large stages pooled one a turn (see in_turns.StagesInTurns)

    def flush(self) -> None:
        """Refresh now, and draw the new stages in the next paint (tests, exports)."""
        super().flush()
        self.canvas.in_turns.finish()

    def figure_widget(self) -> QWidget:
        return self.figure

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # A short dock keeps its height for the heatmaps: the head thumbnails get smaller.
        h = self.height()
        self.heads.set_max_thumb(72.0 if h >= SMALL_THUMBS_BELOW else 40.0 if h >= 320 else 28.0)
        # A laptop-sized dock keeps its height for the matrices; the note repeats the status bar.
        self.note.setVisible(h >= SHORT_PANEL_BELOW)
        self._place_heads()

    def _place_heads(self) -> None:
        """Thumbnails beside the heatmaps when the panel is short and wide enough (a row of
        them above would leave the matrices a sliver), else above them."""
        grid = self.heads
        side_w = grid.column_width()
        room_h = self.height() - self.controls.sizeHint().height() - 16
        side = (
            len(grid.thumbs) > 1
            and self.height() < SMALL_THUMBS_BELOW
            and self.width() - side_w >= SIDE_HEADS_MIN_CANVAS_W
            and grid.column_height() <= room_h
        )
        if side:
            # Beside the heatmaps the thumbnails may use the height they have.
            size = grid.max_thumb
            while size < 56 and grid.column_height(size + 4) <= room_h:
                size += 4
            grid.set_max_thumb(size)
        if side == (grid.column_w is not None):
            return
        if side:
            self._figure_layout.removeWidget(grid)
            self._matrices_row.insertWidget(0, grid, 0, Qt.AlignmentFlag.AlignTop)
            grid.set_column(grid.column_width())
        else:
            self._matrices_row.removeWidget(grid)
            self._figure_layout.insertWidget(0, grid)
            grid.set_column(None)

    # ---- user actions -> edits (never called during a redraw) ----------------------------------
    def show_refusal(self, text: str) -> None:
        # ScenarioError problems may already start with "refused:"; say it once.
        text = text.removeprefix("refused: ").removeprefix("Refused: ")
        self.refusal.setText(f"Refused: {text}")
        self.refusal.show()
        self.schedule_refresh()  # put the controls back to the unchanged scenario

    def clear_refusal(self) -> None:
        self.refusal.hide()

    def _view_picked(self, view: str) -> None:
        if self.is_updating:
            return
        self.view = view
        self.schedule_refresh()

    def _mask_picked(self, kind: str) -> None:
        if self.is_updating:
            return
        sc = self.wb.scenario
        if kind == sc.mask_kind:
            return
        if kind == "custom":
            m = sc.mask_matrix()
            if m is None:
                m = np.ones((sc.n_queries, sc.n_tokens), dtype=bool)
            if self.propose(lambda: sc.replace(mask=m), "Custom mask (click cells to change it)"):
                self.wb.say("Custom mask: click a cell to allow or forbid that query → key pair")
        else:
            self.propose(lambda: sc.replace(mask=kind), f"Mask: {kind}")

    def _zero_toggled(self, checked: bool) -> None:
        if self.is_updating:
            return
        value = 0.0 if checked else -math.inf
        text = "Mask with 0 (the mistake)" if checked else "Mask with −∞"
        self.propose(lambda: self.wb.scenario.replace(mask_value=value), text)

    def _scale_toggled(self, checked: bool) -> None:
        if self.is_updating:
            return
        text = "Scale scores by 1/√d_k" if checked else "Do not scale scores"
        self.propose(lambda: self.wb.scenario.replace(scale=checked), text)

    def _set_temperature(self, t: float, drag: int | None) -> None:
        if self.is_updating or t == self.wb.scenario.temperature:
            return
        self.propose(
            lambda: self.wb.scenario.replace(temperature=t),
            f"Temperature {fmt_fixed(t, 3)}",
            drag=drag,
        )

    def _cell_clicked(self, tile: int, i: int, j: int) -> None:
        sc = self.wb.scenario
        if sc.mask_kind == "custom":
            m = sc.mask_matrix()
            allowed = m is None or bool(m[i, j])
            verb = "Forbid" if allowed else "Allow"
            text = f"{verb} {sc.query_labels[i]} → {sc.tokens[j]}"
            self.propose(lambda: edits.toggle_mask_cell(sc, i, j), text)
            return
        self.wb.set_receiving(i)
        self.wb.set_focused_key(j)

    def _row_clicked(self, i: int) -> None:
        self.wb.set_receiving(i)

    def _col_clicked(self, j: int) -> None:
        self.wb.set_focused_key(None if self.wb.focused_key == j else j)

    def _head_clicked(self, _layer: int, h: int) -> None:  # one layer of heads
        self.wb.set_focused_head(h)

    # ---- redraw ---------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.figure)

    def computing_anchor(self) -> QWidget | None:
        return self.canvas  # the matrices, not the caption under them

    def refresh(self) -> None:
        wb = self.wb
        sc = wb.scenario
        with self.updating():
            self.controls.refresh(controls_data(sc, self.view))
        trace = wb.trace
        self.show_trace(trace, sc.query_labels, sc.tokens, wb.receiving, wb.focused_key)
        heads = wb.result.heads
        if len(heads) > 1:
            names = [h.name for h in sc.heads] if sc.mode == "tokens" else []
            thumbs = [
                Thumb(
                    f"head {h + 1}" + (f" · {names[h]}" if h < len(names) and names[h] else ""),
                    stage_data(tr, "weights"),
                )
                for h, tr in enumerate(heads)
            ]
            self.heads.refresh(thumbs, wb.focused_head, wb.receiving)
            self.heads.show()
        else:
            self.heads.refresh([], 0, 0)
            self.heads.hide()
        self._place_heads()
        args = (sc, trace, heads, wb.receiving, wb.focused_head)
        self.note.set_texts(heatmap_note(*args), heatmap_note(*args, hints=False))

    def show_trace(
        self,
        trace: HeadTrace,
        row_labels: tuple[str, ...],
        col_labels: tuple[str, ...],
        receiving: int,
        focused_key: int | None = None,
    ) -> None:
        """Hand the canvas a trace's stages (the benchmarks call this with fresh arrays)."""
        stages = VIEWS[self.view][1]
        old = self.canvas.content
        numbers = self.numbers_box.isChecked()
        rows, cols = tuple(row_labels), tuple(col_labels)
        if old is not None and old.same_numbers(trace, stages, numbers, rows, cols):
            # Same numbers: only the selection moved, keep the drawn images (n = 2048).
            self.canvas.set_selection(receiving, focused_key)
            return
        self.canvas.refresh(
            canvas_content(trace, stages, rows, cols, receiving, focused_key, show_numbers=numbers)
        )
