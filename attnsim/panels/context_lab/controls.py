"""The lab's settings: the kind of distractor, the k slider, K, and the noise and seed of the
noisy copies."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QSlider, QWidget

from attnsim.views.context_lab import K_LIMIT, KIND_NAMES, KINDS, NOISE_MAX, SEED_MAX

from ..kit.flow_layout import FlowLayout, group
from ..kit.number_boxes import SignificantSpinBox, WholeNumberBox

FIELD_NAMES = {"k_max": "K", "noise": "noise", "seed": "seed"}


class ContextControls(QWidget):
    """Reports ``setting(name, value)`` with the state's field names (``kind`` as an index into
    KINDS); the k slider reports ``slider_pressed()``, ``slider_moved(k)`` and
    ``slider_released()`` so that a drag can merge into one edit; ``refused(reason)`` names the
    box that refused what was typed."""

    setting = Signal(str, object)
    slider_pressed = Signal()
    slider_moved = Signal(int)
    slider_released = Signal()
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        flow = FlowLayout(self, h_spacing=8, v_spacing=2)
        flow.setContentsMargins(0, 0, 0, 0)
        self.kind_combo = QComboBox()
        self.kind_combo.addItems([KIND_NAMES[k] for k in KINDS])
        self.kind_combo.setToolTip(
            "What is inserted k times into the receiving query's context: noisy copies of its "
            "best key, a long key pointing elsewhere (both carry a zero value), the fact itself "
            "(key and value), or a later fact with the same key and another value"
        )
        self.kind_combo.currentIndexChanged.connect(lambda i: self.setting.emit("kind", i))
        flow.addWidget(group(QLabel("insert"), self.kind_combo, spacing=4))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("context_lab-k")
        self.slider.setRange(0, 32)
        self.slider.setMinimumWidth(120)
        self.slider.setToolTip("How many distractors the bars show (marked on both plots)")
        self.slider.valueChanged.connect(lambda v: self.slider_moved.emit(int(v)))
        self.slider.sliderPressed.connect(self.slider_pressed)
        self.slider.sliderReleased.connect(self.slider_released)
        self.k_value = QLabel("0")
        self.k_value.setMinimumWidth(26)
        flow.addWidget(group(QLabel("k"), self.slider, self.k_value, spacing=4, grow=self.slider))
        self.k_max_box = WholeNumberBox(1, K_LIMIT)
        self.k_max_box.setToolTip(f"K: the sweep runs over k = 0 .. K (at most {K_LIMIT})")
        self.noise_box = SignificantSpinBox(0.0, NOISE_MAX, digits=3)
        self.noise_box.setToolTip(
            "Noise of the noisy copies, relative to the best key's length: each copy is "
            "k_b + noise·|k_b|·z/√d_k with z standard normal"
        )
        self.seed_box = WholeNumberBox(0, SEED_MAX)
        self.seed_box.setToolTip("The noisy copies are drawn from this seed, the same every time")
        self.boxes = {"k_max": self.k_max_box, "noise": self.noise_box, "seed": self.seed_box}
        for name, box in self.boxes.items():
            whole = name != "noise"
            box.valueChanged.connect(
                lambda v, n=name, w=whole: self.setting.emit(n, int(v) if w else float(v))
            )
            box.refused.connect(lambda r, n=name: self.refused.emit(f"{FIELD_NAMES[n]}: {r}"))
            flow.addWidget(group(QLabel(FIELD_NAMES[name]), box, spacing=4))

    def refresh(self, kind: str, k: int, k_max: int, noise: float, seed: int, held: bool) -> None:
        """Show the settings; the slider stays where the mouse holds it when ``held``."""
        self.kind_combo.setCurrentIndex(KINDS.index(kind))
        if not held:
            self.slider.setRange(0, k_max)
            self.slider.setValue(k)
        self.k_value.setText(str(k))
        self.k_max_box.setValue(k_max)
        self.noise_box.setValue(noise)
        self.seed_box.setValue(seed)
        noisy = kind == "noisy"
        self.noise_box.setEnabled(noisy)
        self.seed_box.setEnabled(noisy)
