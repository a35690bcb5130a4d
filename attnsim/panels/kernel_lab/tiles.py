"""The score matrix drawn as tiles: the kit's numbered matrix with the kernel's block boundaries,
the active query block and tile, the tiles still to come dimmed and the tiles the mask skips
crossed out. A click on a cell reports the tile it lies in."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen

from attnsim.viewmodels.kernel_lab import StepperData

from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.numbers import fmt_number
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


@cache
def _score_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


class TileCanvas(MatrixCanvas):
    """Logits of the focused head as tiles of ``block_q`` x ``block_k`` cells."""

    def __init__(self) -> None:
        super().__init__(max_cell=64, min_cell=MIN_CELL)
        self.data: StepperData | None = None
        self._overlay_key: tuple | None = None
        self._overlay: tuple[list[QRectF], list[QRectF]] = ([], [])

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
            rows, cols = tuple(str(i + 1) for i in range(len(rows))), ()
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
        key = (g.getRect(), n_q, n_k, d.block_q, d.block_k, d.skipped_runs.tobytes())
        if key != self._overlay_key:
            # One rectangle per run of skipped tiles in a tile row: at n = 64 in 2 x 2 tiles
            # the causal mask skips 496 tiles, and one rectangle and cross each was 12 ms. The
            # runs are the view-model's (found on the runner for a large head: at n = 4,096 in
            # 2 x 2 tiles, 2,048 x 2,048 tiles took about 100 ms to search at the paint).
            runs = [tile_run(qb, a, b) for qb, a, b in d.skipped_runs.tolist()]
            self._overlay = (runs, _boundaries(g, n_q, n_k, d.block_q, d.block_k))
            self._overlay_key = key
        runs, bars = self._overlay
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(SKIPPED)
        p.drawRects(runs)
        p.setBrush(PENDING)  # not yet folded in: dimmed
        if d.step < d.n_key_blocks:
            p.drawRect(tile_run(d.q_block, d.step, d.n_key_blocks))
        if min(d.block_q * ch, d.block_k * cw) >= CROSS_MIN_PX:
            skipped = [tile(int(a), int(b)) for a, b in zip(*np.nonzero(d.skipped), strict=True)]
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(255, 255, 255), 1.5))
            crosses = [QLineF(r.topLeft(), r.bottomRight()) for r in skipped]
            crosses += [QLineF(r.topRight(), r.bottomLeft()) for r in skipped]
            p.drawLines(crosses)
        else:  # tiles too small to cross out one by one: the skipped runs are hatched instead
            p.setBrush(QBrush(QColor(255, 255, 255), Qt.BrushStyle.BDiagPattern))
            p.drawRects(runs)
        brush = p.brush()  # the active band below is drawn with the brush set above
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(BOUNDARY)
        p.drawRects(bars)
        p.setBrush(brush)
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


def _boundaries(g: QRectF, n_q: int, n_k: int, block_q: int, block_k: int) -> list[QRectF]:
    """The tile boundaries as thin filled rectangles: a 1.5 px pen goes through Qt's stroker,
    which took 2.5 ms for the 66 lines of 2 x 2 tiles at n = 64 (drawn in one drawRects call:
    one fillRect each was a Python round trip per line)."""
    ch, cw = g.height() / n_q, g.width() / n_k
    w = BOUNDARY_PX / 2
    bars = [
        QRectF(g.left() - w, g.y() + r0 * ch - w, g.width() + 2 * w, 2 * w)
        for r0 in [*range(0, n_q, block_q), n_q]
    ]
    bars += [
        QRectF(g.x() + c0 * cw - w, g.top() - w, 2 * w, g.height() + 2 * w)
        for c0 in [*range(0, n_k, block_k), n_k]
    ]
    return bars


def _same_matrix(a: StepperData, b: StepperData) -> bool:
    if a.logits is b.logits and a.forbidden is b.forbidden:  # one trace's (a step or a block)
        return a.row_labels == b.row_labels and a.col_labels == b.col_labels
    return (
        a.row_labels == b.row_labels
        and a.col_labels == b.col_labels
        and np.array_equal(a.logits, b.logits, equal_nan=True)
        and np.array_equal(a.forbidden, b.forbidden)
    )
