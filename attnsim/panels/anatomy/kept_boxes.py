"""The cells of the diagram's matrix boxes kept as pictures, repainted only where they changed.

An edit of one token's vector changes one row of X, Q, K and V and none of Wq, Wk and Wv: at
n = 64 with 8 heads the seven boxes on screen were painted again whole, number by number (about
0.6 ms each). :class:`KeptBoxes` keeps each box's cells (fills, numbers, the receiving row's
outline) in a transparent image at the device's pixels: a box whose texts are unchanged is
copied, one with a few new rows has those rows painted again into its picture, and one with
most rows new (S, A, H) is painted directly, as before. Only the cells are kept: they are
opaque, with the numbers drawn on them, so the copy is the painting pixel for pixel; titles
and labels, drawn on whatever lies behind, are painted each time. Where a copy could differ
from painting afresh (a device transform other than a scale and a translation, or a device
with a scale of its own, as on a 2x screen) it paints afresh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter, QTransform

from attnsim.viewmodels.anatomy import BlockMatrix, DiagramData, MatrixBox

from .painting import (
    Fonts,
    grid_of,
    highlighted_row,
    paint_cells_of,
    repaint_rows_of,
    row_texts,
    shown_texts,
)

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
    shown: np.ndarray | None = None  # the shown values' bits, row by row (float64 only)
    image: QImage | None = None


class KeptBoxes:
    """Pictures of the boxes' cells by the matrix's key; :meth:`retain` drops old ones.

    A box is painted directly the first time in a place; the second time there it is kept as
    a picture, updated row by row from then on while at most half its rows change."""

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self.paints = 0  # boxes' cells painted whole (tests count them)
        self.rows_painted = 0  # rows painted again into a kept picture

    def _paint_direct(self, p, m, box, data, fonts, scale, texts, where) -> None:
        self.paints += 1
        paint_cells_of(p, m, box, data, fonts, scale, texts)
        self._kept[m.key] = _Kept(where, m.value, texts, _shown_bits(m.value, box))

    @staticmethod
    def _painter(image: QImage, p: QPainter, dev: QTransform, ix: int, iy: int) -> QPainter:
        """A painter on a kept picture whose origin is device pixel (ix, iy) of ``p``'s."""
        q = QPainter(image)
        q.setRenderHints(p.renderHints())
        q.setWorldTransform(
            QTransform(dev.m11(), 0.0, 0.0, dev.m22(), dev.dx() - ix, dev.dy() - iy)
        )
        return q

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
        shown = _shown_bits(value, box)
        if kept is not None and kept.where == where and kept.value is value and frozen:
            texts = kept.texts  # the same frozen array shows the same numbers
        elif kept is not None and kept.where[4:6] == where[4:6] and kept.shown is not None:
            texts = _texts_again(m, box, kept, shown)
        else:
            texts = shown_texts(m, box)
        if kept is None or kept.where != where:
            self._paint_direct(p, m, box, data, fonts, scale, texts, where)
            return
        changed = [] if kept.texts is texts else _changed_rows(kept.texts, texts)
        if len(changed) > len(texts) // 2:  # most rows new (S, A, H under an edit): direct
            self._paint_direct(p, m, box, data, fonts, scale, texts, where)
            return
        kept.value = value
        if kept.image is None:  # the second time in the same place: keep a picture from now on
            w, h = math.ceil(x1) - ix + 1, math.ceil(y1) - iy + 1
            image = QImage(max(w, 1), max(h, 1), QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(Qt.GlobalColor.transparent)
            q = self._painter(image, p, dev, ix, iy)
            paint_cells_of(q, m, box, data, fonts, scale, texts)
            q.end()
            self.paints += 1
            kept.image = image
        elif changed:  # a few rows new (X, Q, K, V when one token moves): only those
            q = self._painter(kept.image, p, dev, ix, iy)
            repaint_rows_of(q, m, box, data, fonts, scale, texts, changed)
            q.end()
            self.rows_painted += len(changed)
        kept.texts, kept.shown = texts, shown
        # painted at the same offset within a device pixel: copied to (ix, iy)
        p.save()
        p.setWorldTransform(QTransform.fromTranslate(ix - to_device.dx(), iy - to_device.dy()))
        p.drawImage(0, 0, kept.image)
        p.restore()


def _changed_rows(old: list[list[str]], new: list[list[str]]) -> list[int]:
    if len(old) != len(new):
        return list(range(len(new)))
    return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def _shown_bits(value: object, box: MatrixBox) -> np.ndarray | None:
    """The shown cells' values as their bits (None rows and columns left out), or None for
    values that are not a float64 array."""
    if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != 2:
        return None
    rows = [r for r in box.rows if r is not None]
    cols = [c for c in box.cols if c is not None]
    return value[np.ix_(rows, cols)].view(np.uint64)


def _texts_again(m: BlockMatrix, box: MatrixBox, kept: _Kept, shown: np.ndarray | None) -> list:
    """:func:`shown_texts`, formatting again only the rows whose values' bits changed (a number
    is written from its value alone, so an unchanged row keeps its texts)."""
    old = kept.shown
    if old is None or shown is None or old.shape != shown.shape or len(kept.texts) != len(box.rows):
        return shown_texts(m, box)
    same = (old == shown).all(axis=1)
    out, k = [], 0
    for ri, r in enumerate(box.rows):
        if r is None:
            out.append(kept.texts[ri])
            continue
        out.append(kept.texts[ri] if same[k] else row_texts(m, box, r))
        k += 1
    return out
