"""How the anatomy diagram looks: colours, fonts in design units, and one painter per part.

Everything here paints in design units (the diagram scales the painter to fit its dock), from
the layout :func:`attnsim.viewmodels.anatomy.layout_diagram` made and the data the panel handed in.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from attnsim.engine.arrows import arrow_head
from attnsim.viewmodels.anatomy import (
    CELL_H,
    CELL_W,
    BlockMatrix,
    Diagram,
    DiagramData,
    MatrixBox,
)

from ..kit.arrows import head_polygon
from ..kit.hidpi import cosmetic_width
from ..kit.matrix_canvas import paint_matrix as paint_cells
from ..kit.matrix_canvas import paint_row_highlight
from ..kit.numbers import fmt_fixed

# Amber for learned parameters, blue for computed activations (Okabe-Ito hues, as in the
# reference figure); grey-blue for vectors a direct scenario gives as they are.
FILL = {"learned": QColor("#FBE5B6"), "computed": QColor("#D3E5F5"), "given": QColor("#E6E9ED")}
FILL_HI = {"learned": QColor("#F0B94A"), "computed": QColor("#86B9E3"), "given": QColor("#B9C2CC")}
EDGE = {"learned": QColor("#B07800"), "computed": QColor("#0072B2"), "given": QColor("#6B7785")}
FOCUS = QColor("#D55E00")
TEXT = QColor("#222222")
FAINT = QColor("#666666")
LEGEND = (
    ("learned", "learned parameter"),
    ("computed", "computed activation"),
    ("given", "given vectors (direct)"),
)

# Alignments as plain values: a Qt enum expression costs a Python enum lookup (and an "|")
# every time it is evaluated, and a diagram draws a few hundred texts.
LEFT = Qt.AlignmentFlag.AlignLeft
LEFT_MIDDLE = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
RIGHT_MIDDLE = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def _pen(color: QColor, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    """A cosmetic pen: its width is in device pixels whatever the diagram's scale (and cosmetic
    pens are stroked much faster than scaled ones)."""
    pen = QPen(color, cosmetic_width(width), style)
    pen.setCosmetic(True)
    return pen


def cell_text(x: float) -> str:
    """A matrix entry in at most 5 characters: 2 decimals, fewer for large numbers."""
    a = abs(x)
    if a >= 999.5:
        return f"{x:.0e}".replace("+0", "").replace("+", "").replace("-", "−")
    return fmt_fixed(x, 0 if a >= 99.5 else 1 if a >= 9.995 else 2)


class Fonts:
    """The diagram's fonts in design units, and memoised text widths for the layout."""

    def __init__(self, base: QFont) -> None:
        self.base = QFont(base)
        self._fonts: dict[tuple[bool, float], QFont] = {}
        self._widths: dict[tuple[str, bool], float] = {}

    def font(self, bold: bool = False, rel: float = 1.0) -> QFont:
        key = (bold, rel)
        font = self._fonts.get(key)
        if font is None:
            font = QFont(self.base)
            font.setPixelSize(max(round(11 * rel), 6))
            font.setBold(bold)
            self._fonts[key] = font
        return font

    def text_width(self, text: str, bold: bool) -> float:
        # Layout measures the same labels many times (several scales are tried): memoise.
        key = (text, bold)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 4096:
                self._widths.clear()
            w = QFontMetricsF(self.font(bold)).horizontalAdvance(text) + 2.0
            self._widths[key] = w
        return w


def paint_arrows(p: QPainter, dia: Diagram, fonts: Fonts, only: list[int] | None = None) -> None:
    """The data-flow arrows (``only``: those at these positions in ``dia.arrows``)."""
    pen = _pen(FAINT, 1.2)
    p.setFont(fonts.font(False, 0.9))
    for k, arrow in enumerate(dia.arrows):
        if only is not None and k not in only:
            continue
        pts = [QPointF(x, y) for x, y in arrow.points]
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPolyline(pts)
        # The polyline is the shaft; only its last leg carries the head.
        _, head = arrow_head(arrow.points[-2], arrow.points[-1], 6.0, 6.0, max_fraction=1.0)
        p.setBrush(FAINT)
        p.drawPolygon(head_polygon(head))
        if arrow.label:
            p.setPen(FAINT)
            p.drawText(
                QRectF(pts[0].x() + 4, pts[0].y() - 2, 120, 12),
                LEFT_MIDDLE,
                arrow.label,
            )


def paint_notes_and_chips(p: QPainter, dia: Diagram, data: DiagramData, fonts: Fonts) -> None:
    p.setFont(fonts.font())
    for x, y, w, text in dia.notes:
        p.setPen(FAINT)
        p.drawText(QRectF(x, y, w + 4, 14), LEFT, text)
    for hd, x, y, w, h in dia.chips:
        focused = hd == data.focused
        p.setPen(_pen(FOCUS if focused else QColor("#999999"), 2.0 if focused else 1.0))
        p.setBrush(QColor(213, 94, 0, 40) if focused else QColor("#F4F4F4"))
        p.drawRoundedRect(QRectF(x, y, w, h), 5, 5)
        p.setFont(fonts.font(focused))
        p.setPen(FOCUS.darker(130) if focused else TEXT)
        p.drawText(QRectF(x, y, w, h), Qt.AlignmentFlag.AlignCenter, data.chip_labels[hd])


LEGEND_LINE = 20.0  # px per line of the colour legend


def legend_lines(
    data: DiagramData, width: float, text_width: Callable[[str, bool], float]
) -> list[list[tuple[float, str, str]]]:
    """The colour legend's entries (x, kind, text) in lines no wider than ``width``: a name
    goes to the next line rather than past the diagram's edge. The kind "focus" is the
    receiving token's row."""
    entries = [(kind, text) for kind, text in LEGEND
               if kind != "given" or any(m.kind == "given" for m in data.mats)]  # fmt: skip
    entries.append(("focus", f"row of the receiving token “{data.receiving_label}”"))
    lines: list[list[tuple[float, str, str]]] = [[]]
    x = 0.0
    for kind, text in entries:
        step = 16 + text_width(text, False) + 14
        if lines[-1] and x + step - 14 > width:
            lines.append([])
            x = 0.0
        lines[-1].append((x, kind, text))
        x += step
    return lines


def paint_caption(p: QPainter, dia: Diagram, data: DiagramData, fonts: Fonts) -> None:
    """The colour legend, the receiving token's swatch, then the note and count sentences."""
    width = dia.caption_w
    y = dia.caption_y
    p.setFont(fonts.font())
    for line in legend_lines(data, width, fonts.text_width):
        for x, kind, text in line:
            if kind == "focus":
                p.setPen(_pen(FOCUS, 1.6))
                p.setBrush(FILL_HI["computed"])
            else:
                p.setPen(_pen(EDGE[kind], 1))
                p.setBrush(FILL[kind])
            p.drawRect(QRectF(x, y + 3, 12, 10))
            p.setPen(TEXT)
            tw = fonts.text_width(text, False)
            p.drawText(QRectF(x + 16, y, tw + 4, 16), Qt.AlignmentFlag.AlignVCenter, text)
        y += LEGEND_LINE
    p.setFont(fonts.font())
    for i, line in enumerate(data.caption_lines):
        p.setFont(fonts.font(bold=(i == 0 and bool(data.note))))
        p.setPen(TEXT if i or not data.note else FOCUS.darker(140))
        rect = QRectF(0, y, width, 1000)
        used = p.boundingRect(rect, int(Qt.TextFlag.TextWordWrap), line)
        p.drawText(rect, int(Qt.TextFlag.TextWordWrap), line)
        y += used.height() + 2


Cells = Callable[[QPainter, BlockMatrix, MatrixBox, DiagramData, Fonts, float], None]


def paint_matrix(
    p: QPainter,
    m: BlockMatrix,
    box: MatrixBox,
    data: DiagramData,
    fonts: Fonts,
    scale: float,
    cells: Cells | None = None,
) -> None:
    """One matrix: title and formula, tinted cells with their numbers (:func:`paint_cells_of`,
    or ``cells`` with its arguments: the diagram copies them while they are unchanged), the
    receiving token's row outlined, and the focused head's share of Concat / Wo dashed."""
    title = f"{m.title}  {m.shape[0]}×{m.shape[1]}"
    p.setFont(fonts.font(True))
    p.setPen(EDGE[m.kind].darker(120))
    p.drawText(QRectF(box.x, box.y, box.w + 40, 14), LEFT, title)
    p.setFont(fonts.font(False, 0.9))
    p.setPen(FAINT)
    p.drawText(QRectF(box.x, box.y + 13, box.w + 40, 13), LEFT,
               m.formula)  # fmt: skip
    (cells or paint_cells_of)(p, m, box, data, fonts, scale)
    hi_row = highlighted_row(m, box, data)
    _paint_labels_and_edge(p, m, box, data, fonts, hi_row, None)


def paint_matrix_part(
    p: QPainter,
    m: BlockMatrix,
    box: MatrixBox,
    data: DiagramData,
    fonts: Fonts,
    scale: float,
    texts: list[list[str]],
    rows: list[int] | None,
    title: bool,
) -> None:
    """:func:`paint_matrix` in the order it paints, for a clipped repaint: the title and
    formula only if ``title``, and only the shown ``rows`` (positions in ``box.rows``; None:
    all) of cells and row labels, each row's cells where the whole grid puts them, to the bit.
    The receiving row's outline, the frame and the focused span are drawn whole (the painter's
    clip keeps what lies outside)."""
    if title:
        p.setFont(fonts.font(True))
        p.setPen(EDGE[m.kind].darker(120))
        p.drawText(QRectF(box.x, box.y, box.w + 40, 14), LEFT,
                   f"{m.title}  {m.shape[0]}×{m.shape[1]}")  # fmt: skip
        p.setFont(fonts.font(False, 0.9))
        p.setPen(FAINT)
        p.drawText(QRectF(box.x, box.y + 13, box.w + 40, 13), LEFT, m.formula)
    hi_row = highlighted_row(m, box, data)
    if rows is None:
        paint_cells_of(p, m, box, data, fonts, scale, texts)
    elif rows:
        grid = grid_of(box)
        n_cols = len(box.cols)
        ch = grid.height() / len(box.rows)
        x0, y0, w = grid.x(), grid.y(), grid.width()
        for ri in rows:
            paint_cells(
                p, QRectF(x0, y0 + ri * ch, w, ch), np.zeros((1, n_cols)), fill=FILL[m.kind],
                row_fills=[FILL_HI[m.kind] if ri == hi_row else None],
                gap=1.0 / max(scale, 0.1), texts=[texts[ri]], fit_numbers=False,
                font=fonts.font(False, 0.95), ink=TEXT, grid_lines=False,
            )  # fmt: skip
        if hi_row is not None:
            paint_row_highlight(p, grid, len(box.rows), hi_row, _pen(FOCUS, 1.6), 0.0)
    _paint_labels_and_edge(p, m, box, data, fonts, hi_row, rows)


def grid_of(box: MatrixBox) -> QRectF:
    """The shown cells' rectangle, in design units."""
    return QRectF(box.grid_x, box.grid_y, len(box.cols) * CELL_W, len(box.rows) * CELL_H)


def highlighted_row(m: BlockMatrix, box: MatrixBox, data: DiagramData) -> int | None:
    """The shown row (a position in ``box.rows``) of the receiving token, if it is shown."""
    if m.rows not in ("tokens", "queries"):
        return None
    return next((ri for ri, r in enumerate(box.rows) if r == data.receiving), None)


def paint_cells_of(
    p: QPainter,
    m: BlockMatrix,
    box: MatrixBox,
    data: DiagramData,
    fonts: Fonts,
    scale: float,
    texts: list[list[str]] | None = None,
) -> None:
    """The tinted cells of ``box`` with their numbers (``texts``: :func:`shown_texts`, if the
    caller made them) and the receiving token's row outlined."""
    n_rows, n_cols = len(box.rows), len(box.cols)
    hi_row = highlighted_row(m, box, data)
    # Plain fills with a one-pixel gap (fillRect is the painter's fast path); the shown rows
    # and columns only, with ⋮ and … where rows and columns are left out.
    paint_cells(
        p, grid_of(box), np.zeros((n_rows, n_cols)), fill=FILL[m.kind],
        row_fills=[FILL_HI[m.kind] if ri == hi_row else None for ri in range(n_rows)],
        gap=1.0 / max(scale, 0.1), texts=shown_texts(m, box) if texts is None else texts,
        fit_numbers=False, font=fonts.font(False, 0.95), ink=TEXT, grid_lines=False,
        highlight_row=hi_row, row_pen=_pen(FOCUS, 1.6), row_outset=0.0,
    )  # fmt: skip


def shown_texts(m: BlockMatrix, box: MatrixBox) -> list[list[str]]:
    """The texts of the shown cells: the numbers, ⋮ in a left-out row, … in a left-out column."""
    return [row_texts(m, box, r) for r in box.rows]


def row_texts(m: BlockMatrix, box: MatrixBox, r: int | None) -> list[str]:
    """The texts of matrix row ``r`` (None: a left-out row, all ⋮) in the shown columns."""
    if r is None:
        return ["⋮" for _ in box.cols]
    value = m.value
    return ["…" if c is None else cell_text(float(value[r, c])) for c in box.cols]


def focused_span(m: BlockMatrix, box: MatrixBox, focused: int, n_heads: int) -> QRectF | None:
    """The focused head's share of Concat (its columns) or Wo (its rows), as shown."""
    if m.key not in ("concat", "Wo") or n_heads < 2:
        return None
    d_v = m.shape[1 if m.key == "concat" else 0] // n_heads
    lo, hi = focused * d_v, (focused + 1) * d_v
    idx = box.cols if m.key == "concat" else box.rows
    shown = [k for k, i in enumerate(idx) if i is not None and lo <= i < hi]
    if not shown:
        return None
    a, b = min(shown), max(shown) + 1
    if m.key == "concat":
        return QRectF(box.grid_x + a * CELL_W, box.grid_y - 2, (b - a) * CELL_W,
                      len(box.rows) * CELL_H + 4)  # fmt: skip
    return QRectF(box.grid_x - 2, box.grid_y + a * CELL_H, len(box.cols) * CELL_W + 4,
                  (b - a) * CELL_H)  # fmt: skip


def _paint_labels_and_edge(p, m, box, data, fonts, hi_row, rows) -> None:
    """A box's row labels (``rows``: these rows only; None: all), the highlighted one bold
    in the focus colour, then its frame."""
    if box.label_w:
        for ri in range(len(box.rows)) if rows is None else rows:
            r = box.rows[ri]
            if r is None:
                continue
            hi = ri == hi_row
            p.setFont(fonts.font(hi))
            p.setPen(FOCUS.darker(130) if hi else FAINT)
            p.drawText(QRectF(box.x, box.grid_y + ri * CELL_H, box.label_w - 4, CELL_H),
                       RIGHT_MIDDLE,
                       m.row_labels[r])  # fmt: skip
    _paint_edge(p, m, box, data)


def _paint_edge(p: QPainter, m: BlockMatrix, box: MatrixBox, data: DiagramData) -> None:
    """A box's frame (heavier in the focused head, dashed for a given matrix) and the focused
    token's span in it."""
    pen = _pen(EDGE[m.kind], 1.8 if m.head is not None else 1.2)
    if m.kind == "given":
        pen.setStyle(Qt.PenStyle.DashLine)
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(grid_of(box))
    span = focused_span(m, box, data.focused, len(data.chip_labels))
    if span is not None:
        p.setPen(_pen(FOCUS, 1.6, Qt.PenStyle.DashLine))
        p.drawRect(span)
