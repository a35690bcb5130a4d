"""The receiving token's arithmetic, key by key: score, logit, weight, contribution, output."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.model.workbench import Workbench

from .base import Panel, content_parts
from .kit.numbers import fmt_number, fmt_vector

COLUMNS = ["key", "q · k", "logit", "after mask", "weight", "‖w v‖"]
MAX_ROWS = 64  # beyond this many keys the table lists the largest weights only


class ReadoutPanel(Panel):
    """One row per key for the receiving query: where each number of its weight comes from."""

    panel_id = "readout"
    title = "Receiving token"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Receiving (query) token:"))
        self.picker = QComboBox()
        self.picker.setToolTip("The token whose attention row is explained below")
        self.picker.currentIndexChanged.connect(self._picked)
        top.addWidget(self.picker, 1)
        layout.addLayout(top)
        self.formula = QLabel()
        self.formula.setTextFormat(Qt.TextFormat.RichText)
        self.formula.setWordWrap(True)
        layout.addWidget(self.formula)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table, 1)
        self.output = QLabel()
        self.output.setWordWrap(True)
        self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.output)
        self._bold, self._normal = QFont(), QFont()
        self._bold.setBold(True)
        self._muted, self._plain = QBrush(QColor("#999999")), QBrush(QColor("#000000"))
        self.schedule_refresh()

    def _picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.wb.set_receiving(index)

    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.formula, self.table, self.output)

    def refresh(self) -> None:
        wb = self.wb
        sc = wb.scenario
        tr = wb.trace
        i = wb.receiving
        with self.updating():
            labels = list(sc.query_labels)
            if [self.picker.itemText(j) for j in range(self.picker.count())] != labels:
                self.picker.clear()
                self.picker.addItems(labels)
            self.picker.setCurrentIndex(i)
        scale_txt = f"√{tr.d_k}" if tr.scale else "1"
        self.formula.setText(
            f"<b>{labels[i]}</b> attends: weight = softmax over keys of "
            f"(q · k) / ({scale_txt} × T = {fmt_number(tr.divisor, 3)}), "
            f"T = {fmt_number(tr.temperature, 3)}, "
            f"mask: {sc.mask_kind}"
            + (
                " <span style='color:#b00'>(masked with 0, not −∞)</span>"
                if tr.mask_value == 0
                else ""
            )
        )
        n = sc.n_tokens
        # Long sequences: the keys that matter most, in sentence order.
        if n > MAX_ROWS:
            keys = np.sort(np.argsort(-tr.weights[i], kind="stable")[:MAX_ROWS])
            self.table.setToolTip(f"the {MAX_ROWS} keys with the largest weights, of {n}")
        else:
            keys = np.arange(n)
            self.table.setToolTip("")
        self._fill_table(sc, tr, i, labels, keys)
        shown = "" if n <= MAX_ROWS else f"   ·   {MAX_ROWS} largest weights of {n} keys shown"
        self.output.setText(
            f"output = Σ w·v = {fmt_vector(tr.output[i], 3)}   ·   "
            f"entropy {fmt_number(tr.entropy[i], 3)} bits of {fmt_number(tr.max_entropy[i], 3)} max"
            + shown
        )

    def _fill_table(self, sc, tr, i: int, labels: list[str], keys: np.ndarray) -> None:
        rows = len(keys)
        if self.table.rowCount() != rows:
            self.table.setRowCount(rows)
            for r in range(rows):
                for c in range(len(COLUMNS)):
                    item = QTableWidgetItem()
                    item.setTextAlignment(
                        (Qt.AlignmentFlag.AlignRight if c else Qt.AlignmentFlag.AlignLeft)
                        | Qt.AlignmentFlag.AlignVCenter
                    )
                    self.table.setItem(r, c, item)
        top = int(np.argmax(tr.weights[i]))
        for r, j in enumerate(int(k) for k in keys):
            allowed = bool(tr.mask[i, j])
            cells = [
                sc.tokens[j],
                fmt_number(tr.score(i, j)),
                fmt_number(tr.logits[i, j]),
                fmt_number(tr.masked_logit(i, j)),
                fmt_number(tr.weights[i, j], 4),
                fmt_number(tr.contribution_norm(i, j)),
            ]
            tip = (
                f"{labels[i]} → {sc.tokens[j]} (query {i + 1}, key {j + 1}): "
                f"q·k = {fmt_number(tr.score(i, j), 6)}, "
                f"logit = {fmt_number(tr.logits[i, j], 6)}, "
                f"weight = {fmt_number(tr.weights[i, j], 6)}"
            )
            for c, text in enumerate(cells):
                item = self.table.item(r, c)
                item.setText(text)
                item.setToolTip(tip)
                item.setForeground(self._muted if not allowed else self._plain)
                item.setFont(self._bold if j == top else self._normal)
