"""What the 3-D view draws over the arrows that a drag does not change: the weight colour bar,
the header, the notes and the usage hint. Drawn once into a kept transparent picture at the
device's pixels, then only its inked bands are copied onto each repaint (a drag repaints the
arrows and labels under them on every step, and these stay as they were)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPainter

from attnsim.viewmodels.space3d import Scene

from ..kit.hidpi import line_scale
from .painting import SceneLayers


class KeptOverlay:
    """The colour bar and the texts of a canvas, kept while what they show stays."""

    def __init__(self) -> None:
        self._kept: tuple[tuple, QImage, list[QRect]] | None = None

    def paint(
        self,
        p: QPainter,
        layers: SceneLayers,
        sc: Scene,
        header: str,
        size: tuple[float, float, float],
        *,
        hint: bool,
    ) -> None:
        """Draw the overlay of a ``size`` = (width, height, device pixels per pixel) canvas."""
        w, h, ppx = size
        key = (
            w, h, ppx, line_scale(), layers.font_label.key(), layers.font_small.key(),
            header, tuple(sc.notes), hint,
        )  # fmt: skip
        if self._kept is None or self._kept[0] != key:
            image = QImage(
                max(1, round(w * ppx)), max(1, round(h * ppx)),
                QImage.Format.Format_ARGB32_Premultiplied,
            )  # fmt: skip
            image.setDevicePixelRatio(ppx)
            image.fill(Qt.GlobalColor.transparent)
            q = QPainter(image)
            q.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            q.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            layers.paint_colorbar(q, w, h)
            layers.paint_text(q, sc, header, w, h, hint=hint)
            q.end()
            self._kept = (key, image, inked_bands(image))
        _, image, bands = self._kept
        for band in bands:  # device pixels of the picture, drawn at the canvas's pixels
            target = QRectF(band.x() / ppx, band.y() / ppx, band.width() / ppx, band.height() / ppx)
            p.drawImage(target, image, QRectF(band))


def inked_bands(image: QImage) -> list[QRect]:
    """The parts of a transparent ``image`` with anything drawn: one rectangle per run of
    rows that have ink, as wide as the ink in those rows (device pixels)."""
    w, h = image.width(), image.height()
    stride = image.bytesPerLine() // 4
    alpha = np.frombuffer(image.constBits(), dtype=np.uint32, count=stride * h)
    inked = (alpha.reshape(h, stride)[:, :w] >> 24) > 0
    rows = inked.any(axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], rows.astype(np.int8), [0]))))
    bands = []
    for top, bottom in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
        cols = np.flatnonzero(inked[top:bottom].any(axis=0))
        left, right = int(cols[0]), int(cols[-1]) + 1
        bands.append(QRect(left, top, right - left, bottom - top))
    return bands
