"""Pretrained models run in NumPy: SmolLM2-135M (causal) and all-MiniLM-L6-v2 (BERT).

The model files are installed separately (``attnsim models install``) and loaded lazily, inside
functions: importing this package needs neither the files nor the runtime libraries that read
them.
"""

from .files import (
    INSTALL_COMMAND,
    MODEL_FILES,
    PINNED,
    ModelFilesMissing,
    model_dir,
    model_file,
    status,
)
from .minilm import (
    HOOK_POINTS,
    HiddenChange,
    MiniLM,
    MiniLMConfig,
    MiniLMTrace,
    gelu,
    hidden_change,
    load_minilm,
)
from .probe import (
    PROBE_BATCH,
    PROBE_HALF,
    PROBE_SEED,
    PROBE_TOP,
    InductionProbe,
    ProbeAblation,
    induction_probe,
)
from .smollm2 import (
    CONFIG,
    HeadMetrics,
    NextTokenChange,
    SmolConfig,
    SmolLM2,
    SmolTrace,
    head_metrics,
    load_smollm2,
    next_token_change,
    probe_scores,
    repeated_random_ids,
)

__all__ = [
    "CONFIG",
    "HOOK_POINTS",
    "INSTALL_COMMAND",
    "MODEL_FILES",
    "PINNED",
    "PROBE_BATCH",
    "PROBE_HALF",
    "PROBE_SEED",
    "PROBE_TOP",
    "HeadMetrics",
    "HiddenChange",
    "InductionProbe",
    "MiniLM",
    "MiniLMConfig",
    "MiniLMTrace",
    "ModelFilesMissing",
    "NextTokenChange",
    "ProbeAblation",
    "SmolConfig",
    "SmolLM2",
    "SmolTrace",
    "gelu",
    "head_metrics",
    "hidden_change",
    "induction_probe",
    "load_minilm",
    "load_smollm2",
    "model_dir",
    "model_file",
    "next_token_change",
    "probe_scores",
    "repeated_random_ids",
    "status",
]
