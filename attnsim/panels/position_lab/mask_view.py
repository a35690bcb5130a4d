"""ALiBi and window/sink masks on the scenario's weights: the mode and its numbers, the
scenario's weights and the same head recomputed by the engine, forbidden keys hatched."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnsim.viewmodels.position_lab import SETTINGS, MaskData

from ..kit.control_row import ControlRow
from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.matrix_widget import MatrixCanvas
from ..kit.numbers import fmt_number
from ..style import weight_cmap

BOXES = ("alibi_heads", "alibi_head", "window", "sinks")  # ALiBi's two, the window's two
LABELS_MAX = 24  # more rows or columns than this are labelled by position


@cache
def _weight_lut() -> np.ndarray:
    return lut_from_cmap(weight_cmap())


class MaskControls(ControlRow):
    """The mode and the numbers of the chosen mode: the lab's control row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(SETTINGS, ("mode", *BOXES), parent=parent)
        self.mode_combo = self.combos["mode"]
        self.groups = {name: self.parts[name] for name in BOXES}

    def refresh(self, state, ranges=None, values=None) -> None:  # type: ignore[override]
        """Show ``state``; only the chosen mode's boxes show."""
        super().refresh(state, ranges, values)
        for name in BOXES:
            self.parts[name].setVisible(state.mode == ("alibi" if name[0] == "a" else "window"))


class MaskView(QWidget):
    """The scenario's weights beside the recomputed ones, and what the mode does."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.before = MatrixCanvas(colour_bar=False, max_cell=56, min_cell=1)
        self.after = MatrixCanvas(max_cell=56, min_cell=1)
        row.addWidget(self.before, 1)
        row.addWidget(self.after, 1)
        lay.addLayout(row, 1)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.caption)
        self._shown_before: MaskData | None = None

    def refresh(self, data: MaskData) -> None:
        scale = ColourScale(_weight_lut(), 0.0, 1.0)
        rows, cols = data.row_labels, data.col_labels
        if max(len(rows), len(cols)) > LABELS_MAX:
            # Names no longer fit beside small cells: positions (what ALiBi and the window
            # count) label the rows, the tool tips keep the names.
            # No column labels then: the kit would otherwise number the rows a second time.
            rows, cols = tuple(str(i) for i in range(len(rows))), ()
        common = {
            "row_labels": rows, "col_labels": cols, "scale": scale,
            "highlight_row": data.receiving,
        }  # fmt: skip
        # A mask or bias edit leaves the scenario's weights as they are: keep that canvas's
        # cached picture instead of recolouring it (half the repaint at n = 64).
        if not self._same_before(data):
            self._shown_before = data
            self.before.set_matrix(
                data.base_weights, forbidden=data.base_forbidden, title="Scenario's weights",
                tooltip=lambda i, j: f"{data.row_labels[i]} → {data.col_labels[j]}: "
                f"{fmt_number(data.base_weights[i, j], 4)}",
                **common,
            )  # fmt: skip
        self.after.set_matrix(
            data.weights, forbidden=data.forbidden, title=data.title,
            tooltip=lambda i, j: self._tip(data, i, j), **common,
        )  # fmt: skip
        self.before.setVisible(data.mode != "none")
        change = "" if data.mode == "none" else (
            f" Largest change of a weight: {fmt_number(data.max_change, 3)}."
        )  # fmt: skip
        self.caption.setText(data.caption + change)

    def _same_before(self, data: MaskData) -> bool:
        old = self._shown_before
        return (
            old is not None
            and old.receiving == data.receiving
            and old.row_labels == data.row_labels
            and old.col_labels == data.col_labels
            and np.array_equal(old.base_weights, data.base_weights, equal_nan=True)
            and np.array_equal(old.base_forbidden, data.base_forbidden)
        )

    @staticmethod
    def _tip(data: MaskData, i: int, j: int) -> str:
        pair = f"{data.row_labels[i]} → {data.col_labels[j]}"
        text = f"{pair}: weight {fmt_number(data.weights[i, j], 4)}"
        if data.forbidden[i, j]:
            text += " (forbidden)"
        elif data.bias is not None:
            text += f", bias {fmt_number(data.bias[i, j], 3)}"
        return text
