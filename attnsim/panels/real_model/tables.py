"""The panel's tables: every head ranked by the chosen metric with an ablation check box per
head (``HeadsTable``), the next-token predictions with and without the ablated heads
(``PredictionsView``), and the induction probe's ranking and ablation table (``ProbeView``).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.real_model import (
    ABLATION_TITLES,
    METRIC_TITLES,
    PROBE_KINDS,
    ProbeResult,
    RunResult,
    head_name,
    probe_settings,
    ranking,
)

from ..kit.numbers import fmt_number
from ..widgets import SoftLabel

SIDE_BY_SIDE_W = 440  # the probe's two tables side by side from this width


def _table(columns: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(list(columns))
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    header = t.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    # the names take the spare width, so each number stays under its header
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    # rows as tall as a line of text, so ten predictions fit a laptop-sized dock
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
    t.setMinimumHeight(80)
    return t


def _item(text: str, number: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    if number:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


def _shown(piece: str) -> str:
    """A token piece readable in a cell: spaces as '·', line breaks as '↵' (as in the labels)."""
    return piece.replace(" ", "·").replace("\n", "↵").replace("\t", "→") or "∅"


def _fill(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            table.setItem(i, j, _item(text, number=j > 0))


class HeadsTable(QWidget):
    """Every head, best first by the metric; a check box ablates a head, a click selects it."""

    head_clicked = Signal(int, int)
    toggled = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = SoftLabel("")
        self.table = _table(("head", "metric", "ablate"))
        self.table.cellClicked.connect(self._clicked)
        self.table.itemChanged.connect(self._changed)
        self.rows: list[tuple[int, int]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.table, 1)

    def refresh(self, result: RunResult, metric: str, ablated: tuple[tuple[int, int], ...]) -> None:
        ranked = ranking(result, metric)
        order = "lowest" if metric == "entropy" else "highest"
        self.title.setText(f"Heads by {METRIC_TITLES[metric]} score, {order} first")
        self.table.setHorizontalHeaderLabels(["head", METRIC_TITLES[metric], "ablate"])
        self.rows = [(layer, head) for layer, head, _ in ranked]
        with QSignalBlocker(self.table):
            self.table.setRowCount(len(ranked))
            for i, (layer, head, value) in enumerate(ranked):
                self.table.setItem(i, 0, _item(head_name(layer, head)))
                self.table.setItem(i, 1, _item(fmt_number(value, 3), number=True))
                box = QTableWidgetItem("")
                box.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
                on = (layer, head) in ablated
                box.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
                self.table.setItem(i, 2, box)

    def clear(self) -> None:
        self.rows = []
        self.title.setText("")
        self.table.setRowCount(0)

    def _clicked(self, row: int, column: int) -> None:
        if column != 2 and 0 <= row < len(self.rows):
            self.head_clicked.emit(*self.rows[row])

    def _changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 2 and 0 <= item.row() < len(self.rows):
            self.toggled.emit(*self.rows[item.row()])


class PredictionsView(QWidget):
    """SmolLM2's top next tokens after the text, with the ablated heads and without."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = SoftLabel("")
        self.summary.setWordWrap(True)
        self.table = _table(("next token", "p", "p, no ablation"))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.summary)
        lay.addWidget(self.table, 1)

    def clear(self) -> None:
        self.summary.setText("")
        self.table.setRowCount(0)

    def refresh(self, result: RunResult) -> None:
        ablated = result.ablated
        names = ", ".join(head_name(*h) for h in ablated) or "none"
        if ablated:
            names += f" ({ABLATION_TITLES[result.ablation]})"
        if result.model != "smollm2":
            self.summary.setText(
                "MiniLM predicts no next token. Ablated heads: "
                f"{names}; sentence-embedding cosine to the unablated run "
                f"{fmt_number(result.cosine, 4)}."
            )
            self.table.setVisible(False)
            return
        self.table.setVisible(True)
        self.summary.setText(
            f"Mean next-token loss on the text {fmt_number(result.loss, 3)} nats"
            + (f" (Δ {fmt_number(result.loss_delta, 3)} from ablating {names})" if ablated else "")
            + "."
        )
        before = dict(result.base_top)
        rows = []
        for piece, prob in result.top:
            was = before.get(piece, math.nan)
            rows.append([_shown(piece), fmt_number(prob, 3),
                         "—" if math.isnan(was) else fmt_number(was, 3)])  # fmt: skip
        _fill(self.table, rows)
        self.table.setColumnHidden(2, not ablated)


class ProbeView(QWidget):
    """The repeated-random-token probe: heads by induction score (a click selects the head,
    so it can be enlarged, ablated or opened in the workbench), and the ablation table."""

    head_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heads: list[tuple[int, int]] = []
        self.summary = SoftLabel(
            "Probe (SmolLM2): press Probe to run random tokens repeated once and rank the heads "
            "by how much they attend to the token after the earlier copy."
        )
        self.summary.setWordWrap(True)
        self.ranking = _table(("head", "induction", "previous-token"))
        self.ranking.cellClicked.connect(self._clicked)
        self.ablations = _table(("heads zeroed", "repeated-half loss"))
        # both tables scroll in a short dock rather than raise the panel's minimum height
        for t in (self.ranking, self.ablations):
            t.setMinimumHeight(56)
        self.tables = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.tables.setContentsMargins(0, 0, 0, 0)
        self.tables.addWidget(self.ranking, 1)
        self.tables.addWidget(self.ablations, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.summary)
        lay.addLayout(self.tables, 1)

    def resizeEvent(self, e: QResizeEvent) -> None:  # Qt's name
        # side by side where both fit (each gets the full height: a short dock shows more
        # rows), one above the other in a narrow dock
        wide = e.size().width() >= SIDE_BY_SIDE_W
        self.tables.setDirection(
            QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        )
        super().resizeEvent(e)

    def refresh(self, result: ProbeResult | None) -> None:
        if result is None:
            return
        self.summary.setText(
            f"{probe_settings(result)}: heads by induction score, and the repeated half's "
            "mean loss (nats) with heads zeroed."
        )
        self.summary.setToolTip(
            "Induction score: a head's mean weight, in the repeated half, on the token that "
            "followed the current token's earlier copy. A head that attends there can copy "
            "what came next, which is what predicting a repeated sequence takes."
        )
        rows = [
            [head_name(layer, head), fmt_number(score, 3),
             fmt_number(float(result.previous_token[layer, head]), 3)]
            for layer, head, score in result.top(12)
        ]  # fmt: skip
        self.heads = [(layer, head) for layer, head, _ in result.top(12)]
        _fill(self.ranking, rows)
        _fill(self.ablations, [[PROBE_KINDS[a.kind], fmt_number(a.repeated_loss, 3)]
                               for a in result.ablations])  # fmt: skip

    def _clicked(self, row: int, column: int) -> None:
        if 0 <= row < len(self.heads):
            self.head_clicked.emit(*self.heads[row])
