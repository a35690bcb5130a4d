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
    install,
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

__all__ = [
    "HOOK_POINTS",
    "INSTALL_COMMAND",
    "MODEL_FILES",
    "PINNED",
    "HiddenChange",
    "MiniLM",
    "MiniLMConfig",
    "MiniLMTrace",
    "ModelFilesMissing",
    "gelu",
    "hidden_change",
    "install",
    "load_minilm",
    "model_dir",
    "model_file",
    "status",
]
