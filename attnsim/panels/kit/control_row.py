"""``ControlRow``: a lab's controls built from its settings declaration
(:class:`attnsim.engine.settings.LabSettings`), in a flow that wraps in a narrow dock.

Each named setting gets the control its kind asks for: a combo for a choice, a check box for a
flag, a number box for a whole or real number, or, when listed in ``sliders``, a slider with its
value beside it (on a line of its own when listed in ``lines``, its label level with the other
lines'). The row reports ``setting(name, value)`` with the value as the state stores it (the
choice itself, never its index; the display offset taken off), ``pressed(name)`` and
``released(name)`` around a slider drag so that the lab merges the drag into one undo step, and
``refused(reason)`` when a box refuses what was typed, the reason prefixed with the setting's
label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSlider, QVBoxLayout, QWidget

from attnsim.engine.settings import LabSettings, Setting

from .flow_layout import FlowLayout, group
from .number_boxes import SignificantSpinBox, WholeNumberBox

__all__ = ["ControlRow"]

WIDE = 10**6  # a number box takes at least -WIDE .. WIDE (see ControlRow._box)


class ControlRow(QWidget):
    """The controls of ``names`` (settings of ``settings``), left to right.

    ``sliders``: whole settings drawn as a slider; ``lines``: those of them on a line of their
    own below the flow; ``boxed``: sliders that also get a number box; ``combos``: whole
    settings (an index) chosen from items the lab sets with :meth:`set_items`. The widgets are
    in ``combos``, ``checks``, ``boxes``, ``sliders`` (with ``values``, their value labels) and
    ``parts`` (what holds each setting's label and control, to hide it whole).
    """

    setting = Signal(str, object)
    pressed = Signal(str)
    released = Signal(str)
    refused = Signal(str)

    def __init__(
        self,
        settings: LabSettings,
        names: Sequence[str],
        *,
        sliders: Sequence[str] = (),
        lines: Sequence[str] = (),
        boxed: Sequence[str] = (),
        combos: Sequence[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.names = tuple(names)
        self.combos: dict[str, QComboBox] = {}
        self.checks: dict[str, QCheckBox] = {}
        self.boxes: dict[str, WholeNumberBox | SignificantSpinBox] = {}
        self.sliders: dict[str, QSlider] = {}
        self.values: dict[str, QLabel] = {}
        self.parts: dict[str, QWidget] = {}
        self.rows = QVBoxLayout(self)
        self.rows.setContentsMargins(0, 0, 0, 0)
        self.rows.setSpacing(2)
        holder = QWidget()
        self.flow = FlowLayout(holder, h_spacing=8, v_spacing=2)
        self.rows.addWidget(holder)
        on_lines = [n for n in lines if n in sliders]
        fm = QFontMetricsF(self.font())
        label_w = max((fm.horizontalAdvance(settings[n].label) for n in on_lines), default=0.0)
        for name in self.names:
            s = settings[name]
            if name in sliders:
                part = self._slider(s, name in boxed)
            elif name in combos:
                part = self._combo(s, ())
            else:
                part = self._control(s)
            if s.tip:
                for w in (part, *part.findChildren(QWidget)):
                    w.setToolTip(s.tip)
            self.parts[name] = part
            if name in on_lines:
                part.layout().itemAt(0).widget().setMinimumWidth(round(label_w) + 2)
                self.rows.addWidget(part)
            else:
                self.flow.addWidget(part)

    # ---- building -----------------------------------------------------------------------------
    def _control(self, s: Setting) -> QWidget:
        if s.kind == "choice":
            return self._combo(s, s.names or tuple(str(c) for c in s.choices))
        if s.kind == "flag":
            check = QCheckBox(s.label)
            check.toggled.connect(lambda on, n=s.name: self.setting.emit(n, bool(on)))
            self.checks[s.name] = check
            return check
        return group(QLabel(s.label), self._box(s), spacing=4)

    def _combo(self, s: Setting, items: Sequence[str]) -> QWidget:
        combo = QComboBox()
        combo.addItems(list(items))
        combo.currentIndexChanged.connect(lambda i, s=s: self._chosen(s, i))
        self.combos[s.name] = combo
        return group(QLabel(s.label), combo, spacing=4)

    def _chosen(self, s: Setting, i: int) -> None:
        if i < 0:
            return
        self.setting.emit(s.name, s.choices[i] if s.kind == "choice" else i - s.offset)

    def _box(self, s: Setting) -> WholeNumberBox | SignificantSpinBox:
        # The box takes more than the declared range, so that a number typed outside it
        # reaches the lab, which refuses it in the one wording (the box itself refuses only
        # what is no number); it is as wide as the declared range needs.
        lo, hi = (b if isinstance(b, int | float) else WIDE for b in (s.lo, s.hi))
        lo = -WIDE if not isinstance(s.lo, int | float) else lo
        if s.kind == "real":
            box: Any = SignificantSpinBox(float(lo), float(hi))
            box.valueChanged.connect(lambda v, n=s.name: self.setting.emit(n, float(v)))
        else:
            box = WholeNumberBox(int(lo) + s.offset, int(hi) + s.offset)
            box.valueChanged.connect(
                lambda v, n=s.name, off=s.offset: self.setting.emit(n, int(v) - off)
            )
        box.setMaximumWidth(box.sizeHint().width())
        box.setRange(min(box.minimum(), -WIDE), max(box.maximum(), WIDE))
        box.refused.connect(lambda why, label=s.label: self.refused.emit(f"{label}: {why}"))
        self.boxes[s.name] = box
        return box

    def _slider(self, s: Setting, boxed: bool) -> QWidget:
        slider = QSlider(Qt.Orientation.Horizontal)
        slider.setObjectName(f"{s.name}-slider")
        slider.setMinimumWidth(60)
        lo, hi = (b if isinstance(b, int | float) else 0 for b in (s.lo, s.hi))
        slider.setRange(int(lo) + s.offset, int(hi) + s.offset)
        slider.valueChanged.connect(
            lambda v, n=s.name, off=s.offset: self.setting.emit(n, int(v) - off)
        )
        slider.sliderPressed.connect(lambda n=s.name: self.pressed.emit(n))
        slider.sliderReleased.connect(lambda n=s.name: self.released.emit(n))
        value = QLabel("0")
        value.setMinimumWidth(30)
        self.sliders[s.name], self.values[s.name] = slider, value
        parts: list[QWidget] = [QLabel(s.label), slider, value]
        if boxed:
            parts[2:] = [self._box(s)]
        return group(*parts, spacing=4, grow=slider)

    # ---- showing the lab's values -------------------------------------------------------------
    def set_items(self, name: str, items: Sequence[str]) -> None:
        """The items of the combo of ``name`` (rebuilt only when they changed)."""
        combo = self.combos[name]
        if [combo.itemText(i) for i in range(combo.count())] != list(items):
            combo.clear()
            combo.addItems(list(items))

    def refresh(
        self,
        state: Any,
        ranges: dict[str, tuple[float, float]] | None = None,
        values: dict[str, object] | None = None,
    ) -> None:
        """Show ``state``'s values (``values`` overrides some, e.g. clamped to the scenario).
        Sliders span the declared ranges; ``ranges`` (as stored) overrides some, for sliders
        and boxes alike (a bound of the scenario's). A slider the mouse holds stays where it
        is. Call it inside the lab's "updating" context."""
        ranges, values = ranges or {}, values or {}
        for name in self.names:
            s = self.settings[name]
            v = values.get(name, getattr(state, name))
            if s.kind == "choice":
                self.combos[name].setCurrentIndex(s.choices.index(v) if v in s.choices else -1)
                continue
            if s.kind == "flag":
                self.checks[name].setChecked(bool(v))
                continue
            lo, hi = ranges.get(name) or s.bounds(state)
            off = s.offset
            if name in self.combos:
                self.combos[name].setCurrentIndex(int(v) + off)  # type: ignore[call-overload]
            box = self.boxes.get(name)
            if box is not None:
                if name in ranges:  # a bound of the scenario's, which the box keeps
                    box.setRange(lo + off, hi + off)
                box.setValue(v + off)  # type: ignore[operator]
            slider = self.sliders.get(name)
            if slider is not None:
                if not slider.isSliderDown():
                    slider.setRange(int(lo) + off, int(hi) + off)
                    slider.setValue(int(v) + off)  # type: ignore[call-overload]
                self.values[name].setText(s.shown(v))

    def set_enabled(self, name: str, on: bool) -> None:
        """Enable or grey out the controls of ``name``."""
        for w in self.parts[name].findChildren(QWidget) or [self.parts[name]]:
            w.setEnabled(on)
        self.parts[name].setEnabled(on)
