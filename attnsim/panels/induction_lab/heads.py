"""Per-head numbers: previous-token and induction scores with an ablation toggle per head, the
losses with those heads removed, and the sortable table of single-head ablations.

``refresh(LabView)`` and ``show_ablations(AblationTable | None, note)`` draw; a toggle emits
``toggled(layer, head)``; the zero / mean choice emits ``mode_changed(mode)``.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.induction_lab import AblationTable, LabView

from ..kit.numbers import fmt_number
from ..widgets import FlowLayout, group
from .patterns import head_name
from .steady import SteadyLabel

SCORE_ROWS = ("prev-token", "induction")
ABLATION_COLUMNS = ("head", "mode", "loss", "Δ loss", "rep. half", "Δ rep.")


def _table(columns: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(list(columns))
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.setMinimumHeight(90)
    return t


class NumberItem(QTableWidgetItem):
    """A cell that sorts by its number, not its text."""

    def __init__(self, value: float, digits: int = 3) -> None:
        super().__init__()
        self.set_value(value, digits)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def set_value(self, value: float, digits: int = 3) -> None:
        self.value = float(value)
        self.setText(fmt_number(value, digits) if np.isfinite(value) else "—")

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, NumberItem):
            return self.value < other.value
        return super().__lt__(other)


class HeadsView(QWidget):
    toggled = Signal(int, int)
    mode_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        self.toggles_row = FlowLayout(h_spacing=4, v_spacing=2)
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["zero", "mean"])
        self.mode_combo.setToolTip("Ablate a head by zeroing its output or by its batch mean")
        self.mode_combo.currentTextChanged.connect(self._mode)
        self.toggles_row.addWidget(group(QLabel("ablate"), self.mode_combo))
        lay.addLayout(self.toggles_row)
        self.toggles: dict[tuple[int, int], QCheckBox] = {}
        self.losses = SteadyLabel(wrap=True)  # new with every training chunk
        lay.addWidget(self.losses)
        # Heads across, the two scores down: every head fits without scrolling.
        self.scores = _table(())
        self.scores.setRowCount(len(SCORE_ROWS))
        self.scores.setVerticalHeaderLabels(list(SCORE_ROWS))
        self.scores.verticalHeader().setVisible(True)
        self.scores.setMinimumHeight(0)
        self._score_heads: list[str] = []  # the columns' heads
        lay.addWidget(self.scores)
        self.ablation_title = QLabel("Each head ablated alone")
        self.ablation_title.setWordWrap(True)
        lay.addWidget(self.ablation_title)
        self.ablations = _table(ABLATION_COLUMNS)
        # the columns share the table's width: no sideways scrolling for six short columns
        header = self.ablations.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(44)
        self.ablations.setSortingEnabled(True)
        # The heads the repeated half depends on most come first.
        self.ablations.sortByColumn(5, Qt.SortOrder.DescendingOrder)
        lay.addWidget(self.ablations, 1)
        self._ablation_table: AblationTable | None = None  # the one the rows show

    def _mode(self, mode: str) -> None:
        self.mode_changed.emit(mode)

    def _ensure_toggles(self, n_layers: int, n_heads: int) -> None:
        wanted = [(layer, h) for layer in range(n_layers) for h in range(n_heads)]
        if list(self.toggles) == wanted:
            return
        for box in self.toggles.values():
            self.toggles_row.removeWidget(box)
            box.deleteLater()
        self.toggles = {}
        for layer, head in wanted:
            box = QCheckBox(head_name(layer, head))
            box.setToolTip(f"Remove head {head} of layer {layer} from the model")
            box.clicked.connect(lambda _=False, a=layer, b=head: self.toggled.emit(a, b))
            self.toggles_row.addWidget(box)
            self.toggles[(layer, head)] = box

    def refresh(self, view: LabView, mode: str) -> None:
        self._ensure_toggles(view.n_layers, view.n_heads)
        for key, box in self.toggles.items():
            with QSignalBlocker(box):
                box.setChecked(key in view.ablated)
        with QSignalBlocker(self.mode_combo):
            self.mode_combo.setCurrentText(mode)
        text = (
            f"loss {fmt_number(view.loss, 3)}; first half {fmt_number(view.first_loss, 3)}, "
            f"repeated half {fmt_number(view.repeated_loss, 3)}"
        )
        if view.ablated:
            names = ", ".join(head_name(*k) for k in view.ablated)
            text += (
                f" with {names} ablated (intact: {fmt_number(view.base_first_loss, 3)}, "
                f"{fmt_number(view.base_repeated_loss, 3)})"
            )
        self.losses.setText(text)
        heads = [(layer, h) for layer in range(view.n_layers) for h in range(view.n_heads)]
        t = self.scores
        names = [head_name(*k) for k in heads]
        if names != self._score_heads:  # new heads: new columns (a new model, not a chunk)
            self._score_heads = names
            t.setColumnCount(len(heads))
            t.setHorizontalHeaderLabels(names)
        for j, (layer, h) in enumerate(heads):
            for i, x in enumerate((view.previous_token[layer, h], view.induction[layer, h])):
                item = t.item(i, j)
                if not isinstance(item, NumberItem):
                    t.setItem(i, j, NumberItem(x, 2))
                elif item.value != float(x) or np.isnan(x) != np.isnan(item.value):
                    item.set_value(x, 2)
        if t.rowHeight(0) != t.sizeHintForRow(0) or t.rowHeight(1) != t.sizeHintForRow(1):
            t.resizeRowsToContents()
        # Room for the scroll bar whenever the heads may not fit across: its visibility is only
        # known after the layout, and without the room it would cover the induction row.
        wide = t.horizontalHeader().length() > t.viewport().width() or len(heads) > 8
        bar = t.horizontalScrollBar().sizeHint().height() if wide else 0
        height = t.horizontalHeader().sizeHint().height() + t.rowHeight(0) + t.rowHeight(1)
        if t.minimumHeight() != height + bar + 4 or t.maximumHeight() != height + bar + 4:
            t.setFixedHeight(height + bar + 4)

    def show_ablations(self, table: AblationTable | None, note: str = "") -> None:
        t = self.ablations
        if table is not self._ablation_table or (table is None and t.rowCount()):
            self._fill_ablations(table)
        base = (
            "" if table is None
            else f" (intact: loss {fmt_number(table.base_loss, 3)}, repeated "
            f"{fmt_number(table.base_repeated, 3)})"
        )  # fmt: skip
        self.ablation_title.setText(f"Each head ablated alone{base}{note}")

    def _fill_ablations(self, table: AblationTable | None) -> None:
        """The table's rows (only for a new table: refilling lays the lab out again)."""
        self._ablation_table = table
        t = self.ablations
        t.setSortingEnabled(False)
        rows = [] if table is None else table.rows
        t.setRowCount(len(rows))
        for i, r in enumerate(rows):
            t.setItem(i, 0, QTableWidgetItem(head_name(r.layer, r.head)))
            t.setItem(i, 1, QTableWidgetItem(r.mode))
            for j, x in enumerate((r.loss, r.delta, r.repeated_loss, r.repeated_delta), 2):
                t.setItem(i, j, NumberItem(x))
        t.setSortingEnabled(True)

    def table_text(self) -> list[list[str]]:
        t = self.ablations
        return [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]
