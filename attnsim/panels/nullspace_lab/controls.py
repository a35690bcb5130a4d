"""The lab's editors: the query map M and the input e, the t and s sliders, the key table."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSlider,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.panels.widgets import FlowLayout, SignificantSpinBox, column, group
from attnsim.viewmodels.nullspace_lab import (
    ENTRY_LIMIT,
    KEY_NAMES,
    SLIDER_RANGE,
    NullSpaceLabView,
    ParamRow,
)

SLIDER_STEPS = 100  # slider ticks per unit (t and s move in steps of 0.01)


class MapEditor(QWidget):
    """M as a 2x3 table and e as three boxes, with the Example button. Reports
    ``cell_edited(row, col, text)``, ``e_edited(k, value)`` and ``refused(reason)``."""

    cell_edited = Signal(int, int, str)
    e_edited = Signal(int, float)
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # A flow: in a narrow dock the input e wraps below M instead of widening the panel.
        top = FlowLayout(self, h_spacing=8, v_spacing=3)
        top.setContentsMargins(0, 0, 0, 0)
        self.m_table = t = QTableWidget(2, 3)
        t.setHorizontalHeaderLabels(["x1", "x2", "x3"])
        t.setVerticalHeaderLabels(["q1", "q2"])
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        t.horizontalHeader().setDefaultSectionSize(46)
        t.verticalHeader().setDefaultSectionSize(20)
        t.horizontalHeader().setFixedHeight(20)
        t.setFixedSize(t.verticalHeader().sizeHint().width() + 3 * 46 + 4, 20 + 2 * 20 + 4)
        t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        t.setToolTip(
            "The query map q = M x (the row-vector code's Wq is Mᵀ). Type a number in a cell."
        )
        t.itemChanged.connect(
            lambda item: self.cell_edited.emit(item.row(), item.column(), item.text())
        )
        top.addWidget(group(QLabel("M = Wqᵀ"), t, spacing=6))
        self.e_spins: list[SignificantSpinBox] = []
        for k in range(3):
            sp = SignificantSpinBox(-ENTRY_LIMIT, ENTRY_LIMIT, step=0.1)
            sp.refused.connect(self.refused)
            sp.setMaximumWidth(64)
            sp.setToolTip(f"Component x{k + 1} of the input e")
            sp.valueChanged.connect(lambda value, k=k: self.e_edited.emit(k, value))
            self.e_spins.append(sp)
        self.reset_button = QPushButton("Example")
        self.reset_button.setToolTip(
            "Back to M = [[1, 0, 1], [0, 1, 1]], e = (1, 2, 3), t = 1, s = 0"
        )
        # The Example button sits under e: as tall as M's table, no wider than e's row.
        e_box, e_col = column(spacing=4)
        e_col.addWidget(group(QLabel("e ="), *self.e_spins, spacing=6))
        e_col.addWidget(self.reset_button, 0, Qt.AlignmentFlag.AlignLeft)
        top.addWidget(e_box)

    def refresh(self, M: np.ndarray, e: np.ndarray) -> None:
        """Show M (2, 3) and e (3,); cells and boxes already showing the value stay as they are."""
        for r in range(2):
            for c in range(3):
                text = f"{M[r, c]:g}"
                item = self.m_table.item(r, c)
                if item is None:
                    item = QTableWidgetItem(text)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    self.m_table.setItem(r, c, item)
                elif item.text() != text:
                    item.setText(text)
        for k, sp in enumerate(self.e_spins):
            if sp.value() != float(e[k]):
                sp.setValue(float(e[k]))


class ParamSliders(QWidget):
    """The t and s sliders, each with its name and value. Reports ``moved(kind, value)``
    (value in units), ``pressed(kind)`` and ``released(kind)``."""

    moved = Signal(str, float)
    pressed = Signal(str)
    released = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        self.names: dict[str, QLabel] = {}
        self.sliders: dict[str, QSlider] = {}
        self.values: dict[str, QLabel] = {}
        for kind in ("t", "s"):
            row = QHBoxLayout()
            row.setSpacing(4)
            name = QLabel()
            name.setMinimumWidth(170)
            row.addWidget(name)
            slider = QSlider(Qt.Orientation.Horizontal)
            limit = round(SLIDER_RANGE * SLIDER_STEPS)
            slider.setRange(-limit, limit)
            slider.setPageStep(SLIDER_STEPS // 4)
            slider.valueChanged.connect(lambda v, k=kind: self.moved.emit(k, v / SLIDER_STEPS))
            slider.sliderPressed.connect(lambda k=kind: self.pressed.emit(k))
            slider.sliderReleased.connect(lambda k=kind: self.released.emit(k))
            row.addWidget(slider, 1)
            value = QLabel()
            value.setMinimumWidth(44)
            row.addWidget(value)
            layout.addLayout(row)
            slider.setProperty("name_label", name)
            self.names[kind], self.sliders[kind], self.values[kind] = name, slider, value

    def any_down(self) -> bool:
        return any(s.isSliderDown() for s in self.sliders.values())

    def refresh(self, rows: tuple[ParamRow, ...], held: frozenset[str] = frozenset()) -> None:
        """Show each row; a slider in ``held`` (dragged by the user) keeps its position."""
        for row in rows:
            slider = self.sliders[row.kind]
            if row.kind not in held:
                slider.setValue(round(row.value * SLIDER_STEPS))
            self.values[row.kind].setText(row.value_text)
            self.names[row.kind].setText(row.name)
            slider.setEnabled(row.enabled)


class KeyTable(QTableWidget):
    """The fixed keys: each one's q · k and weight."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(len(KEY_NAMES), 3, parent)
        self.setHorizontalHeaderLabels(["key", "q · k", "weight"])
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setDefaultSectionSize(19)
        self.horizontalHeader().setFixedHeight(20)
        self.setFixedHeight(20 + len(KEY_NAMES) * 19 + 4)
        self.setToolTip(
            "Fixed keys in the query space; weight = softmax(q · k / √2), the engine's attention"
        )

    def refresh(self, view: NullSpaceLabView) -> None:
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for j, (cells, tip) in enumerate(zip(view.key_cells, view.key_tips, strict=True)):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment(right if c else left)
                item.setToolTip(tip)
                self.setItem(j, c, item)
