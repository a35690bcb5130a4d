"""The one copy of each pretrained model a process holds, and its tokenizer's output.

Both the Real model panel's runs and its two-text pages (and the command line) take the model
from here: two caches held two SmolLM2s (about 0.5 GB each once their pages were read).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["LOAD_SHARE", "encode", "is_loaded", "load_then", "loaded"]

Progress = Callable[[float], None]
# Of a first run's progress: building the model's cache (a ~10 s first load of SmolLM2).
LOAD_SHARE = 0.6
MODELS = ("minilm", "smollm2")

_models: dict[str, Any] = {}
_loading = threading.Lock()


def _load(model: str, progress: Progress | None) -> Any:
    from . import load_minilm, load_smollm2

    return load_minilm() if model == "minilm" else load_smollm2(progress=progress)


def is_loaded(model: str) -> bool:
    """Whether the model is in memory already."""
    return model in _models


def loaded(model: str, progress: Progress | None = None) -> Any:
    """The model, read once per process (the SmolLM2 loader re-maps its cache on every call).
    The first SmolLM2 load of a machine builds its cache (seconds), reporting ``progress``."""
    if model not in MODELS:
        raise ValueError(f"the model must be minilm or smollm2, got {model!r}")
    with _loading:
        if model not in _models:
            _models[model] = _load(model, progress)
    return _models[model]


def load_then(model: str, progress: Progress) -> tuple[Any, Progress]:
    """The model, and the progress for the work after loading it: when the load builds the
    model's cache (SmolLM2's first run on a machine), the load reports the first LOAD_SHARE of
    ``progress`` and the rest goes to the work after it. A cancel waits for the cache to be
    written: a half-built one would be built again from the start."""
    built = [False]

    def on_load(fraction: float) -> None:
        built[0] = True
        progress(LOAD_SHARE * fraction)

    model_ = loaded(model, on_load)
    if not built[0]:
        return model_, progress
    return model_, lambda f: progress(LOAD_SHARE + (1.0 - LOAD_SHARE) * f)


def encode(model: str, text: str) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """The text's token ids and their pieces, by the model's own tokenizer."""
    m = loaded(model)
    if model == "minilm":
        raw, pieces = m.encode(text)
        return np.asarray(raw, dtype=np.int64), tuple(pieces)
    ids = m.encode(text)
    return np.asarray(ids, dtype=np.int64), tuple(m.pieces(ids))
