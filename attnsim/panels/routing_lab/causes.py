"""The four-causes tab: one perturbation per row and what the top weight did."""

from __future__ import annotations

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.viewmodels.routing_lab import CausesView

from .parts import esc, rich_label

IMPLICATED = QColor("#fff1cc")


class CausesTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.caption = rich_label()
        lay.addWidget(self.caption)
        self.table = t = QTableWidget(0, 3)
        t.setHorizontalHeaderLabels(["perturbation", "top weight", "reading"])
        t.verticalHeader().setVisible(False)
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setWordWrap(True)
        t.setMinimumHeight(60)
        small = QFont()
        small.setPointSizeF(8.5)
        t.setFont(small)
        hh = t.horizontalHeader()
        # Fitted once per redraw; ResizeToContents would refit on every cell set.
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(t, 1)
        self._bold = QFont()
        self._bold.setBold(True)

    def refresh(self, v: CausesView) -> None:
        self.caption.setText(
            f"Now <b>{fmt_fixed(v.top_weight, 3)}</b> on <b>{esc(v.top_label)}</b> "
            f"(d = {v.d:g}, T = {v.temperature:.3g}, "
            f"{'scaled' if v.scale else 'unscaled'}). One change per row; "
            "<span style='background:#fff1cc'>shaded</span> rows point at a cause."
        )
        t = self.table
        t.setRowCount(len(v.rows))
        for r, c in enumerate(v.rows):
            after = f"{fmt_fixed(c.top_before, 3)} → {fmt_fixed(c.top_after, 3)}"
            if c.mean:
                after += " (mean)"
            elif c.now:
                after += f" (now {c.now})"
            for col, text in enumerate((c.perturbation, after, c.verdict)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if c.implicated:
                    item.setFont(self._bold)
                    item.setBackground(QBrush(IMPLICATED))
                t.setItem(r, col, item)
        t.resizeColumnToContents(0)
        t.resizeColumnToContents(1)
        t.resizeRowsToContents()
