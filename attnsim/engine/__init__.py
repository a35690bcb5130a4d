"""attnsim's engine: pure NumPy, no Qt. The maths the panels, the CLI and the views share;
each panel's own view-model is in :mod:`attnsim.viewmodels`.

>>> from attnsim.engine import attention, softmax
>>> out, w = attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]], scale=False)
>>> w.round(3).tolist()
[[0.731, 0.269]]
"""

import importlib

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
from .scenario import MAX_ABS_VALUE, Head, Scenario, ScenarioError, compute

# The kernel, precision, variant, linear-memory, training and Jacobian modules load on first
# use: the application's start-up needs none of them (``from attnsim.engine import
# tiled_attention`` still works).
_LAZY = {
    "softmax_jacobian": "jacobian",
    "LinearMemoryTrace": "linear",
    "LinearVsSoftmax": "linear",
    "MemorySizes": "linear",
    "elu_plus_one": "linear",
    "linear_attention_recurrent": "linear",
    "linear_attention_sum": "linear",
    "linear_memory": "linear",
    "linear_vs_softmax": "linear",
    "memory_sizes": "linear",
    "SGD": "training",
    "Adam": "training",
    "Trainer": "training",
    "backward": "training",
    "forward": "training",
    "init_params": "training",
    "loss_and_grads": "training",
    "DropoutRoute": "precision",
    "KVCache": "kv_cache",
    "KVCacheRun": "kv_cache",
    "KVCacheStep": "kv_cache",
    "LowPrecisionRoute": "precision",
    "PeakMemory": "kernels",
    "PrecisionRow": "precision",
    "SharingCounts": "variants",
    "TileStep": "kernels",
    "TiledTrace": "kernels",
    "additive_to_bool": "precision",
    "alibi_bias": "variants",
    "alibi_slopes": "variants",
    "apply_rope": "variants",
    "bool_to_additive": "precision",
    "dropout_attention": "precision",
    "dropout_weights": "precision",
    "grouped_query_attention": "variants",
    "kv_cache_generate": "kv_cache",
    "low_precision_attention": "precision",
    "peak_memory": "kernels",
    "precision_table": "precision",
    "repeat_kv": "variants",
    "rope_angle": "variants",
    "rope_angles": "variants",
    "rope_frequencies": "variants",
    "rope_permutation": "variants",
    "round_bfloat16": "precision",
    "sharing_counts": "variants",
    "skipped_tiles": "kernels",
    "sliding_window_mask": "variants",
    "tiled_attention": "kernels",
    "tiled_block_trace": "kernels",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "MAX_ABS_VALUE",
    "SGD",
    "Adam",
    "Camera",
    "DropoutRoute",
    "Head",
    "HeadTrace",
    "KVCache",
    "KVCacheRun",
    "KVCacheStep",
    "LinearMemoryTrace",
    "LinearVsSoftmax",
    "LowPrecisionRoute",
    "MemorySizes",
    "MultiHeadTrace",
    "PeakMemory",
    "PrecisionRow",
    "Scenario",
    "ScenarioError",
    "SharingCounts",
    "TileStep",
    "TiledTrace",
    "Trainer",
    "additive_to_bool",
    "alibi_bias",
    "alibi_slopes",
    "angle",
    "apply_rope",
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
    "elu_plus_one",
    "entropy_bits",
    "forward",
    "grouped_query_attention",
    "head_trace",
    "init_params",
    "kv_cache_generate",
    "linear_attention_recurrent",
    "linear_attention_sum",
    "linear_memory",
    "linear_vs_softmax",
    "loss_and_grads",
    "low_precision_attention",
    "memory_sizes",
    "minimal_row_update",
    "multi_head",
    "multi_head_counts",
    "null_space",
    "peak_memory",
    "precision_table",
    "projection",
    "projection_vector",
    "reparametrize",
    "repeat_kv",
    "rope_angle",
    "rope_angles",
    "rope_frequencies",
    "rope_permutation",
    "round_bfloat16",
    "row_space",
    "scaled_dot",
    "score_change_under_reparametrization",
    "sharing_counts",
    "skipped_tiles",
    "sliding_window_mask",
    "softmax",
    "softmax_jacobian",
    "tiled_attention",
    "tiled_block_trace",
]
