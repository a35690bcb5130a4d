"""Two texts compared: the layer x head grid of the chosen token's attention in text A, in B or
A − B (each head a strip over the keys of both texts, aligned by piece), and the layer plot of
the token's cosine similarity in A and B.

Both are drawn from a :class:`~attnsim.viewmodels.real_heads.CompareResult`; the grid is the
kit's :class:`LayerHeadGrid` (hit-test, tool tip, click, the selected head's frame).
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.viewmodels.real_heads import MAPS, SIDES, CompareResult, both_maps, side_maps
from attnsim.viewmodels.real_model import head_name

from ..kit.figure_paint import painting_figure
from ..kit.head_grid import LayerHeadGrid, weight_scale
from ..kit.matrix_canvas import LABEL_INK, ColourScale, lut_from_cmap, paint_matrix, paint_scale_bar
from ..kit.numbers import fmt_number
from ..style import QUERY

LABEL_W, TOP, BAR_H, PAD = 30.0, 16.0, 34.0, 3.0


@cache
def difference_scale() -> ColourScale:
    """A − B of two weights, -1 to 1, blue to white to red."""
    import pyqtgraph as pg

    cmap = pg.ColorMap([0.0, 0.5, 1.0], [(33, 102, 172), (247, 247, 247), (178, 24, 43)])
    return ColourScale(lut_from_cmap(cmap), -1.0, 1.0)


class PairGrid(LayerHeadGrid):
    """A strip per head: the chosen token's weight on every key, in A, B or A − B."""

    font_pt = 7.0

    @property  # type: ignore[override]
    def kept(self) -> bool:
        return not painting_figure()  # a figure paints afresh: its labels stay text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, minimum=(160, 140))
        self.result: CompareResult | None = None
        self.side, self.kind = "diff", "weights"
        self.maps = np.zeros((0, 0, 0), np.float32)
        self._scale = weight_scale()

    def sizeHint(self) -> QSize:
        return QSize(360, 360)

    def refresh(
        self, result: CompareResult | None, side: str, selected=None, kind: str = "weights"
    ) -> None:
        self.result, self.side, self.kind = result, side, kind
        self.maps = side_maps(result, side, kind) if result is not None else np.zeros((0, 0, 0))
        self._scale = self._make_scale()
        self.set_marks(selected)
        self.changed()

    def has_content(self) -> bool:
        return self.result is not None

    def scale(self) -> ColourScale:
        return self._scale

    def _make_scale(self) -> ColourScale:
        """Weights on 0-1 (A - B on -1 to 1); contributions on 0 to the largest of A and B."""
        if self.kind == "weights" or self.result is None:
            return difference_scale() if self.side == "diff" else weight_scale()
        top = max(float(np.max(m)) for m in both_maps(self.result, self.kind)) or 1.0
        base = difference_scale() if self.side == "diff" else weight_scale()
        return ColourScale(base.lut, -top if self.side == "diff" else 0.0, top)

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        if self.result is None:
            return {}
        layers, heads = self.maps.shape[:2]
        w = (self.width() - LABEL_W - 4) / heads
        h = (self.height() - TOP - BAR_H) / layers
        return {
            (layer, head): QRectF(LABEL_W + head * w, TOP + layer * h, w - PAD, max(h - PAD, 1))
            for layer in range(layers)
            for head in range(heads)
        }

    def column_at(self, key: tuple[int, int], point: QPointF) -> int | None:
        rect = self.cell_rects()[key]
        n = self.maps.shape[-1]
        if not rect.contains(point) or n == 0:
            return None
        return min(n - 1, int((point.x() - rect.left()) / rect.width() * n))

    def tip(self, key: tuple[int, int], point: QPointF | None = None) -> str:
        assert self.result is not None
        c = self.result.comparison
        what = "attention" if self.kind == "weights" else "contributions"
        text = f"{head_name(*key)}: the chosen token's {what}, {SIDES[self.side]}"
        col = self.column_at(key, point) if point is not None else None
        if col is not None:
            piece, _, _ = c.columns[col]
            wa, wb = (float(m[key][col]) for m in both_maps(self.result, self.kind))
            text += (
                f"\non {piece.strip() or piece!r}: A {fmt_number(wa, 4)}, B {fmt_number(wb, 4)},"
                f" A − B {fmt_number(wa - wb, 4)}"
            )
        return text + "\nclick to open this head"

    def paint_cell(self, p: QPainter, key: tuple[int, int], rect: QRectF) -> None:
        paint_matrix(p, rect, self.maps[key][None, :], scale=self.scale(), numbers=False,
                     grid_lines=False)  # fmt: skip

    def paint_around(self, p: QPainter, rects: dict[tuple[int, int], QRectF]) -> None:
        fm = QFontMetricsF(self.cell_font())
        p.setPen(LABEL_INK)
        layers, heads = self.maps.shape[:2]
        every = max(1, int(np.ceil(fm.height() / max(rects[(0, 0)].height() + PAD, 1))))
        for layer in range(0, layers, every):
            r = rects[(layer, 0)]
            p.drawText(QRectF(0, r.center().y() - fm.height() / 2, LABEL_W - 4, fm.height()),
                       int(Qt.AlignmentFlag.AlignRight), f"L{layer}")  # fmt: skip
        widest = fm.horizontalAdvance(f"H{heads - 1}") + 4
        step = max(1, int(np.ceil(widest / (rects[(0, 0)].width() + PAD))))
        for head in range(0, heads, step):
            r = rects[(0, head)]
            box = QRectF(r.center().x() - widest / 2, 0, widest, TOP - 2)
            p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), f"H{head}")
        bottom = max(r.bottom() for r in rects.values())
        y = bottom + 6
        title = "A − B" if self.side == "diff" else MAPS[self.kind].rstrip("s")
        p.drawText(QRectF(0, y, LABEL_W + 20, 12), int(Qt.AlignmentFlag.AlignRight), title)
        bar = QRectF(LABEL_W + 26, y + 1, min(220.0, self.width() - LABEL_W - 60), 10)
        paint_scale_bar(p, bar, self.scale(), fm=fm)


class LayerPlot(QWidget):
    """One value per layer as a line, with its title and the layer axis (0 to 1 at least)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros(0, np.float32)
        self.title = ""
        self.x_label = ""
        self.setMinimumSize(200, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        return QSize(360, 160)

    def show_values(self, values, title: str, x_label: str) -> None:
        self.values = np.zeros(0) if values is None else np.asarray(values, dtype=float)
        self.title, self.x_label = title, x_label
        self.update()

    def has_content(self) -> bool:
        return len(self.values) > 0

    def plot_rect(self) -> QRectF:
        fm = QFontMetricsF(self.font())
        left = fm.horizontalAdvance("0.00") + 10
        return QRectF(left, fm.height() + 8, self.width() - left - 10,
                      self.height() - 3 * fm.height() - 16)  # fmt: skip

    def _range(self) -> tuple[float, float]:
        return min(0.0, float(self.values.min())), max(1.0, float(self.values.max()))

    def point(self, layer: int, value: float) -> QPointF:
        r = self.plot_rect()
        lo, hi = self._range()
        x = r.left() + r.width() * layer / max(len(self.values) - 1, 1)
        return QPointF(x, r.bottom() - r.height() * (value - lo) / (hi - lo))

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt's name
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if self.has_content():
            self.paint_content(p)
        p.end()

    def paint_content(self, p: QPainter) -> None:
        fm = QFontMetricsF(self.font())
        r = self.plot_rect()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(LABEL_INK)
        p.drawText(QRectF(0, 2, self.width(), fm.height()), int(Qt.AlignmentFlag.AlignCenter),
                   self.title)  # fmt: skip
        lo, hi = self._range()
        last = len(self.values) - 1
        p.setPen(QPen(QColor("#b8b8b8"), 1.0))
        for v in (lo, hi):
            a, b = self.point(0, v), self.point(last, v)
            p.drawLine(a, b)
            p.setPen(LABEL_INK)
            p.drawText(QRectF(0, a.y() - fm.height() / 2, r.left() - 6, fm.height()),
                       int(Qt.AlignmentFlag.AlignRight), fmt_number(v, 2))  # fmt: skip
            p.setPen(QPen(QColor("#b8b8b8"), 1.0))
        p.setPen(QPen(QUERY, 2.0))
        pts = [self.point(i, float(v)) for i, v in enumerate(self.values)]
        for a, b in pairwise(pts):
            p.drawLine(a, b)
        p.setPen(LABEL_INK)
        for i in sorted({0, last // 2, last}):
            x = pts[i].x()
            p.drawText(QRectF(x - 30, r.bottom() + 4, 60, fm.height()),
                       int(Qt.AlignmentFlag.AlignCenter), str(i))  # fmt: skip
        p.drawText(QRectF(r.left(), r.bottom() + fm.height() + 6, r.width(), fm.height()),
                   int(Qt.AlignmentFlag.AlignCenter), self.x_label)  # fmt: skip


class SimilarityPlot(LayerPlot):
    """The chosen token's cosine similarity in A and B after each layer (0: the embeddings)."""

    @property
    def cosine(self) -> np.ndarray:
        return self.values

    def refresh(self, result: CompareResult | None, token: str) -> None:
        cosine = result.comparison.cosine if result is not None else None
        self.show_values(cosine, f"cosine similarity of '{token}' in A and in B, by layer",
                         "layer (0: the embeddings)")  # fmt: skip
