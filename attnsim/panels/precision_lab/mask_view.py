"""The weights in a chosen dtype and mask style: the controls, the heatmap with leaked weight
outlined and NaN rows marked, the summary line, and the engine's whole precision table beside
it with the current choice highlighted."""

from __future__ import annotations

import html
from functools import cache

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnsim.engine.precision import DTYPES
from attnsim.views.precision_lab import (
    LOGIT_MAX,
    MASK_STYLES,
    STYLE_NAMES,
    PrecisionData,
    TableData,
)

from ..kit.flow_layout import FlowLayout, group
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.number_boxes import SignificantSpinBox, WholeNumberBox
from ..kit.numbers import fmt_number
from ..style import weight_cmap

LABELS_MAX = 24  # more rows or columns than this are labelled by position
LEAK_PEN = QColor("#E0115F")  # a magenta no weight colour of viridis comes near
NAN_INK = QColor("#B00020")
TABLE_W = 330  # px: the eight columns at 8 pt


@cache
def _weight_lut() -> np.ndarray:
    return lut_from_cmap(weight_cmap())


class MaskControls(QWidget):
    """dtype, mask style, padding and the large logit. Reports ``setting(name, value)`` with the
    state's field names and values."""

    setting = Signal(str, object)
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=8, v_spacing=2)
        flow.setContentsMargins(0, 0, 0, 0)
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(list(DTYPES))
        self.dtype_combo.setToolTip("The format every step is rounded to (bfloat16 is emulated)")
        self.dtype_combo.currentIndexChanged.connect(
            lambda i: self.setting.emit("dtype", DTYPES[i])
        )
        flow.addWidget(group(QLabel("dtype"), self.dtype_combo))
        self.style_combo = QComboBox()
        self.style_combo.addItems([STYLE_NAMES[s] for s in MASK_STYLES])
        self.style_combo.setToolTip(
            "Boolean: forbidden keys are left out of the softmax. Additive: the value is added "
            "to their logits."
        )
        self.style_combo.currentIndexChanged.connect(
            lambda i: self.setting.emit("style", MASK_STYLES[i])
        )
        flow.addWidget(group(QLabel("mask"), self.style_combo))
        self.pad_box = WholeNumberBox(0, 10**6)
        self.pad_box.setToolTip(
            "Left padding: the first positions are padding no query may read (causal in "
            "self-attention, so the padding queries have no legal key)"
        )
        self.pad_box.valueChanged.connect(lambda v: self.setting.emit("pad", int(v)))
        self.pad_box.refused.connect(lambda r: self.refused.emit(f"left padding: {r}"))
        flow.addWidget(group(QLabel("left padding"), self.pad_box))
        self.boost_check = QCheckBox("large logit")
        self.boost_check.setToolTip(
            "Add this logit to one cell (the receiving query's first forbidden key, or the cell "
            "you click)"
        )
        self.boost_check.toggled.connect(lambda on: self.setting.emit("boost", bool(on)))
        self.logit_box = SignificantSpinBox(1e-3, LOGIT_MAX, digits=4)
        self.logit_box.setToolTip(f"The logit added, up to {LOGIT_MAX:g} (float16 holds 65504)")
        self.logit_box.valueChanged.connect(lambda v: self.setting.emit("logit", float(v)))
        self.logit_box.refused.connect(lambda r: self.refused.emit(f"large logit: {r}"))
        flow.addWidget(group(self.boost_check, QLabel("+"), self.logit_box))

    def refresh(self, values: dict[str, object], n_keys: int) -> None:
        """Show the state's ``values``; the padding box is bounded by the scenario's keys."""
        self.dtype_combo.setCurrentIndex(DTYPES.index(values["dtype"]))  # type: ignore[arg-type]
        self.style_combo.setCurrentIndex(MASK_STYLES.index(values["style"]))  # type: ignore[arg-type]
        self.pad_box.setMaximum(n_keys)
        self.pad_box.setValue(min(int(values["pad"]), n_keys))  # type: ignore[call-overload]
        self.boost_check.setChecked(bool(values["boost"]))
        self.logit_box.setValue(float(values["logit"]))  # type: ignore[arg-type]
        self.logit_box.setEnabled(bool(values["boost"]))


class WeightsCanvas(MatrixCanvas):
    """The kit's matrix canvas, plus a magenta outline on every forbidden cell that got weight
    and, over a NaN row, cross-hatching and the word NaN."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, max_cell=56, min_cell=1)
        self.leaked_cells = np.zeros((0, 0), dtype=bool)
        self.nan_rows = np.zeros(0, dtype=bool)
        self.boost: tuple[int, int] | None = None

    def set_marks(
        self, leaked: np.ndarray, nan_rows: np.ndarray, boost: tuple[int, int] | None
    ) -> None:
        self.leaked_cells, self.nan_rows, self.boost = leaked, nan_rows, boost
        self.update()

    def paint_content(self, p: QPainter) -> None:
        super().paint_content(p)
        if self.values.ndim != 2 or not self.values.size:
            return
        grid = self.grid_rect()
        n_q, n_k = self.values.shape
        cw, ch = grid.width() / n_k, grid.height() / n_q
        p.save()
        p.setBrush(Qt.BrushStyle.NoBrush)
        if self.boost is not None:
            i, j = self.boost
            p.setPen(QPen(QColor("#222222"), 1.0, Qt.PenStyle.DotLine))
            p.drawEllipse(
                QRectF(grid.x() + j * cw, grid.y() + i * ch, cw, ch).adjusted(2, 2, -2, -2)
            )
        if self.leaked_cells.shape == self.values.shape:
            p.setPen(QPen(LEAK_PEN, 2.0 if cw >= 8 else 1.0))
            inset = 1.0 if cw >= 8 else 0.0
            for i, j in zip(*np.nonzero(self.leaked_cells), strict=True):
                r = QRectF(grid.x() + j * cw, grid.y() + i * ch, cw, ch)
                p.drawRect(r.adjusted(inset, inset, -inset, -inset))
        if self.nan_rows.shape == (n_q,) and self.nan_rows.any():
            font = QFont(self.cell_font())
            font.setBold(True)
            p.setFont(font)
            fm = QFontMetricsF(font)
            cross = QBrush(NAN_INK, Qt.BrushStyle.DiagCrossPattern)
            for i in np.flatnonzero(self.nan_rows):
                row = QRectF(grid.x(), grid.y() + i * ch, grid.width(), ch)
                p.fillRect(row, cross)
                if ch >= fm.height() - 2 and not self.cache.numbers_drawn:
                    w = fm.horizontalAdvance("NaN") + 6
                    tag = QRectF(row.center().x() - w / 2, row.y(), w, ch)
                    p.fillRect(tag, QColor("white"))
                    p.setPen(NAN_INK)
                    p.drawText(tag, Qt.AlignmentFlag.AlignCenter, "NaN")
        p.restore()


class PrecisionTable(QLabel):
    """The engine's precision table as a small HTML table, the current (dtype, mask) row bold on
    a tinted background."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.data: TableData | None = None

    def refresh(self, data: TableData) -> None:
        self.data = data
        cells = "".join(
            f"<th align='right'>{html.escape(h).replace(' ', '&nbsp;')}</th>" for h in data.header
        )
        rows = [f"<tr>{cells}</tr>"]
        for n, row in enumerate(data.rows):
            here = n == data.current
            style = " style='background-color:#FFE3A3; font-weight:bold'" if here else ""
            tds = "".join(f"<td align='right'>{html.escape(t)}</td>" for t in row)
            rows.append(f"<tr{style}>{tds}</tr>")
        note = "" if data.current is not None else (
            "<br><i>Boolean masks are not in the table: they add nothing to the logits.</i>"
        )  # fmt: skip
        self.setText(
            "<b>Precision table</b> (engine, on this scenario)"
            f"<table cellspacing='0' cellpadding='2' style='font-size:8pt'>{''.join(rows)}</table>"
            f"<span style='font-size:8pt'>{html.escape(data.caption)}</span>{note}"
        )


class PrecisionView(QWidget):
    """The weights heatmap with its summary and caption, and the precision table beside it."""

    cell_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        self.canvas = WeightsCanvas()
        self.canvas.cell_clicked.connect(self.cell_clicked)
        col.addWidget(self.canvas, 1)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.summary)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.caption)
        lay.addWidget(left, 1)
        self.table = PrecisionTable()
        # The table's rows are short; its caption would otherwise wrap as wide as it could.
        self.table.setMaximumWidth(TABLE_W)
        left.setMinimumWidth(240)
        lay.addWidget(self.table, 0)

    def refresh(self, data: PrecisionData, table: TableData) -> None:
        rows, cols = data.row_labels, data.col_labels
        if max(len(rows), len(cols)) > LABELS_MAX:
            # Names no longer fit beside small cells: positions label the rows (the padding
            # counts positions), the tool tips keep the names.
            rows, cols = tuple(str(i + 1) for i in range(len(rows))), ()
        self.canvas.set_matrix(
            data.weights, row_labels=rows, col_labels=cols,
            scale=ColourScale(_weight_lut(), 0.0, 1.0), forbidden=data.forbidden,
            title=data.title, highlight_row=data.receiving,
            tooltip=lambda i, j: self._tip(data, i, j),
        )  # fmt: skip
        self.canvas.set_marks(data.leaked_cells, data.nan_rows, data.boost)
        self.summary.setText(f"<b>{html.escape(data.summary)}</b>")
        self.caption.setText(data.caption)
        self.caption.setVisible(bool(data.caption))
        self.table.refresh(table)

    @staticmethod
    def _tip(data: PrecisionData, i: int, j: int) -> str:
        pair = f"{data.row_labels[i]} → {data.col_labels[j]}"
        text = f"{pair}: weight {fmt_number(data.weights[i, j], 4)}"
        if data.forbidden[i, j]:
            text += " (forbidden"
            text += ", leaked)" if data.leaked_cells[i, j] else ")"
        ref = data.reference[i, j]
        if np.isfinite(ref):
            text += f"; float64 Boolean {fmt_number(ref, 4)}"
        return text + ". Click: put the large logit here."
