"""The training stepper's state: a Trainer, the stage being shown, and continuous training.

Training state is not scenario state: it is not undoable and not saved with the scenario. The
:class:`TrainingSession` owns a :class:`~attnsim.engine.training.Trainer`, the stage (1..8) the
stepper shows and the :class:`~attnsim.viewmodels.stepper.StepSnapshot` of the sentence being
followed; the stepper panel observes its signals. QtCore only (QObject, Signal, QTimer).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PySide6.QtCore import QObject, QTimer, Signal

from attnsim.engine.scenario import MAX_ABS_VALUE, Scenario
from attnsim.engine.training import MODELS, Dataset, ModelSpec, StepRecord, Trainer, forward
from attnsim.viewmodels.stepper import (
    N_STAGES,
    StepSnapshot,
    make_snapshot,
    parse_dataset,
    spec_with_dataset,
    trained_scenario,
)

SPEEDS = (1, 2, 5, 10, 20, 30, 60, 120, 300)  # steps per second offered by the speed control
FRAME_MS = 16  # the fastest timer tick; higher speeds take several steps per tick
# Learning rates above these are warned about (not refused: divergence is a lesson). Measured
# over 500 steps: sense-2d (SGD) learns at lr 2; at lr 3 its parameters pass 1e10 (step 10),
# at lr 4, 5 and 10 they pass 1e6 by step 7, 5 and 4 and reach NaN at step 12, 10 and 9. The
# Adam models never overflow, but biased stops learning above 0.1.
STABLE_LR = {"sgd": 2.0, "adam": 0.1}


@dataclass(frozen=True)
class Divergence:
    """Training stopped because update ``step`` diverged.

    ``loss`` is what the loss became ('inf' or 'nan') when the parameters or the loss went
    non-finite; else '' and ``largest`` is the parameter that left ±MAX_ABS_VALUE (such a
    model could not be a scenario either). The session keeps the parameters from before that
    update, so everything stays drawable.
    """

    step: int
    loss: str
    largest: float = math.nan

    def text(self) -> str:
        if self.loss:
            return f"diverged at step {self.step} (loss → {self.loss})"
        return (
            f"diverged at step {self.step} (parameters → {self.largest:.3g}, "
            f"beyond ±{MAX_ABS_VALUE:g})"
        )


def _optimizer_copy(optimizer: object) -> object:
    """An independent copy of an optimizer (SGD, Adam): its state is numbers and dicts of
    arrays that it updates in place; a deepcopy per step cost as much as the step."""
    own_copy = getattr(optimizer, "copy", None)
    if callable(own_copy):
        return own_copy()
    out = copy.copy(optimizer)
    for name, value in vars(optimizer).items():
        if isinstance(value, dict):
            setattr(out, name, {k: np.array(v, copy=True) for k, v in value.items()})
    return out


def _largest(params: dict[str, np.ndarray]) -> float:
    """The largest |parameter|; inf when any is infinite or NaN."""
    top = 0.0
    for v in params.values():
        m = float(np.abs(v).max(initial=0.0))  # NaN propagates through max
        if not math.isfinite(m):
            return math.inf
        top = max(top, m)
    return top


# The curves keep at most this many points: past it, the older half is thinned to every second
# point, so a run left playing for hours stays within a few MB and still draws its whole shape.
MAX_HISTORY_POINTS = 100_000


class _History:
    """Growing NumPy columns of the training history, so curves redraw without Python loops."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.n = 0
        self._step = np.zeros(256)
        self._loss = np.zeros(256)
        self._clue = np.zeros(256)
        self._sentence = np.zeros(256, dtype=np.intp)

    def extend(self, records: list[StepRecord]) -> None:
        while self.n and self.n + len(records) > MAX_HISTORY_POINTS:
            self._thin()
        need = self.n + len(records)
        if need > self._step.size:
            cap = max(need, 2 * self._step.size)
            for name in ("_step", "_loss", "_clue", "_sentence"):
                old = getattr(self, name)
                new = np.zeros(cap, dtype=old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)
        for i, r in enumerate(records, start=self.n):
            self._step[i] = r.step
            self._loss[i] = r.loss
            self._clue[i] = math.nan if r.clue_attention is None else r.clue_attention
            self._sentence[i] = r.sentence
        self.n = need

    def _thin(self) -> None:
        half = self.n // 2
        keep = np.concatenate([np.arange(0, half, 2), np.arange(half, self.n)])
        for name in ("_step", "_loss", "_clue", "_sentence"):
            col = getattr(self, name)
            col[: keep.size] = col[keep]
        self.n = int(keep.size)

    @property
    def step(self) -> NDArray[np.float64]:
        return self._step[: self.n]

    @property
    def loss(self) -> NDArray[np.float64]:
        return self._loss[: self.n]

    @property
    def clue(self) -> NDArray[np.float64]:
        return self._clue[: self.n]

    @property
    def sentence(self) -> NDArray[np.intp]:
        return self._sentence[: self.n]


class TrainingSession(QObject):
    """A training run shown one sentence and one stage at a time.

    Signals
    -------
    stage_changed(int)
        The stage shown (1..8) changed.
    snapshot_changed()
        The sentence being followed or its numbers changed (a new snapshot).
    params_changed()
        The live parameters changed (an update, training, reset, a new model).
    history_changed()
        Steps were added to, or the history was cleared.
    model_changed(str)
        A different model or dataset: vocabulary, width, classes may all differ.
    running_changed(bool)
        Continuous training started or stopped.
    diverged_changed()
        Training diverged (see :attr:`divergence`), or a reset / a good step cleared it.
    """

    stage_changed = Signal(int)
    snapshot_changed = Signal()
    params_changed = Signal()
    history_changed = Signal()
    model_changed = Signal(str)
    running_changed = Signal(bool)
    diverged_changed = Signal()

    def __init__(self, model: str = "sense-2d", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history = _History()
        self._stage = 1
        self._snapshot: StepSnapshot | None = None
        self._example = 0
        self._speed = 30
        self._last_tick: float | None = None
        self._owed = 0.0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)
        self._model_name = model
        self._divergence: Divergence | None = None
        self.trainer = Trainer(self._spec_named(model))

    @staticmethod
    def _spec_named(name: str) -> ModelSpec:
        if name not in MODELS:
            raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
        return MODELS[name]

    # ---- read ---------------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The base model (sense-2d, sense-8d, biased) whose architecture is trained."""
        return self._model_name

    @property
    def spec(self) -> ModelSpec:
        return self.trainer.spec

    @property
    def dataset(self) -> Dataset:
        return self.trainer.dataset

    @property
    def stage(self) -> int:
        return self._stage

    @property
    def example(self) -> int:
        """The sentence being followed (after an applied update: the one just trained on)."""
        return self._example

    @property
    def steps(self) -> int:
        return self.trainer.steps

    @property
    def lr(self) -> float:
        assert self.trainer.lr is not None
        return self.trainer.lr

    @property
    def divergence(self) -> Divergence | None:
        """Why training stopped, if the last update was refused for diverging."""
        return self._divergence

    def lr_warning(self, lr: float | None = None) -> str:
        """A warning for a learning rate that usually diverges with this optimizer ('' if none)."""
        lr = self.lr if lr is None else lr
        opt = self.spec.optimizer
        limit = STABLE_LR.get(opt, math.inf)
        if lr <= limit:
            return ""
        name = "SGD" if opt == "sgd" else "Adam"
        return f"lr {lr:g} is above {limit:g}: {name} steps this large usually diverge"

    @property
    def snapshot(self) -> StepSnapshot:
        """The followed sentence's forward pass, gradients and update (computed once)."""
        if self._snapshot is None:
            self._snapshot = make_snapshot(self.trainer, self._example)
        return self._snapshot

    @property
    def applied(self) -> bool:
        return self._snapshot is not None and self._snapshot.applied

    # ---- stages ----------------------------------------------------------------------------------
    def set_stage(self, stage: int) -> None:
        if not 1 <= stage <= N_STAGES:
            raise ValueError(f"stage must be 1..{N_STAGES}, got {stage}")
        if stage != self._stage:
            self._stage = stage
            self.stage_changed.emit(stage)

    def next_stage(self) -> None:
        self.set_stage(min(self._stage + 1, N_STAGES))

    def previous_stage(self) -> None:
        self.set_stage(max(self._stage - 1, 1))

    # ---- training actions ---------------------------------------------------------------------
    def _new_snapshot(self) -> None:
        self._snapshot = None
        self.snapshot_changed.emit()

    def _set_divergence(self, divergence: Divergence | None) -> None:
        if divergence != self._divergence:
            self._divergence = divergence
            self.diverged_changed.emit()

    def _guarded_step(self) -> StepRecord | None:
        """One optimizer step; None if it diverged (then the step is undone and training
        stops with :attr:`divergence` set)."""
        t = self.trainer
        saved = (
            {k: v.copy() for k, v in t.params.items()},
            _optimizer_copy(t.optimizer),
            t.example,
            t.steps,
            len(t.history),
        )
        loss, largest = "", 0.0
        with np.errstate(all="ignore"):  # overflow is detected below, not warned about
            try:
                t.apply_update()
            except (ValueError, FloatingPointError, OverflowError):
                loss = "nan"  # the forward pass refused non-finite numbers
            else:
                largest = _largest(t.params)
                after = t.history[-1].loss
                if not math.isfinite(largest) or not math.isfinite(after):
                    tokens, label = t.current()
                    try:
                        nxt = forward(t.params, t.dataset.encode(tokens), label).loss
                    except (ValueError, FloatingPointError, OverflowError):
                        nxt = math.nan
                    bad = after if not math.isfinite(after) else nxt
                    loss = "inf" if bad is not None and math.isinf(bad) else "nan"
        if loss or largest > MAX_ABS_VALUE:
            t.params, t.optimizer, t.example, t.steps, n = saved
            del t.history[n:]
            self._set_divergence(Divergence(t.steps + 1, loss, largest))
            self.pause()
            return None
        self._set_divergence(None)
        rec = t.history[-1]
        # The session's columns hold the history; the trainer's list of record objects would
        # grow by about half a kilobyte a step while Play runs.
        del t.history[:-1]
        return rec

    def apply_update(self) -> StepRecord | None:
        """Take the optimizer step on the followed sentence and show stage 8 (old, new, change).

        Returns None (and does nothing) if this sentence's update was already applied, or if
        it diverged (see :attr:`divergence`).
        """
        if self.applied:
            return None
        snap = self.snapshot
        if self.trainer.example != snap.example:  # the user picked another sentence
            self.trainer.example = snap.example
        rec = self._guarded_step()
        if rec is None:
            return None
        self._snapshot = snap.with_applied(self.trainer.params)
        self.history.extend([rec])
        self.set_stage(N_STAGES)
        self.snapshot_changed.emit()
        self.params_changed.emit()
        self.history_changed.emit()
        return rec

    def next_sentence(self) -> None:
        """Follow the next example (with the current parameters), from stage 1."""
        if self.applied:
            # apply_update already moved the trainer on to the next example.
            self._example = self.trainer.example
        else:
            self.trainer.next_sentence()
            self._example = self.trainer.example
        self.set_stage(1)
        self._new_snapshot()

    def choose_sentence(self, index: int) -> None:
        n = len(self.dataset.sentences)
        if not 0 <= index < n:
            raise ValueError(f"no sentence {index + 1}; the dataset has {n}")
        if index == self._example and not self.applied:
            return
        self.trainer.example = index
        self._example = index
        if self._stage == N_STAGES and self.applied:
            self.set_stage(1)
        self._new_snapshot()

    def train(self, steps: int) -> list[StepRecord]:
        """``steps`` optimizer steps, cycling through the examples from the next one due.

        A step that makes the parameters or the loss non-finite is undone and ends the run:
        play stops, :attr:`divergence` says where, and the steps before it are kept.
        """
        if steps < 1:
            return []
        records = []
        for _ in range(int(steps)):
            rec = self._guarded_step()
            if rec is None:
                break
            records.append(rec)
        if not records:
            return []
        self.history.extend(records)
        self._example = self.trainer.example
        self._new_snapshot()
        self.params_changed.emit()
        self.history_changed.emit()
        return records

    def reset(self) -> None:
        """Back to the same initial parameters (bit for bit), a fresh optimizer, sentence 1."""
        self.pause()
        self.trainer.reset()
        self._set_divergence(None)
        self.history.clear()
        self._example = 0
        self.set_stage(1)
        self._new_snapshot()
        self.params_changed.emit()
        self.history_changed.emit()

    def set_lr(self, lr: float) -> None:
        """A new learning rate for the following steps (raises ValueError if not > 0)."""
        if lr == self.lr:
            return
        self.trainer.set_lr(lr)
        if not self.applied:
            self._new_snapshot()  # the previewed update depends on the rate

    def set_model(self, name: str) -> None:
        """Switch to a named model (its own dataset, width, optimizer and learning rate)."""
        spec = self._spec_named(name)
        self._model_name = name
        self._install(Trainer(spec))

    def set_dataset(self, dataset: Dataset) -> None:
        """Train the current model's architecture and optimizer on another dataset."""
        base = self._spec_named(self._model_name)
        self._install(Trainer(spec_with_dataset(base, dataset, self.lr)))

    def set_dataset_text(self, text: str) -> Dataset:
        """Parse the editor's text and train on it; raises DatasetError naming the bad line."""
        ds = parse_dataset(text)
        self.set_dataset(ds)
        return ds

    def _install(self, trainer: Trainer) -> None:
        self.pause()
        self.trainer = trainer
        self._set_divergence(None)
        self.history.clear()
        self._example = 0
        self._stage = 1
        self._snapshot = None
        self.model_changed.emit(trainer.spec.name)
        self.stage_changed.emit(1)
        self.snapshot_changed.emit()
        self.params_changed.emit()
        self.history_changed.emit()

    # ---- to the workbench ---------------------------------------------------------------------
    def scenario(self) -> Scenario:
        """The trained head on the followed sentence, as a token scenario (current parameters)."""
        tokens, _ = self.dataset.sentences[self._example]
        return trained_scenario(
            self.trainer.params, self.dataset, tokens, self.spec.name, self.trainer.steps
        )

    # ---- continuous training ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._timer.isActive()

    @property
    def speed(self) -> int:
        return self._speed

    def steps_per_tick(self) -> tuple[int, int]:
        """(timer interval in ms, steps per tick) for the current speed."""
        interval = max(FRAME_MS, round(1000 / self._speed))
        per_tick = max(1, round(self._speed * interval / 1000))
        return interval, per_tick

    def set_speed(self, steps_per_second: int) -> None:
        if steps_per_second < 1:
            raise ValueError(f"speed must be at least 1 step per second, got {steps_per_second}")
        self._speed = int(steps_per_second)
        if self.running:
            self._timer.setInterval(self.steps_per_tick()[0])

    def play(self) -> None:
        if not self.running:
            self._last_tick = None
            self._owed = 0.0
            self._timer.start(self.steps_per_tick()[0])
            self.running_changed.emit(True)

    def pause(self) -> None:
        if self.running:
            self._timer.stop()
            self.running_changed.emit(False)

    def toggle_play(self) -> None:
        self.pause() if self.running else self.play()

    def _tick(self) -> None:
        # Train as many steps as the elapsed time owes at the chosen speed, so the speed holds
        # even when a redraw makes a tick late (at most a fifth of a second's worth at once).
        now = time.perf_counter()
        elapsed = now - self._last_tick if self._last_tick is not None else 0.0
        self._last_tick = now
        self._owed += min(elapsed, 0.2) * self._speed if elapsed else self.steps_per_tick()[1]
        # At least one step per tick keeps the motion even; rounding carries the remainder.
        n = max(1, round(self._owed))
        self._owed = max(self._owed - n, -1.0)
        self.train(n)
