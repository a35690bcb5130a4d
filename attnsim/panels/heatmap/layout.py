"""Where the heatmap canvas puts its stages at a given size, measured with the canvas's fonts:
the tiles (:func:`attnsim.viewmodels.heatmap.tile_layout`), the labels as drawn (shortened to fit
and kept distinct), whether the key labels are rotated, and whether a line under the bars says
that the numbers do not fit."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont, QFontMetricsF

from attnsim.viewmodels.heatmap import MAX_CELL_ASPECT, CanvasContent, Rect, TileLayout, tile_layout

from ..kit.labels import distinct_elide
from ..kit.matrix_canvas import NUMBERS_MAX, RECT_MAX, number_digits

ENTROPY_W = 46.0
LABEL_MAX_W = 96.0
# Rotated key labels take at most this share of the canvas height.
ROTATED_LABEL_SHARE = 0.22
# Up to this many rows / columns every label is measured (and shortened to stay distinct).
LABELLED_MAX = 64


# Shortened labels by (labels, width, font): a new trace of the same scenario (every edit, every
# benchmark update) keeps its labels, and shortening 64 of them measures text ~800 times.
_SHORT: dict[tuple[tuple[str, ...], float, str], list[str]] = {}


def _distinct(labels: tuple[str, ...], fm: QFontMetricsF, room: float, font: QFont) -> list[str]:
    key = (labels, room, font.key())
    short = _SHORT.get(key)
    if short is None:
        if len(_SHORT) >= 32:
            _SHORT.clear()
        short = _SHORT[key] = distinct_elide(labels, fm.horizontalAdvance, room)
    return list(short)


@dataclass(frozen=True)
class Fonts:
    base: QFont
    small: QFont
    bold: QFont

    @classmethod
    def of(cls, font: QFont) -> Fonts:
        base = QFont(font)
        small = QFont(base)
        small.setPointSizeF(max(base.pointSizeF() * 0.85, 6.5))
        bold = QFont(base)
        bold.setBold(True)
        return cls(base, small, bold)


@dataclass(frozen=True)
class CanvasGeometry:
    tiles: list[TileLayout]
    rows: Rect  # the row labels, left of the first tile
    rotated: bool  # key labels read upwards
    row_texts: list[str]  # the labels as drawn
    col_texts: list[str]
    notice_line: bool  # a line under the bars says the numbers need larger cells


def fit_canvas(
    c: CanvasContent, width: float, height: float, fonts: Fonts, *, figure: bool = False
) -> CanvasGeometry:
    """The canvas geometry for ``c`` at ``width`` x ``height``.

    A ``figure`` (an export) keeps labels whole where they fit (rows in a quarter of the
    width, columns in two fifths of the height; the cells get smaller) and reserves no line
    for a notice about the screen.
    """
    fm, fs, fb = QFontMetricsF(fonts.base), QFontMetricsF(fonts.small), QFontMetricsF(fonts.bold)
    n_q, n_k = c.stages[0].shape
    measure = fb.horizontalAdvance
    label_max = col_max = LABEL_MAX_W
    if figure and max(n_q, n_k) <= LABELLED_MAX:
        row_long = max(measure(t) for t in c.row_labels) + 2
        col_long = max(measure(t) for t in c.col_labels) + 2
        label_max = max(LABEL_MAX_W, min(row_long, width / 4))
        col_max = max(LABEL_MAX_W, min(col_long, height / 2.5))
    # Labels are shortened so that they stay distinct ("contr…ry 1", not "control t…" x4).
    row_texts = (
        _distinct(c.row_labels, fb, label_max, fonts.bold)
        if n_q <= LABELLED_MAX
        else list(c.row_labels)
    )
    show = row_texts if n_q <= LABELLED_MAX else (row_texts[c.receiving],)
    row_w = max([measure(t) for t in show] + [fs.horizontalAdvance("query ↓")]) + 8
    ent = tuple(ENTROPY_W if sd.stage == "weights" and c.entropy is not None else 0.0
                for sd in c.stages)  # fmt: skip

    title_h = fb.height() + 4

    def fit(col_label_h: float, footer: float) -> tuple[list[TileLayout], Rect]:
        return tile_layout(
            width, height, n_q, n_k, len(c.stages), row_label_w=row_w, col_label_h=col_label_h,
            title_h=title_h, bar_h=6 + 8 + 1 + 2 * fs.height() + footer,
            entropy_w=ent, max_aspect=MAX_CELL_ASPECT,
        )  # fmt: skip

    # Large matrices get one more line under the bars: what a pixel stands for.
    footer = fs.height() if max(n_q, n_k) > RECT_MAX else 0.0
    tiles, rows = fit(fm.height() + 2, footer)
    cw = tiles[0].matrix[2] / n_k
    flat = _distinct(c.col_labels, fb, cw - 4, fonts.bold) if n_k <= LABELLED_MAX else []
    readable = n_k <= LABELLED_MAX and all(
        len(short.replace("…", "")) >= min(3, len(full))
        for short, full in zip(flat, c.col_labels, strict=True)
    )
    rotated = not readable
    if rotated:
        longest = max(measure(t) for t in (c.col_labels if n_k <= LABELLED_MAX else ("t0000",)))
        share = max(ROTATED_LABEL_SHARE * height, 2 * fb.height())
        room = min(longest, col_max, share if not figure else max(share, col_max))
        col_texts = (
            _distinct(c.col_labels, fb, room, fonts.bold)
            if n_k <= LABELLED_MAX
            else list(c.col_labels)
        )
        tiles, rows = fit(room + 6, footer)
    else:
        col_texts = flat
    if figure and any(
        measure(sd.title) > tl.title[2] for sd, tl in zip(c.stages, tiles, strict=True)
    ):
        title_h = 2 * fb.height() + 4  # a figure wraps a long title rather than cut it
        tiles, rows = fit(tiles[0].col_labels[3], footer)
    notice_line = False
    if c.show_numbers and max(n_q, n_k) <= NUMBERS_MAX and not footer and not figure:
        m = tiles[0].matrix
        if number_digits(m[2] / n_k, m[3] / n_q, c.digits, fs) is None:
            # The numbers cannot be shown: say so under the bars, if that leaves cells.
            with_note = fit(tiles[0].col_labels[3], fs.height())
            if with_note[0][0].matrix[3] >= 6 * n_q:
                tiles, rows = with_note
                notice_line = True
    return CanvasGeometry(tiles, rows, rotated, row_texts, col_texts, notice_line)
