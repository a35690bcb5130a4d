"""The interventions tab: query angle, temperature, synthetic d, scaling, the mask, swapping two
values and replacing a key. Each gesture is a signal; the panel turns it into one edit.

A slider's drag id (``drag``, or -1 when it is not being dragged) lets the moves of one drag
merge into one undo step.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from attnsim.model.workbench import new_drag_id
from attnsim.panels.kit.log_slider import TEMPERATURE, LogSlider
from attnsim.panels.widgets import (
    FlowLayout,
    SignificantSpinBox,
    WholeNumberBox,
    compact_combo,
    group,
)
from attnsim.viewmodels.routing_lab import D_SLIDER_MAX, MAX_SYNTHETIC_D, ControlsView, d_position

from .parts import rich_label

NO_DRAG = -1


class Controls(QWidget):
    angle_moved = Signal(int, int)  # degrees, drag
    temperature_set = Signal(float, int)  # T, drag
    d_set = Signal(float, int)  # synthetic d, drag
    scale_toggled = Signal(bool)
    mask_toggled = Signal(int, bool)  # key, legal
    swap_requested = Signal(int, int, str, str)  # keys i, j and their labels
    replace_requested = Signal(int, str, str)  # key, its label, the typed vector
    refused = Signal(str)  # a number box refused what was typed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._slider_drag: dict[str, int] = {}
        self._key_texts: tuple[str, ...] = ()
        # A flow of small groups: they wrap in a narrow dock instead of widening the panel.
        col = QVBoxLayout(self)
        col.setContentsMargins(4, 3, 4, 2)
        col.setSpacing(2)
        flow = FlowLayout(h_spacing=14, v_spacing=3)
        col.addLayout(flow)

        self.angle_slider = self._slider(-180, 180, "angle")
        self.angle_slider.valueChanged.connect(
            lambda v: self.angle_moved.emit(v, self._drag_of("angle", self.angle_slider))
        )
        self.angle_slider.setToolTip("Rotate the query, keeping its length (edits Q only)")
        self.angle_label = QLabel()
        self.angle_label.setMinimumWidth(44)
        flow.addWidget(
            group(
                QLabel("Query angle"), self.angle_slider, self.angle_label, grow=self.angle_slider
            )
        )

        self.t_slider = self._slider(0, TEMPERATURE.steps, "t", LogSlider())
        self.t_slider.valueChanged.connect(
            lambda p: self.temperature_set.emit(
                self.t_slider.value_at(p), self._drag_of("t", self.t_slider)
            )
        )
        self.t_slider.setToolTip("Logits are divided by T: higher T, broader route, same ranking")
        self.t_spin = SignificantSpinBox(TEMPERATURE.lo, TEMPERATURE.hi)
        self.t_spin.refused.connect(lambda why: self.refused.emit(f"temperature: {why}"))
        self.t_spin.setMaximumWidth(76)
        self.t_spin.valueChanged.connect(lambda t: self.temperature_set.emit(float(t), NO_DRAG))
        flow.addWidget(
            group(QLabel("Temperature T"), self.t_slider, self.t_spin, grow=self.t_slider)
        )

        self.d_slider = self._slider(0, D_SLIDER_MAX, "d")
        self.d_slider.valueChanged.connect(
            lambda p: self.d_set.emit(float(2**p), self._drag_of("d", self.d_slider))
        )
        self.d_slider.setToolTip("Emulate a d-dimensional head: d = 1, 2, 4, … 4096")
        self.d_spin = WholeNumberBox(1, MAX_SYNTHETIC_D)
        self.d_spin.refused.connect(lambda why: self.refused.emit(f"synthetic d: {why}"))
        self.d_spin.setMaximumWidth(70)
        self.d_spin.valueChanged.connect(lambda d: self.d_set.emit(float(d), NO_DRAG))
        flow.addWidget(group(QLabel("Synthetic d"), self.d_slider, self.d_spin, grow=self.d_slider))
        self.scale_box = QCheckBox("divide by √d (scaling)")
        self.scale_box.setToolTip("The scenario's scale option: logits ÷ √d")
        self.scale_box.toggled.connect(self.scale_toggled)
        flow.addWidget(self.scale_box)

        mask_box = QWidget()
        mask_row = QHBoxLayout(mask_box)
        mask_row.setContentsMargins(0, 0, 0, 0)
        mask_row.setSpacing(4)
        mask_row.addWidget(QLabel("Legal keys:"))
        self.mask_holder = QHBoxLayout()
        mask_row.addLayout(self.mask_holder)
        self.mask_boxes: list[QCheckBox] = []
        flow.addWidget(mask_box)

        self.swap_a = compact_combo(QComboBox(), 3)
        self.swap_b = compact_combo(QComboBox(), 3)
        self.swap_button = QPushButton("Swap")
        self.swap_button.setToolTip("Exchange two values; the keys (the addresses) stay")
        self.swap_button.clicked.connect(self._swap_clicked)
        flow.addWidget(
            group(QLabel("Swap values"), self.swap_a, QLabel("↔"), self.swap_b, self.swap_button)
        )

        self.key_pick = compact_combo(QComboBox(), 3)
        self.key_pick.currentIndexChanged.connect(self._fill_key_edit)
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("x, y")
        self.key_edit.setToolTip("The new key vector, numbers separated by commas (or drag a key)")
        self.key_edit.setFixedWidth(110)
        self.key_edit.returnPressed.connect(self._replace_clicked)
        self.replace_button = QPushButton("Replace")
        self.replace_button.clicked.connect(self._replace_clicked)
        flow.addWidget(
            group(QLabel("Replace key"), self.key_pick, self.key_edit, self.replace_button)
        )

        self.d_note = rich_label()
        self.d_note.setStyleSheet("color: #444;")
        col.addWidget(self.d_note)
        self.message_label = rich_label()
        self.message_label.setStyleSheet("color: #b00020; font-weight: bold;")
        col.addWidget(self.message_label)
        col.addStretch(1)

    def _slider(self, lo: int, hi: int, name: str, s: QSlider | None = None) -> QSlider:
        s = QSlider(Qt.Orientation.Horizontal) if s is None else s
        s.setRange(lo, hi)
        s.setMinimumWidth(70)
        s.sliderPressed.connect(lambda: self._slider_drag.__setitem__(name, new_drag_id()))
        s.sliderReleased.connect(lambda: self._slider_drag.pop(name, None))
        return s

    def _drag_of(self, name: str, slider: QSlider) -> int:
        return self._slider_drag.get(name, NO_DRAG) if slider.isSliderDown() else NO_DRAG

    def _swap_clicked(self) -> None:
        a, b = self.swap_a, self.swap_b
        self.swap_requested.emit(
            a.currentIndex(), b.currentIndex(), a.currentText(), b.currentText()
        )

    def _replace_clicked(self) -> None:
        p = self.key_pick
        self.replace_requested.emit(p.currentIndex(), p.currentText(), self.key_edit.text())

    def _fill_key_edit(self) -> None:
        j = self.key_pick.currentIndex()
        if 0 <= j < len(self._key_texts):
            self.key_edit.setText(self._key_texts[j])

    def show_message(self, text: str) -> None:
        self.message_label.setText(text)

    def refresh(self, v: ControlsView) -> None:
        """Show the model's values; the panel calls this inside its ``updating()`` context, so
        the signals the writes fire do not become edits."""
        self._key_texts = v.key_texts
        self.angle_slider.setEnabled(v.angle is not None)
        if v.angle is not None:
            if not self.angle_slider.isSliderDown():
                self.angle_slider.setValue(round(v.angle))
            self.angle_label.setText(f"{v.angle:.1f}°")
        else:
            self.angle_label.setText("1-D")
        if not self.t_slider.isSliderDown():
            self.t_slider.show_value(v.temperature)
        self.t_spin.setValue(v.temperature)
        if not self.d_slider.isSliderDown():
            self.d_slider.setValue(d_position(v.d))
        self.d_spin.setValue(round(v.d))
        self.scale_box.setChecked(v.scale)
        labels = list(v.labels)
        for combo in (self.swap_a, self.swap_b, self.key_pick):
            if [combo.itemText(i) for i in range(combo.count())] != labels:
                keep = combo.currentIndex()
                with QSignalBlocker(combo):
                    combo.clear()
                    combo.addItems(labels)
                    combo.setCurrentIndex(min(max(keep, 0), len(labels) - 1))
        if self.swap_a.currentIndex() == self.swap_b.currentIndex() and len(labels) > 1:
            self.swap_b.setCurrentIndex((self.swap_a.currentIndex() + 1) % len(labels))
        if not self.key_edit.hasFocus():
            self._fill_key_edit()
        if len(self.mask_boxes) != len(labels) or any(
            b.text() != t for b, t in zip(self.mask_boxes, labels, strict=False)
        ):
            for b in self.mask_boxes:
                self.mask_holder.removeWidget(b)
                b.deleteLater()
            self.mask_boxes = []
            for j, t in enumerate(labels):
                b = QCheckBox(t)
                b.setToolTip(f"Untick to mask key {t} (a query must keep one legal key)")
                b.toggled.connect(lambda on, j=j: self.mask_toggled.emit(j, on))
                self.mask_holder.addWidget(b)
                self.mask_boxes.append(b)
        for b, legal in zip(self.mask_boxes, v.legal, strict=True):
            b.setChecked(legal)
        self.d_note.setText(v.d_note)
        self.message_label.setText(v.message)
