"""The counts calculator page: n, h, d, d_k, d_v and N in, the counts of a standard block out.

"Use this scenario" emits ``scenario_requested``; the panel answers with :meth:`set_values`
(the calculator never reads the workbench).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.anatomy import count_lines, multi_head_counts

from ..widgets import WholeNumberBox
from .painting import FILL

CALC_FIELDS = (
    ("n", "n tokens", 1, 100_000),
    ("h", "h heads", 1, 4096),
    ("d", "d model", 1, 100_000),
    ("d_k", "d_k", 1, 100_000),
    ("d_v", "d_v", 1, 100_000),
    ("blocks", "N blocks", 1, 10_000),
)
CALC_COLUMNS = ["object", "learned or computed", "count per block", "in N blocks", "shape of each"]


class CountsCalculator(QWidget):
    """Spin boxes for n, h, d, d_k, d_v, N and the counts table of a standard block."""

    scenario_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        grid.setHorizontalSpacing(6)
        self.spins: dict[str, WholeNumberBox] = {}
        for i, (key, label, lo, hi) in enumerate(CALC_FIELDS):
            spin = WholeNumberBox(lo, hi)
            spin.setObjectName(f"anatomy-calc-{key}")
            spin.setToolTip(f"{label} ({lo} to {hi:,})")
            spin.valueChanged.connect(self.update_counts)
            grid.addWidget(QLabel(label), i // 3, 2 * (i % 3))
            grid.addWidget(spin, i // 3, 2 * (i % 3) + 1)
            self.spins[key] = spin
        v.addLayout(grid)
        row = QHBoxLayout()
        self.from_scenario = QPushButton("Use this scenario")
        self.from_scenario.setToolTip("Fill in n, h, d, d_k, d_v of the current token scenario")
        self.from_scenario.clicked.connect(self.scenario_requested)
        row.addWidget(self.from_scenario)
        row.addStretch(1)
        v.addLayout(row)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.summary)
        self.table = QTableWidget(0, len(CALC_COLUMNS))
        self.table.setHorizontalHeaderLabels(CALC_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        # Every column as wide as its contents (a narrow dock scrolls sideways rather than
        # eliding the object names); the last one takes any spare width.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(20)
        v.addWidget(self.table, 1)
        self.set_values({"n": 3, "h": 2, "d": 4, "d_k": 2, "d_v": 2, "blocks": 1})

    def values(self) -> dict[str, int]:
        return {k: s.value() for k, s in self.spins.items()}

    def set_values(self, values: dict[str, int]) -> None:
        for k, val in values.items():
            spin = self.spins[k]
            spin.blockSignals(True)
            spin.setValue(int(val))
            spin.blockSignals(False)
        self.update_counts()

    def counts(self) -> dict[str, object]:
        v = self.values()
        return multi_head_counts(v["n"], v["h"], v["d"], v["d_k"], v["d_v"], blocks=v["blocks"])

    def update_counts(self) -> None:
        v = self.values()
        result = self.counts()
        totals = result["totals"]
        assert isinstance(totals, dict)
        lines = count_lines(totals, v["h"], v["blocks"])
        self.summary.setText("<br>".join(lines))
        rows = result["rows"]
        assert isinstance(rows, list)
        self.table.setRowCount(len(rows))
        for r, (name, kind, count, shape) in enumerate(rows):
            cells = [name, kind, str(count), f"{count * v['blocks']:,}", shape]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setBackground(FILL[kind])
                if c in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)  # fmt: skip
                self.table.setItem(r, c, item)
