"""The score matrix drawn as tiles: the kit's numbered matrix with the kernel's block boundaries,
the active query block and tile, the tiles still to come dimmed and the tiles the mask skips
crossed out. A click on a cell reports the tile it lies in."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen

from attnsim.viewmodels.kernel_lab import StepperData

from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import KeptRaster, MatrixCanvas
from ..kit.numbers import fmt_number
from ..pool_later import PoolsLater
from ..style import score_cmap

LABELS_MAX = 24  # beyond this many rows or columns, positions label them instead of tokens
BOUNDARY = QColor(40, 40, 40)
BOUNDARY_PX = 1.5
ACTIVE = QColor(230, 97, 0)  # the query block and the tile just folded in (orange, CB-safe)
SKIPPED = QColor(120, 120, 120, 150)
PENDING = QColor(255, 255, 255, 150)
# Cells may be smaller than a pixel: a large head is pooled to the pixels on screen (at one
# pixel a cell, n = 2,048 made a 2,048 x 2,048 image, mostly off screen).
MIN_CELL = 1e-3
CROSS_MIN_PX = 12  # smaller tiles are hatched rather than crossed out one by one
IMAGE_BELOW_PX = 2.0  # smaller tiles: the skipped ones drawn as one image of the grid's pixels
BOUNDARY_GAP_PX = 4.0  # boundaries closer than this are left out (they would cover the cells)
HATCH_PERIOD_PX = 8  # the hatch's spacing in the image, as Qt's diagonal pattern
DRAWING = "Drawing the logits…"


@cache
def _positions(n: int) -> tuple[str, ...]:
    """The labels 1 … n: one tuple per n, so the canvas measures its widest label once, not at every
    new state (at n = 4,096, 4,096 labels measured took about 10 ms of a refresh's paint)."""
    return tuple(str(i + 1) for i in range(n))


@cache
def _score_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class TileCanvas(PoolsLater, MatrixCanvas):
    """Logits of the focused head as tiles of ``block_q`` x ``block_k`` cells."""

    def __init__(self) -> None:
        super().__init__(max_cell=64, min_cell=MIN_CELL)
        self.data: StepperData | None = None
        self._overlay_key: tuple | None = None
        self._overlay: tuple[list[QRectF], list[QRectF]] = ([], [])
        # Set by the panel: where a large head's pooled image is made (None: at the paint).
        self.pool_later = None
        self.drawing_text = DRAWING
        # the skipped runs' shade, and the crosses or hatching with the boundaries, as kept
        # pictures (see paint_content)
        self.under_raster, self.over_raster = KeptRaster(), KeptRaster()

    def refresh(self, data: StepperData, head: str = "") -> None:
        """Draw ``data``; ``head`` names the head when the scenario has several."""
        old, self.data = self.data, data
        title = f"Logits{head} in tiles of {data.block_q} × {data.block_k}"
        if old is not None and _same_matrix(old, data):
            # A step or a block size moves only the overlay: keep the cached cells and numbers.
            self.title = title
            self.update()
            return
        rows, cols = data.row_labels, data.col_labels
        if max(len(rows), len(cols)) > LABELS_MAX:
            rows, cols = _positions(len(rows)), ()
        top = data.logit_top  # found by the view-model (on the runner for a large head)
        self.set_matrix(
            data.logits, row_labels=rows, col_labels=cols,
            scale=ColourScale(_score_lut(), -top, top), forbidden=data.forbidden,
            title=title,
            tooltip=self._tip,
        )  # fmt: skip

    def _tip(self, i: int, j: int) -> str:
        d = self.data
        if d is None or not d.n_key_blocks:
            return ""
        qb, kb = i // d.block_q, j // d.block_k
        what = "skipped by the mask" if d.skipped[qb, kb] else "computed"
        value = "masked" if d.forbidden[i, j] else fmt_number(d.logits[i, j], 4)
        return (
            f"{d.row_labels[i]} → {d.col_labels[j]}: logit {value}; tile ({qb + 1}, {kb + 1}) "
            f"{what}. Click: fold up to this tile."
        )

    def paint_content(self, p: QPainter) -> None:
        if self.pooled_soon(p):
            self.paint_drawing(p)
            return
        super().paint_content(p)
        d = self.data
        if d is None or not d.n_key_blocks or d.logits.shape != self.values.shape:
            return
        g = self.grid_rect()
        n_q, n_k = d.logits.shape
        ch, cw = g.height() / n_q, g.width() / n_k

        def tile(qb: int, kb: int) -> QRectF:
            r0, c0 = qb * d.block_q, kb * d.block_k
            r1, c1 = min(n_q, r0 + d.block_q), min(n_k, c0 + d.block_k)
            return QRectF(g.x() + c0 * cw, g.y() + r0 * ch, (c1 - c0) * cw, (r1 - r0) * ch)

        def tile_run(qb: int, kb0: int, kb1: int) -> QRectF:
            """Tiles kb0 … kb1 − 1 of tile row qb as one rectangle."""
            r0, c0 = qb * d.block_q, kb0 * d.block_k
            r1, c1 = min(n_q, r0 + d.block_q), min(n_k, kb1 * d.block_k)
            return QRectF(g.x() + c0 * cw, g.y() + r0 * ch, (c1 - c0) * cw, (r1 - r0) * ch)

        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        # The skipped runs and the boundaries depend on the grid and the tiling only: an edit
        # of the scenario's numbers reuses them.
        ppx = p.deviceTransform().m11() or 1.0
        # Tiles under IMAGE_BELOW_PX device pixels (a large head): the skipped tiles are drawn
        # as one image of the grid's pixels, and the boundaries only where they are apart.
        small = min(d.block_q * ch, d.block_k * cw) * ppx < IMAGE_BELOW_PX
        key = (g.getRect(), ppx, n_q, n_k, d.block_q, d.block_k, d.skipped_runs.tobytes())
        if key != self._overlay_key:
            # One rectangle per run of skipped tiles in a tile row: at n = 64 in 2 x 2 tiles
            # the causal mask skips 496 tiles, and one rectangle and cross each was 12 ms. The
            # runs are the view-model's (found on the runner for a large head: at n = 4,096 in
            # 2 x 2 tiles, 2,048 x 2,048 tiles took about 100 ms to search at the paint).
            if small:
                runs: list[QRectF] | tuple[QImage, np.ndarray] = _skipped_image(
                    d.skipped_runs, g, ppx, n_q, n_k, d.block_q, d.block_k
                )
            else:
                runs = [tile_run(qb, a, b) for qb, a, b in d.skipped_runs.tolist()]
            self._overlay = (runs, _boundaries(g, n_q, n_k, d.block_q, d.block_k, ppx))
            self._overlay_key = key
        runs, bars = self._overlay
        crossed = min(d.block_q * ch, d.block_k * cw) >= CROSS_MIN_PX
        # What lies under the dimmed tiles to come (the skipped runs' shade) and what lies over
        # them (crosses or hatching, the boundaries) are each kept as a picture while the grid
        # and the tiling stay: a repaint copies the two (at n = 64 in 2 x 2 tiles, painting
        # them was about 0.8 ms of every edit).
        room = g.adjusted(-BOUNDARY_PX, -BOUNDARY_PX, BOUNDARY_PX, BOUNDARY_PX)

        def under(q: QPainter) -> None:
            q.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            q.setPen(Qt.PenStyle.NoPen)
            if isinstance(runs, tuple):  # the skipped tiles, shaded and hatched, as one image
                q.drawImage(g, runs[0])
            else:
                q.setBrush(SKIPPED)
                q.drawRects(runs)

        def over(q: QPainter) -> None:
            q.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            if crossed:
                skipped = [
                    tile(int(a), int(b)) for a, b in zip(*np.nonzero(d.skipped), strict=True)
                ]
                q.setBrush(Qt.BrushStyle.NoBrush)
                q.setPen(QPen(QColor(255, 255, 255), 1.5))
                crosses = [QLineF(r.topLeft(), r.bottomRight()) for r in skipped]
                crosses += [QLineF(r.topRight(), r.bottomLeft()) for r in skipped]
                q.drawLines(crosses)
            elif not isinstance(runs, tuple):  # tiles too small to cross out: hatched instead
                q.setPen(Qt.PenStyle.NoPen)
                q.setBrush(QBrush(QColor(255, 255, 255), Qt.BrushStyle.BDiagPattern))
                q.drawRects(runs)
            q.setPen(Qt.PenStyle.NoPen)
            q.setBrush(BOUNDARY)
            q.drawRects(bars)

        self.under_raster.paint(p, room, ("under", key), under)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(PENDING)  # not yet folded in: dimmed
        if d.step < d.n_key_blocks:
            p.drawRect(tile_run(d.q_block, d.step, d.n_key_blocks))
        self.over_raster.paint(p, room, ("over", key, crossed), over)
        # the active band and tile are drawn with the brush the tiles' marks were drawn with
        if crossed:
            p.setBrush(Qt.BrushStyle.NoBrush)
        else:
            p.setBrush(QBrush(QColor(255, 255, 255), Qt.BrushStyle.BDiagPattern))
        band = QRectF(g.x(), g.y() + d.rows[0] * ch, g.width(), (d.rows[1] - d.rows[0]) * ch)
        p.setPen(QPen(ACTIVE, 2.0, Qt.PenStyle.DashLine))
        p.drawRect(band)
        if d.step > 0:
            p.setPen(QPen(ACTIVE, 3.5))
            p.drawRect(tile(d.q_block, d.step - 1).adjusted(1, 1, -1, -1))
        p.restore()

    def tile_at(self, i: int, j: int) -> tuple[int, int] | None:
        """The (query block, key block) of cell (i, j)."""
        d = self.data
        if d is None or not d.n_key_blocks:
            return None
        return i // d.block_q, j // d.block_k


def _boundaries(
    g: QRectF, n_q: int, n_k: int, block_q: int, block_k: int, ppx: float = 1.0
) -> list[QRectF]:
    """The tile boundaries as thin filled rectangles: a 1.5 px pen goes through Qt's stroker,
    which took 2.5 ms for the 66 lines of 2 x 2 tiles at n = 64 (drawn in one drawRects call:
    one fillRect each was a Python round trip per line). Boundaries less than
    :data:`BOUNDARY_GAP_PX` device pixels apart are left out but for the grid's edges: at
    n = 4,096 in 2 x 2 tiles, 4,098 bars of 1.5 px covered the whole grid in one grey."""
    ch, cw = g.height() / n_q, g.width() / n_k
    w = BOUNDARY_PX / 2
    rows = [*range(0, n_q, block_q), n_q] if block_q * ch * ppx >= BOUNDARY_GAP_PX else [0, n_q]
    cols = [*range(0, n_k, block_k), n_k] if block_k * cw * ppx >= BOUNDARY_GAP_PX else [0, n_k]
    bars = [QRectF(g.left() - w, g.y() + r0 * ch - w, g.width() + 2 * w, 2 * w) for r0 in rows]
    bars += [QRectF(g.x() + c0 * cw - w, g.top() - w, 2 * w, g.height() + 2 * w) for c0 in cols]
    return bars


def _premultiplied(c: QColor) -> int:
    """``c`` as a premultiplied 0xAARRGGBB word."""
    a = c.alpha()
    r, g, b = ((x * a + 127) // 255 for x in (c.red(), c.green(), c.blue()))
    return (a << 24) | (r << 16) | (g << 8) | b


def _skipped_image(
    runs: np.ndarray, g: QRectF, ppx: float, n_q: int, n_k: int, block_q: int, block_k: int
) -> tuple[QImage, np.ndarray]:
    """The skipped tiles' ``runs`` (tile row, first, one past the last) as an image of the
    grid's device pixels: shaded (:data:`SKIPPED`) and hatched in white where a run covers a
    pixel, clear elsewhere; with the array it is a view of. For tiles under a pixel, where a
    rectangle a run was 2,047 rectangles (n = 4,096 in 2 x 2 tiles), drawn twice a paint."""
    h, w = max(1, round(g.height() * ppx)), max(1, round(g.width() * ppx))
    arr = np.zeros((h, w), dtype=np.uint32)
    if len(runs):
        r, a, b = (np.asarray(c, dtype=float) for c in np.asarray(runs).T)
        sy, sx = h / n_q, w / n_k  # pixels per cell
        y0 = np.floor(r * block_q * sy).astype(np.intp)
        y1 = np.maximum(y0 + 1, np.rint(np.minimum(n_q, (r + 1) * block_q) * sy).astype(np.intp))
        x0 = np.floor(a * block_k * sx).astype(np.intp)
        x1 = np.maximum(x0 + 1, np.rint(np.minimum(n_k, b * block_k) * sx).astype(np.intp))
        y0, y1 = np.clip(y0, 0, h), np.clip(y1, 0, h)
        x0, x1 = np.clip(x0, 0, w), np.clip(x1, 0, w)
        reps = y1 - y0
        first = np.repeat(y0, reps)
        ys = first + (np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps))
        edges = np.zeros((h, w + 1), dtype=np.int32)
        np.add.at(edges, (ys, np.repeat(x0, reps)), 1)
        np.add.at(edges, (ys, np.repeat(x1, reps)), -1)
        covered = np.cumsum(edges[:, :w], axis=1) > 0
        arr[covered] = _premultiplied(SKIPPED)
        period = max(4, round(HATCH_PERIOD_PX * ppx))
        diagonal = (np.arange(h)[:, None] + np.arange(w)[None, :]) % period == 0
        arr[covered & diagonal] = 0xFFFFFFFF
    image = QImage(arr.data, w, h, 4 * w, QImage.Format.Format_ARGB32_Premultiplied)
    return image, arr


def _same_matrix(a: StepperData, b: StepperData) -> bool:
    if a.logits is b.logits and a.forbidden is b.forbidden:  # one trace's (a step or a block)
        return a.row_labels == b.row_labels and a.col_labels == b.col_labels
    return (
        a.row_labels == b.row_labels
        and a.col_labels == b.col_labels
        and np.array_equal(a.logits, b.logits, equal_nan=True)
        and np.array_equal(a.forbidden, b.forbidden)
    )
