"""What the lab panels' tests do to a panel: let it redraw, drag on it, type into a box."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

LEFT = Qt.MouseButton.LeftButton
NOMOD = Qt.KeyboardModifier.NoModifier


def settle(panel) -> None:
    """Deliver pending events, redraw the panel now, deliver what that posted."""
    QApplication.processEvents()
    panel.flush()
    QApplication.processEvents()


def drag(widget: QWidget, points: list[QPoint]) -> None:
    """A left-button drag through ``points``, the panel redrawn after each move."""
    QTest.mousePress(widget, LEFT, NOMOD, points[0])
    for p in points[1:]:
        QTest.mouseMove(widget, p)
        settle(widget.window())
    QTest.mouseRelease(widget, LEFT, NOMOD, points[-1])


def type_into(box, text: str) -> None:
    """Select a spin box's text, type ``text`` over it and press Return."""
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), text)
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)
