"""Scores, masked logits and weights as heatmaps: rows are queries, columns are keys.

The panel edits the scenario's mask, mask value, temperature and scaling (so every panel
follows), lets a click choose the receiving query or toggle a custom mask cell, and shows one
thumbnail per head in multi-head scenarios. Everything drawn comes from the workbench's traces.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE, Scenario
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.views.heatmap import (
    VIEWS,
    forbidden_summary,
    masked_cells,
    score_limit,
    stage_data,
)

from ._heatmap_view import CanvasContent, HeadGrid, HeatmapCanvas, Thumb
from .base import Panel, content_parts
from .kit.log_slider import LogSlider
from .style import fmt
from .widgets import FlowLayout, SignificantSpinBox, group

MASKS = [("none", "none (bidirectional)"), ("causal", "causal"), ("custom", "custom (click cells)")]
SMALL_THUMBS_BELOW = 400  # panel height (px) under which the head thumbnails shrink
SHORT_PANEL_BELOW = 300  # panel height (px) under which the note under the figure is hidden


class _Escaped:
    """``labels[i]`` HTML-escaped on demand."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self._labels = labels

    def __getitem__(self, i: int) -> str:
        return html.escape(self._labels[i])


class HeatmapPanel(Panel):
    """The score → masked logit → weight pipeline of the focused head, as heatmaps."""

    panel_id = "heatmap"
    title = "Scores and weights"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._drag: int | None = None
        self.view = "stages"
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)

        # Flow rows: in a narrow dock the controls wrap instead of widening the panel.
        row1 = FlowLayout(h_spacing=10, v_spacing=3)
        self.view_box = QComboBox()
        for key, (text, _) in VIEWS.items():
            self.view_box.addItem(text, key)
        self.view_box.setToolTip("Which stages of the computation to draw side by side")
        self.view_box.currentIndexChanged.connect(self._view_picked)
        row1.addWidget(group(QLabel("Show:"), self.view_box, grow=self.view_box))
        self.mask_box = QComboBox()
        for key, text in MASKS:
            self.mask_box.addItem(text, key)
        self.mask_box.setToolTip(
            "none: every query reads every key; causal: only keys at or before it; "
            "custom: click a cell to allow or forbid it"
        )
        self.mask_box.currentIndexChanged.connect(self._mask_picked)
        row1.addWidget(group(QLabel("Mask:"), self.mask_box, grow=self.mask_box))
        for box in (self.view_box, self.mask_box):
            # Let the dock be narrow: long item texts are elided instead of widening the panel.
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.setMinimumContentsLength(7)
        self.zero_box = QCheckBox("mask with 0, not −∞")
        self.zero_box.setToolTip(
            "The classic mistake: writing 0 into forbidden logits instead of −∞, so forbidden "
            "keys still receive weight"
        )
        self.zero_box.toggled.connect(self._zero_toggled)
        row1.addWidget(self.zero_box)
        layout.addLayout(row1)

        row2 = FlowLayout(h_spacing=10, v_spacing=3)
        self.t_slider = LogSlider()
        self.t_slider.setToolTip(
            f"Logits are divided by T (log scale, {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g})"
        )
        self.t_slider.sliderPressed.connect(self._slider_pressed)
        self.t_slider.sliderReleased.connect(self._slider_released)
        self.t_slider.valueChanged.connect(self._slider_moved)
        self.t_slider.setMinimumWidth(60)
        # The scenario's whole range, to 4 significant digits (0.001234 as well as 1000).
        self.t_spin = SignificantSpinBox(MIN_TEMPERATURE, MAX_TEMPERATURE, digits=4)
        self.t_spin.refused.connect(lambda why: self.refuse(ValueError(f"temperature: {why}")))
        self.t_spin.setToolTip(
            f"Temperature, {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g} "
            "(type a value and press Enter)"
        )
        self.t_spin.valueChanged.connect(self._spin_changed)
        self.t_spin.setMaximumWidth(84)
        row2.addWidget(
            group(QLabel("Temperature T:"), self.t_slider, self.t_spin, grow=self.t_slider)
        )
        self.scale_box = QCheckBox("÷ √d_k")
        self.scale_box.setToolTip("Divide q·k by the square root of the key width d_k")
        self.scale_box.toggled.connect(self._scale_toggled)
        row2.addWidget(self.scale_box)
        self.numbers_box = QCheckBox("numbers")
        self.numbers_box.setChecked(True)
        self.numbers_box.setToolTip(
            "Write each cell's value (when n ≤ 16 and cells are big enough)"
        )
        self.numbers_box.toggled.connect(lambda _: self.schedule_refresh())
        row2.addWidget(self.numbers_box)
        layout.addLayout(row2)

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
        self.heads = HeadGrid()
        self.heads.head_clicked.connect(self._head_clicked)
        fig.addWidget(self.heads)
        self.canvas = HeatmapCanvas()
        self.canvas.cell_clicked.connect(self._cell_clicked)
        self.canvas.row_clicked.connect(self._row_clicked)
        self.canvas.col_clicked.connect(self._col_clicked)
        fig.addWidget(self.canvas, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.note.setStyleSheet("background: white; padding: 2px 4px;")
        fig.addWidget(self.note)
        layout.addWidget(self.figure, 1)
        self.refusal = QLabel()
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #b00020;")
        self.refusal.hide()
        layout.addWidget(self.refusal)
        workbench.changed.connect(self._clear_refusal)
        self.schedule_refresh()

    def figure_widget(self) -> QWidget:
        return self.figure

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # A short dock keeps its height for the heatmaps: the head thumbnails get smaller.
        h = self.height()
        self.heads.set_max_thumb(72.0 if h >= SMALL_THUMBS_BELOW else 40.0 if h >= 320 else 28.0)
        # A laptop-sized dock keeps its height for the matrices; the note repeats the status bar.
        self.note.setVisible(h >= SHORT_PANEL_BELOW)

    # ---- user actions -> edits (never called during a redraw) ----------------------------------
    def show_refusal(self, text: str) -> None:
        # ScenarioError problems may already start with "refused:"; say it once.
        text = text.removeprefix("refused: ").removeprefix("Refused: ")
        self.refusal.setText(f"Refused: {text}")
        self.refusal.show()
        self.schedule_refresh()  # put the controls back to the unchanged scenario

    def _clear_refusal(self, *_: object) -> None:
        self.refusal.hide()

    def _view_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        self.view = str(self.view_box.itemData(index))
        self.schedule_refresh()

    def _mask_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        sc = self.wb.scenario
        kind = str(self.mask_box.itemData(index))
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
        if t == self.wb.scenario.temperature:
            return
        self.propose(
            lambda: self.wb.scenario.replace(temperature=t), f"Temperature {fmt(t, 3)}", drag=drag
        )

    def _slider_pressed(self) -> None:
        self._drag = new_drag_id()

    def _slider_released(self) -> None:
        self._drag = None
        self.schedule_refresh()  # snap the slider to the committed temperature

    def _slider_moved(self, pos: int) -> None:
        if self.is_updating:
            return
        drag = self._drag if self.t_slider.isSliderDown() else None
        self._set_temperature(self.t_slider.value_at(pos), drag)

    def _spin_changed(self, value: float) -> None:
        if self.is_updating:
            return
        self._set_temperature(float(value), None)

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

    def _head_clicked(self, h: int) -> None:
        self.wb.set_focused_head(h)

    # ---- redraw ---------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.figure)

    def refresh(self) -> None:
        wb = self.wb
        sc = wb.scenario
        self._sync_controls(sc)
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
            self.heads.set_heads(thumbs, wb.focused_head, wb.receiving)
            self.heads.show()
        else:
            self.heads.set_heads([], 0, 0)
            self.heads.hide()
        self.note.setText(self._note(sc, trace, heads))

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
        if (
            old is not None
            and old.trace is trace
            and tuple(s.stage for s in old.stages) == stages
            and old.show_numbers == numbers
            and old.row_labels == tuple(row_labels)
            and old.col_labels == tuple(col_labels)
        ):
            # Same numbers: only the selection moved, keep the drawn images (n = 2048).
            self.canvas.set_selection(receiving, focused_key)
            return
        limit = score_limit(trace) if {"scores", "masked"} & set(stages) else None
        allowed = masked_cells(trace)  # one scan of the mask, shared by every stage
        data = [stage_data(trace, s, limit=limit, allowed=allowed) for s in stages]
        # The trace's own entropies (cached there, shared with every other panel).
        entropy = trace.entropy if "weights" in stages else None
        self.canvas.set_content(
            CanvasContent(
                trace=trace,
                stages=data,
                row_labels=tuple(row_labels),
                col_labels=tuple(col_labels),
                receiving=receiving,
                focused_key=focused_key,
                entropy=entropy,
                entropy_max=trace.max_entropy if entropy is not None else None,
                show_numbers=numbers,
            )
        )

    def _sync_controls(self, sc: Scenario) -> None:
        blockers = [
            QSignalBlocker(w)
            for w in (self.mask_box, self.zero_box, self.t_slider, self.t_spin, self.scale_box)
        ]
        try:
            with self.updating():
                self.view_box.setCurrentIndex(list(VIEWS).index(self.view))
                self.mask_box.setCurrentIndex([k for k, _ in MASKS].index(sc.mask_kind))
                self.zero_box.setChecked(sc.mask_value == 0.0)
                if not self.t_slider.isSliderDown():
                    self.t_slider.show_value(sc.temperature)
                self.t_spin.setValue(sc.temperature)
                self.scale_box.setChecked(sc.scale)
                self.scale_box.setText(f"÷ √d_k (√{sc.d_k})")
        finally:
            del blockers

    def _note(self, sc: Scenario, trace: HeadTrace, heads: tuple[HeadTrace, ...]) -> str:
        i = self.wb.receiving
        # Escape only the labels the note names (not all n of them).
        labels = _Escaped(sc.query_labels)
        ent = trace.entropy
        # The receiving row's ceiling: under a 0 mask forbidden keys take weight too.
        top = float(trace.max_entropy[i])
        parts = []
        if len(heads) > 1:
            name = sc.heads[self.wb.focused_head].name if sc.mode == "tokens" else ""
            parts.append(
                f"Head {self.wb.focused_head + 1} of {len(heads)}"
                + (f" ({name})" if name else "")
                + " · click a thumbnail to focus another."
            )
        parts.append(
            "Rows: the query that attends; columns: the key it attends to. "
            f"Receiving <b>{labels[i]}</b>: entropy {fmt(float(ent[i]), 3)} bits "
            f"(at most {fmt(top, 3)}). n = {sc.n_tokens} keys, mask: {sc.mask_kind}"
            + (" — click a cell to allow/forbid it." if sc.mask_kind == "custom" else ".")
        )
        if trace.mask_value == 0.0:
            fs = forbidden_summary(trace)
            if fs.n_forbidden == 0:
                parts.append("Mask value 0 changes nothing here: no key is forbidden.")
            else:
                parts.append(
                    "<span style='color:#b00020'><b>Masked with 0 instead of −∞:</b> "
                    f"forbidden keys still receive weight: up to {fmt(fs.worst, 3)} of a "
                    f"row's attention (row {labels[fs.worst_row]}), {fmt(fs.mean, 3)} per row "
                    f"on average; {labels[i]}: {fmt(float(fs.per_row[i]), 3)}.</span>"
                )
        return " ".join(parts)
