"""The stacked bars: the weight each query gathers from each field, with numbers and entropy."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.style import QUERY
from attnsim.viewmodels.fields_lab import BarsData, stacked_segments

from .canvas import FAINT, FIELD_COLORS, TEXT, Canvas


class FieldBarsView(Canvas):
    """Stacked bars: the weight each query gathers from each field, with numbers and entropy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: list[str] = []
        self.sums = np.zeros((0, 3))
        self.entropy = np.zeros(0)
        self.max_entropy = np.zeros(0)  # each row's entropy ceiling in bits (n_q,)
        self.selected = 0
        self.row_rects: list[QRectF] = []

    def sizeHint(self) -> QSize:
        return QSize(420, 150)

    def refresh(self, data: BarsData) -> None:
        """``data.sums`` (n_q, 3), ``entropy`` and ``max_entropy`` (n_q,) in bits."""
        self.labels = list(data.labels)
        self.sums = data.sums
        self.entropy = data.entropy
        self.max_entropy = data.max_entropy
        self.selected = int(data.selected)
        self.update()

    def shared_ceiling(self) -> float | None:
        """The rows' common entropy ceiling, or None when a mask gives rows different ones."""
        m = self.max_entropy
        return float(m[0]) if m.size and bool(np.all(m == m[0])) else None

    def entropy_text(self, r: int) -> str:
        """Row r's entropy as shown: against its own ceiling when the rows differ."""
        if self.shared_ceiling() is None:
            return f"{fmt_fixed(self.entropy[r], 2)} / {fmt_fixed(self.max_entropy[r], 2)}"
        return f"{fmt_fixed(self.entropy[r], 2)} bits"

    def header_texts(self) -> tuple[str, str]:
        """The entropy column's header, long and short."""
        ceiling = self.shared_ceiling()
        if ceiling is None:
            return "entropy / max, bits", "bits / max"
        return f"entropy, bits (max {fmt_fixed(ceiling, 2)})", f"bits (max {fmt_fixed(ceiling, 2)})"

    def layout_rows(self) -> tuple[list[QRectF], float, float, float]:
        """Row rectangles (label line + bar line), bar x and width, numbers column x."""
        w, h = float(self.width()), float(self.height())
        n = max(len(self.labels), 1)
        top = 20.0
        row_h = min((h - top - 2) / n, 44.0)
        num_w = 3 * 40.0 + 74.0
        bar_x = 8.0
        bar_w = max(w - bar_x - num_w - 10, 40.0)
        rows = [QRectF(2, top + r * row_h, w - 4, row_h - 2) for r in range(n)]
        return rows, bar_x, bar_w, bar_x + bar_w + 8

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        rows, bar_x, bar_w, num_x = self.layout_rows()
        self.row_rects = rows
        header_font = self.font_of(0.85)
        title_text = "Weight gathered from each field"
        title_need = QFontMetricsF(self.title_font()).horizontalAdvance(title_text)
        header, short_header = self.header_texts()
        header_w = QFontMetricsF(header_font).horizontalAdvance(header) + 4
        if title_need + header_w + 12 > self.width():  # narrow: a shorter header
            header = short_header
            header_w = QFontMetricsF(header_font).horizontalAdvance(header) + 4
        self.draw_title(p, title_text, self.width() - header_w - 12)
        p.setFont(header_font)
        p.setPen(FAINT)
        p.drawText(QRectF(self.width() - header_w - 4, 0, header_w, 18),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   header)  # fmt: skip
        label_font = self.font_of(0.9)
        num_font = self.font_of(0.9)
        for r, rect in enumerate(rows):
            if r >= len(self.labels):
                break
            sel = r == self.selected
            if sel:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(213, 94, 0, 28))
                p.drawRoundedRect(rect, 4, 4)
            line_h = rect.height() / 2
            p.setFont(self.font_of(0.9, bold=sel))
            p.setPen(QUERY.darker(130) if sel else TEXT)
            # The label line is free above the numbers too: it may run the row's full width.
            p.drawText(QRectF(bar_x, rect.top(), rect.right() - bar_x - 2, line_h),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                       ("▶ " if sel else "") + self.labels[r])  # fmt: skip
            bar = QRectF(bar_x, rect.top() + line_h + 1, bar_w, max(line_h - 5, 6))
            segs = stacked_segments(self.sums[r], bar_x, bar_w)
            for f, (left, width) in enumerate(segs):
                p.setPen(QPen(QColor("white"), 1))
                p.setBrush(FIELD_COLORS[f % 3])
                p.drawRect(QRectF(left, bar.top(), width, bar.height()))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor("#444444"), 0.8))
            p.drawRect(bar)
            p.setFont(num_font)
            for f in range(self.sums.shape[1]):
                cell = QRectF(num_x + 40 * f, bar.top() - 2, 38, bar.height() + 4)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(FIELD_COLORS[f % 3])
                p.drawRect(QRectF(cell.left(), cell.center().y() - 3.5, 7, 7))
                p.setPen(TEXT)
                align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
                p.drawText(cell.adjusted(9, 0, 0, 0), align, fmt_fixed(self.sums[r, f], 2))
            p.setFont(label_font)
            p.drawText(QRectF(num_x + 120, bar.top() - 2, 74, bar.height() + 4),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       self.entropy_text(r))  # fmt: skip
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        for r, rect in enumerate(self.row_rects):
            if rect.contains(pos):
                self.picked.emit(r)
                return
        super().mousePressEvent(event)
