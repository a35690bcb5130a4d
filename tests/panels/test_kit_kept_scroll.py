"""The kept scroll bar: over the window colour it is the bar Qt paints, pixel for pixel, and it
paints afresh only when what it shows changes."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QApplication, QScrollBar

from attnsim.panels.kit.kept_scroll import KeptScrollBar


def rendered(bar: QScrollBar) -> np.ndarray:
    image = QImage(bar.width(), bar.height(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(bar.palette().color(QPalette.ColorRole.Window))  # what a window has under it
    bar.render(image)
    return np.frombuffer(image.constBits(), np.uint32, bar.width() * bar.height()).copy()


def bar(cls, qtbot) -> QScrollBar:
    b = cls(Qt.Orientation.Vertical)
    qtbot.addWidget(b)
    b.setRange(0, 500)
    b.setPageStep(100)
    b.setValue(120)
    b.resize(14, 410)
    b.move(600, 300)  # away from the pointer: under it the bar paints as Qt does
    b.show()
    qtbot.waitExposed(b)
    QApplication.processEvents()
    return b


def test_the_kept_bar_is_the_bar_qt_paints(qtbot):
    plain, kept = bar(QScrollBar, qtbot), bar(KeptScrollBar, qtbot)
    want = rendered(plain)
    assert (rendered(kept) == want).all()
    assert (rendered(kept) == want).all() and kept.paints == 1  # the second one copied
    for b in (plain, kept):
        b.setValue(400)
    QApplication.processEvents()
    moved = rendered(plain)
    assert (moved != want).any()
    assert (rendered(kept) == moved).all() and kept.paints == 2
    for b in (plain, kept):
        b.resize(14, 300)
    QApplication.processEvents()
    assert (rendered(kept) == rendered(plain)).all() and kept.paints == 3


def test_under_the_pointer_the_bar_paints_as_qt_does(qtbot):
    plain, kept = bar(QScrollBar, qtbot), bar(KeptScrollBar, qtbot)
    before = kept.paints
    for b in (plain, kept):
        b.setValue(300)  # a new position: a kept picture would be painted afresh
        b.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)
    assert (rendered(kept) == rendered(plain)).all()
    assert kept.paints == before
