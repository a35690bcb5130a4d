"""What the stepper's controls show about the training run: buttons' states and status texts.

:func:`controls_state` turns the session's plain values (read by the panel) into a
:class:`ControlsState`, so the wording and the enabling rules are tested without widgets.
"""

from __future__ import annotations

from dataclasses import dataclass

from .snapshot import N_STAGES

__all__ = ["ControlsState", "controls_state"]

LR_TIP = "Learning rate of the following steps"


@dataclass(frozen=True)
class ControlsState:
    stage: int
    example: int
    lr: float
    speed: int
    can_previous: bool
    can_next: bool
    can_apply: bool
    running: bool
    play_text: str
    status: str
    status_tip: str
    divergence: str  # "" while training is fine
    lr_warning: str  # "" when the learning rate looks safe
    lr_tip: str

    @property
    def show_lr_warning(self) -> bool:
        # Once training has diverged, the divergence says it all.
        return bool(self.lr_warning) and not self.divergence

    @property
    def show_alert(self) -> bool:
        return bool(self.divergence) or self.show_lr_warning


def controls_state(
    *,
    stage: int,
    example: int,
    lr: float,
    speed: int,
    applied: bool,
    running: bool,
    steps: int,
    last_loss: float | None,
    optimizer: str,
    d: int,
    divergence: str | None,
    lr_warning: str,
) -> ControlsState:
    """The controls for a run at ``stage`` after ``steps`` updates; ``divergence`` is the
    session's account of where training diverged (None while it has not)."""
    opt = "SGD" if optimizer == "sgd" else "Adam"
    return ControlsState(
        stage=stage,
        example=example,
        lr=lr,
        speed=speed,
        can_previous=stage > 1,
        can_next=stage < N_STAGES,
        can_apply=not applied,
        running=running,
        play_text="❚❚ Pause" if running else "▶ Play",
        status=f"{steps} updates" + (f" · loss {last_loss:.4g}" if last_loss is not None else ""),
        status_tip=f"{opt}, lr {lr:g}, {d} coordinates",
        divergence="" if divergence is None else f"Training {divergence}.",
        lr_warning=lr_warning,
        lr_tip=LR_TIP + (f"\n{lr_warning}" if lr_warning else ""),
    )
