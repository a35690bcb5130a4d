"""What a lesson reads from and sets in a lab: the induction lab's measured scores and losses,
which heads it removes, and how far its model is trained. No Qt.

A lesson's state is its scenario and a :class:`Labs`: the induction lab's settings and the
number of training steps its model has taken from the seed's start. In the app the lab's own
state and training session stand behind it; headless (``attnsim lesson solve``), the model is
trained here, deterministically from its seed, to the steps the lesson asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache

from attnsim.engine.induction import Array, InductionTrainer, config_of
from attnsim.viewmodels.induction_lab import (
    BOS,
    PRESETS,
    READINGS,
    InductionLabState,
    preset_params,
    readings,
)

__all__ = [
    "LAB_QUANTITIES", "MAX_TRAIN_STEPS", "Labs", "induction_shape", "lab_values", "trained_params",
]  # fmt: skip

# name -> how it reads in a sentence (the names are the view-model's READINGS)
LAB_QUANTITIES: dict[str, str] = {
    "induction_score": "the best induction score in layer 1 or later",
    "previous_token_score": "the best previous-token score",
    "repeated_loss": "the loss on the repeated half",
    "first_loss": "the loss on the first half",
    "heads_removed": "the heads removed",
}
assert tuple(LAB_QUANTITIES) == READINGS
INDUCTION_PRESETS = PRESETS  # the lab's models a lesson may choose
MAX_TRAIN_STEPS = 5000  # one "train" edit: about 45 s here; Play trains on without limit


@dataclass(frozen=True)
class Labs:
    """The labs as a lesson sees them: the induction lab's settings and its training steps."""

    induction: InductionLabState = field(default_factory=InductionLabState)
    trained: int = 0

    def with_ablated(self, heads: tuple[tuple[int, int], ...]) -> Labs:
        return replace(self, induction=replace(self.induction, ablated=heads))


def induction_shape(state: InductionLabState) -> tuple[int, int]:
    """The induction lab's model as (layers, heads per layer)."""
    fixed = preset_params(state)
    if fixed is None:
        return state.n_layers, state.n_heads
    cfg = config_of(fixed)
    return cfg.n_layers, cfg.n_heads


@lru_cache(maxsize=4)
def _trained(state: InductionLabState, steps: int) -> Mapping[str, Array]:
    trainer = InductionTrainer(
        state.config(), seed=state.seed, lr=state.lr, half_len=state.half_len, bos=BOS
    )
    for _ in range(steps):
        trainer.step()
    return {k: v.copy() for k, v in trainer.params.items()}


def trained_params(state: InductionLabState, steps: int) -> Mapping[str, Array]:
    """The lab's "train" model after ``steps`` steps from its seed (the session's training,
    step for step)."""
    plain = replace(state, preset="train", ablated=(), ablation_mode="zero")
    return _trained(plain, steps)


def lab_values(labs: Labs, params: Mapping[str, Array] | None = None) -> dict[str, float]:
    """Every lab quantity for ``labs``: with ``params`` (the app's training session's weights)
    or, without, the preset's weights or the model trained here to ``labs.trained`` steps."""
    state = labs.induction
    if params is None:
        fixed = preset_params(state)
        params = fixed if fixed is not None else trained_params(state, labs.trained)
    return readings(params, state)
