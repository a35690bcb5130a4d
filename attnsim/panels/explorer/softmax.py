"""The softmax strip: a row of scores, how they are divided, and bars of the two softmaxes."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QSizePolicy, QWidget

from attnsim.viewmodels.explorer import StripPicture

from ..kit.log_slider import TEMPERATURE, LogSlider
from ..kit.numbers import fmt_number
from ..widgets import FlowLayout, WholeNumberBox, group


class StripControls(QWidget):
    """Scores box, temperature slider, "divide by √d_k" and d_k (one flowing row).

    Signals (user gestures only matter; the panel ignores those of its own redraw):
    ``scores_entered(text)``, ``temperature_moved(T)``, ``scale_toggled(on)``,
    ``d_k_changed(d_k)``, ``pressed`` / ``released`` around a temperature drag, and
    ``refused(why)`` for a d_k the box would not take.
    """

    scores_entered = Signal(str)
    temperature_moved = Signal(float)
    scale_toggled = Signal(bool)
    d_k_changed = Signal(int)
    pressed = Signal()
    released = Signal()
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = FlowLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self._shown_scores: np.ndarray | None = None
        title = QLabel("<b>Softmax sharpness</b> scores:")
        self.scores_edit = QLineEdit()
        self.scores_edit.setToolTip("One query's raw scores q·k, separated by commas (2 to 10)")
        self.scores_edit.setFixedWidth(110)
        self.scores_edit.editingFinished.connect(
            lambda: self.scores_entered.emit(self.scores_edit.text())
        )
        row.addWidget(group(title, self.scores_edit))
        self.temp_slider = LogSlider()
        self.temp_slider.setToolTip(
            f"Temperature, {TEMPERATURE.lo:g} to {TEMPERATURE.hi:g} (log scale): "
            "divides every score"
        )
        self.temp_slider.setMinimumWidth(90)
        self.temp_slider.sliderPressed.connect(self.pressed)
        self.temp_slider.sliderReleased.connect(self.released)
        self.temp_slider.valueChanged.connect(
            lambda v: self.temperature_moved.emit(self.temp_slider.value_at(v))
        )
        self.temp_value = QLabel()
        self.temp_value.setMinimumWidth(32)
        row.addWidget(group(QLabel("T"), self.temp_slider, self.temp_value, grow=self.temp_slider))
        self.scale_check = QCheckBox("divide by √d_k")
        self.scale_check.setToolTip("Divide the scores by √d_k before softmax")
        self.scale_check.toggled.connect(self.scale_toggled)
        self.dk_spin = WholeNumberBox(1, 4096)
        self.dk_spin.refused.connect(self.refused)
        self.dk_spin.setToolTip("d_k for the strip and for a·b/√d_k of the free vectors")
        self.dk_spin.valueChanged.connect(self.d_k_changed)
        row.addWidget(group(self.scale_check, QLabel("d_k ="), self.dk_spin))
        self.error = QLabel()
        self.error.setStyleSheet("color: #B00020;")
        self.error.setWordWrap(True)
        row.addWidget(self.error)

    def refresh(self, data: StripPicture) -> None:
        # The typed text stays until the state's scores change (a refused entry stays to fix).
        if self._shown_scores is None or not np.array_equal(self._shown_scores, data.scores):
            self.scores_edit.setText(", ".join(f"{s:g}" for s in data.scores))
            self._shown_scores = data.scores.copy()
            self.error.setText("")
        self.temp_slider.show_value(data.temperature)
        self.temp_value.setText(f"{data.temperature:.2f}")
        self.scale_check.setChecked(data.scale)
        self.dk_spin.setValue(data.d_k)


class SoftmaxBars(QWidget):
    """Bars of one score row's softmax weights: raw, and divided by sqrt(d_k) and T."""

    ROW_H = 22
    HEAD_H = 17

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header: list[tuple[str, str]] = []  # (long, short) caption of each key's column
        self.row_labels: list[str] = []
        self.rows: list[np.ndarray] = []
        self.texts: list[list[str]] = []  # what each bar says, row by row (tests read it)
        self.setMinimumHeight(self.HEAD_H + 2 * self.ROW_H + 6)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(500, self.HEAD_H + 2 * self.ROW_H + 6)

    def refresh(self, data: StripPicture) -> None:
        self.set_rows(list(data.header), list(data.row_labels), [data.raw, data.weights])
        self.setToolTip(f"divisor = {fmt_number(data.divisor, 6)}")

    def set_rows(
        self, header: list[tuple[str, str]], labels: list[str], rows: list[np.ndarray]
    ) -> None:
        self.header, self.row_labels, self.rows = header, labels, rows
        self.texts = [[f"{100.0 * float(w):.1f}%" for w in r] for r in rows]
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        n = len(self.header)
        if not n:
            p.end()
            return
        width = self.width()
        metrics = self.fontMetrics()
        label_w = min(max(metrics.horizontalAdvance(t) for t in self.row_labels) + 10, 0.4 * width)
        cell = (width - label_w) / n
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() - 1))
        p.setFont(small)
        p.setPen(QColor("#555555"))
        small_metrics = p.fontMetrics()
        fits = all(small_metrics.horizontalAdvance(long) <= cell - 4 for long, _ in self.header)
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for j, (long, short) in enumerate(self.header):
            text = small_metrics.elidedText(
                long if fits else short, Qt.TextElideMode.ElideRight, int(cell - 4)
            )
            p.drawText(QRectF(label_w + j * cell + 2, 0, cell - 4, self.HEAD_H), left, text)
        fills = [QColor("#C9C9C9"), QColor("#56B4E9")]
        p.setFont(self.font())
        for r, (label, weights) in enumerate(zip(self.row_labels, self.rows, strict=True)):
            top = self.HEAD_H + r * self.ROW_H + 2
            p.setPen(QColor("#222222"))
            p.drawText(
                QRectF(0, top, label_w - 6, self.ROW_H - 3),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(label, Qt.TextElideMode.ElideLeft, int(label_w - 6)),
            )
            for j, w in enumerate(weights):
                x0 = label_w + j * cell + 2
                full = QRectF(x0, top, cell - 4, self.ROW_H - 4)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor("#F2F2F2"))
                p.drawRect(full)
                p.setBrush(fills[min(r, 1)])
                p.drawRect(QRectF(x0, top, (cell - 4) * float(w), self.ROW_H - 4))
                p.setPen(QColor("#111111"))
                p.drawText(full.adjusted(3, 0, 0, 0), left, self.texts[r][j])
        p.end()
