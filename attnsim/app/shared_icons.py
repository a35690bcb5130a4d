"""The style's standard icons made once, not at every ask.

Qt's dock widgets ask the style for their title bar's close and float icons each time a dock
is made and each time its title bar is laid out (the common style asks for the icon to know
its size), and the style makes a new icon every time, reading its image files' headers again:
about half of what a dock behind another tab costs the window's first frame. The application's
style hands out the icon it made the first time for each standard icon instead (the same
icon, so the same pixels), made again after the application's palette changes (a platform
may draw its icons in the palette's colours).
"""

from __future__ import annotations

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget


class SharedStandardIcons(QProxyStyle):
    """The base style (by its key: ``QApplication.style().name()``) with its standard icons
    made once per application palette."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._icons: dict[tuple[QStyle.StandardPixmap, int], QIcon] = {}

    def standardIcon(  # Qt's name
        self,
        standard_icon: QStyle.StandardPixmap,
        option: QStyleOption | None = None,
        widget: QWidget | None = None,
    ) -> QIcon:
        key = (standard_icon, QApplication.palette().cacheKey())
        icon = self._icons.get(key)
        if icon is None:
            if len(self._icons) > 256:  # palettes come and go: the icons of old ones go too
                self._icons.clear()
            icon = self._icons[key] = super().standardIcon(standard_icon, option, widget)
        return icon


_PROPERTY = "attnsim_shared_icons"
INSTALLED: list[SharedStandardIcons] = []  # the style given to the application (tests)


def share_standard_icons(app: QApplication) -> bool:
    """Give ``app`` its style with standard icons made once (before its style sheet is set:
    the style sheet's style then stands in front of it); False when it has it already."""
    if app.property(_PROPERTY):
        return False
    style = SharedStandardIcons(app.style().name())
    app.setStyle(style)
    app.setProperty(_PROPERTY, True)
    INSTALLED[:] = [style]
    return True
