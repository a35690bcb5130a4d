"""What the lab's painted figures share: the field colours and a canvas whose text is drawn with
QPainter, so SVG exports keep it as text."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

# Okabe-Ito, distinct from the vermillion of queries.
FIELD_COLORS = (QColor("#0072B2"), QColor("#009E73"), QColor("#CC79A7"))
NO_FIELD = QColor("#9A9A9A")
TEXT = QColor("#222222")
FAINT = QColor("#777777")


class Canvas(QWidget):
    """A painted figure: text drawn with QPainter so SVG exports keep it as text."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 90)

    def font_of(self, scale: float = 1.0, bold: bool = False) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(max(self.font().pointSizeF() * scale, 6.0))
        f.setBold(bold)
        return f

    def title_font(self) -> QFont:
        return self.font_of(0.95, bold=True)

    def draw_title(self, p: QPainter, text: str, width: float) -> None:
        """The figure's bold title at the top left, elided to ``width`` px."""
        font = self.title_font()
        p.setFont(font)
        p.setPen(TEXT)
        p.drawText(QRectF(4, 0, width, 18), Qt.AlignmentFlag.AlignLeft
                   | Qt.AlignmentFlag.AlignVCenter, QFontMetricsF(font).elidedText(
                       text, Qt.TextElideMode.ElideRight, width))  # fmt: skip
