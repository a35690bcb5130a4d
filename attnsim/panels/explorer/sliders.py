"""The explorer's length and angle sliders (one row): they show the vectors, a move is a gesture."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from attnsim.viewmodels.explorer import ANGLE_TICKS, LENGTH_TICKS, SliderRow

from .readouts import join_text

SPECS = (
    ("len_a", (0, LENGTH_TICKS), "Change a's length; its direction (so the angle) stays"),
    ("len_b", (0, LENGTH_TICKS), "Change b's length; its direction (so the angle) stays"),
    ("angle", (-180 * ANGLE_TICKS, 180 * ANGLE_TICKS), "Turn a about b; lengths stay"),
)


class VectorSliders(QWidget):
    """‖a‖, ‖b‖ and θ sliders.

    Signals: ``pressed`` / ``released`` (a slider drag starts / ends: its moves are one edit),
    ``moved(key, tick)`` for every value change (the panel ignores those of its own redraw).
    """

    pressed = Signal()
    released = Signal()
    moved = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)  # the panel's spacing, as when the row sat in its layout
        self.sliders: dict[str, QSlider] = {}
        self.names: dict[str, QLabel] = {}
        self.values: dict[str, QLabel] = {}
        for key, (lo, hi), tip in SPECS:
            name = QLabel()
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(lo, hi)
            slider.setToolTip(tip)
            slider.setMinimumWidth(70)
            value = QLabel()
            value.setMinimumWidth(46)
            slider.sliderPressed.connect(self.pressed)
            slider.sliderReleased.connect(self.released)
            slider.valueChanged.connect(lambda v, k=key: self.moved.emit(k, v))
            row.addWidget(name)
            row.addWidget(slider, 1)
            row.addWidget(value)
            self.sliders[key] = slider
            self.names[key] = name
            self.values[key] = value

    def refresh(self, rows: tuple[SliderRow, ...]) -> None:
        for r in rows:
            slider = self.sliders[r.key]
            slider.setEnabled(r.enabled)
            self.names[r.key].setText(r.name)
            if r.tick is not None:
                slider.setValue(r.tick)
            self.values[r.key].setText(join_text(r.shown))
