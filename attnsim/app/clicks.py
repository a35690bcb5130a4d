"""Which panel the user means: the one a widget sits in, the one under the mouse, the one last
clicked. Kept apart from the export dialog (which needs the exporters) so the window can track
clicks from its first frame without loading them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
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
    """Remembers the panel the user last clicked.

    It follows the focus changes a mouse press makes: every panel takes focus on a click anywhere in
    it (:class:`~attnsim.panels.base.Panel` has click focus), so a press on a canvas that takes
    no focus itself still moves the focus into its panel. An application-wide event filter did
    the same by seeing every event, which cost about 0.1 s of the start-up (tens of thousands of
    events, each a call into Python) and a little of every repaint after it.
    """

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.last: Panel | None = None
        QApplication.instance().focusChanged.connect(self._focus_changed)

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        # Only a click counts: focus set by code (or by a tab raised behind the scenes) may
        # sit in a panel nobody is looking at.
        if QApplication.mouseButtons() == Qt.MouseButton.NoButton:
            return
        panel = panel_of(new)
        if panel is not None:
            self.last = panel


def panel_under_mouse() -> Panel | None:
    return panel_of(QApplication.widgetAt(QCursor.pos()))


__all__ = ["ClickTracker", "panel_of", "panel_under_mouse"]
