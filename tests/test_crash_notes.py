"""A test worker that dies in native code still says where: its threads' stacks and the
monkey's last actions end the crashed test's report (tests/crash_notes.py, tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CRASHING_TEST = """
import ctypes

from tests.crash_notes import crash_file


def test_dies_in_native_code():
    with crash_file("monkey").open("w") as f:
        f.write("41: click Undo\\\\n42: drag bank's query\\\\n")
    ctypes.string_at(0)
"""


@pytest.mark.process
def test_a_worker_that_crashes_leaves_its_stacks_and_last_actions_in_the_report(tmp_path):
    test = tmp_path / "test_dies.py"
    test.write_text(CRASHING_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ATTNSIM_TEST_"))}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
         "-p", "tests.conftest", "-n", "1", "-p", "no:cacheprovider", "-q", str(test)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "crashed while running" in out, out
    assert "Fatal Python error: Segmentation fault" in out, out
    assert "in test_dies_in_native_code" in out, out
    assert "42: drag bank's query" in out, out
