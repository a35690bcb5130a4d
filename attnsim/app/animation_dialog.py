"""The Export animation dialog (File ▸ Export animation…): which panel, what to sweep and over
what range, how many frames, the format, frames per second, size, hold and caption.

The quantities are those of :mod:`attnsim.export.sweeps`; the formats the registered animation
formats (:mod:`attnsim.export.animation`). A range the scenario cannot take is refused on the
dialog's own line, in a sentence, and the dialog stays open.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.scenario import Scenario
from attnsim.export.animation import MAX_FPS, animation_exporters
from attnsim.export.history import HistoryReplay
from attnsim.export.steps import MAX_TRAIN_STEPS, STEPS, TRAINED, LabSteps, TrainingRun
from attnsim.export.sweeps import MAX_FRAMES, Sweep

__all__ = ["QUANTITY_NAMES", "AnimationChoice", "AnimationDialog"]

QUANTITY_NAMES = {
    "temperature": "Temperature (log steps)",
    "scale": "Score scale: every score multiplied by it before the softmax (log steps)",
    "vector": "A coordinate of a token's vector",
    "wq": "A coefficient of the query map Wq",
    "k": "Distractor keys (long-context lab)",
    "kernel": "The kernel stepper's steps",
    "memory": "The linear memory's fill",
    "training": "A training run (training stepper, induction heads)",
    "history": "The undo history, step by step",
    "recording": "The recording (File ▸ Record for an animation)",
}
_DEFAULT_RANGE = {"temperature": (0.1, 10.0), "scale": (0.1, 5.0), "vector": (-1.0, 1.0),
                  "wq": (-1.0, 1.0), "k": (0.0, 32.0)}  # fmt: skip
_LAB_PANELS = {
    "k": "context_lab",
    "training": "stepper",
    **STEPS,
}  # a lab's quantity: the one panel that shows it


@dataclass(frozen=True)
class AnimationChoice:
    panel_id: str
    sweep: Sweep | LabSteps | TrainingRun | HistoryReplay
    fmt: str
    fps: float
    size: tuple[int, int]
    hold: float
    caption: bool


def _spin(lo: float, hi: float, value: float, decimals: int = 3) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setDecimals(decimals)
    box.setValue(value)
    return box


def _whole(lo: int, hi: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    return box


class AnimationDialog(QDialog):
    """Pick a panel (``panels``: id -> title) and a sweep of ``scenario`` to animate."""

    def __init__(self, panels: dict[str, str], default: str, scenario: Scenario,
                 parent: QWidget | None = None, *, history: HistoryReplay | None = None,
                 recording: HistoryReplay | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Export animation")
        self.scenario = scenario
        # the window's undo history and its recording (None: nothing to replay)
        self.replays = {"history": history, "recording": recording}
        form = QFormLayout()
        self.panel_box = QComboBox()
        for pid, title in panels.items():
            self.panel_box.addItem(title, pid)
        self.panel_box.setCurrentIndex(max(0, self.panel_box.findData(default)))
        form.addRow("Panel", self.panel_box)
        self.quantity_box = QComboBox()
        tokens = scenario.mode == "tokens"
        for q, name in QUANTITY_NAMES.items():
            if (tokens or q not in ("vector", "wq")) and self.replays.get(q, True) is not None:
                self.quantity_box.addItem(name, q)
        form.addRow("Sweep", self.quantity_box)
        where = QHBoxLayout()
        self.token_box, self.axis_box = QComboBox(), QComboBox()
        self.head_box = _whole(1, max(1, len(scenario.heads)), 1)
        self.row_box, self.col_box = QComboBox(), QComboBox()
        if tokens:
            self.token_box.addItems(list(scenario.tokens))
            self.axis_box.addItems(_names(scenario.axes, scenario.d))
            rows, cols = scenario.heads[0].Wq.shape
            self.row_box.addItems(_names(scenario.axes, rows))
            self.col_box.addItems(_names(scenario.qk_axes, cols))
        self._where = {"vector": (self.token_box, self.axis_box),
                       "wq": (self.head_box, self.row_box, self.col_box)}  # fmt: skip
        for box in (self.token_box, self.axis_box, self.head_box, self.row_box, self.col_box):
            where.addWidget(box)
        form.addRow("Which", where)
        span = QHBoxLayout()
        self.start_box, self.end_box = _spin(-1e3, 1e3, 0.1), _spin(-1e3, 1e3, 10.0)
        span.addWidget(self.start_box)
        span.addWidget(QLabel("to"))
        span.addWidget(self.end_box)
        form.addRow("From", span)
        frames = QHBoxLayout()
        self.frames_box = _whole(2, MAX_FRAMES, 60)
        self.every_box = _whole(1, MAX_TRAIN_STEPS, 10)
        self.every_box.setPrefix("one every ")
        self.every_box.setSuffix(" training steps")
        frames.addWidget(self.frames_box)
        frames.addWidget(self.every_box)
        form.addRow("Frames", frames)
        self.format_box = QComboBox()
        for exp in animation_exporters():
            self.format_box.addItem(f"{exp.label}: {exp.description}", exp.name)
        form.addRow("Format", self.format_box)
        self.fps_box = _spin(1, MAX_FPS, 12, 1)
        form.addRow("Frames a second", self.fps_box)
        size = QHBoxLayout()
        self.width_box, self.height_box = _whole(100, 8000, 800), _whole(100, 8000, 600)
        size.addWidget(self.width_box)
        size.addWidget(QLabel("×"))
        size.addWidget(self.height_box)
        form.addRow("Size (pixels)", size)
        self.hold_box = _spin(0, 60, 1.0, 1)
        self.hold_box.setSuffix(" s")
        form.addRow("Hold the last frame", self.hold_box)
        self.caption_box = QCheckBox("Write the swept value on each frame (T = 0.25)")
        self.caption_box.setChecked(True)
        form.addRow("", self.caption_box)
        v = QVBoxLayout(self)
        v.addLayout(form)
        self.refusal = QLabel("")
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #b00020")
        v.addWidget(self.refusal)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        v.addWidget(buttons)
        self.quantity_box.currentIndexChanged.connect(self._quantity_changed)
        self._quantity_changed()

    def _quantity_changed(self) -> None:
        q = self.quantity_box.currentData()
        for name, boxes in self._where.items():
            for box in boxes:
                box.setVisible(name == q)
        stepped = q in STEPS  # every step of a lab: no range, the lab says how many
        for box in (self.start_box, self.end_box):
            box.setEnabled(not stepped and q != "training" and q not in self.replays)
        self.frames_box.setEnabled(not stepped and q not in self.replays)
        self.every_box.setVisible(q == "training")
        if q == "training":
            self.frames_box.setValue(31)
        elif q in self.replays:
            self.frames_box.setValue(self.replays[q].frames)  # type: ignore[union-attr]
        elif not stepped:
            start, end = _DEFAULT_RANGE[q]
            self.start_box.setValue(start)
            self.end_box.setValue(end)
            self.frames_box.setValue(int(end - start) + 1 if q == "k" else 60)
        if q in _LAB_PANELS:
            found = self.panel_box.findData(_LAB_PANELS[q])
            if found >= 0:
                self.panel_box.setCurrentIndex(found)

    def sweep(self) -> Sweep | LabSteps | TrainingRun | HistoryReplay:
        """The sweep the dialog shows; ValueError (a sentence) if the scenario cannot take it."""
        q = self.quantity_box.currentData()
        if q in self.replays:
            return self.replays[q]  # type: ignore[return-value]
        if q == "training":
            panel = self.panel_box.currentData()
            if panel not in TRAINED:
                raise ValueError(
                    "A training run shows in the training stepper or the induction heads panel."
                )
            return TrainingRun(self.every_box.value(), self.frames_box.value(), panel)
        if q in STEPS:
            if STEPS[q] != self.panel_box.currentData():
                raise ValueError(f"{QUANTITY_NAMES[q]} show only in their own lab's panel.")
            return LabSteps(q)
        where: tuple[int, ...] = ()
        if q == "vector":
            where = (self.token_box.currentIndex(), self.axis_box.currentIndex())
        elif q == "wq":
            where = (self.head_box.value() - 1, self.row_box.currentIndex(),
                     self.col_box.currentIndex())  # fmt: skip
        sweep = Sweep(q, self.start_box.value(), self.end_box.value(), self.frames_box.value(),
                      where)  # fmt: skip
        sweep.check(self.scenario)
        if sweep.panel is not None and sweep.panel != self.panel_box.currentData():
            raise ValueError("The distractor keys show only in the long-context stability panel.")
        return sweep

    def choice(self) -> AnimationChoice:
        return AnimationChoice(
            panel_id=self.panel_box.currentData(),
            sweep=self.sweep(),
            fmt=self.format_box.currentData(),
            fps=self.fps_box.value(),
            size=(self.width_box.value(), self.height_box.value()),
            hold=self.hold_box.value(),
            caption=self.caption_box.isChecked(),
        )

    def accept(self) -> None:
        try:
            self.sweep()
        except ValueError as exc:
            text = str(exc)
            self.refusal.setText(text[:1].upper() + text[1:])
            return
        self.refusal.setText("")
        super().accept()


def _names(names: tuple[str, ...], count: int) -> list[str]:
    return [names[i] if i < len(names) else f"axis {i + 1}" for i in range(count)]
