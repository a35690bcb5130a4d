"""Which panel the user means: the one a widget sits in, the one under the mouse, the one last
clicked. Kept apart from the export dialog (which needs the exporters) so the window can track
clicks from its first frame without loading them."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.panels.base import Panel


def panel_of(widget: QWidget | None) -> Panel | None:
    """The panel that ``widget`` belongs to, if any."""
    while widget is not None:
        if isinstance(widget, Panel):
            return widget
        widget = widget.parentWidget()
    return None


class ClickTracker(QObject):
    """Remembers the panel of the last mouse press anywhere in the application."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.last: Panel | None = None
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonPress and isinstance(watched, QWidget):
            panel = panel_of(watched)
            if panel is not None:
                self.last = panel
        return False


def panel_under_mouse() -> Panel | None:
    return panel_of(QApplication.widgetAt(QCursor.pos()))


__all__ = ["ClickTracker", "panel_of", "panel_under_mouse"]
