"""The application's style makes each standard icon once: the docks' title bars ask for their
icons at every layout, and the same pixels come back."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyleFactory

from attnsim.app import create_app, shared_icons
from attnsim.app.shared_icons import share_standard_icons

TITLE_BAR = (
    QStyle.StandardPixmap.SP_TitleBarCloseButton,
    QStyle.StandardPixmap.SP_TitleBarNormalButton,
)


def _pixels(icon) -> QImage:
    return icon.pixmap(16, 16).toImage().convertToFormat(QImage.Format.Format_ARGB32)


def test_the_apps_style_hands_out_each_standard_icon_once_with_the_base_styles_pixels(qapp):
    app = create_app()
    assert share_standard_icons(app) is False  # once per application
    style = app.style()  # the style sheet's, in front of the one that shares
    base = QStyleFactory.create(shared_icons.INSTALLED[0].baseStyle().name())
    for sp in TITLE_BAR:
        first, again = style.standardIcon(sp), style.standardIcon(sp)
        assert not first.isNull()
        assert first.cacheKey() == again.cacheKey()  # one icon, not one per ask
        assert _pixels(first) == _pixels(base.standardIcon(sp))  # the same pixels


def test_a_new_palette_gets_icons_of_its_own(qapp):
    app = create_app()
    sp = TITLE_BAR[0]
    before = app.style().standardIcon(sp).cacheKey()
    old = QApplication.palette()
    dark = QPalette(old)
    dark.setColor(QPalette.ColorRole.WindowText, QColor(250, 250, 250))
    QApplication.setPalette(dark)
    try:
        assert app.style().standardIcon(sp).cacheKey() != before
    finally:
        QApplication.setPalette(old)
