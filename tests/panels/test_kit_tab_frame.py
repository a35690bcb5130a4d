"""The labs' tab widget copies its kept frame a rectangle of the paint's region at a time: the
pixels are those Qt's own tab widget paints, and the copy under a clip that is not one
rectangle is the copy of the whole picture."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget, QWidget

from attnsim.panels.kit.tab_frame import FramedTabs, copy_region

FMT = QImage.Format.Format_ARGB32_Premultiplied


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(FMT)
    return np.frombuffer(image.constBits(), np.uint32, image.width() * image.height()).copy()


def rendered(widget: QWidget) -> np.ndarray:
    image = QImage(widget.width(), widget.height(), FMT)
    image.fill(QColor("white"))
    widget.render(image)
    return pixels(image)


def tabs(cls, qtbot):
    t = cls()
    page = QLabel("page one")
    page.setAutoFillBackground(True)  # opaque, as a lab's scrolling page: the frame is a ring
    t.addTab(page, "One")
    t.addTab(QWidget(), "Two")
    qtbot.addWidget(t)
    t.resize(300, 200)
    t.show()
    qtbot.waitExposed(t)
    QApplication.processEvents()
    return t


def test_the_kept_frame_is_the_frame_qt_paints(qtbot):
    plain, framed = tabs(QTabWidget, qtbot), tabs(FramedTabs, qtbot)
    want = rendered(plain)
    assert (rendered(framed) == want).all()  # painted, then kept
    assert framed._frame is not None
    assert (rendered(framed) == want).all()  # copied from the kept picture
    framed.setCurrentIndex(1)
    plain.setCurrentIndex(1)
    QApplication.processEvents()
    assert (rendered(framed) == rendered(plain)).all()


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_a_copy_by_rectangles_is_the_copy_of_the_whole(qapp, scale):
    w, h = 120, 300
    rng = np.random.default_rng(0)
    sw, sh = round(w * scale), round(h * scale)
    alpha = rng.integers(0, 256, (sh, sw), dtype=np.uint32)
    grey = (rng.integers(0, 256, alpha.shape, dtype=np.uint32) * alpha) // 255
    words = np.ascontiguousarray((alpha << 24) | (grey << 16) | (grey << 8) | grey)
    src = QImage(words.data, sw, sh, 4 * sw, FMT).copy()  # premultiplied, every pixel its own
    src.setDevicePixelRatio(scale)
    ring = QRegion(0, 0, w, 30) + QRegion(0, 30, 3, 260) + QRegion(w - 3, 30, 3, 260)
    ring += QRegion(0, h - 10, w, 10)

    def painted(draw) -> np.ndarray:
        out = QImage(round(w * scale), round(h * scale), FMT)
        out.setDevicePixelRatio(scale)
        out.fill(QColor(200, 220, 240))
        p = QPainter(out)
        p.setClipRegion(ring)
        draw(p)
        p.end()
        return pixels(out)

    whole = painted(lambda p: p.drawImage(0, 0, src))
    by_rects = painted(lambda p: copy_region(p, src, ring, scale))
    assert (by_rects == whole).all()
    outside = painted(lambda p: None)
    assert (whole != outside).any()  # the copy drew something


def test_a_region_of_one_rectangle_draws_the_whole_picture(qapp):
    src = QImage(40, 40, FMT)
    src.fill(QColor(10, 20, 30))
    out = QImage(40, 40, FMT)
    out.fill(QColor("white"))
    p = QPainter(out)
    copy_region(p, src, QRegion(QRect(0, 0, 40, 40)), 1.0)
    p.end()
    assert (pixels(out) == pixels(src)).all()
