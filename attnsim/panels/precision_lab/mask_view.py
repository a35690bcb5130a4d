"""The weights in a chosen dtype and mask style: the controls, the heatmap with leaked weight
outlined and NaN rows marked, the summary line, and the engine's whole precision table beside
it with the current choice highlighted."""

from __future__ import annotations

import html
from functools import cache

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.precision_lab import SETTINGS, PrecisionData, PrecisionLabState, TableData

from ..kit.adaptive_split import AdaptiveSplit
from ..kit.control_row import ControlRow
from ..kit.hidpi import points
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.numbers import fmt_number
from ..pool_later import PoolsLater
from ..style import weight_cmap
from ..widgets import scrolling

LABELS_MAX = 24  # more rows or columns than this are labelled by position
LEAK_PEN = QColor("#E0115F")  # a magenta no weight colour of viridis comes near
NAN_INK = QColor("#B00020")
TABLE_W = 330  # px: the eight columns at 8 pt
TABLE_INK = QColor("#222222")
CURRENT_BG = QColor("#FFE3A3")
STALE_INK = QColor("#A0A0A0")
MIN_CELL = 1e-3  # px: down to 1,000 cells a pixel


@cache
def _weight_lut() -> np.ndarray:
    return lut_from_cmap(weight_cmap())


class MaskControls(ControlRow):
    """dtype, mask style, padding and the large logit: the lab's control row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        names = ("dtype", "style", "pad", "boost", "logit")
        super().__init__(SETTINGS, names, parent=parent)
        self.dtype_combo, self.style_combo = self.combos["dtype"], self.combos["style"]
        self.pad_box, self.logit_box = self.boxes["pad"], self.boxes["logit"]
        self.boost_check = self.checks["boost"]

    def show_state(self, st: PrecisionLabState, n_keys: int) -> None:
        """Show ``st``, the padding as far as the scenario's keys go (the lab refuses more)."""
        self.refresh(st, values={"pad": min(st.pad, n_keys)})
        self.set_enabled("logit", st.boost)


def leak_runs(cells: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, end column) of each run of True cells along the rows of ``cells``."""
    padded = np.zeros((cells.shape[0], cells.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = cells
    edges = np.diff(padded, axis=1)
    starts, ends = np.nonzero(edges == 1), np.nonzero(edges == -1)
    return [(int(i), int(a), int(b)) for i, a, b in zip(starts[0], starts[1], ends[1], strict=True)]


class WeightsCanvas(PoolsLater, MatrixCanvas):
    """The kit's matrix canvas, plus a magenta outline on every forbidden cell that got weight
    and, over a NaN row, cross-hatching and the word NaN. A large head's image pooled to the
    pixels on screen is made on the runner when the panel says where (``pool_later``)."""

    drawing_text = "Drawing the weights…"

    def __init__(self, parent: QWidget | None = None) -> None:
        # Cells may be smaller than a pixel: a large head is pooled to the pixels on screen
        # (at one pixel a cell, n = 4,096 made a 4,096 x 4,096 image, mostly off screen).
        super().__init__(parent, max_cell=90, min_cell=MIN_CELL)
        self.leaked_cells = np.zeros((0, 0), dtype=bool)
        self._runs: list[tuple[int, int, int]] | None = None
        self.nan_rows = np.zeros(0, dtype=bool)
        self.boost: tuple[int, int] | None = None

    def set_marks(
        self,
        leaked: np.ndarray,
        nan_rows: np.ndarray,
        boost: tuple[int, int] | None,
        runs: list[tuple[int, int, int]] | None = None,
    ) -> None:
        """``runs``: ``leak_runs(leaked)`` if already found (a large head's, on the runner);
        else they are found at the next paint, once per set of marks."""
        self.leaked_cells, self.nan_rows, self.boost = leaked, nan_rows, boost
        self._runs = runs
        self.update()

    def leak_runs(self) -> list[tuple[int, int, int]]:
        if self._runs is None:
            cells = self.leaked_cells
            self._runs = leak_runs(cells) if cells.any() else []
        return self._runs

    def paint_content(self, p: QPainter) -> None:
        if self.pooled_soon(p):
            self.paint_drawing(p)
            return
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
            # One outline per run of leaking cells in a row: a fully leaking row of 64 small
            # cells reads as one band, not a magenta fill, and costs one rectangle.
            for i, j0, j1 in self.leak_runs():
                r = QRectF(grid.x() + j0 * cw, grid.y() + i * ch, (j1 - j0) * cw, ch)
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


class PrecisionTable(QWidget):
    """The engine's precision table, painted: one row per (dtype, mask value), the current
    choice bold on a tinted band. (A rich-text label took a third of a repaint at n = 64.)"""

    PAD = 9.0  # px between columns

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: TableData | None = None
        self._widths: list[float] = []
        self.stale = False
        self._picture: tuple[tuple, QPixmap] | None = None  # (what it shows, the painted table)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def table_font(self, bold: bool = False) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(points(8.0))
        f.setBold(bold)
        return f

    def row_height(self) -> float:
        return QFontMetricsF(self.table_font()).height() + 2

    def set_stale(self, stale: bool) -> None:
        """Grey the numbers while a new table is being computed."""
        if stale != self.stale:
            self.stale = stale
            self.update()

    def refresh(self, data: TableData) -> None:
        self.set_stale(False)
        if data == self.data:
            return
        fm = QFontMetricsF(self.table_font(bold=True))  # the widest a text is drawn
        cols = list(zip(data.header, *data.rows, strict=True))
        self._widths = [max(fm.horizontalAdvance(t) for t in c) + self.PAD for c in cols]
        self.data = data
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        n = len(self.data.rows) + 1 if self.data is not None else 1
        return QSize(int(sum(self._widths)) + 2, int(n * self.row_height()) + 2)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:
        # The table is painted once into a pixmap and reused while its data, greying, size and
        # font stay: while the heatmap follows a drag the table is unchanged (greyed until the
        # new one is ready), and its hundred-odd texts were a tenth of the panel's repaint.
        dpr = self.devicePixelRatioF()
        key = (self.data, self.stale, self.size(), dpr, self.font().key())
        cached = self._picture
        if cached is None or cached[0] != key:
            pix = QPixmap(max(1, round(self.width() * dpr)), max(1, round(self.height() * dpr)))
            pix.setDevicePixelRatio(dpr)
            pix.fill(QColor("white"))
            q = QPainter(pix)
            q.setFont(self.font())
            if self.data is not None:
                self.paint_table(q)
            q.end()
            self._picture = cached = (key, pix)
        p = QPainter(self)
        p.drawPixmap(0, 0, cached[1])
        p.end()

    def paint_table(self, p: QPainter) -> None:
        data, rh = self.data, self.row_height()
        assert data is not None
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        plain, bold = self.table_font(), self.table_font(bold=True)
        ink = STALE_INK if self.stale else TABLE_INK
        p.setPen(ink)
        for n, row in enumerate((data.header, *data.rows)):
            y = n * rh
            here = n - 1 == data.current
            if here:
                p.fillRect(QRectF(0, y, sum(self._widths) + 2, rh), CURRENT_BG)
            p.setFont(bold if here or n == 0 else plain)
            x = 0.0
            for text, w in zip(row, self._widths, strict=True):
                p.drawText(QRectF(x, y, w, rh), right, text)
                x += w
        p.setPen(QPen(ink, 1.0))
        p.drawLine(QPointF(0, rh), QPointF(sum(self._widths) + 2, rh))


class PrecisionView(QWidget):
    """The weights heatmap with its summary and caption, and the precision table beside it."""

    cell_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
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
        right = QWidget()
        side = QVBoxLayout(right)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(2)
        side.addWidget(QLabel("<b>Precision table</b> (engine, this scenario)"))
        self.table = PrecisionTable()
        side.addWidget(self.table)
        self.table_caption = QLabel()
        self.table_caption.setWordWrap(True)
        self.table_caption.setStyleSheet("font-size: 8pt;")
        side.addWidget(self.table_caption)
        side.addStretch(1)
        # The table's rows are short; its caption would otherwise wrap as wide as it could.
        right.setMaximumWidth(TABLE_W)
        left.setMinimumWidth(240)
        # Side by side when the dock is wide enough for both, else the table on a tab of its
        # own: a laptop dock is about 480 pixels wide.
        self.parts = (left, right)  # what a figure shows, whichever way they are laid out
        self.split = AdaptiveSplit(
            left,
            scrolling(right),
            ("Weights", "Precision table"),
            ratio=0.55,
            side_width=240 + TABLE_W + 8,
        )
        lay.addWidget(self.split)

    def refresh(self, data: PrecisionData, runs: list[tuple[int, int, int]] | None = None) -> None:
        """Show ``data``; ``runs`` its leaked cells' runs when already found (see set_marks)."""
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
        self.canvas.set_marks(data.leaked_cells, data.nan_rows, data.boost, runs)
        lines = "<br>".join(html.escape(line) for line in data.summary.splitlines())
        self.summary.setText(f"<b>{lines}</b>")  # a phrase a line
        self.caption.setText(data.caption)
        self.caption.setVisible(bool(data.caption))

    def refresh_table(self, table: TableData) -> None:
        self.table.refresh(table)
        note = "" if table.current is not None else (
            " Boolean masks are not in the table: they add nothing to the logits."
        )  # fmt: skip
        self.table_caption.setText(table.caption + note)

    @staticmethod
    def _tip(data: PrecisionData, i: int, j: int) -> str:
        pair = f"{data.row_labels[i]} → {data.col_labels[j]}"
        text = f"{pair}: weight {fmt_number(data.weights[i, j], 4)}"
        if data.forbidden[i, j]:
            text += " (forbidden"
            text += ", leaked)" if data.leaked_cells[i, j] else ")"
        ref = data.reference[i, j]
        if np.isfinite(ref):
            text += f"; in float64 with a Boolean mask {fmt_number(ref, 4)}"
        return text + ". Click: put the large logit here."
