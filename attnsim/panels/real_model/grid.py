"""The layer x head grid of a real model's attention maps on the user's text.

Laid out to fill the widget (:func:`attnsim.viewmodels.real_model.grid_layout`): layers down and
heads across, or turned, and cut into blocks side by side, whichever gives the largest maps;
the colour bars go right of the grid or under it, by the same rule. A band left of each map is
coloured by the chosen head metric (previous-token, sink or entropy, on its own colour bar);
the causal mask of SmolLM2 shows as the light upper triangle; ablated heads are crossed out and
the selected head framed; the picked token's row (query) and column (key) are outlined in every
map. The maps show the weights or, with ``maps="contributions"``, what each key adds to the
query's output (one colour scale from 0 to the largest contribution of any head). A click emits
``head_clicked(layer, head)``; the tool tip names the head, its metric value and the exact
weight (and contribution) of the query and key under the mouse.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attnsim.viewmodels.real_model import (
    METRIC_TITLES,
    GridLayout,
    RunResult,
    grid_layout,
    head_name,
)

from ..kit.head_grid import LayerHeadGrid, weight_scale
from ..kit.matrix_canvas import LABEL_INK, ColourScale, lut_from_cmap, paint_matrix, paint_scale_bar
from ..kit.numbers import fmt_number
from ..style import KEY, QUERY, score_cmap

BAR_W, BAR_LABEL_W, GAP, BAND = 10.0, 34.0, 8.0, 4.0
SHORT = {"previous_token": "prev.", "first_token": "sink", "entropy": "entropy",
         "induction": "induct."}  # fmt: skip
BARS_BELOW_H = 36.0  # a horizontal colour bar and its labels
SHARES = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65)  # of the width beside the tables (share_of)


def metric_scale(values: np.ndarray) -> ColourScale:
    return ColourScale(lut_from_cmap(score_cmap()), float(values.min()), float(values.max()))


class HeadGrid(LayerHeadGrid):
    """Every head's attention map; a click selects a head."""

    font_pt = 7.0
    cross_width = 1.5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, minimum=(140, 120))
        self.result: RunResult | None = None
        self.metric_key = "previous_token"
        self.token: int | None = None  # the picked token: its row and column in every map
        self.maps = "weights"

    def sizeHint(self) -> QSize:
        return QSize(320, 320)

    def refresh(
        self,
        result: RunResult | None,
        metric: str,
        selected: tuple[int, int] | None,
        ablated: tuple[tuple[int, int], ...],
        token: int | None = None,
        maps: str = "weights",
    ) -> None:
        self.result, self.metric_key, self.token, self.maps = result, metric, token, maps
        self.set_marks(selected, ablated)
        self.changed()

    def _font(self) -> QFont:
        return self.cell_font()

    def layout_now(self) -> tuple[GridLayout, bool] | None:
        """The grid's layout at the widget's size, and whether the colour bars go below it
        (else right of it): whichever leaves the larger maps."""
        return self.layout_for(float(self.width()), float(self.height()))

    def layout_for(self, width: float, height: float) -> tuple[GridLayout, bool] | None:
        r = self.result
        if r is None:
            return None
        n_l, n_h = r.weights.shape[:2]
        fm = QFontMetricsF(self._font())
        label_w = fm.horizontalAdvance(f"L{max(n_l, n_h) - 1}") + 4
        w, h = width - 2, height - 2

        def fit(width: float, height: float) -> GridLayout:
            return grid_layout(n_l, n_h, width, height, label_w=label_w,
                               label_h=fm.height() + 2, band=BAND)  # fmt: skip

        right = fit(w - 2 * (GAP + BAR_W + BAR_LABEL_W), h)
        below = fit(w, h - BARS_BELOW_H)
        return (below, True) if below.side > right.side else (right, False)

    def share_of(self, size: QSize) -> float:
        """The grid's share of a side-by-side split of ``size``: the least that gives (nearly)
        the largest maps, so the tables beside it get the rest (SmolLM2's 30 layers want more
        width than MiniLM's 6)."""
        if self.result is None:
            return SHARES[len(SHARES) // 2]
        sides = []
        for share in SHARES:
            lay = self.layout_for(share * size.width(), float(size.height()))
            sides.append(lay[0].side if lay is not None else 0.0)
        return next(s for s, side in zip(SHARES, sides, strict=True) if side >= 0.95 * max(sides))

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        """Where each head's map is drawn (widget coordinates; square)."""
        lay = self.layout_now()
        if lay is None:
            return {}
        return {key: QRectF(x, y, side, side) for key, (x, y, side) in lay[0].cells.items()}

    def hit_rect(self, key: tuple[int, int], rect: QRectF) -> QRectF:
        return rect.adjusted(-BAND, 0, 0, 0)  # the metric's band belongs to the map

    def frame_rect(self, key: tuple[int, int], rect: QRectF) -> QRectF:
        return rect.adjusted(-BAND - 1, -1, 1, 1)

    def pair_at(self, layer: int, head: int, x: float, y: float) -> tuple[int, int] | None:
        """The (query, key) positions under (x, y) in a head's map, or None off the map."""
        assert self.result is not None
        rect = self.cell_rects()[(layer, head)]
        n = self.result.weights.shape[-1]
        if not rect.contains(QPointF(x, y)):
            return None
        i = min(n - 1, int((y - rect.top()) / rect.height() * n))
        j = min(n - 1, int((x - rect.left()) / rect.width() * n))
        return i, j

    def tip(self, key: tuple[int, int], point: QPointF | None = None) -> str:
        """The tool tip over a head: its metric, and the exact weight under the mouse."""
        r = self.result
        assert r is not None
        layer, head = key
        pair = self.pair_at(layer, head, point.x(), point.y()) if point is not None else None
        value = r.metrics[self.metric_key][layer, head]
        title = METRIC_TITLES[self.metric_key]
        text = f"{head_name(layer, head)}: {title} {fmt_number(float(value), 3)}"
        if pair is not None:
            i, j = pair
            if r.causal and j > i:
                text += f"\n{r.labels[i]} (pos {i}) cannot see {r.labels[j]} (pos {j}): causal mask"
            else:
                w = fmt_number(float(r.weights[layer, head, i, j]), 4)
                text += f"\n{r.labels[i]} (pos {i}) → {r.labels[j]} (pos {j}): weight {w}"
                if self.shows_contributions():
                    c = fmt_number(float(r.head_map(layer, head, self.maps)[i, j]), 4)
                    text += f", contribution {c}"
        return text + "\nclick to enlarge"

    def has_content(self) -> bool:
        return self.result is not None

    def shows_contributions(self) -> bool:
        return self.maps == "contributions" and self.result is not None and (
            self.result.value_norms is not None
        )  # fmt: skip

    def map_scale(self) -> ColourScale:
        """Weights on 0-1; contributions on 0 to the largest of any head's."""
        if not self.shows_contributions():
            return weight_scale()
        assert self.result is not None
        base = weight_scale()
        return ColourScale(base.lut, 0.0, self.result.contribution_top)

    def paint_content(self, p: QPainter) -> None:
        r = self.result
        assert r is not None
        values = r.metrics[self.metric_key]
        self._mscale = metric_scale(values)
        self._colours = self._mscale.colours(values)
        n = r.weights.shape[-1]
        self._future = np.triu(np.ones((n, n), dtype=bool), 1) if r.causal else None
        self._scale = self.map_scale()
        super().paint_content(p)

    def paint_cell(self, p: QPainter, key: tuple[int, int], rect: QRectF) -> None:
        assert self.result is not None
        weights = self.result.head_map(*key, self.maps)
        if self._future is not None:
            # the future drawn light (not finite): a hatch this small drowns the diagonals
            weights = np.where(self._future, np.nan, weights)
        t = self.token
        paint_matrix(
            p, rect, weights, scale=self._scale, numbers=False, grid_lines=False,
            highlight_row=t, row_pen=QPen(QUERY, 1.0), row_outset=0.0,
            highlight_col=t, col_pen=QPen(KEY, 1.0, Qt.PenStyle.DashLine),
        )  # fmt: skip
        band = QRectF(rect.left() - BAND, rect.top(), BAND - 1, rect.height())
        p.fillRect(band, QColor.fromRgba(int(self._colours[key])))

    def paint_around(self, p: QPainter, rects: dict[tuple[int, int], QRectF]) -> None:
        lay = self.layout_now()
        if lay is None or not rects:
            return
        fm = QFontMetricsF(self._font())
        mscale = self._mscale
        grid, bars_below = lay
        p.setPen(LABEL_INK)
        # a label per row or column where they fit, else every second or third
        row_every = max(1, int(np.ceil(fm.height() / (grid.side + grid.pad))))
        per_block = -(-len(grid.row_labels) // grid.blocks)
        for k, (text, x, y) in enumerate(grid.row_labels):
            if (k % per_block) % row_every == 0:
                p.drawText(QRectF(x - 40, y - fm.height() / 2, 40, fm.height()),
                           int(Qt.AlignmentFlag.AlignRight), text)  # fmt: skip
        pitch = grid.side + grid.pad + BAND
        widest = max(fm.horizontalAdvance(t) for t, _, _ in grid.col_labels) + 2
        col_every = max(1, int(np.ceil(widest / pitch)))
        n_cols = len(grid.col_labels) // grid.blocks
        for k, (text, x, _) in enumerate(grid.col_labels):
            if (k % n_cols) % col_every == 0:
                # centred over the map in a box as wide as the labels' spacing (a map-wide box
                # clips "H10")
                box = QRectF(x - col_every * pitch / 2, 0, col_every * pitch, fm.height() + 2)
                p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), text)
        self._paint_bars(p, fm, grid, bars_below, mscale)

    def _bar_title(self) -> str:
        return "contrib." if self.shows_contributions() else "weight"

    def _paint_bars(
        self, p: QPainter, fm: QFontMetricsF, grid: GridLayout, below: bool, mscale: ColourScale
    ) -> None:
        """The weight's and the metric's colour bars, right of the grid or under it."""
        name = SHORT[self.metric_key]
        if below:
            y = grid.height + 4
            w = min(200.0, (grid.width - 3 * GAP) / 2 - 50)
            for k, (scale, title) in enumerate(((self._scale, self._bar_title()), (mscale, name))):
                x = k * (grid.width / 2) + 50
                p.drawText(QRectF(x - 50, y, 46, BAR_W), int(Qt.AlignmentFlag.AlignRight
                           | Qt.AlignmentFlag.AlignVCenter), title)  # fmt: skip
                paint_scale_bar(p, QRectF(x, y, max(w, 40.0), BAR_W), scale, fm=fm)
            return
        # below the bars' names, with room for the top label centred on the bar's end
        top = 1.5 * fm.height() + 2
        height = max(grid.height - top - fm.height() / 2, 20.0)
        x = grid.width + GAP
        for scale, title in ((self._scale, self._bar_title()), (mscale, name)):
            paint_scale_bar(p, QRectF(x, top, BAR_W, height), scale, vertical=True, fm=fm)
            # what each bar measures, in the row of head numbers above it
            p.drawText(QRectF(x - 2, 0, BAR_W + BAR_LABEL_W, fm.height() + 2), 0, title)
            x += BAR_W + BAR_LABEL_W + GAP
