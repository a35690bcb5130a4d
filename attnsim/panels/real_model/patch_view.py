"""The Real model panel's "Patching" page: text A (clean) and text B (corrupted) of the two
texts, a metric (SmolLM2: the logit difference of two next tokens at the last position;
MiniLM: the chosen token's final hidden state's cosine to its clean value), every head's output
and every (layer, position) of the residual stream patched from A into B in the background,
and two maps of the fraction of the gap each patch restores.

:class:`PatchView` is the widget (no workbench); :class:`PatchPart` the panel's side: the
next tokens are an undoable edit of the pair state, the run goes to the workbench's runner with
progress and Cancel, and a click on a head selects it and opens the two texts' page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPainter
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.real_heads import PairState, PatchResult, next_tokens, patch_job
from attnsim.viewmodels.real_model import MODEL_TITLES, head_name

from ..kit.figure_paint import painting_figure
from ..kit.head_grid import LayerHeadGrid, lattice
from ..kit.hidpi import points
from ..kit.matrix_canvas import LABEL_INK, ColourScale, paint_matrix, paint_scale_bar
from ..kit.numbers import fmt_number
from ..widgets import CaptionLabel
from .pair_grid import difference_scale
from .run_part import RunPart

PATCH_JOB = "real_model.patch"
LABEL_W, TOP, BAR = 30.0, 14.0, 30.0


class PatchGrid(LayerHeadGrid):
    """A square per head, coloured by the fraction of the gap its patch restores."""

    font_pt = 7.0

    @property  # type: ignore[override]
    def kept(self) -> bool:
        return not painting_figure()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, minimum=(160, 160))
        self.values = np.zeros((0, 0), np.float32)

    def sizeHint(self) -> QSize:
        return QSize(260, 360)

    def refresh(self, values: np.ndarray | None, selected=None) -> None:
        self.values = np.zeros((0, 0), np.float32) if values is None else values
        self.set_marks(selected)
        self.changed()

    def has_content(self) -> bool:
        return self.values.size > 0

    def cell_rects(self) -> dict[tuple[int, int], QRectF]:
        if not self.has_content():
            return {}
        layers, heads = self.values.shape
        side = max(2.0, min((self.width() - LABEL_W - 4) / heads,
                            (self.height() - TOP - BAR) / layers))  # fmt: skip
        return lattice(layers, heads, x0=LABEL_W, y0=TOP, side=side - 1, pitch_x=side,
                       pitch_y=side)  # fmt: skip

    def tip(self, key: tuple[int, int], point: QPointF | None = None) -> str:
        v = fmt_number(float(self.values[key]), 3)
        return f"{head_name(*key)}: patching its output restores {v} of the gap\nclick to open it"

    def paint_cell(self, p: QPainter, key: tuple[int, int], rect: QRectF) -> None:
        p.fillRect(rect, _colour(float(self.values[key])))

    def paint_around(self, p: QPainter, rects: dict[tuple[int, int], QRectF]) -> None:
        fm = QFontMetricsF(self.cell_font())
        p.setPen(LABEL_INK)
        layers, heads = self.values.shape
        side = rects[(0, 0)].height() + 1
        every = max(1, int(np.ceil(fm.height() / side)))
        for layer in range(0, layers, every):
            r = rects[(layer, 0)]
            p.drawText(QRectF(0, r.center().y() - fm.height() / 2, LABEL_W - 4, fm.height()),
                       int(Qt.AlignmentFlag.AlignRight), f"L{layer}")  # fmt: skip
        widest = fm.horizontalAdvance(f"H{heads - 1}") + 2
        step = max(1, int(np.ceil(widest / side)))
        for head in range(0, heads, step):
            r = rects[(0, head)]
            p.drawText(QRectF(r.center().x() - widest / 2, 0, widest, TOP - 2),
                       int(Qt.AlignmentFlag.AlignCenter), f"H{head}")  # fmt: skip
        y = max(r.bottom() for r in rects.values()) + 6
        bar = QRectF(LABEL_W, y, min(200.0, self.width() - LABEL_W - 10), 9)
        paint_scale_bar(p, bar, difference_scale(), fm=fm)


def _colour(value: float) -> QColor:
    return QColor.fromRgba(int(difference_scale().colours(np.array([value]))[0]))


class ResidMap(QWidget):
    """Layers x positions: the fraction restored by patching the residual stream entering each
    layer at each position; the positions named by their whole token pieces, written upwards."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros((0, 0), np.float32)
        self.pieces: tuple[str, ...] = ()
        self.rows: list[str] = []
        self.scale = difference_scale()
        self.setMinimumSize(200, 160)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(420, 360)

    def refresh(
        self,
        values: np.ndarray | None,
        pieces: tuple[str, ...],
        rows: list[str] | None = None,
        scale: ColourScale | None = None,
    ) -> None:
        """Show ``values`` with a column per piece; rows named L0, L1, ... unless ``rows``
        names them; on the -1 to 1 scale of a difference unless ``scale``."""
        self.values = np.zeros((0, 0), np.float32) if values is None else values
        self.pieces = tuple(p.strip() or repr(p) for p in pieces)
        self.rows = rows or [f"L{i}" for i in range(self.values.shape[0])]
        self.scale = scale or difference_scale()
        self.update()

    def _font(self):
        f = self.font()
        f.setPointSizeF(points(7.0))
        return f

    def label_w(self) -> float:
        fm = QFontMetricsF(self._font())
        return max((fm.horizontalAdvance(r) for r in self.rows), default=0.0) + 8

    def grid_rect(self) -> QRectF:
        fm = QFontMetricsF(self._font())
        top = max((fm.horizontalAdvance(p) for p in self.pieces), default=0.0) + 6
        left = self.label_w()
        return QRectF(left, top, max(self.width() - left - 6, 1),
                      max(self.height() - top - BAR, 1))  # fmt: skip

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        g = self.grid_rect()
        if not self.values.size or not g.contains(QPointF(x, y)):
            return None
        rows, cols = self.values.shape
        return (min(rows - 1, int((y - g.top()) / g.height() * rows)),
                min(cols - 1, int((x - g.left()) / g.width() * cols)))  # fmt: skip

    def event(self, e) -> bool:
        if e.type() == e.Type.ToolTip and self.values.size:
            hit = self.cell_at(e.pos().x(), e.pos().y())
            if hit is not None:
                v = fmt_number(float(self.values[hit]), 3)
                text = f"{self.rows[hit[0]]} at {self.pieces[hit[1]]!r} (position {hit[1]}): {v}"
                QToolTip.showText(e.globalPos(), text, self)
                return True
        return super().event(e)

    def paintEvent(self, event) -> None:  # Qt's name
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if self.values.size:
            self._paint(p)
        p.end()

    def _paint(self, p: QPainter) -> None:
        font = self._font()
        p.setFont(font)
        fm = QFontMetricsF(font)
        g = self.grid_rect()
        rows, cols = self.values.shape
        paint_matrix(p, g, self.values, scale=self.scale, numbers=False,
                     grid_lines=False)  # fmt: skip
        p.setPen(LABEL_INK)
        ch, cw = g.height() / rows, g.width() / cols
        every = max(1, int(np.ceil(fm.height() / ch)))
        for i in range(0, rows, every):
            y = g.top() + (i + 0.5) * ch
            p.drawText(QRectF(0, y - fm.height() / 2, g.left() - 4, fm.height()),
                       int(Qt.AlignmentFlag.AlignRight), self.rows[i])  # fmt: skip
        step = max(1, int(np.ceil(fm.height() / cw)))
        for j in range(0, cols, step):
            p.save()
            p.translate(g.left() + (j + 0.5) * cw + fm.ascent() / 2 - fm.descent(), g.top() - 3)
            p.rotate(-90)
            p.drawText(QPointF(0, 0), self.pieces[j])
            p.restore()
        bar = QRectF(g.left(), g.bottom() + 6, min(200.0, g.width()), 9)
        paint_scale_bar(p, bar, self.scale, fm=fm)


class PatchView(QWidget):
    """The metric's next tokens, Patch / Cancel, the note and the two maps."""

    patch_clicked = Signal()
    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.good, self.bad = QLineEdit(), QLineEdit()
        for box in (self.good, self.bad):
            box.setMaximumWidth(90)
        self.patch_button = QPushButton("Patch A into B")
        self.patch_button.clicked.connect(self.patch_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(120)
        self.progress.setVisible(False)
        row = QHBoxLayout()
        for w in (QLabel("next token"), self.good, QLabel("against"), self.bad,
                  self.patch_button, self.cancel_button, self.progress):  # fmt: skip
            row.addWidget(w)
        row.addStretch(1)
        self.note = CaptionLabel()
        self.note.setWordWrap(True)
        self.heads = PatchGrid()
        self.resid = ResidMap()
        maps = QHBoxLayout()
        maps.addWidget(self.heads, 1)
        maps.addWidget(self.resid, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addLayout(maps, 1)

    def show_running(self, running: bool, fraction: float = 0.0) -> None:
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.progress.setValue(round(100 * fraction))

    def show_result(self, r: PatchResult | None, selected) -> None:
        self.heads.refresh(None if r is None else r.heads, selected)
        if r is None:
            self.resid.refresh(None, ())
            return
        self.resid.refresh(r.resid, r.pieces)


class PatchPart(RunPart):
    """The panel's edits and runs for the "Patching" page (owned by the panel)."""

    def __init__(self, panel: Any, view: PatchView, open_head: Callable[[int, int], None]) -> None:
        super().__init__(panel, view)
        view.heads.head_clicked.connect(open_head)
        self.result: PatchResult | None = None
        view.patch_clicked.connect(self.run)

    def state(self) -> PairState:
        return self.panel.wb.lab_state(PairState)

    def run(self) -> None:
        good, bad = self.view.good.text(), self.view.bad.text()
        st = self.state()
        if (good, bad) != (st.good, st.bad) and not self.panel.propose(
            lambda: replace(st, good=good, bad=bad), "Real model: patching metric"
        ):
            return
        model, st = self.panel.state().model, self.state()
        tokens = next_tokens(st)
        self.start_run(
            model,
            lambda progress, cancelled: patch_job(model, st.a, st.b, progress, cancelled,
                                                  next_tokens=tokens, token=st.token),
            PATCH_JOB,
            f"Patching {MODEL_TITLES[model]}: every head, then every layer and position…",
        )  # fmt: skip

    def received(self, result: PatchResult) -> None:
        self.result = result

    def refresh(self) -> None:
        st = self.state()
        with self.panel.updating():
            for box, text in ((self.view.good, st.good), (self.view.bad, st.bad)):
                if box.text() != text:
                    box.setText(text)
        r = self.result
        if r is not None and r.model != self.panel.state().model:
            self.result = r = None
        self.view.show_result(r, self.panel.state().selected if r is not None else None)
        if self.job is not None:
            return
        if r is None:
            self.view.note.setText(
                "Patch text A (clean) into text B (corrupted) to see which heads carry"
                " the difference."
            )
            return
        top = np.argsort(-r.heads, axis=None)[:5]
        heads = r.heads.shape[1]
        best = ", ".join(
            f"{head_name(*divmod(int(k), heads))} {fmt_number(float(r.heads.flat[k]), 2)}"
            for k in top
        )
        self.view.note.set_caption(
            f"{r.patching.label}: clean {fmt_number(r.patching.clean, 3)}, corrupted"
            f" {fmt_number(r.patching.corrupted, 3)}. Heads restoring the most of the gap: {best}.",
            "Click a head to open it.",
        )
