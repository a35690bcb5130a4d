"""What a test worker that dies leaves behind, for the report of the test it was running.

A worker killed by a native crash (a segmentation fault in Qt, the monkey's watchdog giving up on
a hang) takes its captured output with it, and pytest-xdist then reports only "worker crashed".
Each worker therefore writes faulthandler's traceback of every thread, and the GUI monkey the
actions it has started, to files of its own in one folder of the run; ``tests/conftest.py``
appends their last lines to the crashed test's report.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Set by the controlling process when it reads tests/conftest.py, before it starts the workers,
# which inherit it: one folder for the run.
_DIR = "ATTNSIM_TEST_CRASH_DIR"
TAIL_CHARS = 6000


def crash_dir() -> Path:
    if _DIR not in os.environ:
        os.environ[_DIR] = tempfile.mkdtemp(prefix="attnsim-test-crash-")
    return Path(os.environ[_DIR])


def crash_file(kind: str, worker: str | None = None) -> Path:
    """The file of ``kind`` ("faulthandler", "monkey") of ``worker`` (this process's by default:
    the xdist worker's name, or "main" without xdist)."""
    worker = worker or os.environ.get("PYTEST_XDIST_WORKER", "main")
    return crash_dir() / f"{worker}-{kind}.txt"


def crash_notes(worker: str) -> str:
    """The end of each file ``worker`` left, headed by its kind ("" if it left none)."""
    parts = []
    for kind in ("faulthandler", "monkey"):
        path = crash_file(kind, worker)
        if path.exists() and path.stat().st_size:
            text = path.read_text(encoding="utf-8", errors="replace")[-TAIL_CHARS:]
            parts.append(f"--- {kind} ({path}):\n{text}")
    return "\n".join(parts)
