"""One head's attention map on the model's tokens, and the token picker.

:class:`TokenMap` labels every row (query) and column (key) with the whole token piece, its
position before it as a small grey prefix ("16 ·bank"), the columns turned to read upwards, so
that a repeated word ("bank", twice) is told apart by its position. Labels take the room they
need, up to :data:`LABEL_SHARE` of the map's side; a piece is elided only when even that is too
little. The picked token's row and column are outlined (the row in the query colour, the column
dashed in the key colour) and their labels are bold.

:class:`TokenPicker` lists the text's tokens by position; picking one highlights its row and
column here and in every head of the grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QComboBox, QSizePolicy, QWidget

from attnsim.viewmodels.real_model import RunResult, distinct, head_name

from ..kit.head_grid import weight_scale
from ..kit.matrix_canvas import LABEL_INK, ColourScale, label_stride
from ..kit.matrix_widget import CanvasLayout, MatrixCanvas, canvas_layout
from ..kit.numbers import fmt_number
from ..kit.painted import CachedCanvas
from ..style import KEY, QUERY

__all__ = ["LABEL_SHARE", "CachedTokenMap", "TokenLabel", "TokenMap", "TokenPicker", "shown_piece"]

LABEL_SHARE = 0.4  # the most of the map's width (height) the row (column) labels may take
PREFIX_INK = QColor("#8A8A8A")
PREFIX_SCALE = 0.8  # the position's font size, of the label's
SPACE = 3.0  # between the position and the piece


def shown_piece(piece: str) -> str:
    """A token piece as a label shows it: spaces as '·', a newline as '↵'."""
    return distinct((piece,))[0]


@dataclass(frozen=True)
class TokenLabel:
    """One row's or column's label as drawn: the position, the piece (elided only when it does
    not fit: then ``whole`` is False)."""

    prefix: str
    piece: str
    whole: bool

    @property
    def text(self) -> str:
        return f"{self.prefix} {self.piece}"


class TokenMap(MatrixCanvas):
    """A head's weights, query down and key across, labelled with whole token pieces; painted
    afresh each time, so an SVG or PDF of it keeps its text as text."""

    def __init__(self, parent: QWidget | None = None, **kwargs: object) -> None:
        super().__init__(parent, **kwargs)  # type: ignore[arg-type]
        self.pieces: list[str] = []
        self.token: int | None = None
        self._widths: tuple[tuple[object, ...], list[float]] | None = None

    def set_map(
        self,
        values: np.ndarray,
        pieces: Sequence[str],
        *,
        token: int | None = None,
        causal: bool = False,
        title: str = "",
        tooltip=None,
        scale: ColourScale | None = None,
    ) -> None:
        """Show ``values`` (n x n) with ``pieces`` as the row and column labels; ``token`` is the
        picked position (None: none); ``scale`` (default: weights on 0-1) colours them."""
        n = len(pieces)
        self.set_matrix(
            values, row_labels=[], col_labels=[], scale=scale or weight_scale(),
            forbidden=np.triu(np.ones((n, n), dtype=bool), 1) if causal else None,
            title=title, highlight_row=token, highlight_col=token, tooltip=tooltip,
        )  # fmt: skip
        self.pieces = [shown_piece(p) for p in pieces]
        self.token = token

    def show_head(
        self, r: RunResult, layer: int, head: int, token: int | None = None,
        maps: str = "weights", scale: ColourScale | None = None,
    ) -> None:  # fmt: skip
        """Head ``(layer, head)`` of a run (its weights, or its contributions on ``scale``),
        its tool tip the exact weight (and contribution) of each pair."""
        w, m = r.weights[layer, head], r.head_map(layer, head, maps)
        contrib = m is not w
        what = "contributions |α·v·W_O|" if contrib else "attention weights"

        def tip(i: int, j: int, t=r.labels) -> str:
            text = f"{t[i]} (pos {i}) → {t[j]} (pos {j}): {fmt_number(float(w[i, j]), 4)}"
            return text + (f", contribution {fmt_number(float(m[i, j]), 4)}" if contrib else "")

        self.set_map(
            m, r.pieces, token=token, causal=r.causal, tooltip=tip, scale=scale,
            title=f"{head_name(layer, head)} {what} (query ↓ × key →)",
        )  # fmt: skip

    # ---- labels ---------------------------------------------------------------------------------
    def fonts(self) -> tuple[QFont, QFont]:
        """The piece's font (bold: a label keeps its length when it turns bold) and the
        position's."""
        bold = QFont(self.cell_font())
        bold.setBold(True)
        small = QFont(self.cell_font())
        small.setPointSizeF(self.cell_font().pointSizeF() * PREFIX_SCALE)
        return bold, small

    def label_widths(self) -> list[float]:
        """Each label's whole width (position, space, piece), measured once per text and font."""
        bold, small = self.fonts()
        key = (tuple(self.pieces), bold.key())
        if self._widths is None or self._widths[0] != key:
            fb, fs = QFontMetricsF(bold), QFontMetricsF(small)
            widths = [
                fs.horizontalAdvance(str(i)) + SPACE + fb.horizontalAdvance(p)
                for i, p in enumerate(self.pieces)
            ]  # fmt: skip
            self._widths = (key, widths)
        return self._widths[1]

    def label_room(self) -> tuple[float, float]:
        """The width of the row labels and the height of the turned column labels."""
        if not self.pieces:
            return 0.0, 0.0
        longest = max(self.label_widths()) + 6
        return (
            min(longest, LABEL_SHARE * self.width()),
            min(longest, LABEL_SHARE * self.height()),
        )

    def labels(self, room: float | None = None) -> list[TokenLabel]:
        """Every position's label as drawn in ``room`` px (default: the row labels' room)."""
        bold, small = self.fonts()
        fb, fs = QFontMetricsF(bold), QFontMetricsF(small)
        room = (self.label_room()[0] if room is None else room) - 6
        out = []
        for i, piece in enumerate(self.pieces):
            prefix = str(i)
            left = room - fs.horizontalAdvance(prefix) - SPACE
            whole = fb.horizontalAdvance(piece) <= left + 0.01
            shown = piece if whole else fb.elidedText(piece, Qt.TextElideMode.ElideRight, left)
            out.append(TokenLabel(prefix, shown, whole))
        return out

    def canvas_layout(self) -> CanvasLayout:
        font = self.cell_font()
        fm = QFontMetricsF(font)
        n_q, n_k = self.values.shape if self.values.ndim == 2 else (0, 0)
        label_w, head_h = self.label_room()
        bar_label_w = max((fm.horizontalAdvance(t) for _, t in self.scale_labels()), default=0.0)
        return canvas_layout(
            float(self.width()), float(self.height()), n_q, n_k, label_w=label_w,
            head_h=head_h, title_h=fm.height() + 4 if self.title else 0.0, bar_w=12.0,
            bar_label_w=bar_label_w + 6, max_cell=self.max_cell, min_cell=self.min_cell,
        )  # fmt: skip

    # ---- painting -------------------------------------------------------------------------------
    def paint_content(self, p: QPainter) -> None:
        super().paint_content(p)  # title, cells, outlines and colour bar; no labels of its own
        if not self.pieces:
            return
        lay = self.canvas_layout()
        x, y, w, h = lay.row_labels
        n = len(self.pieces)
        rows, cols = self.labels(w), self.labels(lay.col_labels[3])
        line = QFontMetricsF(self.fonts()[0]).height()
        for i in self._shown(h / n, line):
            mid = y + (i + 0.5) * h / n
            self._label(p, rows[i], x + w - 4, mid, i == self.token, QUERY, right=True)
        cx, cy, cw, ch = lay.col_labels
        for j in self._shown(cw / n, line):
            p.save()
            p.translate(cx + (j + 0.5) * cw / n, cy + ch)
            p.rotate(-90)  # reads upwards from the cells
            self._label(p, cols[j], 3.0, 0.0, j == self.token, KEY)
            p.restore()

    def _shown(self, pitch: float, line: float) -> list[int]:
        """Every k-th label where rows (columns) are thinner than a line, the picked always."""
        n = len(self.pieces)
        stride = label_stride(pitch, line)
        shown = set(range(0, n, stride))
        if self.token is not None and 0 <= self.token < n:
            t = self.token
            shown = {i for i in shown if abs(i - t) >= stride} | {t}
        return sorted(shown)

    def _label(
        self, p: QPainter, label: TokenLabel, x: float, mid: float, picked: bool, ink: QColor,
        *, right: bool = False,
    ) -> None:  # fmt: skip
        """``label`` from ``x`` (ending at ``x`` when ``right``), centred on ``mid``: the
        position small and grey, then the piece."""
        bold, small = self.fonts()
        fb, fs = QFontMetricsF(bold), QFontMetricsF(small)
        pre_w = fs.horizontalAdvance(label.prefix)
        piece_w = fb.horizontalAdvance(label.piece)
        if right:
            x -= pre_w + SPACE + piece_w
        top, lh = mid - fb.height() / 2, fb.height()
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        p.setFont(small)
        p.setPen(ink if picked else PREFIX_INK)
        p.drawText(QRectF(x, top, pre_w + 2, lh), align, label.prefix)
        p.setFont(bold if picked else self.cell_font())
        p.setPen(ink if picked else LABEL_INK)
        p.drawText(QRectF(x + pre_w + SPACE, top, piece_w + 2, lh), align, label.piece)


class CachedTokenMap(CachedCanvas, TokenMap):
    """A :class:`TokenMap` that copies its last painting until its map or size changes (the
    panel's: a 512-token map is slow to paint)."""


class TokenPicker(QComboBox):
    """The text's tokens by position ("16 ·bank"); ``token_picked(position)``, -1 for none."""

    token_picked = Signal(int)
    NONE = "No token highlighted"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pieces: tuple[str, ...] = ()
        self.addItem(self.NONE, -1)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(14)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setToolTip(
            "Pick a token (by its position: a repeated word appears once for each time) to "
            "outline its row (as the query) and its column (as the key) in every head's map"
        )
        self.currentIndexChanged.connect(lambda: self.token_picked.emit(self.currentData()))

    def token(self) -> int | None:
        t = self.currentData()
        return None if t is None or t < 0 else int(t)

    def show_tokens(self, pieces: Sequence[str], token: int | None) -> None:
        """List ``pieces`` and show ``token`` picked, without emitting."""
        with QSignalBlocker(self):
            if tuple(pieces) != self.pieces:
                self.pieces = tuple(pieces)
                self.clear()
                self.addItem(self.NONE, -1)
                for i, piece in enumerate(pieces):
                    self.addItem(f"{i} {shown_piece(piece)}", i)
            self.setCurrentIndex(0 if token is None else token + 1)
