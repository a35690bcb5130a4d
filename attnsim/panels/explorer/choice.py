"""The explorer's top row: which vectors it shows (free a, b or a scenario's q, k), which pair,
and what a drag holds."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from attnsim.viewmodels.explorer import HOLD_MODES, PairChoice

from ..widgets import FlowLayout, compact_combo, group

HOLD_LABELS = {
    "free": "free",
    "lengths": "hold lengths (rotate)",
    "angle": "hold angle (stretch)",
}


class ChoiceRow(QWidget):
    """Mode, query / key and hold pickers. The pair pickers show only in linked mode.

    Signals: ``mode_picked(mode)``, ``hold_picked(hold)``, ``query_picked(i)``,
    ``key_picked(j)`` (the panel ignores those of its own redraw).
    """

    mode_picked = Signal(str)
    hold_picked = Signal(str)
    query_picked = Signal(int)
    key_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = FlowLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("free a, b", "free")
        self.mode_combo.addItem("scenario q, k", "linked")
        self.mode_combo.setToolTip(
            "free: two sandbox vectors to drag. scenario: a query and a key of the current "
            "scenario, drawn in the plane they span, with the numbers of their heatmap cell"
        )
        self.mode_combo.currentIndexChanged.connect(
            lambda _i: self.mode_picked.emit(self.mode_combo.currentData())
        )
        row.addWidget(group(QLabel("Vectors:"), self.mode_combo))
        self.query_combo = QComboBox()
        compact_combo(self.query_combo, 8)
        self.query_combo.setToolTip("The query (row of the heatmap): the receiving token")
        self.query_combo.currentIndexChanged.connect(self.query_picked)
        self.key_combo = QComboBox()
        compact_combo(self.key_combo, 8)
        self.key_combo.setToolTip("The key (column of the heatmap); default: the top-weighted")
        self.key_combo.currentIndexChanged.connect(self.key_picked)
        # Shown in linked mode only; one piece, so q and k wrap together.
        self.pair_group = group(QLabel("q:"), self.query_combo, QLabel("k:"), self.key_combo)
        row.addWidget(self.pair_group)
        self.hold_combo = QComboBox()
        for mode in HOLD_MODES:
            self.hold_combo.addItem(HOLD_LABELS[mode], mode)
        self.hold_combo.setToolTip(
            "hold lengths: a dragged tip moves on its circle, only the angle changes; "
            "hold angle: it moves along its ray, only its length changes"
        )
        self.hold_combo.currentIndexChanged.connect(
            lambda _i: self.hold_picked.emit(self.hold_combo.currentData())
        )
        row.addWidget(group(QLabel("Drag:"), self.hold_combo))
        self._labels: dict[int, tuple[str, ...]] = {}

    @property
    def mode(self) -> str:
        return self.mode_combo.currentData()

    @property
    def hold(self) -> str:
        return self.hold_combo.currentData()

    def set_mode(self, mode: str) -> None:
        """Show the free vectors ("free") or a scenario query/key pair ("linked")."""
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))

    def set_hold(self, hold: str) -> None:
        self.hold_combo.setCurrentIndex(self.hold_combo.findData(hold))

    def refresh(self, pair: PairChoice | None) -> None:
        """Show the pair pickers with ``pair`` (linked mode), or hide them (None)."""
        self.pair_group.setVisible(pair is not None)
        if pair is None:
            return
        for combo, labels in ((self.query_combo, pair.queries), (self.key_combo, pair.keys)):
            # Compare with what was put in (one tuple comparison), not item by item through Qt:
            # at n = 2048 that would be thousands of calls on every refresh.
            if self._labels.get(id(combo)) != labels:
                combo.clear()
                combo.addItems(list(labels))
                self._labels[id(combo)] = labels
        self.query_combo.setCurrentIndex(pair.query)
        self.key_combo.setCurrentIndex(pair.key)
