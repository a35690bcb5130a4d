"""The diagram kept as one picture, repainted only where its numbers changed.

An edit of one token's vector changes one row of X, Q, K and V, every row of S, A and H, and
nothing else the diagram shows: titles, formulas, row labels, frames, arrows, head chips and
the caption stay as they were. Painting them all again cost about 5 ms at n = 64 with 8
heads (some 120 texts). :class:`DiagramCanvas` keeps what the diagram painted in an opaque
image at the device's pixels, on the widget's own background (the scroll area fills it with
one plain colour before every paint), and copies it to the screen. When numbers change, the
pixels of the changed rows are filled with the background again and everything that touches
them is painted again, clipped to them, in the order of a full paint: the picture is the one
a full paint makes, pixel for pixel (texts are clipped to their rectangles, so a row's
numbers never reach past its band). Boxes out of sight whose numbers changed are forgotten and
painted when they come into view. Where a copy could differ from painting afresh (a device
that is not a raster image or window, a device transform other than a whole-pixel shift, a
background that is not one opaque colour) the diagram paints directly, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPaintEngine, QPainter, QRegion, QTransform

from attnsim.viewmodels.anatomy import BlockMatrix, Diagram, DiagramData, MatrixBox

from .painting import (
    Fonts,
    grid_of,
    paint_arrows,
    paint_caption,
    paint_matrix_part,
    paint_notes_and_chips,
    row_texts,
    shown_texts,
)

_TRANSLATE = QTransform.TransformationType.TxTranslate.value


@dataclass
class _Places:
    """Where the parts of one layout fall, in device pixels (made once per layout)."""

    grid: dict[str, QRect]  # each box's cells
    extent: dict[str, QRect]  # each box with its title, labels and frame
    title: dict[str, QRect]  # its title and formula
    bands: dict[str, list[QRect]]  # each shown row's cells
    rows: dict[str, list[QRect]]  # each shown row's cells and label
    arrows: list[QRect]
    notes: list[QRect]  # the notes and head chips
    caption: QRect


def _places(dia: Diagram, world: QTransform) -> _Places:
    grid, extent, title, bands, rows = {}, {}, {}, {}, {}
    for k, box in dia.boxes.items():
        grid[k] = _px(world, grid_of(box))
        extent[k] = _px(world, QRectF(box.x - 4, box.y - 4, box.w + 48, box.h + 8))
        title[k] = _px(world, QRectF(box.x, box.y, box.w + 40, 26))
        band = _row_band(box)
        bands[k] = [_px(world, band(ri)) for ri in range(len(box.rows))]
        rows[k] = [_px(world, band(ri, labels=True)) for ri in range(len(box.rows))]
    notes = [QRectF(x, y, w + 4, 14) for x, y, w, _t in dia.notes]
    notes += [QRectF(x - 2, y - 2, w + 4, h + 4) for _hd, x, y, w, h in dia.chips]
    return _Places(
        grid, extent, title, bands, rows,
        [_px(world, _arrow_rect(a)) for a in dia.arrows],
        [_px(world, r) for r in notes],
        _px(world, QRectF(-4, dia.caption_y - 4, dia.caption_w + 8, 1e6)),
    )  # fmt: skip


@dataclass
class _Held:
    """What the picture shows of one box's cells: the values and their texts."""

    value: object
    texts: list[list[str]]
    shown: np.ndarray | None  # the shown values' bits (float64 arrays only)


class DiagramCanvas:
    """The diagram's picture; :meth:`draw` brings the exposed part up to date and copies it."""

    def __init__(self) -> None:
        self.enabled = True
        self.image: QImage | None = None
        self._key: tuple | None = None
        self._valid = QRegion()  # the image's pixels that hold the diagram as it is now
        self._held: dict[str, _Held] = {}
        self._places: _Places | None = None
        self.rows_painted = 0  # rows painted again after their numbers changed (tests count)
        self.areas_painted = 0  # parts of the picture painted as they came into view

    def draw(self, p: QPainter, widget, exposed: QRect) -> bool:
        """Paint ``widget`` (a :class:`~.diagram.BlockDiagram`) into ``p`` from the picture;
        False (nothing painted) where a copy could differ from painting directly."""
        if not self.enabled or p.paintEngine().type() != QPaintEngine.Type.Raster:
            return False
        dev = p.deviceTransform()
        if (
            dev.type().value > _TRANSLATE
            or dev.dx() != round(dev.dx())
            or dev.dy() != round(dev.dy())
            or not widget.autoFillBackground()
        ):
            return False
        # The picture is in the device's pixels, from its top left corner (what is on screen
        # is never left of or above it), not the widget's: a glyph's place within a pixel
        # follows the device coordinates of its origin, and s·x + (4 + ox) can round
        # otherwise than (s·x + 4) + ox. Painted with the device's own transform, every text
        # falls where it falls when painted directly, to the bit.
        ox, oy = round(dev.dx()), round(dev.dy())
        brush = widget.palette().brush(widget.backgroundRole())
        bg = brush.color()
        if brush.style() != Qt.BrushStyle.SolidPattern or bg.alpha() != 255:
            return False
        data, dia, fonts, scale = widget.data, widget.dia, widget.fonts, widget.scale
        size = widget.size()
        key = (
            size.width(), size.height(), ox, oy, id(dia), widget._layout_key, scale, bg.rgba(),
            fonts.base.key(), p.renderHints(), data.note, data.receiving_label, data.focused,
            data.receiving, tuple(m.kind for m in data.mats),
        )  # fmt: skip
        if key != self._key or self.image is None:
            self._key = key
            self.image = QImage(
                max(size.width() + ox, 1),
                max(size.height() + oy, 1),
                QImage.Format.Format_ARGB32_Premultiplied,
            )
            self._valid = QRegion()
            self._held = {}
            self._places = _places(dia, _world(scale, ox, oy))
        image, places = self.image, self._places
        assert places is not None
        world = _world(scale, ox, oy)  # design units to the picture's (the device's) pixels
        exposed = exposed.translated(ox, oy).intersected(image.rect())  # in the picture
        target = exposed.topLeft() - QPoint(ox, oy)
        by_key = {m.key: m for m in data.mats}
        dirty = QRegion()
        texts: dict[str, list[list[str]]] = {}
        for k in [k for k in self._held if k not in dia.boxes]:
            del self._held[k]
        for k, box in dia.boxes.items():
            m = by_key[k]
            held = self._held.get(k)
            if held is None:
                continue
            area = places.grid[k]
            if not area.intersects(exposed):
                # Out of sight: forget it if its numbers may have changed.
                if not _same_numbers(held, m, box):
                    del self._held[k]
                    self._valid -= QRegion(area)
                continue
            shown = _shown_bits(m.value, box)
            new = _texts(held, m, box, shown)
            changed = [] if new is held.texts else _changed_rows(held.texts, new)
            if changed:
                for ri in changed:
                    dirty += QRegion(places.bands[k][ri])
                self.rows_painted += len(changed)
            self._held[k] = _Held(m.value, new, shown)
            texts[k] = new
        dirty &= self._valid
        todo = (QRegion(exposed) - self._valid) + dirty
        if not todo.isEmpty():
            if not (QRegion(exposed) - self._valid).isEmpty():
                self.areas_painted += 1
            q = QPainter(image)
            q.setRenderHints(p.renderHints())
            q.setClipRegion(todo)
            q.fillRect(todo.boundingRect(), bg)
            q.setWorldTransform(world)
            painted = self._paint(q, todo, places, dia, data, fonts, scale, by_key, texts)
            q.end()
            for k in painted:
                if k not in self._held:
                    m = by_key[k]
                    self._held[k] = _Held(m.value, texts[k], _shown_bits(m.value, dia.boxes[k]))
            self._valid += QRegion(exposed)
        p.save()
        p.resetTransform()
        p.drawImage(target, image, exposed)
        p.restore()
        return True

    @staticmethod
    def _paint(
        q: QPainter,
        todo: QRegion,
        places: _Places,
        dia: Diagram,
        data: DiagramData,
        fonts: Fonts,
        scale: float,
        by_key: dict[str, BlockMatrix],
        texts: dict[str, list[list[str]]],
    ) -> list[str]:
        """Everything of the diagram that touches ``todo`` (device pixels), in paint order."""
        touches = todo.intersects
        painted = []
        for k, box in dia.boxes.items():
            if not touches(places.extent[k]):
                continue
            m = by_key[k]
            rows = [ri for ri, r in enumerate(places.rows[k]) if touches(r)]
            if k not in texts:
                texts[k] = shown_texts(m, box)
            title = touches(places.title[k])  # title, formula
            full = len(rows) == len(box.rows)
            paint_matrix_part(q, m, box, data, fonts, scale, texts[k], None if full else rows,
                              title)  # fmt: skip
            painted.append(k)
        q.setRenderHint(QPainter.RenderHint.Antialiasing)  # as the diagram paints the rest
        arrows = [i for i, r in enumerate(places.arrows) if touches(r)]
        if arrows:
            paint_arrows(q, dia, fonts, arrows)
        if any(touches(r) for r in places.notes):
            paint_notes_and_chips(q, dia, data, fonts)
        if touches(places.caption):
            paint_caption(q, dia, data, fonts)
        return painted


def _world(scale: float, ox: int, oy: int) -> QTransform:
    """The diagram's transform (``paintEvent``'s: translated by 4, scaled) on a device where
    the widget starts at (``ox``, ``oy``), composed as the painter composes the two."""
    return QTransform.fromTranslate(4, 4).scale(scale, scale) * QTransform.fromTranslate(ox, oy)


def _px(world: QTransform, rect: QRectF) -> QRect:
    """The device pixels ``rect`` (design units) touches."""
    return world.mapRect(rect).toAlignedRect()


def _row_band(box: MatrixBox):
    grid = grid_of(box)
    ch = grid.height() / len(box.rows)
    x0, y0, w = grid.x(), grid.y(), grid.width()

    def band(ri: int, labels: bool = False) -> QRectF:
        # the row's cells (a row is CELL_H tall: its label's rectangle has the same height)
        x = box.x if labels else x0  # with its label
        return QRectF(x, y0 + ri * ch, x0 + w - x, ch)

    return band


def _same_numbers(held: _Held, m: BlockMatrix, box: MatrixBox) -> bool:
    value = m.value
    if held.value is value and isinstance(value, np.ndarray) and not value.flags.writeable:
        return True
    shown = _shown_bits(value, box)
    return shown is not None and held.shown is not None and np.array_equal(shown, held.shown)


def _texts(
    held: _Held, m: BlockMatrix, box: MatrixBox, shown: np.ndarray | None
) -> list[list[str]]:
    """The shown cells' texts, formatting again only rows whose values' bits changed (a number
    is written from its value alone); ``held.texts`` itself if nothing changed."""
    value = m.value
    if held.value is value and isinstance(value, np.ndarray) and not value.flags.writeable:
        return held.texts  # the same frozen array shows the same numbers
    old = held.shown
    if old is None or shown is None or old.shape != shown.shape:
        return shown_texts(m, box)
    same = (old == shown).all(axis=1)
    if same.all():
        return held.texts
    out, k = [], 0
    for ri, r in enumerate(box.rows):
        if r is None:
            out.append(held.texts[ri])
            continue
        out.append(held.texts[ri] if same[k] else row_texts(m, box, r))
        k += 1
    return out


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


def _arrow_rect(arrow) -> QRectF:
    xs = [x for x, _y in arrow.points]
    ys = [y for _x, y in arrow.points]
    rect = QRectF(min(xs) - 8, min(ys) - 8, max(xs) - min(xs) + 16, max(ys) - min(ys) + 16)
    if arrow.label:
        x, y = arrow.points[0]
        rect = rect.united(QRectF(x + 2, y - 4, 124, 16))
    return rect
