"""The one logarithmic slider, and the one temperature range every panel offers.

A temperature matters by ratio (T = 0.5 and T = 2 are equally far from 1), so the slider moves
in equal steps of log T; T = 1 sits in the middle of the scenario's whole range. ``LogScale`` is
the Qt-free mapping (unit-tested); ``LogSlider`` is a QSlider that speaks it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSlider, QWidget

from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE

__all__ = ["TEMPERATURE", "LogScale", "LogSlider"]


@dataclass(frozen=True)
class LogScale:
    """Integer positions ``0 .. steps`` spread evenly in log10 over ``[lo, hi]``.

    ``per_decade`` is fine enough (0.23 % a step at 1000) that a value of ``digits`` significant
    digits such as 0.25 or 4 comes back exactly from its own position.
    """

    lo: float
    hi: float
    per_decade: int = 1000
    digits: int = 3

    def __post_init__(self) -> None:
        if not (0 < self.lo < self.hi and math.isfinite(self.hi)):
            raise ValueError(f"a log scale needs 0 < lo < hi, got {self.lo} .. {self.hi}")

    @property
    def steps(self) -> int:
        return round(self.per_decade * math.log10(self.hi / self.lo))

    def value(self, position: int) -> float:
        """The value at a slider position, rounded to ``digits`` significant digits."""
        pos = min(max(int(position), 0), self.steps)
        v = 10.0 ** (math.log10(self.lo) + pos / self.per_decade)
        return min(max(float(f"{v:.{self.digits}g}"), self.lo), self.hi)

    def position(self, value: float) -> int:
        """The nearest slider position to ``value`` (clamped into the range)."""
        v = min(max(float(value), self.lo), self.hi)
        return min(max(round(self.per_decade * math.log10(v / self.lo)), 0), self.steps)


# The scenario accepts every temperature in this range, so every slider can reach all of it.
TEMPERATURE = LogScale(MIN_TEMPERATURE, MAX_TEMPERATURE)


class LogSlider(QSlider):
    """A horizontal slider over a :class:`LogScale` (the temperature range by default).

    ``valueChanged`` still carries the integer position; ``value_at`` turns it into the value,
    and ``show_value`` moves the handle to a value without any rounding of the value itself.
    """

    def __init__(self, scale: LogScale = TEMPERATURE, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.scale = scale
        self.setRange(0, scale.steps)
        # A page (click beside the handle, PgUp) is a tenth of a decade: about 26 %.
        self.setPageStep(max(scale.per_decade // 10, 1))
        self.setSingleStep(max(scale.per_decade // 100, 1))

    def value_at(self, position: int) -> float:
        return self.scale.value(position)

    def log_value(self) -> float:
        return self.scale.value(self.value())

    def show_value(self, value: float) -> None:
        self.setValue(self.scale.position(value))
