"""The stepper's controls and readouts: block sizes, the query block, Back / Step / Reset / To
end; the m / ℓ / accumulator table of the active rows; acc / ℓ beside the reference output;
and the memory bar (n × n scores against one tile)."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from attnsim.viewmodels.kernel_lab import (
    ROWS_SHOWN,
    SETTINGS,
    KernelLabState,
    StepperData,
    fmt_floats,
    table_rows,
)

from ..kit.control_row import ControlRow
from ..kit.flow_layout import group
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import KeptRaster
from ..kit.painted import CachedCanvas
from ..style import score_cmap
from .tiles import ACTIVE

MOVES = ("back", "step", "reset", "end")
MOVE_TEXT = {"back": "◀ Back", "step": "Step ▶", "reset": "Reset", "end": "To end"}
MOVE_TIPS = {
    "back": "Undo the last key block folded in (or go back to the previous query block)",
    "step": "Fold the next key block into the running max, sum and accumulator",
    "reset": "Back to the start of this query block: nothing seen yet",
    "end": "Fold in every remaining key block of this query block",
}


@cache
def _signed_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class StepperControls(ControlRow):
    """Block sizes and the query block (the lab's control row) and the moves
    (``move(how)``)."""

    move = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("block_q", "block_k", "q_block"), parent=parent)
        self.buttons: dict[str, QPushButton] = {}
        row = []
        for how in MOVES:
            b = QPushButton(MOVE_TEXT[how])
            b.setToolTip(MOVE_TIPS[how])
            b.clicked.connect(lambda _=False, h=how: self.move.emit(h))
            self.buttons[how] = b
            row.append(b)
        self.flow.addWidget(group(*row, spacing=3))

    def show_stepper(self, st: KernelLabState, data: StepperData) -> None:
        """The settings as ``data`` clamped them to the scenario, and which moves there are."""
        self.refresh(st, values={n: getattr(data, n) for n in ("block_q", "block_k", "q_block")})
        live = not data.message
        self.buttons["back"].setEnabled(live and not data.at_start)
        self.buttons["step"].setEnabled(live and not data.at_end)
        self.buttons["reset"].setEnabled(live and data.step > 0)
        self.buttons["end"].setEnabled(live and not data.done)


class RowTable(QWidget):
    """The active rows' running max, rescale factor, running sum and accumulator: a status
    line and a table painted cell by cell (a rich-text table took 6 ms to lay out per step)."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.cells = TableCells()
        lay.addWidget(self.cells)
        self.rows: tuple[tuple[str, ...], ...] = ()

    def refresh(self, data: StepperData) -> None:
        self.rows = table_rows(data) if not data.message else ()
        status = data.message or (
            f"{data.status} α = exp(m_old − m_new) rescales the old ℓ and acc."
        )
        more = len(data.row_steps) - ROWS_SHOWN
        if more > 0:
            status += f" The table shows the first {ROWS_SHOWN} of its {len(data.row_steps)} rows."
        if status != self.status.text():
            self.status.setText(status)
        self.cells.set_rows(self.rows)

    def text(self) -> str:
        """Everything the table says, as plain text (tests and copy)."""
        return "\n".join([self.status.text(), *("\t".join(r) for r in self.rows)])


class TableCells(QWidget):
    """Rows of texts in columns: a bold header, the first column left-aligned, the others right.
    Its painting is kept while the rows, font and size stay (a repaint of the lab with the
    same rows copies it)."""

    PAD = 10.0

    def __init__(self) -> None:
        super().__init__()
        self.rows: tuple[tuple[str, ...], ...] = ()
        self.raster = KeptRaster()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_rows(self, rows: tuple[tuple[str, ...], ...]) -> None:
        if rows == self.rows:
            return
        grew = len(rows) != len(self.rows)
        self.rows = rows
        if grew:
            self.updateGeometry()
        self.update()

    def _line(self) -> float:
        return QFontMetricsF(self.font()).height() + 1

    def sizeHint(self) -> QSize:
        return QSize(400, round(self._line() * len(self.rows)) + 2)

    def minimumSizeHint(self) -> QSize:
        return QSize(100, round(self._line() * len(self.rows)) + 2)

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.rows:
            return
        p = QPainter(self)
        key = (self.rows, self.font().key(), self.width(), self.height())
        self.raster.paint(p, QRectF(self.rect()), key, self._paint_rows)
        p.end()

    def _paint_rows(self, p: QPainter) -> None:
        fm = QFontMetricsF(self.font())
        bold = self.font()
        bold.setBold(True)
        fb = QFontMetricsF(bold)
        n_cols = len(self.rows[0])
        widths = [
            max(max(fm.horizontalAdvance(r[c]) for r in self.rows[1:]) if len(self.rows) > 1
                else 0.0, fb.horizontalAdvance(self.rows[0][c])) + self.PAD
            for c in range(n_cols)
        ]  # fmt: skip
        line = self._line()
        p.setPen(QColor(20, 20, 20))
        for i, row in enumerate(self.rows):
            p.setFont(bold if i == 0 else self.font())
            x = 2.0
            for c, text in enumerate(row):
                align = Qt.AlignmentFlag.AlignLeft if c == 0 else Qt.AlignmentFlag.AlignRight
                rect = QRectF(x, i * line, widths[c] - self.PAD / 2, line)
                p.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, text)
                x += widths[c]


class OutputView(QWidget):
    """acc / ℓ of the active rows beside the same rows of the reference ``attention()``."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        # One above the other: both are a few rows of d_v numbers, wide rather than tall. Each
        # keeps its picture while its numbers stay (an edit of a token the active rows do not
        # read, or acc / ℓ before the first step, leaves them as they are).
        self.tiled = CachedCanvas(colour_bar=False, max_cell=40, min_cell=1)
        self.reference = CachedCanvas(colour_bar=False, max_cell=40, min_cell=1)
        for c in (self.tiled, self.reference):
            c.setMinimumSize(100, 40)
            lay.addWidget(c, 1)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.caption)
        self._reference_shown: tuple | None = None
        self._tiled_shown: tuple | None = None

    def sizeHint(self) -> QSize:
        # Short enough that at the dock's default height (about 450 px at 1600x1000) the page's
        # preferred height still leaves the whole m / ℓ / accumulator table in view below it.
        return QSize(280, 200)

    def refresh(self, data: StepperData) -> None:
        if data.message:
            self._reference_shown = self._tiled_shown = None
            for c in (self.tiled, self.reference):
                c.set_matrix(np.zeros((0, 0)))
            self.caption.setText("")
            return
        r0, r1 = data.rows
        ref = data.reference[r0:r1]
        top = float(np.max(np.abs(ref), initial=0.0)) or 1.0
        scale = ColourScale(_signed_lut(), -top, top)
        labels = data.row_labels[r0:r1]
        # No taller than full-size cells need: the spare height goes below the caption.
        tall = round(QFontMetricsF(self.tiled.cell_font()).height() + 14 + 40 * (r1 - r0))
        for c in (self.tiled, self.reference):
            c.setMaximumHeight(max(tall, 40))
        what = f"acc / ℓ after {data.step} of {data.n_key_blocks} key blocks"
        what = "output of the tiled kernel" if data.done else what
        # While ℓ = 0 (nothing seen yet) acc / ℓ is 0 / 0: hatched and shown as NaN, not as a
        # number it does not have.
        est = data.estimate
        shown = (labels, est.tobytes(), est.shape, top, what)
        if shown != self._tiled_shown:
            self._tiled_shown = shown
            unknown = ~np.isfinite(est)
            self.tiled.set_matrix(
                est, row_labels=labels, col_labels=(), scale=scale,
                title=what, forbidden=unknown if unknown.any() else None,
            )  # fmt: skip
        shown = (labels, ref.tobytes(), ref.shape)
        if shown != self._reference_shown:  # the reference rows stay put while stepping
            self._reference_shown = shown
            self.reference.set_matrix(ref, row_labels=labels, col_labels=(), scale=scale,
                                      title="attention() reference")  # fmt: skip
        self.caption.setText(data.caption)


class MemoryBar(QWidget):
    """Two bars to one linear scale: the floats plain attention materialises (scores and
    weights, n_q × n_k each) and the tiled kernel's one tile plus m, ℓ and accumulator. Its
    painting is kept while the counts, font and size stay."""

    def __init__(self) -> None:
        super().__init__()
        self.raster = KeptRaster()
        self.setMinimumHeight(40)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.plain = self.tiled = 0

    def sizeHint(self) -> QSize:
        return QSize(300, 44)

    def refresh(self, data: StepperData) -> None:
        pm = data.memory
        counts = (
            (0, 0) if pm is None else (pm.plain_bytes // pm.itemsize, pm.tiled_bytes // pm.itemsize)
        )
        if counts != (self.plain, self.tiled):
            self.plain, self.tiled = counts
            self.update()
        self.setToolTip(data.memory_text)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        key = (self.plain, self.tiled, self.font().key(), self.width(), self.height())
        self.raster.paint(p, QRectF(self.rect()), key, self._paint_bars)
        p.end()

    def _paint_bars(self, p: QPainter) -> None:
        p.fillRect(self.rect(), QColor("white"))
        fm = QFontMetricsF(self.font())
        rows = (("plain", self.plain, QColor(90, 90, 90)), ("tiled", self.tiled, ACTIVE))
        label_w = max(fm.horizontalAdvance(t) for t, _, _ in rows) + 8
        top = max(self.plain, self.tiled, 1)
        h = (self.height() - 6) / 2
        for i, (name, count, colour) in enumerate(rows):
            y = 3 + i * h
            p.setPen(QColor(30, 30, 30))
            p.drawText(QRectF(2, y, label_w, h), Qt.AlignmentFlag.AlignVCenter, name)
            text = f"{fmt_floats(count)} floats"
            room = self.width() - label_w - fm.horizontalAdvance(text) - 14
            w = max(2.0, room * count / top)
            p.fillRect(QRectF(label_w, y + 2, w, h - 4), colour)
            p.setPen(QColor(30, 30, 30))
            p.drawText(QRectF(label_w + w + 6, y, self.width(), h),
                       Qt.AlignmentFlag.AlignVCenter, text)  # fmt: skip
