"""The application's style makes each standard icon once: the docks' title bars ask for their
icons at every layout, and the same pixels come back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyleFactory

from attnsim.app.shared_icons import SharedStandardIcons

TITLE_BAR = (
    QStyle.StandardPixmap.SP_TitleBarCloseButton,
    QStyle.StandardPixmap.SP_TitleBarNormalButton,
)


def _pixels(icon) -> QImage:
    return icon.pixmap(16, 16).toImage().convertToFormat(QImage.Format.Format_ARGB32)


def _key(qapp) -> str:
    return qapp.style().name() or "fusion"


def test_the_style_hands_out_each_standard_icon_once_with_the_base_styles_pixels(qapp):
    shared, base = SharedStandardIcons(_key(qapp)), QStyleFactory.create(_key(qapp))
    for sp in TITLE_BAR:
        first, again = shared.standardIcon(sp), shared.standardIcon(sp)
        assert not first.isNull()
        assert first.cacheKey() == again.cacheKey()  # one icon, not one per ask
        assert base.standardIcon(sp).cacheKey() != base.standardIcon(sp).cacheKey()
        assert _pixels(first) == _pixels(base.standardIcon(sp))  # the same pixels


def test_a_new_palette_gets_icons_of_its_own(qapp):
    shared = SharedStandardIcons(_key(qapp))
    sp = TITLE_BAR[0]
    before = shared.standardIcon(sp).cacheKey()
    old = QApplication.palette()
    dark = QPalette(old)
    dark.setColor(QPalette.ColorRole.WindowText, QColor(250, 250, 250))
    QApplication.setPalette(dark)
    try:
        assert shared.standardIcon(sp).cacheKey() != before
    finally:
        QApplication.setPalette(old)
    assert shared.standardIcon(sp).cacheKey() == shared.standardIcon(sp).cacheKey()


_APP = (
    "import json\n"
    "from PySide6.QtWidgets import QStyle\n"
    "from attnsim.app import create_app\n"
    "from attnsim.app.quiet_start import RULE\n"
    "from attnsim.app.shared_icons import share_standard_icons\n"
    "app = create_app(['attnsim'])\n"
    "sp = QStyle.StandardPixmap.SP_TitleBarCloseButton\n"
    "keys = [app.style().standardIcon(sp).cacheKey() for _ in range(2)]\n"
    "print(json.dumps({'once': keys[0] == keys[1], 'again': share_standard_icons(app),\n"
    "    'rule': RULE in app.styleSheet(), 'title': 'QDockWidget::title' in app.styleSheet()}))\n"
)


@pytest.mark.process
def test_the_application_has_the_style_and_its_style_sheet_the_quiet_start_rule():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", _APP], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.splitlines()[-1])
    # the style sheet's style forwards to the sharing style; the app's own rules are kept
    assert seen == {"once": True, "again": False, "rule": True, "title": True}
