"""The cells of the diagram's matrix boxes kept as pictures while what they show is unchanged.

An edit of one token's vector changes X, Q, K and V but not the weights Wq, Wk and Wv: at
n = 64 with 8 heads three of the seven boxes on screen would have their cells painted again,
number by number (about 0.6 ms each), exactly as before. :class:`KeptBoxes` keeps each box's
cells (fills, numbers, the receiving row's outline) in a transparent image at the device's
pixels and copies it while their texts, place, scale and fonts are those it was painted with.
Only the cells are kept: they are opaque, with the numbers drawn on them, so the copy is the
painting pixel for pixel; the titles and labels, drawn on whatever lies behind, are painted
each time. Where a copy could differ from painting afresh (a device transform other than a
scale and a translation, or a device with a scale of its own, as on a 2x screen) it paints
afresh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter, QTransform

from attnsim.viewmodels.anatomy import BlockMatrix, DiagramData, MatrixBox

from .painting import Fonts, grid_of, highlighted_row, paint_cells_of, shown_texts

MARGIN = 4.0  # design units around the cells: the receiving row's outline


def _plain(t: QTransform) -> bool:
    return t.type().value <= QTransform.TransformationType.TxScale.value


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9


@dataclass
class _Kept:
    """What one box's cells were last painted with, and their picture once it has held still."""

    where: tuple  # everything but the numbers: place, scale, fonts, device offset, hints
    value: object  # the matrix's values (an array the engine froze: the same object, same texts)
    texts: list[list[str]]
    image: QImage | None = None


class KeptBoxes:
    """Pictures of the boxes' cells by the matrix's key; :meth:`retain` drops old ones.

    A box whose numbers change at every edit (X, Q, K, V under a drag) is painted directly,
    as before: a picture of it would be thrown away at the next edit. A box painted twice in a
    row with the same texts in the same place is kept as a picture from then on."""

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self.paints = 0  # cells painted afresh (tests count them)

    def retain(self, keys: set[str]) -> None:
        """Forget the boxes no longer in the diagram."""
        for key in [k for k in self._kept if k not in keys]:
            del self._kept[key]

    def cells(
        self,
        p: QPainter,
        m: BlockMatrix,
        box: MatrixBox,
        data: DiagramData,
        fonts: Fonts,
        scale: float,
    ) -> None:
        """:func:`~.painting.paint_cells_of` with ``p`` (in design units), or its kept copy."""
        world, dev = p.worldTransform(), p.deviceTransform()
        inv, ok = world.inverted()
        to_device = inv * dev  # the device's own offset (and scale, on a 2x screen)
        if not (ok and _plain(dev) and _plain(world)
                and to_device.type().value <= QTransform.TransformationType.TxTranslate.value
                and _whole(to_device.dx()) and _whole(to_device.dy())):  # fmt: skip
            self.paints += 1
            paint_cells_of(p, m, box, data, fonts, scale)
            return
        ext = grid_of(box).adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
        x0, y0 = dev.map(ext.topLeft()).toTuple()
        x1, y1 = dev.map(ext.bottomRight()).toTuple()
        ix, iy = math.floor(x0), math.floor(y0)
        where = (
            m.kind, box.x, box.y, box.label_w, tuple(box.rows), tuple(box.cols),
            highlighted_row(m, box, data), scale, id(fonts), fonts.base.key(),
            dev.m11(), dev.m22(), dev.dx() - ix, dev.dy() - iy, p.renderHints(),
        )  # fmt: skip
        kept = self._kept.get(m.key)
        value = m.value
        frozen = isinstance(value, np.ndarray) and not value.flags.writeable
        if kept is not None and kept.where == where and kept.value is value and frozen:
            texts = kept.texts  # the same frozen array shows the same numbers
        else:
            texts = shown_texts(m, box)
        if kept is None or kept.where != where or kept.texts != texts:
            self.paints += 1
            paint_cells_of(p, m, box, data, fonts, scale, texts)
            self._kept[m.key] = _Kept(where, value, texts)
            return
        kept.value = value
        if kept.image is None:  # the second time alike: keep a picture from now on
            w, h = math.ceil(x1) - ix + 1, math.ceil(y1) - iy + 1
            image = QImage(max(w, 1), max(h, 1), QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(Qt.GlobalColor.transparent)
            q = QPainter(image)
            q.setRenderHints(p.renderHints())
            q.setWorldTransform(
                QTransform(dev.m11(), 0.0, 0.0, dev.m22(), dev.dx() - ix, dev.dy() - iy)
            )
            paint_cells_of(q, m, box, data, fonts, scale, texts)
            q.end()
            self.paints += 1
            kept.image = image
        # painted at the same offset within a device pixel: copied to (ix, iy)
        p.save()
        p.setWorldTransform(QTransform.fromTranslate(ix - to_device.dx(), iy - to_device.dy()))
        p.drawImage(0, 0, kept.image)
        p.restore()
