"""Three sliders, one per field: how much the receiving query points into each."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QSlider, QWidget

from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.widgets import SoftLabel
from attnsim.viewmodels.fields_lab import FIELD_NAMES

from .canvas import FIELD_COLORS

SLIDER_STEPS = 100
SLIDERS_ONE_ROW_WIDTH = 560  # narrower than this, each field label goes above its slider


class FieldSliders(QWidget):
    """The field sliders and their values. ``pressed(f)``, ``released()`` and
    ``moved(f, share)`` (share 0..1) report the gestures; ``refresh(mix, held)`` shows a mix
    and leaves the slider ``held`` (the one under the mouse) where the user holds it."""

    pressed = Signal(int)
    released = Signal()
    moved = Signal(int, float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(0)
        self._grid = grid
        self._parts: list[tuple[QLabel, QSlider, QLabel]] = []
        self._wide: bool | None = None
        self.sliders: list[QSlider] = []
        self.values: list[QLabel] = []
        for f, name in enumerate(FIELD_NAMES):
            # Soft: the label goes above its slider in a narrow panel, so it never widens it.
            label = SoftLabel(
                f"<span style='color:{FIELD_COLORS[f].name()}'>■</span> {name}"
            )  # fmt: skip
            s = QSlider(Qt.Orientation.Horizontal)
            s.setRange(0, SLIDER_STEPS)
            s.setPageStep(10)
            s.setMinimumWidth(30)
            s.setToolTip(
                f"How much the receiving query points into {name}: its coefficient on the "
                f"field's direction. The other fields rescale so the query keeps its length."
            )
            s.setObjectName(f"fields_lab-slider-{f}")
            s.sliderPressed.connect(lambda f=f: self.pressed.emit(f))
            s.sliderReleased.connect(self.released)
            s.valueChanged.connect(lambda value, f=f: self.moved.emit(f, value / SLIDER_STEPS))
            value = QLabel("0.00")
            value.setMinimumWidth(30)
            self._parts.append((label, s, value))
            self.sliders.append(s)
            self.values.append(value)
        self.place(wide=False)

    def place(self, *, wide: bool) -> None:
        """One row (label, slider, value) x 3 when wide; narrow, each label above its slider."""
        if wide == self._wide:
            return
        self._wide = wide
        grid = self._grid
        for parts in self._parts:
            for w in parts:
                grid.removeWidget(w)
        for c in range(9):
            grid.setColumnStretch(c, 0)
        for f, (label, slider, value) in enumerate(self._parts):
            if wide:
                grid.addWidget(label, 0, 3 * f)
                grid.addWidget(slider, 0, 3 * f + 1)
                grid.addWidget(value, 0, 3 * f + 2)
                grid.setColumnStretch(3 * f + 1, 1)
            else:
                grid.addWidget(label, 0, 2 * f, 1, 2)
                grid.addWidget(slider, 1, 2 * f)
                grid.addWidget(value, 1, 2 * f + 1)
                grid.setColumnStretch(2 * f, 1)

    def refresh(self, mix: ArrayLike, held: int | None = None) -> None:
        """Show ``mix`` (3,): slider positions clipped to 0..1, values as numbers."""
        m = np.asarray(mix, dtype=float)
        for f, s in enumerate(self.sliders):
            if f != held:
                s.setValue(round(float(np.clip(m[f], 0.0, 1.0)) * SLIDER_STEPS))
            self.values[f].setText(fmt_fixed(float(m[f]), 2))
