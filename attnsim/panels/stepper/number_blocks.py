"""The stepper's blocks of numbers: measured, placed and painted with QPainter.

A :class:`NumberBlocks` holds the number fonts (their size shrinks for wide stages) and the
measurements it memoises; it sizes a :class:`~attnsim.viewmodels.stepper.Block`, paints one where
the stage placed it, and finds the cell under a point.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen

from attnsim.viewmodels.stepper import Block

from ..kit.matrix_canvas import paint_matrix as paint_cells
from ..kit.numbers import fmt_cell_short

# Background tints of rows (light, so black numbers stay readable).
USED_BG = QColor("#FFF1C9")
READ_BG = QColor("#E3EEF9")
ABSENT_FG = QColor("#8A8A8A")
NOTE_FG = QColor("#B34700")
GRID = QColor("#DDDDDD")
INK = QColor("#111111")
# Alignment flags built once: combining Qt enums costs microseconds per call in PySide6.
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

fmt_num = fmt_cell_short  # the stepper's cells (tests and tooltips parse them back)


def parse_num(text: str) -> float:
    """Inverse of :func:`fmt_num` (for tests and tooltips)."""
    return float(text.replace("−", "-").replace("∞", "inf"))


@dataclass
class Placed:
    """A block where the stage put it: origin, label column, cell and note widths, size."""

    block: Block
    x: float
    y: float
    label_w: float
    cell_w: float
    note_w: float
    w: float
    h: float


class NumberBlocks:
    """Measures and paints blocks in the number font (and its bold form for titles)."""

    BASE_SIZE = 8.5  # point size of the numbers; wide blocks shrink it down to MIN_SIZE
    MIN_SIZE = 6.5

    def __init__(self, base: QFont) -> None:
        self.num_font = QFont(base)
        self.num_font.setPointSizeF(self.BASE_SIZE)
        self.head_font = QFont(self.num_font)
        self.head_font.setBold(True)
        self.number_size = self.BASE_SIZE
        self._digit_tables: dict[float, dict[int, int]] = {}
        self._widths: dict[tuple[float, bool, str], int] = {}

    def set_number_size(self, size: float) -> None:
        if size != self.number_size:
            self.number_size = size
            self.num_font.setPointSizeF(size)
            self.head_font.setPointSizeF(size)

    def _digit_table(self, fm: QFontMetrics) -> dict[int, int]:
        key = self.number_size
        table = self._digit_tables.get(key)
        if table is None:
            widest = max("0123456789", key=fm.horizontalAdvance)
            table = str.maketrans("0123456789", widest * 10)
            self._digit_tables[key] = table
        return table

    def _advance(self, fm: QFontMetrics, text: str, bold: bool = False) -> int:
        """Width of ``text`` in the number (or bold head) font, memoised: labels repeat."""
        key = (self.number_size, bold, text)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 20_000:
                self._widths.clear()
            w = self._widths[key] = fm.horizontalAdvance(text)
        return w

    def row_height(self) -> int:
        return QFontMetrics(self.num_font).height() + 3

    def size(self, b: Block) -> tuple[float, float, float, float, float]:
        """(label_w, cell_w, note_w, w, h) of ``b`` in the current number size."""
        fm = QFontMetrics(self.num_font)
        hm = QFontMetrics(self.head_font)
        adv = self._advance
        rh = fm.height() + 3
        label_w = max((adv(fm, s) for s in b.row_labels), default=0)
        label_w = label_w + 8 if label_w else 4
        # Measure each distinct *shape* of number once (every digit replaced by the font's
        # widest digit): measuring every cell of a big stage costs more than painting it.
        digits = self._digit_table(fm)
        shapes = {t.translate(digits) for row in b.texts for t in row}
        cell_w = max(
            max((adv(fm, t) for t in shapes), default=0),
            max((adv(fm, c) for c in b.col_labels), default=0),
        ) + 10  # fmt: skip
        note_w = max((adv(fm, s) for s in b.row_notes), default=0)
        note_w = note_w + 10 if note_w else 0
        w = label_w + cell_w * b.values.shape[1] + note_w
        w = max(w, adv(hm, b.title, True) + 2)
        h = hm.height() + 2 + rh * (b.values.shape[0] + 1)
        return label_w, cell_w, note_w, w, h

    def paint(self, p: QPainter, pl: Placed) -> None:
        b = pl.block
        hm = QFontMetrics(self.head_font)
        rh = self.row_height()
        p.setFont(self.head_font)
        p.setPen(QColor("#111111"))
        p.drawText(QPointF(pl.x, pl.y + hm.ascent()), b.title)
        top = pl.y + hm.height() + 2
        x0 = pl.x + pl.label_w
        r, cols = b.values.shape
        p.setFont(self.num_font)
        # column labels
        p.setPen(QColor("#666666"))
        for j, lab in enumerate(b.col_labels):
            rect = QRectF(x0 + j * pl.cell_w, top, pl.cell_w - 4, rh)
            p.drawText(rect, RIGHT, lab)
        grid_w = pl.cell_w * cols
        for i in range(r):
            y = top + rh * (i + 1)
            state = b.row_state[i]
            if state in ("used", "read"):
                p.fillRect(QRectF(pl.x, y, pl.label_w + grid_w, rh),
                           USED_BG if state == "used" else READ_BG)  # fmt: skip
            p.setPen(QColor("#444444") if state != "absent" else ABSENT_FG)
            p.drawText(QRectF(pl.x, y, pl.label_w - 6, rh), RIGHT, b.row_labels[i])
            if b.row_notes[i]:
                p.setPen(NOTE_FG)
                p.drawText(QRectF(x0 + grid_w + 6, y, pl.note_w, rh), LEFT, b.row_notes[i])
        # The numbers: every one, right-aligned 4 px inside its cell, as the block wrote them.
        paint_cells(
            p, QRectF(x0, top + rh, grid_w, rh * r), b.values, texts=b.texts,
            fit_numbers=False, numbers_max=max(r, cols), font=self.num_font, ink=INK,
            row_inks=[ABSENT_FG if st == "absent" else None for st in b.row_state],
            align=RIGHT, text_inset=4.0, grid_lines=False,
        )  # fmt: skip
        # a frame around the numbers, like matrix brackets
        p.setPen(QPen(GRID, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(x0 - 2, top + rh, grid_w, rh * r))

    def cell_at(self, placed: list[Placed], x: float, y: float) -> tuple[Block, int, int] | None:
        """The block cell under a point, or None."""
        hm = QFontMetrics(self.head_font)
        rh = self.row_height()
        for pl in placed:
            top = pl.y + hm.height() + 2 + rh
            x0 = pl.x + pl.label_w
            r, cols = pl.block.values.shape
            if x0 <= x < x0 + cols * pl.cell_w and top <= y < top + r * rh:
                return pl.block, int((y - top) // rh), int((x - x0) // pl.cell_w)
        return None
