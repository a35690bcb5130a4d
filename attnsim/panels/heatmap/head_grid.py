"""Small weight heatmaps, one per head of a multi-head scenario; a click focuses that head."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnsim.views.heatmap import StageData, thumb_grid

from ..kit.matrix_canvas import MatrixCache, paint_matrix
from ..style import QUERY
from .parts import stage_scale


@dataclass(frozen=True, eq=False)
class Thumb:
    title: str
    weights: StageData


class HeadGrid(QWidget):
    """Small weight heatmaps, one per head; click one to focus that head everywhere."""

    head_clicked = Signal(int)

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
        self._fit_height()
        self.update()

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
            self.update()

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
        self.update()

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

    def head_at(self, x: float, y: float) -> int | None:
        _, _, size, pitch, lh = self._metrics()
        for h in range(len(self.thumbs)):
            r = self.thumb_rect(h)
            if QRectF(r.x() - 3, r.y() - 3, pitch - 8, size + lh + 6).contains(QPointF(x, y)):
                return h
        return None

    def mousePressEvent(self, e: QMouseEvent) -> None:
        h = self.head_at(e.position().x(), e.position().y())
        if e.button() == Qt.MouseButton.LeftButton and h is not None:
            self.head_clicked.emit(h)
            e.accept()
            return
        super().mousePressEvent(e)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        fm = QFontMetricsF(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        for h, th in enumerate(self.thumbs):
            r = self.thumb_rect(h)
            sd = th.weights
            paint_matrix(
                p, r, sd.values, scale=stage_scale(sd), allowed=sd.allowed, numbers=False,
                highlight_row=self.receiving, row_pen=QPen(QUERY, 1.2), row_outset=0.0,
                cache=self.prepared[h],
            )  # fmt: skip
            focused = h == self.focused
            p.setPen(QPen(QColor("#111111"), 3.0 if focused else 0.8))
            p.drawRect(r.adjusted(-1, -1, 1, 1))
            p.setFont(bold if focused else self.font())
            p.setPen(QColor("#111111") if focused else QColor("#555555"))
            pitch = self._metrics()[3]
            label = QRectF(r.x(), r.y() + self._metrics()[2] + 3, pitch - 8, fm.height())
            p.drawText(
                label, Qt.AlignmentFlag.AlignLeft,
                fm.elidedText(th.title, Qt.TextElideMode.ElideRight, label.width()),
            )  # fmt: skip
        p.end()
