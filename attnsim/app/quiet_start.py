"""No dock animations while the window opens.

Qt places each dock (and each tab bar) of a main window through an animation, even where it
does not animate: a zero-length one for every dock at every layout pass, the docks behind
other tabs too (they are moved out of sight), each made, run, deleted and answered in turns
of the event loop that lay the window out again. While the window opens (from its making
until the panels on screen are in), the style sheet gives the docks and the window's tab bars
no animation time, which places them at once, where the animations would have put them; after
that the docks animate as before (a dock dragged to a new place glides there).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

OPENING = "opening"  # the window's property the rule below looks at
RULE = (
    f'QMainWindow[{OPENING}="true"] > QDockWidget, QMainWindow[{OPENING}="true"] > QTabBar '
    "{ widget-animation-duration: 0; }"
)


def with_rule(style_sheet: str) -> str:
    """The application's style sheet with the rule above."""
    return f"{style_sheet}\n{RULE}\n"


def hold(window: QMainWindow) -> None:
    """The window is opening: its docks are placed at once (before any is made)."""
    window.setProperty(OPENING, True)


def release(window: QMainWindow) -> bool:
    """The window is open: its docks animate again (False if they did already). A widget's
    style sheet rules are worked out once, so the docks and tab bars are styled again."""
    if not window.property(OPENING):
        return False
    window.setProperty(OPENING, False)
    style = window.style()
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    for widget in [*window.findChildren(QDockWidget, options=direct),
                   *window.findChildren(QTabBar, options=direct)]:  # fmt: skip
        style.unpolish(widget)
        style.polish(widget)
    return True
