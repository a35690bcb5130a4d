"""Why divide by sqrt(d_k), and what saturation does to the softmax's derivatives (the panel
and its sub-views).

``panel``: :class:`ScalingLabPanel`; ``experiment``: the lab state and the background run;
``experiment_view``: its controls, table and plots; ``jacobian_view``: the receiving row's
softmax Jacobian (the kit's numbered-matrix canvas) and its saturation curve; ``plots``: the
lab's log2 plots. The view-model is :mod:`attnsim.viewmodels.scaling_lab`.
"""

from __future__ import annotations

from .experiment import (
    DEFAULT_PARAMS,
    EXPERIMENT,
    FIRST_RUN_DELAY_MS,
    GENERATORS,
    OPTIONAL_DKS,
    ScalingLabState,
    params_key,
)
from .experiment_view import TABLE_ROWS, ExperimentView
from .jacobian_view import JacobianMap, JacobianView, size_text
from .panel import ScalingLabPanel

__all__ = [
    "DEFAULT_PARAMS",
    "EXPERIMENT",
    "FIRST_RUN_DELAY_MS",
    "GENERATORS",
    "OPTIONAL_DKS",
    "TABLE_ROWS",
    "ExperimentView",
    "JacobianMap",
    "JacobianView",
    "ScalingLabPanel",
    "ScalingLabState",
    "params_key",
    "size_text",
]
