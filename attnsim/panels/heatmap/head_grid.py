"""Small weight heatmaps, one per head of a multi-head scenario (one layer: keys (0, head)); a
click focuses that head."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.viewmodels.heatmap import StageData, thumb_grid

from ..kit.head_grid import LayerHeadGrid
from ..kit.matrix_canvas import MatrixCache, paint_matrix
from ..style import QUERY
from .parts import stage_scale


@dataclass(frozen=True, eq=False)
class Thumb:
    title: str
    weights: StageData


class HeadGrid(LayerHeadGrid):
    """Small weight heatmaps, one per head; click one to focus that head everywhere
    (``head_clicked(0, head)``)."""

    select_ink = QColor("#111111")
    select_width = 3.0
    select_outset = 1.0
    kept = False  # each thumbnail keeps its colours (MatrixCache); the figure keeps vectors

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.thumbs: list[Thumb] = []
        self.focused = 0
        self.receiving = 0
        self.prepared: list[MatrixCache] = []
        self.max_thumb = 72.0  # the panel lowers it when it is short
        self.column_w: float | None = None  # one column this wide (beside the heatmaps)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("Each head's attention weights; click one to focus it")

    def refresh(self, thumbs: list[Thumb], focused: int, receiving: int) -> None:
        # Keep the drawn thumbnails when the engine's arrays are the very same objects.
        same = len(thumbs) == len(self.thumbs) and all(
            a.weights.values is b.weights.values for a, b in zip(thumbs, self.thumbs, strict=True)
        )
        if not same:
            self.prepared = [MatrixCache() for _ in thumbs]
        self.thumbs, self.focused, self.receiving = thumbs, focused, receiving
        self.set_marks((0, focused) if thumbs else None)
        self._fit_height()
        self.changed()

    set_heads = refresh

    def _metrics(self) -> tuple[int, int, float, float, float]:
        """Columns, rows, thumbnail size, horizontal pitch and label height."""
        fm = QFontMetricsF(self.font())
        if self.column_w is not None:
            size = min(self.max_thumb, self.column_w - 16)
            return 1, len(self.thumbs), size, self.column_w - 4, fm.height() + 2
        label_w = max((fm.horizontalAdvance(t.title) for t in self.thumbs), default=0.0)
        cols, rows, size, pitch = thumb_grid(
            len(self.thumbs), max(self.width() - 12.0, 50.0), max_size=self.max_thumb,
            min_size=min(36.0, self.max_thumb),
            gap=14.0, label_w=min(label_w + 4, 170.0),
        )  # fmt: skip
        return cols, rows, size, pitch, fm.height() + 2

    def set_max_thumb(self, size: float) -> None:
        """Largest thumbnail side (px): smaller thumbnails leave a short panel its heatmaps."""
        if size != self.max_thumb:
            self.max_thumb = float(size)
            self._fit_height()
            self.changed()

    def column_width(self) -> float:
        """The width of one column of thumbnails with their labels (up to 150 px)."""
        bold = QFont(self.font())
        bold.setBold(True)  # the focused head's label
        fm = QFontMetricsF(bold)
        label_w = max((fm.horizontalAdvance(t.title) for t in self.thumbs), default=0.0)
        return min(max(label_w + 14, self.max_thumb + 16), 150.0)

    def column_height(self, size: float | None = None) -> float:
        """The height the thumbnails take in one column (at ``size``, default the largest)."""
        lh = QFontMetricsF(self.font()).height() + 2
        return len(self.thumbs) * ((size or self.max_thumb) + lh + 10) + 4

    def set_column(self, width: float | None) -> None:
        """One column ``width`` px wide (beside the heatmaps of a short, wide panel), or None:
        rows as wide as the panel (above them)."""
        if width == self.column_w:
            return
        self.column_w = width
        if width is None:
            self.setMinimumWidth(0)
            self.setMaximumWidth(16_777_215)
        else:
            self.setFixedWidth(int(width))
        self._fit_height()
        self.changed()

    def _fit_height(self) -> None:
        if not self.thumbs:
            self.setFixedHeight(0)
            return
        _, rows, size, _, lh = self._metrics()
        self.setFixedHeight(int(rows * (size + lh + 10) + 4))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._fit_height()

    def thumb_rect(self, h: int) -> QRectF:
        """The matrix rectangle of head ``h`` (tests click its centre)."""
        cols, _, size, pitch, lh = self._metrics()
        r, c = divmod(h, cols)
        n_q, n_k = self.thumbs[h].weights.shape
        w = size if n_k >= n_q else size * n_k / n_q
        hh = size if n_q >= n_k else size * n_q / n_k
        return QRectF(6 + c * pitch, 2 + r * (size + lh + 10), w, hh)

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        return {(0, h): self.thumb_rect(h) for h in range(len(self.thumbs))}

    def hit_rect(self, key: tuple[int, int], rect: QRectF) -> QRectF:
        """The thumbnail with its label under it."""
        _, _, size, pitch, lh = self._metrics()
        return QRectF(rect.x() - 3, rect.y() - 3, pitch - 8, size + lh + 6)

    def tip(self, key: tuple[int, int], point: QPointF | None = None) -> str:
        return f"{self.thumbs[key[1]].title}: click to focus this head"

    def has_content(self) -> bool:
        return bool(self.thumbs)

    def paint_cell(self, p: QPainter, key: tuple[int, int], r: QRectF) -> None:
        h = key[1]
        sd = self.thumbs[h].weights
        paint_matrix(
            p, r, sd.values, scale=stage_scale(sd), allowed=sd.allowed, numbers=False,
            highlight_row=self.receiving, row_pen=QPen(QUERY, 1.2), row_outset=0.0,
            cache=self.prepared[h],
        )  # fmt: skip
        focused = h == self.focused
        if not focused:  # the focused head's frame is the selection's
            p.setPen(QPen(QColor("#111111"), 0.8))
            p.drawRect(r.adjusted(-1, -1, 1, 1))
        font = QFont(self.font())
        font.setBold(focused)
        p.setFont(font)
        p.setPen(QColor("#111111") if focused else QColor("#555555"))
        _, _, size, pitch, _ = self._metrics()
        fm = QFontMetricsF(self.font())
        label = QRectF(r.x(), r.y() + size + 3, pitch - 8, fm.height())
        p.drawText(
            label, Qt.AlignmentFlag.AlignLeft,
            fm.elidedText(self.thumbs[h].title, Qt.TextElideMode.ElideRight, label.width()),
        )  # fmt: skip
