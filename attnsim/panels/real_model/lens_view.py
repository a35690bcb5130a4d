"""The Real model panel's "Lens and flow" page, on text A of the two texts: SmolLM2's logit
lens (a layers x positions table of the top next token and its probability, read from the
residual stream after each layer) and the attention flow (the rollout of the chosen token over
the input, beside the last layer's raw weights), run in the background with progress and
Cancel.

:class:`LensView` is the widget (no workbench); :class:`LensPart` the panel's side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.real_heads import FlowResult, LensResult, PairState, flow_job, lens_job
from attnsim.viewmodels.real_model import MODEL_TITLES

from ..kit.head_grid import weight_scale
from ..kit.numbers import fmt_number
from ..widgets import CaptionLabel
from .pair_grid import LayerPlot
from .patch_view import ResidMap
from .run_part import RunPart

LENS_JOB = "real_model.lens"
FLOW_ROWS = ["rollout", "last layer"]


class LensView(QWidget):
    run_clicked = Signal()
    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_button = QPushButton("Run lens and flow on A")
        self.run_button.clicked.connect(self.run_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(120)
        self.progress.setVisible(False)
        row = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.progress):
            row.addWidget(w)
        row.addStretch(1)
        self.note = CaptionLabel()
        self.note.setWordWrap(True)
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.by_layer = LayerPlot()  # the followed token's probability at the last position
        self.flow = ResidMap()
        self.flow.setMinimumHeight(90)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.by_layer, 1)
        layout.addWidget(self.flow, 1)

    def show_running(self, running: bool, fraction: float = 0.0) -> None:
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.progress.setValue(round(100 * fraction))

    def show_lens(self, r: LensResult | None) -> None:
        t = self.table
        if r is None:
            t.clear()
            t.setRowCount(0)
            t.setColumnCount(0)
            self.by_layer.show_values(None, "", "")
            self.by_layer.setVisible(False)
            return
        probs_by_layer = r.lens.token_probs
        self.by_layer.setVisible(probs_by_layer is not None)
        if probs_by_layer is not None:
            piece = r.token_piece.strip() or repr(r.token_piece)
            self.by_layer.show_values(
                probs_by_layer[:, -1],
                f"probability of '{piece}' as the next token after the last position, by layer",
                "after layer",
            )
        layers, n = len(r.top_pieces), len(r.pieces)
        t.setRowCount(layers)
        t.setColumnCount(n)
        t.setHorizontalHeaderLabels([p.strip() or repr(p) for p in r.pieces])
        t.setVerticalHeaderLabels([f"L{i}" for i in range(layers)])
        probs = r.lens.top_probs[:, :, 0]
        for layer in range(layers):
            for i in range(n):
                piece = r.top_pieces[layer][i]
                item = QTableWidgetItem(
                    f"{piece.strip() or repr(piece)} {fmt_number(float(probs[layer, i]), 2)}"
                )
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                t.setItem(layer, i, item)
        t.resizeColumnsToContents()

    def show_flow(self, r: FlowResult | None) -> None:
        if r is None:
            self.flow.refresh(None, ())
            return
        values = np.stack([r.flow.rollout, r.flow.last_weights])
        self.flow.refresh(values, r.pieces, FLOW_ROWS, weight_scale())


class LensPart(RunPart):
    """Runs the lens (SmolLM2) and the flow (either model) on text A."""

    def __init__(self, panel: Any, view: LensView) -> None:
        super().__init__(panel, view)
        self.lens: LensResult | None = None
        self.flow: FlowResult | None = None
        view.run_clicked.connect(self.run)

    def run(self) -> None:
        model, st = self.panel.state().model, self.panel.wb.lab_state(PairState)

        def work(progress, cancelled) -> tuple[LensResult | None, FlowResult]:
            if model != "smollm2":
                return None, flow_job(model, st.a, st.token, progress, cancelled)
            lens = lens_job(st.a, None, lambda f: progress(0.7 * f), cancelled)
            flow = flow_job(model, st.a, st.token, lambda f: progress(0.7 + 0.3 * f), cancelled)
            return lens, flow

        self.start_run(model, work, LENS_JOB, f"Running {MODEL_TITLES[model]} on text A…")

    def received(self, result: tuple[LensResult | None, FlowResult]) -> None:
        self.lens, self.flow = result

    def refresh(self) -> None:
        model = self.panel.state().model
        if self.flow is not None and self.flow.model != model:
            self.lens = self.flow = None
        self.view.show_lens(self.lens)
        self.view.show_flow(self.flow)
        if self.job is not None:
            return
        if self.flow is None:
            self.view.note.setText("The logit lens (SmolLM2) and the attention flow of text A.")
            return
        f = self.flow
        top = int(np.argmax(f.flow.rollout))
        share = fmt_number(float(f.flow.rollout[top]), 2)
        text = (
            f"Attention flow of {f.pieces[f.flow.position].strip()!r}: the rollout puts"
            f" {share} on {f.pieces[top].strip() or f.pieces[top]!r}."
        )
        if self.lens is None:
            text += " The logit lens needs SmolLM2, which predicts the next token."
        else:
            last = self.lens.top_pieces[-1][-1]
            text += f" Each cell: the top next token read after that layer; at the end, {last!r}."
        self.view.note.setText(text)
