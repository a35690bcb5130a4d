"""attnsim's engine: pure NumPy, no Qt. The maths the panels, the CLI and the views share;
each panel's own view-model is in :mod:`attnsim.views`.

>>> from attnsim.engine import attention, softmax
>>> out, w = attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]], scale=False)
>>> w.round(3).tolist()
[[0.731, 0.269]]
"""

from .attention import (
    HeadTrace,
    MultiHeadTrace,
    attention,
    causal_mask,
    direct_trace,
    entropy_bits,
    head_trace,
    multi_head,
    multi_head_counts,
    softmax,
)
from .geometry import (
    Camera,
    angle,
    attentionviz_layout,
    best_subspace,
    bilinear_form,
    cosine,
    dot,
    minimal_row_update,
    null_space,
    projection,
    projection_vector,
    reparametrize,
    row_space,
    scaled_dot,
    score_change_under_reparametrization,
)
from .jacobian import softmax_jacobian
from .kernels import PeakMemory, TiledTrace, TileStep, peak_memory, tiled_attention
from .linear import linear_attention_recurrent, linear_attention_sum
from .precision import (
    DropoutRoute,
    LowPrecisionRoute,
    PrecisionRow,
    additive_to_bool,
    bool_to_additive,
    dropout_attention,
    dropout_weights,
    low_precision_attention,
    precision_table,
    round_bfloat16,
)
from .scenario import MAX_ABS_VALUE, Head, Scenario, ScenarioError, compute
from .training import SGD, Adam, Trainer, backward, forward, init_params, loss_and_grads

__all__ = [
    "MAX_ABS_VALUE",
    "SGD",
    "Adam",
    "Camera",
    "DropoutRoute",
    "Head",
    "HeadTrace",
    "LowPrecisionRoute",
    "MultiHeadTrace",
    "PeakMemory",
    "PrecisionRow",
    "Scenario",
    "ScenarioError",
    "TileStep",
    "TiledTrace",
    "Trainer",
    "additive_to_bool",
    "angle",
    "attention",
    "attentionviz_layout",
    "backward",
    "best_subspace",
    "bilinear_form",
    "bool_to_additive",
    "causal_mask",
    "compute",
    "cosine",
    "direct_trace",
    "dot",
    "dropout_attention",
    "dropout_weights",
    "entropy_bits",
    "forward",
    "head_trace",
    "init_params",
    "linear_attention_recurrent",
    "linear_attention_sum",
    "loss_and_grads",
    "low_precision_attention",
    "minimal_row_update",
    "multi_head",
    "multi_head_counts",
    "null_space",
    "peak_memory",
    "precision_table",
    "projection",
    "projection_vector",
    "reparametrize",
    "round_bfloat16",
    "row_space",
    "scaled_dot",
    "score_change_under_reparametrization",
    "softmax",
    "softmax_jacobian",
    "tiled_attention",
]
