"""The heatmap's own pieces around the kit's matrices: the colour scale of a stage, the stage's
colour bar with its legend, the entropy column, the "key → / query ↓" corner, and the hover
texts. Paint functions over a QPainter; the canvas decides where they go."""

from __future__ import annotations

from functools import cache
from typing import Literal

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen

from attnsim.viewmodels.heatmap import CanvasContent, StageData

from ..kit.colour_bar import INK
from ..kit.matrix_canvas import HATCH, MASKED_BG, ColourScale, lut_from_cmap, paint_scale_bar
from ..kit.numbers import fmt_number
from ..style import MUTED, score_cmap, weight_cmap

ENTROPY_FILL = QColor("#c6d4e6")

# What a paint function draws: everything, only what stays while the numbers change (the
# canvas keeps that in a cached layer on screen), or only what the numbers change.
Part = Literal["all", "fixed", "numbers"]


@cache
def stage_lut(kind: str) -> np.ndarray:
    """Packed 256-entry colour table: viridis for weights/norms, diverging for signed scores."""
    return lut_from_cmap(score_cmap() if kind == "signed" else weight_cmap())


def stage_scale(sd: StageData) -> ColourScale:
    return ColourScale(stage_lut(sd.kind), sd.lo, sd.hi)


def paint_stage_bar(
    p: QPainter, rect: QRectF, sd: StageData, fm: QFontMetricsF, part: Part = "all"
) -> None:
    """A horizontal colour bar with its limits, and a legend (hatch swatch if cells are hatched).

    ``part``: "fixed" is the strip and the legend, "numbers" the limits under the strip."""
    bar = QRectF(rect.x(), rect.y() + 6, rect.width(), 8)
    lh = fm.height()
    ticks = QRectF(rect.x(), bar.bottom() + 1, rect.width(), lh)
    if part != "numbers":
        paint_scale_bar(p, bar, stage_scale(sd), labels=(), frame=QColor("#555555"))
        _paint_legend(p, QRectF(rect.x(), ticks.bottom(), rect.width(), lh), sd, fm)
    if part == "fixed":
        return
    lo, hi = fmt_number(sd.lo, 2), fmt_number(sd.hi, 2)
    if fm.horizontalAdvance(lo) + fm.horizontalAdvance(hi) + 4 > rect.width():
        # A narrow bar: one decimal, so the two limits do not run into each other.
        lo, hi = fmt_number(sd.lo, 1), fmt_number(sd.hi, 1)
    marks = [(0.0, lo), (1.0, hi)]
    if rect.width() > 3 * fm.horizontalAdvance("−0.00"):
        marks.insert(1, (0.5, fmt_number((sd.lo + sd.hi) / 2, 2)))
    paint_scale_bar(p, bar, stage_scale(sd), labels=marks, fm=fm, ink=INK, strip=False)


def _paint_legend(p: QPainter, legend: QRectF, sd: StageData, fm: QFontMetricsF) -> None:
    lh = legend.height()
    x = legend.x()
    if sd.allowed is not None:
        sw = QRectF(x, legend.y() + 2, 14, lh - 4)
        p.fillRect(sw, MASKED_BG)
        p.fillRect(sw, QBrush(HATCH, Qt.BrushStyle.BDiagPattern))
        p.setPen(QPen(QColor("#777777"), 0.8))
        p.drawRect(sw)
        x += 18
    p.setPen(QColor("#555555"))
    room = max(legend.right() - x, 0.0)
    p.drawText(
        QRectF(x, legend.y(), room, lh),
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
        fm.elidedText(sd.legend, Qt.TextElideMode.ElideRight, room),
    )


def paint_entropy(
    p: QPainter,
    r: QRectF,
    header: QRectF,
    c: CanvasContent,
    fs: QFontMetricsF,
    small: QFont,
    part: Part = "all",
) -> None:
    """Each row's entropy as a bar with its number, or (rows too short) as one profile.

    ``part``: "fixed" is the header and the scale under the column, "numbers" the bars."""
    assert c.entropy is not None
    x0, w = r.x() + 6, r.width() - 8
    p.setFont(small)
    if part != "numbers":
        p.setPen(QColor("#333333"))
        p.drawText(
            QRectF(x0 - 2, header.y(), w + 4, header.height()),
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, "H bits",
        )  # fmt: skip
        p.setPen(QColor("#555555"))
        p.drawText(
            QRectF(x0 - 4, r.bottom() + 4, w + 8, fs.height()),
            Qt.AlignmentFlag.AlignHCenter, f"0–{fmt_number(c.entropy_top, 1)}",
        )  # fmt: skip
    if part == "fixed":
        return
    ent = np.asarray(c.entropy, dtype=float)
    n_q = ent.size
    ch = r.height() / n_q
    top = max(c.entropy_top, 1e-9)
    if ch >= fs.height():
        p.setPen(QColor("#222222"))  # the numbers' ink (filling a bar leaves the pen)
        for i, value in enumerate(ent.tolist()):
            y = r.y() + i * ch
            bar = QRectF(x0, y + ch * 0.2, w * min(value / top, 1.0), ch * 0.6)
            p.fillRect(bar, ENTROPY_FILL)
            p.drawText(QRectF(x0, y, w, ch), Qt.AlignmentFlag.AlignCenter, fmt_number(value, 2))
    else:
        # Built from arrays by pyqtgraph (one call, not one QPointF per row).
        ys = np.concatenate(([r.y()], r.y() + (np.arange(n_q) + 0.5) * ch, [r.bottom()]))
        xs = np.concatenate(([x0], x0 + w * np.minimum(ent / top, 1.0), [x0]))
        p.setPen(QPen(QColor("#4a6a94"), 0.8))
        p.setBrush(ENTROPY_FILL)
        p.drawPath(pg.arrayToQPath(xs, ys))
        p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(QPen(QColor("#999999"), 0.8))
    p.drawLine(QPointF(x0, r.y()), QPointF(x0, r.bottom()))


def paint_corner(p: QPainter, corner: QRectF, small: QFont) -> None:
    """Which way the matrix reads, in the corner above the query labels."""
    p.setFont(small)
    p.setPen(MUTED)
    fs = QFontMetricsF(small)
    p.drawText(
        QRectF(corner.x(), corner.bottom() - 2 * fs.height(), corner.width(), fs.height()),
        Qt.AlignmentFlag.AlignRight, "key →",
    )  # fmt: skip
    p.drawText(
        QRectF(corner.x(), corner.bottom() - fs.height(), corner.width(), fs.height()),
        Qt.AlignmentFlag.AlignRight, "query ↓",
    )  # fmt: skip


def tooltip_text(c: CanvasContent, kind: str, i: int, j: int) -> str:
    """The hover text of a cell (the token pair and every number of it) or of a label."""
    if kind == "row":
        ent = "" if c.entropy is None else f"\nentropy {fmt_number(float(c.entropy[i]), 3)} bits"
        return f"query {c.row_labels[i]} (row {i + 1}): click to make it the receiving token{ent}"
    if kind == "col":
        return f"key {c.col_labels[j]} (column {j + 1}): click to focus it"
    tr = c.trace
    allowed = bool(tr.mask[i, j])
    lines = [
        f"{c.row_labels[i]} → {c.col_labels[j]}   (query {i + 1}, key {j + 1})"
        + ("" if allowed else "   forbidden by the mask"),
        f"q·k = {fmt_number(tr.score(i, j), 4)}",
        f"logit = {fmt_number(float(tr.logits[i, j]), 4)}",
        f"masked logit = {fmt_number(tr.masked_logit(i, j), 4)}",
        f"weight = {fmt_number(float(tr.weights[i, j]), 4)}",
        f"‖w·v‖ = {fmt_number(tr.contribution_norm(i, j), 4)}",
    ]
    if c.entropy is not None:
        line = f"row entropy = {fmt_number(float(c.entropy[i]), 3)} bits"
        if c.entropy_max is not None:
            line += f" (at most {fmt_number(float(c.entropy_max[i]), 3)})"
        lines.append(line)
    return "\n".join(lines)
