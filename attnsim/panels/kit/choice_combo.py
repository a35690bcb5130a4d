"""``ChoiceCombo``: a combo box that asks for the width of the choice it shows, so that a row of
controls in a :class:`FlowLayout` wraps before the choice would be cut ("Scores → masked →
weigh"), while a dock narrower than the choice can still shrink it (its minimum stays small)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QWidget


class ChoiceCombo(QComboBox):
    """A combo whose size hint fits its current text whole; its minimum is a few characters."""

    def __init__(self, parent: QWidget | None = None, min_chars: int = 7) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(min_chars)
        self.currentIndexChanged.connect(self.updateGeometry)

    def sizeHint(self) -> QSize:  # Qt's name
        base = super().sizeHint()
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        text = QSize(self.fontMetrics().horizontalAdvance(self.currentText()), base.height())
        whole = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, text, self)
        return QSize(max(base.width(), whole.width()), base.height())
