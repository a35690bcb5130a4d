"""A label whose new text lays nothing out again while it fits the room it has.

A QLabel asks its window to lay itself out again at every new text (Qt's ``updateGeometry``
climbs to the top of the window): several milliseconds per training chunk in the induction lab,
whose step count and losses change with every chunk. :class:`SteadyLabel` holds the QLabel in a
box of its own with no layout, so the request stops at the box; the box changes its own size
(and so asks for a new layout) only when the text needs more or fewer lines, or more width
than it has.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class SteadyLabel(QWidget):
    """``wrap=False``: one line, at least as wide as ``widest`` (a sample of the longest text
    expected); ``wrap=True``: as wide as the layout makes it, as tall as its lines."""

    def __init__(self, text: str = "", *, wrap: bool = False, widest: str = "",
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.label = QLabel(text, self)
        self.label.setWordWrap(wrap)
        self._wrap = wrap
        self._widest = widest
        if wrap:
            self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._fit(shrink=True)

    def text(self) -> str:
        return self.label.text()

    def setText(self, text: str) -> None:  # Qt's name
        if text != self.label.text():
            self.label.setText(text)
            self._fit()

    def setToolTip(self, tip: str) -> None:  # Qt's name
        super().setToolTip(tip)
        self.label.setToolTip(tip)

    def sizeHint(self) -> QSize:
        if self._wrap:
            return QSize(min(self.label.sizeHint().width(), 400), self.height())
        return self.size()

    def minimumSizeHint(self) -> QSize:
        return QSize(60, self.height()) if self._wrap else self.size()

    def _fit(self, shrink: bool = False) -> None:
        """The box's size for the text: changed (a new layout) only when the text needs it."""
        if self._wrap:
            width = self.width() if self.width() > 0 else 300
            h = max(self.label.heightForWidth(width), self.label.fontMetrics().height())
            if h != self.height() or shrink:
                self.setFixedHeight(h)
            self.label.setGeometry(self.rect())  # (a hidden box gets its resize event later)
            return
        fm = self.label.fontMetrics()
        hint = self.label.sizeHint()
        w = max(fm.horizontalAdvance(self._widest), hint.width()) + 2
        h = max(fm.height(), hint.height())
        if shrink or w > self.width() or h != self.height():
            self.setFixedSize(w, h)
        self.label.setGeometry(self.rect())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
        if self._wrap and event.oldSize().width() != event.size().width():
            self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit(shrink=True)
