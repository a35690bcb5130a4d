"""One sentence followed from lookup to the update, frozen: :class:`StepSnapshot`.

Pure NumPy on top of :mod:`attnsim.engine.training`: a snapshot freezes one forward pass, its
gradients and the optimizer's update (previewed on copies, so the live parameters do not change
until the update is applied).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnsim.engine.training import PARAM_NAMES, ForwardTrace, Params, Trainer, backward, forward

STAGES = (
    "Sentence",
    "Lookup",
    "Q / K / V",
    "Mixture",
    "Prediction",
    "Loss",
    "Gradients",
    "Update",
)
N_STAGES = len(STAGES)

__all__ = ["N_STAGES", "STAGES", "StepSnapshot", "absent_words", "make_snapshot"]


def _frozen_params(params: Params) -> Params:
    out = {}
    for k in PARAM_NAMES:
        a = np.array(params[k], dtype=np.float64, copy=True)
        a.flags.writeable = False
        out[k] = a
    return out


@dataclass(frozen=True, eq=False)
class StepSnapshot:
    """One sentence followed from lookup to the update.

    ``params`` are the parameters the forward pass used (read-only copies), ``trace`` the
    forward pass, ``grads`` the gradient of every parameter group (same shapes as ``params``),
    ``new_params`` the parameters after the optimizer's step. ``applied`` says whether that step
    has been taken on the live parameters (False: it is a preview computed on copies).
    """

    example: int
    tokens: tuple[str, ...]
    label: int
    vocab: tuple[str, ...]
    classes: tuple[str, ...]
    params: Params
    trace: ForwardTrace
    grads: Params
    new_params: Params
    applied: bool
    optimizer: str
    lr: float
    step: int

    @property
    def loss(self) -> float:
        assert self.trace.loss is not None
        return self.trace.loss

    @property
    def d(self) -> int:
        return int(self.params["emb"].shape[1])

    @property
    def delta(self) -> Params:
        """``new_params - params`` for every group."""
        return {k: self.new_params[k] - self.params[k] for k in PARAM_NAMES}

    def absent(self) -> list[str]:
        return absent_words(self.vocab, self.tokens)

    def with_applied(self, new_params: Params) -> StepSnapshot:
        return StepSnapshot(
            self.example, self.tokens, self.label, self.vocab, self.classes, self.params,
            self.trace, self.grads, _frozen_params(new_params), True, self.optimizer, self.lr,
            self.step,
        )  # fmt: skip


def absent_words(vocab: Sequence[str], tokens: Sequence[str]) -> list[str]:
    """Vocabulary words that do not occur in ``tokens`` (their embedding gradient is zero)."""
    used = set(tokens)
    return [w for w in vocab if w not in used]


def make_snapshot(trainer: Trainer, example: int | None = None) -> StepSnapshot:
    """Forward pass, gradients and a preview of the optimizer's step for one example.

    The preview runs a deep copy of the optimizer on copies of the parameters, so neither the
    trainer's parameters nor its optimizer state change; applying the update later with
    ``trainer.apply_update()`` on the same example gives the same numbers bit for bit.
    """
    ex = trainer.example if example is None else int(example)
    ds = trainer.dataset
    tokens, label = ds.sentences[ex]
    tr = forward(trainer.params, ds.encode(tokens), label)
    grads = backward(trainer.params, tr)
    preview = {k: v.copy() for k, v in trainer.params.items()}
    copy.deepcopy(trainer.optimizer).step(preview, {k: g.copy() for k, g in grads.items()})
    for g in grads.values():
        g.flags.writeable = False
    assert trainer.lr is not None
    return StepSnapshot(
        ex, tuple(tokens), int(label), ds.vocab, ds.classes, _frozen_params(trainer.params),
        tr, grads, _frozen_params(preview), False, trainer.spec.optimizer, float(trainer.lr),
        trainer.steps,
    )  # fmt: skip
