"""The 3-D view's kept overlay (colour bar, header, notes, hint): the same pixels as drawing
them on every repaint, and made again only when what it shows changes."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from attnsim.panels.space3d import Space3DPanel
from attnsim.panels.space3d.overlay import KeptOverlay, inked_bands


def _pixels(image: QImage) -> np.ndarray:
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.bytesPerLine() * h)
    return raw.reshape(h, -1)[:, : w * 4].astype(int)


def _render(canvas) -> np.ndarray:
    image = QImage(canvas.width(), canvas.height(), QImage.Format.Format_RGB32)
    image.fill(0)
    p = QPainter(image)
    canvas.paint(p)
    p.end()
    return _pixels(image)


def test_inked_bands_are_the_rows_with_ink_as_wide_as_their_ink():
    image = QImage(100, 80, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.fillRect(QRect(10, 5, 20, 4), QColor("black"))
    p.fillRect(QRect(50, 7, 30, 6), QColor("red"))  # rows shared with the first: one band
    p.fillRect(QRect(70, 40, 5, 10), QColor("blue"))
    p.end()
    assert inked_bands(image) == [QRect(10, 5, 70, 8), QRect(70, 40, 5, 10)]
    image.fill(Qt.GlobalColor.transparent)
    assert inked_bands(image) == []


def test_kept_overlay_paints_what_the_layers_paint(make_wb, show_panel, monkeypatch):
    panel = show_panel(Space3DPanel(make_wb("river-bank")))
    canvas = panel.canvas
    kept = _render(canvas)
    assert canvas._overlay._kept is not None  # the screen's path (a 1:1 painter) was taken

    def direct(self, p, layers, sc, header, size, *, hint):
        layers.paint_colorbar(p, size[0], size[1])
        layers.paint_text(p, sc, header, size[0], size[1], hint=hint)

    monkeypatch.setattr(KeptOverlay, "paint", direct)
    drawn = _render(canvas)
    # the same picture: at most one level of one channel apart (rounding of the blend)
    assert np.abs(kept - drawn).max() <= 2
    assert (kept != drawn).any(axis=1).sum() <= 0.001 * kept.size


def test_kept_overlay_is_made_again_when_the_header_changes(make_wb, show_panel):
    wb = make_wb("river-bank")
    panel = show_panel(Space3DPanel(wb))
    canvas = panel.canvas
    _render(canvas)
    first = canvas._overlay._kept
    _render(canvas)
    assert canvas._overlay._kept is first  # nothing changed: the same picture
    wb.set_receiving(1)  # the header names the receiving query
    panel.flush()
    _render(canvas)
    assert canvas._overlay._kept is not first
    assert canvas.header in canvas._overlay._kept[0]
