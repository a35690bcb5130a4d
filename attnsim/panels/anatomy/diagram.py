"""The painted block diagram: it lays out what the panel hands it and reports clicks.

``refresh(data)`` takes a :class:`~attnsim.viewmodels.anatomy.DiagramData`; a click on a head chip
emits ``head_picked(head)``, a click on a token row ``token_picked(row)``. The diagram never
touches the workbench.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QHelpEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy, QToolTip, QWidget

from attnsim.viewmodels.anatomy import (
    CELL_H,
    CELL_W,
    BlockMatrix,
    Diagram,
    DiagramData,
    best_fit,
    layout_diagram,
)

from ..kit.kept_scroll import KeptScrollBar
from .canvas import DiagramCanvas
from .painting import (
    LEGEND_LINE,
    Fonts,
    legend_lines,
    paint_arrows,
    paint_caption,
    paint_matrix,
    paint_notes_and_chips,
)


class BlockDiagram(QWidget):
    """Paints :func:`layout_diagram`'s boxes; clicks pick a head (chips) or a token (rows)."""

    head_picked = Signal(int)
    token_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = DiagramData()
        self.scale = 1.0
        self.dia = Diagram()
        self.avail = QSize(600, 400)
        self._fonts: Fonts | None = None
        self._layout_key: tuple | None = None
        self.canvas = DiagramCanvas()  # the picture, repainted where numbers changed
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(False)

    @property
    def mats(self) -> tuple[BlockMatrix, ...]:
        return self.data.mats

    @property
    def fonts(self) -> Fonts:
        # Made on first use, so the fonts follow the font the widget inherits once placed.
        if self._fonts is None:
            self._fonts = Fonts(self.font())
        return self._fonts

    def text_width(self, text: str, bold: bool) -> float:
        return self.fonts.text_width(text, bold)

    def refresh(self, data: DiagramData) -> None:
        self.data = data
        self.relayout()

    def set_avail(self, size: QSize) -> None:
        """The room the scroll area's viewport has: the diagram picks its scale to fill it."""
        if size != self.avail:
            self.avail = size
            self.relayout()

    def relayout(self) -> None:
        data = self.data
        if not data.mats:
            self.dia = Diagram()
            self.update()
            return
        avail_w = max(float(self.avail.width()) - 8, 120.0)
        avail_h = max(float(self.avail.height()) - 8, 80.0)
        # The layout depends on shapes and texts, not on the numbers: an edit of a value
        # (the common case, e.g. a drag elsewhere) reuses it and only repaints.
        key = (
            tuple((m.key, m.shape, m.title, m.formula, m.rows, m.row_labels) for m in data.mats),
            data.focused,
            data.receiving,
            data.chip_labels,
            tuple(data.caption_lines),
            avail_w,
            avail_h,
        )
        if key == self._layout_key:
            self.update()
            return
        self._layout_key = key
        fm = QFontMetricsF(self.fonts.font())
        fm_bold = QFontMetricsF(self.fonts.font(True))

        def make(max_width: float) -> Diagram:
            cap = LEGEND_LINE * len(legend_lines(data, max_width, self.text_width))
            for i, line in enumerate(data.caption_lines):
                metrics = fm_bold if i == 0 and data.note else fm
                rect = metrics.boundingRect(QRectF(0, 0, max_width, 1000),
                                            int(Qt.TextFlag.TextWordWrap), line)  # fmt: skip
                cap += rect.height() + 2
            return layout_diagram(
                list(data.mats),
                focused=data.focused,
                receiving=data.receiving,
                max_width=max_width,
                text_width=self.text_width,
                chip_labels=list(data.chip_labels),
                caption_height=cap,
            )

        self.scale, self.dia = best_fit(make, avail_w, avail_h)
        self.setMinimumHeight(int(self.dia.height * self.scale) + 8)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(640, 380)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        if self.dia.boxes and self.canvas.draw(p, self, event.rect()):
            p.end()
            return
        self.paint_directly(p, event.rect())
        p.end()

    def paint_directly(self, p: QPainter, exposed_rect) -> None:
        """Paint the whole diagram into ``p`` (the boxes inside ``exposed_rect`` only)."""
        if self.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent):
            p.fillRect(exposed_rect, self.palette().brush(self.backgroundRole()))
        # Axis-aligned cells need no antialiasing; the chips turn it on for their corners.
        p.translate(4, 4)
        p.scale(self.scale, self.scale)
        # Only the matrices inside the exposed part (the rest is scrolled away).
        exposed = QRectF(exposed_rect)
        view = QRectF((exposed.x() - 4) / self.scale, (exposed.y() - 4) / self.scale,
                      exposed.width() / self.scale, exposed.height() / self.scale)  # fmt: skip
        data, fonts = self.data, self.fonts
        by_key = {m.key: m for m in data.mats}
        for key, box in self.dia.boxes.items():
            if view.intersects(QRectF(box.x, box.y, box.w, box.h)):
                paint_matrix(p, by_key[key], box, data, fonts, self.scale)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        paint_arrows(p, self.dia, fonts)
        paint_notes_and_chips(p, self.dia, data, fonts)
        paint_caption(p, self.dia, data, fonts)

    # ---- hit testing ------------------------------------------------------------------------
    def to_design(self, pos: QPointF) -> tuple[float, float]:
        return ((pos.x() - 4) / self.scale, (pos.y() - 4) / self.scale)

    def hit(self, pos: QPointF) -> tuple[str, object] | None:
        """What is under a widget position: ("chip", head), ("cell", (key, row, col)) or None."""
        x, y = self.to_design(pos)
        for hd, cx, cy, cw, ch in self.dia.chips:
            if cx <= x <= cx + cw and cy <= y <= cy + ch:
                return ("chip", hd)
        for key, box in self.dia.boxes.items():
            gx, gy = box.grid_x, box.grid_y
            if gx <= x < gx + len(box.cols) * CELL_W and gy <= y < gy + len(box.rows) * CELL_H:
                ri, ci = int((y - gy) // CELL_H), int((x - gx) // CELL_W)
                return ("cell", (key, box.rows[ri], box.cols[ci]))
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        found = self.hit(event.position())
        if found is None:
            return super().mousePressEvent(event)
        kind, what = found
        if kind == "chip":
            self.head_picked.emit(int(what))  # type: ignore[call-overload]
        else:
            key, r, _c = what  # type: ignore[misc]
            if r is not None and self.data.matrix(key).rows in ("tokens", "queries"):
                self.token_picked.emit(int(r))

    def event(self, ev: QEvent) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            assert isinstance(ev, QHelpEvent)
            found = self.hit(QPointF(ev.pos()))
            if found and found[0] == "cell":
                key, r, c = found[1]  # type: ignore[misc]
                m = self.data.matrix(key)
                if r is not None and c is not None:
                    QToolTip.showText(
                        ev.globalPos(),
                        f"{m.title}[{m.row_labels[r]}, {m.col_labels[c]}] = {m.value[r, c]!r}"
                        f"\n{m.kind}: {m.formula}",
                        self,
                    )
                    return True
            QToolTip.hideText()
            ev.ignore()
            return True
        return super().event(ev)


class DiagramScroll(QScrollArea):
    """Tells the diagram how much room the viewport has, so it can pick its scale."""

    def __init__(self, diagram: BlockDiagram) -> None:
        super().__init__()
        self.diagram = diagram
        self.setWidget(diagram)  # which has it fill its background with the palette's
        # The diagram's paint covers what it exposes (its picture is opaque; painted directly,
        # it fills the background first): Qt need not fill it before every paint.
        brush = diagram.palette().brush(diagram.backgroundRole())
        opaque = diagram.autoFillBackground() and brush.style() == Qt.BrushStyle.SolidPattern
        diagram.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, opaque)
        self.setWidgetResizable(True)
        # Its bar copies its last painting while it stays (Qt's own paint of a tall bar waits
        # on Qt's thread pool: see kit/kept_scroll).
        self.setVerticalScrollBar(KeptScrollBar())
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.diagram.set_avail(self.viewport().size())
