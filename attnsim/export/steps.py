"""A lab walked step by step for an animation: the kernel stepper's tiles (every key block of
every query block, as its Step button goes) and the linear memory's fill (S_1, S_2, ... S_n).
Qt-free. Written on the command line as ``--steps kernel`` or ``--steps memory``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from attnsim.engine.scenario import Scenario, compute

__all__ = ["MAX_TRAIN_STEPS", "STEPS", "LabSteps", "TrainingRun", "parse_training"]

STEPS = {"kernel": "kernel_lab", "memory": "linear_lab"}  # what is stepped -> its panel
STEP_NAMES = {"kernel": "the kernel stepper's steps", "memory": "the linear memory's fill",
              "training": "a training run"}  # fmt: skip
MAX_TRAIN_STEPS = 100_000
TRAINED = ("stepper", "induction_lab")  # the panels whose model a training run trains


@dataclass(frozen=True)
class LabSteps:
    """Every step of one lab (``kind``: one of :data:`STEPS`), from its start to its end."""

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in STEPS:
            raise ValueError(f"cannot step {self.kind!r}; step one of {', '.join(STEPS)}")

    @property
    def quantity(self) -> str:
        return self.kind

    @property
    def panel(self) -> str:
        """The panel that shows these steps."""
        return STEPS[self.kind]

    def states(self, sc: Scenario, state: object) -> list[tuple[object, str]]:
        """(lab state, caption) of every step, the lab's other settings as in ``state``."""
        logits = compute(sc).heads[0].logits
        n_q, n_k = logits.shape
        if self.kind == "kernel":
            bq, bk = state.block_q, state.block_k  # type: ignore[attr-defined]
            nqb, nkb = -(-n_q // bq), -(-n_k // bk)
            return [
                (dataclasses.replace(state, q_block=q, step=s),  # type: ignore[type-var]
                 f"query block {q + 1} of {nqb}: {s} of {nkb} key blocks folded in")
                for q in range(nqb) for s in range(nkb + 1)
            ]  # fmt: skip
        return [
            (dataclasses.replace(state, position=i),  # type: ignore[type-var]
             f"memory S_{i} after “{sc.tokens[i - 1]}” ({i} of {n_k})")
            for i in range(1, n_k + 1)
        ]  # fmt: skip


@dataclass(frozen=True)
class TrainingRun:
    """The training stepper's model trained from its start: a frame every ``every`` steps,
    ``frames`` frames (the first before any step)."""

    every: int
    frames: int
    panel: str = "stepper"  # or "induction_lab": the induction lab's model
    quantity = "training"

    def __post_init__(self) -> None:
        if self.panel not in TRAINED:
            raise ValueError(f"a training run shows in the {' or '.join(TRAINED)} panel")
        if not 1 <= self.every <= MAX_TRAIN_STEPS:
            raise ValueError(f"a frame every 1 to {MAX_TRAIN_STEPS} steps, got {self.every}")
        if not 2 <= self.frames <= 2000:
            raise ValueError(f"a training run has 2 to 2000 frames, got {self.frames}")
        if self.every * (self.frames - 1) > MAX_TRAIN_STEPS:
            raise ValueError(f"a training run takes at most {MAX_TRAIN_STEPS} steps")


def parse_training(text: str, panel: str = "stepper") -> TrainingRun:
    """``EVERY:FRAMES``: a frame every EVERY steps, FRAMES frames, of ``panel``'s model."""
    parts = text.strip().split(":")
    try:
        every, frames = (int(p) for p in parts)
    except ValueError:
        raise ValueError(
            f"a training run is written EVERY:FRAMES (whole numbers), got {text!r}"
        ) from None
    return TrainingRun(every, frames, panel if panel in TRAINED else "stepper")
