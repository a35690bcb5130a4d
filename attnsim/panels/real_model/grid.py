"""The layer x head grid of a real model's attention maps on the user's text.

Layers run down, heads across. A band left of each map is coloured by the chosen head metric
(previous-token, sink or entropy, on its own colour bar); the causal mask of SmolLM2 shows as
the grey upper triangle; ablated heads are crossed out and the selected head framed. A click
emits ``head_clicked(layer, head)``; the tool tip names the head and its metric value.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attnsim.views.real_model import METRIC_TITLES, RunResult, head_name

from ..kit.matrix_canvas import LABEL_INK, ColourScale, lut_from_cmap, paint_matrix, paint_scale_bar
from ..kit.numbers import fmt_number
from ..kit.painted import KeptPicture, PaintCache
from ..style import QUERY, score_cmap, weight_cmap

ABLATED = QColor("#B00020")
BAR_W, BAR_LABEL_W, GAP, BAND = 10.0, 34.0, 8.0, 4.0
SHORT = {"previous_token": "prev.", "first_token": "sink", "entropy": "entropy"}
LEFT = 24.0  # room for the layer numbers


@cache
def weight_scale() -> ColourScale:
    return ColourScale(lut_from_cmap(weight_cmap()), 0.0, 1.0)


def metric_scale(values: np.ndarray) -> ColourScale:
    return ColourScale(lut_from_cmap(score_cmap()), float(values.min()), float(values.max()))


class HeadGrid(KeptPicture, QWidget):
    """Every head's attention map; a click selects a head."""

    head_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: RunResult | None = None
        self.metric_key = "previous_token"
        self.selected: tuple[int, int] | None = None
        self.ablated: tuple[tuple[int, int], ...] = ()
        self.picture = PaintCache()
        self.setMinimumSize(140, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(320, 320)

    def refresh(
        self,
        result: RunResult | None,
        metric: str,
        selected: tuple[int, int] | None,
        ablated: tuple[tuple[int, int], ...],
    ) -> None:
        self.result, self.metric_key, self.selected, self.ablated = (
            result,
            metric,
            selected,
            ablated,
        )
        self.picture.clear()
        self.update()

    def _font(self) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(7.0)
        return f

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        """Where each head's map is drawn (widget coordinates; square)."""
        r = self.result
        if r is None:
            return {}
        n_l, n_h = r.weights.shape[:2]
        top = QFontMetricsF(self._font()).height() + 4  # the head numbers
        w = self.width() - LEFT - 2 * (BAR_W + BAR_LABEL_W + GAP) - 4
        h = self.height() - top - 4
        pad = 2.0 if min(w / n_h, h / n_l) < 24 else 4.0
        side = max(3.0, min(w / n_h - pad - BAND, h / n_l - pad))
        return {
            (layer, head): QRectF(
                LEFT + BAND + head * (side + pad + BAND), top + layer * (side + pad), side, side
            )
            for layer in range(n_l)
            for head in range(n_h)
        }

    def head_at(self, x: float, y: float) -> tuple[int, int] | None:
        for key, rect in self.cell_rects().items():
            if rect.adjusted(-BAND, 0, 0, 0).contains(QPointF(x, y)):
                return key
        return None

    def tip(self, layer: int, head: int) -> str:
        assert self.result is not None
        value = self.result.metrics[self.metric_key][layer, head]
        title = METRIC_TITLES[self.metric_key]
        return f"{head_name(layer, head)}: {title} {fmt_number(float(value), 3)} (click to enlarge)"

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and self.result is not None:
            pos = e.pos()  # type: ignore[attr-defined]
            hit = self.head_at(pos.x(), pos.y())
            if hit is not None:
                QToolTip.showText(e.globalPos(), self.tip(*hit), self)  # type: ignore[attr-defined]
                return True
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        hit = self.head_at(e.position().x(), e.position().y())
        if e.button() == Qt.MouseButton.LeftButton and hit is not None:
            self.head_clicked.emit(*hit)
            e.accept()
            return
        super().mousePressEvent(e)

    def has_content(self) -> bool:
        return self.result is not None

    def paint_content(self, p: QPainter) -> None:
        r = self.result
        assert r is not None
        font = self._font()
        fm = QFontMetricsF(font)
        p.setFont(font)
        rects = self.cell_rects()
        values = r.metrics[self.metric_key]
        mscale = metric_scale(values)
        colours = mscale.colours(values)
        n = r.weights.shape[-1]
        future = np.triu(np.ones((n, n), dtype=bool), 1) if r.causal else None
        for (layer, head), rect in rects.items():
            weights = r.weights[layer, head]
            if future is not None:
                # the future drawn light (not finite): a hatch this small drowns the diagonals
                weights = np.where(future, np.nan, weights)
            paint_matrix(
                p, rect, weights, scale=weight_scale(), numbers=False,
                grid_lines=False,
            )  # fmt: skip
            band = QRectF(rect.left() - BAND, rect.top(), BAND - 1, rect.height())
            p.fillRect(band, QColor.fromRgba(int(colours[layer, head])))
            if (layer, head) in self.ablated:
                p.setPen(QPen(ABLATED, 1.5))
                p.drawLine(rect.topLeft(), rect.bottomRight())
                p.drawLine(rect.topRight(), rect.bottomLeft())
            if (layer, head) == self.selected:
                p.setPen(QPen(QUERY, 2.0))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(rect.adjusted(-BAND - 1, -1, 1, 1))
        if not rects:
            return
        p.setPen(LABEL_INK)
        n_l, n_h = r.weights.shape[:2]
        every = max(1, int(np.ceil(fm.height() / max(rects[(0, 0)].height(), 1.0))))
        for layer in range(0, n_l, every):
            rect = rects[(layer, 0)]
            p.drawText(QRectF(0, rect.center().y() - fm.height() / 2, LEFT - 2, fm.height()),
                       int(Qt.AlignmentFlag.AlignRight), f"L{layer}")  # fmt: skip
        # every head's number where they fit, else every second or third
        pitch = rects[(0, 1)].left() - rects[(0, 0)].left() if n_h > 1 else 100.0
        step = max(1, int(np.ceil((fm.horizontalAdvance(f"H{n_h - 1}") + 2) / pitch)))
        for head in range(0, n_h, step):
            rect = rects[(0, head)]
            # centred over the map in a box as wide as the labels' spacing (a map-wide box
            # clips "H10")
            box = QRectF(rect.center().x() - step * pitch / 2, 0, step * pitch, fm.height() + 2)
            p.drawText(box, int(Qt.AlignmentFlag.AlignCenter), f"H{head}")
        right = max(x.right() for x in rects.values())
        top = min(x.top() for x in rects.values())
        bottom = max(x.bottom() for x in rects.values())
        height = max(bottom - top, 20.0)
        paint_scale_bar(p, QRectF(right + GAP, top, BAR_W, height), weight_scale(), vertical=True,
                        fm=fm)  # fmt: skip
        left = right + GAP + BAR_W + BAR_LABEL_W
        paint_scale_bar(p, QRectF(left + GAP, top, BAR_W, height), mscale, vertical=True, fm=fm)
        # what each bar measures, in the row of head numbers above it
        for x, name in ((right + GAP, "weight"), (left + GAP, SHORT[self.metric_key])):
            p.drawText(QRectF(x - 2, 0, BAR_W + BAR_LABEL_W, fm.height() + 2), 0, name)
