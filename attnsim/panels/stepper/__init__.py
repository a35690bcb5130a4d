"""The training stepper: the panel and its sub-views.

``panel`` holds :class:`StepperPanel`; ``controls`` the control bar and the divergence alert,
``stage_view`` the painted stage (its blocks in ``number_blocks``, its plane in
``stage_plane``), ``curves`` the training curves, ``dataset_editor`` the dataset page. What a
stage shows is worked out in :mod:`attnsim.viewmodels.stepper`.
"""

from __future__ import annotations

from .number_blocks import fmt_num, parse_num
from .panel import StepperPanel, build_stage
from .stage_view import StageView

__all__ = ["StageView", "StepperPanel", "build_stage", "fmt_num", "parse_num"]
