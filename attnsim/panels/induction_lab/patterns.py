"""The layer x head grid of attention patterns on the sample sequence, and the selected head
enlarged with its tokens, both on the weight colour map with a colour bar.

``refresh(LabView, selected)`` draws; a click on a head emits ``head_clicked(layer, head)``.
Each small pattern is captioned with its previous-token (p) and induction (i) scores;
ablated heads are crossed out.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QWidget

from attnsim.viewmodels.induction_lab import LabView

from ..kit.head_grid import LayerHeadGrid, lattice, weight_scale
from ..kit.matrix_canvas import LABEL_INK, paint_matrix
from ..kit.matrix_widget import KeptRaster, kept_scale_bar
from ..kit.numbers import fmt_number
from ..kit.painted import CachedCanvas

BAR_W, BAR_LABEL_W, GAP = 12.0, 34.0, 8.0
WIDGET_MAX = 16_777_215  # Qt's QWIDGETSIZE_MAX: no maximum


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def caption(view: LabView, layer: int, head: int) -> str:
    prev, ind = view.previous_token[layer, head], view.induction[layer, head]
    if np.isnan(prev):
        return head_name(layer, head)
    return f"{head_name(layer, head)} p {fmt_number(prev, 2)} i {fmt_number(ind, 2)}"


class PatternGrid(LayerHeadGrid):
    """Every head's pattern, layers down, heads across; a click selects a head."""

    font_pt = 7.5
    select_width = 2.5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, minimum=(120, 90))
        self.view: LabView | None = None
        self.bar_raster = KeptRaster()

    def sizeHint(self) -> QSize:
        return QSize(240, 240)

    def refresh(self, view: LabView, selected: tuple[int, int] | None) -> None:
        self.view = view
        self.set_marks(selected, view.ablated)
        self.changed()

    def _font(self) -> QFont:
        return self.cell_font()

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        """Where each head's pattern is drawn (widget coordinates; square)."""
        v = self.view
        if v is None:
            return {}
        cap = QFontMetricsF(self._font()).height() + 2
        n_l, n_h = v.n_layers, v.n_heads
        w = self.width() - BAR_W - BAR_LABEL_W - GAP - 8
        h = self.height() - 8
        side = max(8.0, min(w / n_h - 6, h / n_l - cap - 6))
        return lattice(n_l, n_h, x0=4, y0=4 + cap, side=side, pitch_x=side + 6,
                       pitch_y=side + cap + 6)  # fmt: skip

    def tip(self, key: tuple[int, int], point: QPointF | None = None) -> str:
        assert self.view is not None
        return caption(self.view, *key)

    def has_content(self) -> bool:
        return self.view is not None

    def paint_cell(self, p: QPainter, key: tuple[int, int], r: QRectF) -> None:
        v = self.view
        assert v is not None
        fm = QFontMetricsF(self._font())
        # No hatching of the future here: at this size it would drown the diagonals.
        paint_matrix(p, r, v.patterns[key], scale=weight_scale(), numbers=False,
                     grid_lines=False)  # fmt: skip
        p.setPen(LABEL_INK)
        # Shorter as the squares shrink: the scores are in the table beside, the layer is
        # the row; the tool tip always has the whole caption.
        room = r.width() + 5
        texts = (caption(v, *key), head_name(*key), f"H{key[1]}")
        text = next((t for t in texts if fm.horizontalAdvance(t) <= room), "")
        p.drawText(QRectF(r.x(), r.y() - fm.height() - 2, room, fm.height()), 0, text)

    def paint_around(self, p: QPainter, rects: dict[tuple[int, int], QRectF]) -> None:
        if rects:
            right = max(r.right() for r in rects.values())
            top = min(r.top() for r in rects.values())
            bottom = max(r.bottom() for r in rects.values())
            bar = QRectF(right + GAP, top, BAR_W, max(bottom - top, 20.0))
            scale = weight_scale()
            labels = [(f, fmt_number(scale.lo + f * (scale.hi - scale.lo), 2)) for f in (0, 0.5, 1)]
            # the same with every chunk: copied (see KeptRaster)
            kept_scale_bar(self.bar_raster, p, bar, scale, fm=QFontMetricsF(self._font()),
                           labels=labels, steps=9)  # fmt: skip


class PatternsView(QWidget):
    """The grid and the selected head's pattern with its tokens: side by side where the view is
    wide, the grid above where it is tall, so both use the room a dock gives them."""

    head_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.grid = PatternGrid()
        self.grid.head_clicked.connect(self.head_clicked)
        self.enlarged = CachedCanvas(font_pt=7.0, max_cell=28.0, min_cell=3.0)
        self.enlarged.setMinimumSize(150, 150)
        self.box.addWidget(self.grid, 2)
        self.box.addWidget(self.enlarged, 3)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        """Grid beside or above the enlarged head, whichever gives the larger product of the
        enlargement's side and a grid square's (one head wants a small grid, many heads a wide
        one); the grid gets the room its squares need, up to 45 % of the view."""
        w, h = float(self.width()), float(self.height())
        v = self.grid.view
        n_l, n_h = (v.n_layers, v.n_heads) if v is not None else (2, 1)
        cap = QFontMetricsF(self.grid._font()).height() + 2
        extra = BAR_W + BAR_LABEL_W + GAP + 8  # the grid's colour bar and margins

        def square(gw: float, gh: float) -> float:  # as PatternGrid.cell_rects sizes them
            return max(1.0, min((gw - extra) / n_h - 6, (gh - 8) / n_l - cap - 6))

        grid_w = min(0.45 * w, n_h * (max(h / n_l - cap - 6, 8.0) + 6) + extra)
        grid_h = min(0.45 * h, n_l * (max((w - extra) / n_h - 6, 8.0) + cap + 6) + 8)
        beside = min(h, w - grid_w) * square(grid_w, h)
        above = min(w, h - grid_h) * square(w, grid_h)
        if beside >= above:
            self.box.setDirection(QBoxLayout.Direction.LeftToRight)
            self.grid.setMaximumSize(max(round(grid_w), self.grid.minimumWidth()), WIDGET_MAX)
        else:
            self.box.setDirection(QBoxLayout.Direction.TopToBottom)
            self.grid.setMaximumSize(WIDGET_MAX, max(round(grid_h), self.grid.minimumHeight()))

    def refresh(
        self, view: LabView, selected: tuple[int, int] | None, *, enlarged: bool = True
    ) -> None:
        """Draw the grid, and the selected head enlarged unless ``enlarged`` is False (then
        :meth:`show_enlarged` draws it, in a turn of its own while the lab trains)."""
        old = self.grid.view
        self.grid.refresh(view, selected)
        if old is None or old.patterns.shape[:2] != view.patterns.shape[:2]:
            self._arrange()
        if enlarged:
            self.show_enlarged(view, selected)

    def show_enlarged(self, view: LabView, selected: tuple[int, int] | None) -> None:
        if selected is None:
            return
        layer, head = selected
        n = view.patterns.shape[-1]
        # Token names only where they can be read; past that the cells alone tell the story.
        names = list(view.labels) if n <= 40 else []
        self.enlarged.set_matrix(
            view.patterns[layer, head], row_labels=names, col_labels=[], scale=weight_scale(),
            forbidden=np.triu(np.ones((n, n), dtype=bool), 1),
            title=f"{caption(view, layer, head)} (query × key)",
            tooltip=lambda i, j, m=view.patterns[layer, head], t=view.labels: (
                f"{t[i]} (pos {i}) → {t[j]} (pos {j}): {fmt_number(m[i, j], 3)}"
            ),
        )  # fmt: skip
