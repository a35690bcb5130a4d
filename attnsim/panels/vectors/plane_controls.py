"""The plane's choices above the drag plane: two named axes or the best 2-D plane, which two
axes, and Refit. View choices only: nothing here edits the scenario."""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QToolButton, QWidget

from attnsim.viewmodels.vectors import AXES_MODE, BEST_MODE, PlaneControlsData

from ..widgets import FlowLayout, group


class PlaneControls(QWidget):
    """Signals: mode_picked(str) 'axes' or 'best'; axis_picked(int, int) which combo (0: x,
    1: y) and the axis index; refit_clicked()."""

    mode_picked = Signal(str)
    axis_picked = Signal(int, int)
    refit_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._axes: dict[int, tuple[str, ...]] = {}  # the axis names each combo holds
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("two axes", AXES_MODE)
        self.mode_combo.addItem("best 2-D plane", BEST_MODE)
        self.mode_combo.setToolTip(
            "Show two chosen axes, or the plane through the origin that holds the most of the "
            "vectors' squared length (principal directions)"
        )
        self.mode_combo.currentIndexChanged.connect(self._mode_changed)
        self.x_combo = QComboBox()
        self.x_combo.setToolTip("Horizontal axis")
        self.y_combo = QComboBox()
        self.y_combo.setToolTip("Vertical axis")
        self.x_combo.currentIndexChanged.connect(lambda i: self._axis_changed(0, i))
        self.y_combo.currentIndexChanged.connect(lambda i: self._axis_changed(1, i))
        # Combos shrink to a few characters in a narrow dock.
        for c, chars in ((self.x_combo, 4), (self.y_combo, 4), (self.mode_combo, 5)):
            c.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            c.setMinimumContentsLength(chars)
        self.vs_label = QLabel("×")
        self.refit_button = QToolButton()
        self.refit_button.setText("Refit")
        self.refit_button.setToolTip(
            "The plane stays put while you edit, so arrows do not jump. Refit recomputes the "
            "best plane for the vectors as they are now."
        )
        self.refit_button.clicked.connect(self.refit_clicked)
        flow = FlowLayout(self)
        flow.setContentsMargins(0, 0, 0, 0)
        flow.addWidget(group(QLabel("Plane"), self.mode_combo, self.refit_button))
        self.axes_group = group(self.x_combo, self.vs_label, self.y_combo)
        flow.addWidget(self.axes_group)

    def _mode_changed(self, index: int) -> None:
        if index >= 0:
            self.mode_picked.emit(str(self.mode_combo.itemData(index)))

    def _axis_changed(self, which: int, index: int) -> None:
        if index >= 0:
            self.axis_picked.emit(which, index)

    def refresh(self, data: PlaneControlsData) -> None:
        d = data.d
        with QSignalBlocker(self.mode_combo):
            self.mode_combo.setCurrentIndex(1 if data.best else 0)
        self.mode_combo.setVisible(d > 2)  # with two axes there is no other plane to pick
        for c, k in ((self.x_combo, 0), (self.y_combo, 1)):
            with QSignalBlocker(c):
                # Compared with what was put in, not read back item by item (1,024 Qt calls).
                if self._axes.get(k) != data.axes:
                    c.clear()
                    c.addItems(list(data.axes))
                    self._axes[k] = data.axes
                c.setCurrentIndex(data.picked[k])
        self.axes_group.setVisible(not data.best)
        self.y_combo.setEnabled(d > 1)
        self.refit_button.setVisible(data.best)
