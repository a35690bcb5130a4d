"""The experiment side of the scaling lab: its settings, the run's progress, the table of the
engine's numbers, attention entropy vs d_k and the spread of q·k next to √d_k.

``show_settings(state)`` puts the settings into the controls without emitting anything; an edit
of them emits ``edited(ScalingLabState)``. ``refresh(ExperimentShown)`` draws a result (or
the waiting / failed state).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.panels.kit.hidpi import title_size
from attnsim.viewmodels.scaling_lab import ExperimentShown, log2_range

from ..kit.numbers import fmt_fixed
from ..kit.plot_labels import PlotLabels
from ..style import KEY, QUERY
from ..widgets import FlowLayout, WholeNumberBox, group
from .experiment import DEFAULT_PARAMS, GENERATORS, OPTIONAL_DKS, ScalingLabState
from .plots import log2_plot

TABLE_ROWS = ("d_k", "entropy, no 1/√d_k", "entropy, with 1/√d_k", "SD of q·k", "√d_k")


def _number_box(lo: int, hi: int, tip: str, width: int = 64) -> WholeNumberBox:
    s = WholeNumberBox(lo, hi)  # typed numbers commit once, on Enter or focus out
    s.setToolTip(tip)
    s.setMaximumWidth(width)
    return s


class ExperimentView(QWidget):
    """Controls, progress, table and the two plots of the entropy-vs-d_k experiment."""

    edited = Signal(object)  # the ScalingLabState the controls now show
    refused = Signal(str)  # a typed number out of range

    def __init__(self, parent: QWidget | None = None, *, later: bool = False) -> None:
        """With ``later``, the two plots wait for :meth:`add_entropy_plot` and
        :meth:`add_sd_plot` (a panel opened in steps makes each in a turn of its own)."""
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(3)
        row = FlowLayout(h_spacing=4, v_spacing=3)
        self.keys_spin = _number_box(
            2, 256, "Number of random keys per trial (maximum entropy log2 n)"
        )
        self.trials_spin = _number_box(1, 5000, "Random query + key sets averaged for each d_k")
        self.seed_spin = _number_box(0, 2_147_483_647, "Seed of the random generator", 96)
        for s in (self.keys_spin, self.trials_spin, self.seed_spin):
            s.refused.connect(self.refused)
            s.valueChanged.connect(self._edited)
        self.rng_combo = QComboBox()
        self.rng_combo.addItems(GENERATORS)
        self.rng_combo.setToolTip(
            "reference: replays the reference program's Python random stream (its printed "
            "table, about 2 s); numpy: a fast seeded NumPy generator (same findings, other digits)"
        )
        self.rng_combo.currentIndexChanged.connect(self._edited)
        for label, w in (
            ("keys", self.keys_spin),
            ("trials", self.trials_spin),
            ("seed", self.seed_spin),
        ):
            row.addWidget(group(QLabel(label), w))
        row.addWidget(self.rng_combo)
        v.addLayout(row)
        row2 = FlowLayout(h_spacing=4, v_spacing=3)
        self.dk_checks: dict[int, QCheckBox] = {}
        add_dk: list[QWidget] = [QLabel("add d_k")]
        for d in OPTIONAL_DKS:
            c = QCheckBox(str(d))
            c.setToolTip(
                "Add this d_k to the experiment. Adding d_k 4 draws first from the stream, so "
                "the reference numbers after it change."
                if d < 16
                else "Add this d_k to the experiment (the largest run: slower)"
            )
            c.toggled.connect(self._edited)
            self.dk_checks[d] = c
            add_dk.append(c)
        row2.addWidget(group(*add_dk))
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumHeight(16)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(150)
        self.status = QLabel()
        self.status.setMinimumWidth(70)
        row2.addWidget(group(self.progress, self.status))
        v.addLayout(row2)

        self.table = QTableWidget(len(TABLE_ROWS) - 1, 4)
        self.table.setVerticalHeaderLabels(list(TABLE_ROWS[1:]))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self._fit_table()
        self.table.setToolTip("The engine's numbers (mean over the trials)")
        v.addWidget(self.table)
        self.plots = QHBoxLayout()
        self.plots.setSpacing(2)
        v.addLayout(self.plots, 1)
        self.point_labels: list[pg.TextItem] = []
        self._labels_used = 0
        if not later:
            self.add_entropy_plot()
            self.add_sd_plot()

    def _fit_table(self) -> None:
        # Rows as tall as the font needs (19 px at the usual 9 points): at a larger text size
        # (presentation mode) fixed rows cut every line in half.
        # (this widget's font: its children hear of a new font only after it)
        row = max(19, self.fontMetrics().height() + 4)
        head = max(20, self.fontMetrics().height() + 5)
        rows = self.table.verticalHeader()
        # Under the app's style sheet this widget hears of a smaller font before its table
        # does, and the header would keep rows no smaller than its old font's line: the least
        # row height is set here too, from the same font.
        rows.setMinimumSectionSize(row)
        rows.setDefaultSectionSize(row)
        self.table.horizontalHeader().setFixedHeight(head)
        self.table.setFixedHeight(head + (len(TABLE_ROWS) - 1) * row + 4)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._fit_table()
        super().changeEvent(event)

    def add_entropy_plot(self) -> None:
        """Attention entropy against d_k (the left plot)."""
        self.entropy_plot = log2_plot("Attention entropy", "d_k", "entropy (bits)")
        legend = self.entropy_plot.addLegend(labelTextSize=title_size(8.0))
        # Between the two curves (around 2.5 bits) the plot is empty: the legend goes there.
        legend.anchor(itemPos=(1, 0.5), parentPos=(1, 0.5), offset=(-4, 0))

        def entropy_curve(colour: QColor, symbol: str, name: str) -> pg.PlotDataItem:
            return self.entropy_plot.plot(
                pen=pg.mkPen(colour, width=2), symbol=symbol, symbolSize=6, symbolBrush=colour,
                symbolPen=None, name=name,
            )  # fmt: skip

        self.unscaled_curve = entropy_curve(QUERY, "o", "q·k")
        self.scaled_curve = entropy_curve(KEY, "s", "q·k / √d_k")
        self.max_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen("#555555", width=1.2, style=Qt.PenStyle.DashLine)
        )
        self.entropy_plot.addItem(self.max_line)
        self.max_text = pg.TextItem(color="#333333", anchor=(0, 1))
        self.max_text.setFont(QFont(self.font().family(), 8))
        self.entropy_plot.addItem(self.max_text)
        self.entropy_texts = PlotLabels(
            self.entropy_plot,
            avoid=(legend,),
            lines=(self.max_line, self.unscaled_curve, self.scaled_curve),
        )
        self.plots.insertWidget(0, self.entropy_plot, 3)

    def add_sd_plot(self) -> None:
        """The spread of q·k next to √d_k (the right plot)."""
        self.sd_plot = log2_plot("Spread of q·k", "d_k", "SD of q·k")
        self.sd_plot.addLegend(offset=(4, 4), labelTextSize=title_size(8.0))
        self.sqrt_curve = self.sd_plot.plot(
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine), name="√d_k"
        )
        self.sd_curve = self.sd_plot.plot(
            pen=None, symbol="o", symbolSize=7, symbolBrush=QUERY, symbolPen=None, name="measured"
        )
        self.plots.addWidget(self.sd_plot, 2)

    # ---- settings -----------------------------------------------------------------------------
    def _edited(self, *_: object) -> None:
        dks = set(int(d) for d in DEFAULT_PARAMS["dks"])  # type: ignore[attr-defined]
        dks.update(d for d, c in self.dk_checks.items() if c.isChecked())
        self.edited.emit(
            ScalingLabState(
                n_keys=self.keys_spin.value(), trials=self.trials_spin.value(),
                seed=self.seed_spin.value(), rng=self.rng_combo.currentText(),
                dks=tuple(sorted(dks)),
            )
        )  # fmt: skip

    def show_settings(self, state: ScalingLabState) -> None:
        """Put ``state`` into the controls (only what differs: a box being typed into keeps its
        text otherwise)."""
        widgets = [self.keys_spin, self.trials_spin, self.seed_spin, self.rng_combo]
        blockers = [QSignalBlocker(w) for w in widgets + list(self.dk_checks.values())]
        try:
            for spin, value in (
                (self.keys_spin, state.n_keys),
                (self.trials_spin, state.trials),
                (self.seed_spin, state.seed),
            ):
                if spin.value() != int(value):
                    spin.setValue(int(value))
            if self.rng_combo.currentText() != state.rng:
                self.rng_combo.setCurrentText(state.rng)
            for d, c in self.dk_checks.items():
                c.setChecked(d in state.dks)
        finally:
            del blockers

    def show_progress(self, fraction: float, status: str | None = None) -> None:
        self.progress.setValue(round(100 * fraction))
        if status is not None:
            self.status.setText(status)

    # ---- the result ---------------------------------------------------------------------------
    def refresh(self, e: ExperimentShown) -> None:
        """Draw the experiment: its result, or the waiting / failed state of its settings."""
        # The labels are kept and reused: made afresh for every result, the removed ones
        # stayed alive (about 240 text items more every 1,000 actions of the GUI stress test).
        for item in self.point_labels:
            item.setVisible(False)
            self.entropy_texts.forget(item)
        self._labels_used = 0
        max_bits, xs, dks = e.max_bits, e.x, list(e.dks)
        ticks = [[(float(x), str(d)) for x, d in zip(xs, dks, strict=True)]]
        self.entropy_plot.getAxis("bottom").setTicks(ticks)
        self.sd_plot.getAxis("bottom").setTicks(ticks)
        self.max_line.setPos(max_bits)
        self.max_text.setText(f"maximum log2 {e.n_keys} = {fmt_fixed(max_bits, 2)} bits")
        self.entropy_texts.want(
            self.max_text,
            float(xs[0]),
            max_bits,
            (0, 1),
            short=f"max {fmt_fixed(max_bits, 2)} bits",
        )
        self.entropy_plot.setXRange(float(xs[0]) - 0.6, float(xs[-1]) + 0.6, padding=0)
        self.entropy_plot.setYRange(0, max_bits * 1.12, padding=0)
        self.table.setColumnCount(len(dks))
        self.table.setHorizontalHeaderLabels([f"d_k {d}" for d in dks])
        self.entropy_plot.setTitle(f"Entropy over {e.n_keys} random keys", size=title_size())
        self.entropy_plot.setToolTip(
            f"Mean over {e.trials} trials, seed {e.seed}, generator {e.rng}"
        )
        r = e.result
        if r is None:
            for curve in (self.unscaled_curve, self.scaled_curve, self.sd_curve, self.sqrt_curve):
                curve.setData([], [])
            for c in range(len(dks)):
                for row in range(4):
                    self.table.setItem(row, c, QTableWidgetItem("…" if e.error is None else ""))
            if e.error is not None:
                self.status.setText("failed")
                self.status.setToolTip(e.error)
            else:
                self.show_progress(e.fraction, "running…")
            self.entropy_texts.place()
            return
        self.status.setToolTip("")
        un, sc = np.array(r["entropy_unscaled"]), np.array(r["entropy_scaled"])
        sd, root = np.array(r["score_sd"]), np.array(r["sqrt_d_k"])
        self.unscaled_curve.setData(xs, un)
        self.scaled_curve.setData(xs, sc)
        for x, y in zip(xs, un, strict=True):
            self._label(x, y, QUERY, (0.5, 1.15))
        for x, y in zip(xs, sc, strict=True):
            self._label(x, y, KEY, (0.5, 1.15))
        # log2-log2 axes: sqrt(d_k) is a straight line of slope 1/2.
        self.sqrt_curve.setData(xs, np.log2(root))
        self.sd_curve.setData(xs, np.log2(sd))
        lo, hi = log2_range(sd, root)
        self.sd_plot.getAxis("left").setTicks([[(k, f"{2.0**k:g}") for k in range(lo, hi + 1)]])
        self.sd_plot.setXRange(float(xs[0]) - 0.6, float(xs[-1]) + 0.6, padding=0)
        self.sd_plot.setYRange(lo - 0.3, hi + 0.3, padding=0)
        self.entropy_texts.place()
        for c in range(len(dks)):
            for row, values in enumerate((un, sc, sd, root)):
                item = QTableWidgetItem(fmt_fixed(float(values[c]), 2))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(repr(float(values[c])))
                self.table.setItem(row, c, item)

    def _label(self, x: float, y: float, colour: QColor, anchor: tuple[float, float]) -> None:
        if self._labels_used == len(self.point_labels):
            made = pg.TextItem(anchor=anchor)
            made.setFont(QFont(self.font().family(), 8))
            self.entropy_plot.addItem(made)
            self.point_labels.append(made)
        t = self.point_labels[self._labels_used]
        self._labels_used += 1
        t.setText(fmt_fixed(float(y), 2), color=colour)
        t.setAnchor(anchor)
        t.setVisible(True)
        self.entropy_texts.want(t, float(x), float(y), anchor)

    def table_text(self) -> list[list[str]]:
        """The numbers the table shows, row by row (for tests and copy)."""
        return [
            [
                self.table.item(r, c).text() if self.table.item(r, c) else ""
                for c in range(self.table.columnCount())
            ]
            for r in range(self.table.rowCount())
        ]
