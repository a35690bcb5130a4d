"""File ▸ Open and File ▸ Import matrix on a named pipe or a device: refused at once, the work
kept (issue 22, section 4). The old window hung forever on a FIFO and raised MemoryError on
/dev/zero. A watchdog thread writes to the pipe after a deadline, so a regression fails (the
reader sees an empty file) instead of hanging the test run.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from attnsim.app import MainWindow
from attnsim.engine import edits
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

DEADLINE_S = 10.0
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


@pytest.fixture
def win(qtbot, home):
    asked: list[str] = []
    w = MainWindow(
        Workbench(resolve_scenario("river-bank")),
        ask=lambda title, text: asked.append(title) or True,
        restore_layout=False,
    )
    qtbot.addWidget(w)
    w.asked = asked
    sc = w.wb.scenario
    w.wb.edit(edits.set_vector(sc, "x", 0, [0.25, 0.5, 0.0, 1.0]), "edit")
    return w


@pytest.fixture
def pipe(tmp_path):
    """A named pipe, and a watchdog that releases a reader still blocked on it after the
    deadline (opening the other end and closing it)."""
    made: list[Path] = []
    stop = threading.Event()

    def watchdog() -> None:
        if stop.wait(DEADLINE_S):
            return
        for p in made:
            with contextlib.suppress(OSError):
                os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))

    def make(name: str) -> Path:
        p = tmp_path / name
        os.mkfifo(p)
        made.append(p)
        return p

    t = threading.Thread(target=watchdog, daemon=True)
    t.start()
    yield make
    stop.set()
    t.join()


def _refused_quickly(w, call, path: Path, expected: str) -> None:
    before, count = w.wb.scenario, w.wb.undo_stack.count()
    start = time.monotonic()
    assert call() is False
    assert time.monotonic() - start < DEADLINE_S / 2, "it waited on the file"
    assert w.wb.scenario is before and w.wb.undo_stack.count() == count and w.wb.dirty
    assert w.asked == []
    message = w.statusBar().currentMessage()
    assert str(path) in message and expected in message


@needs_fifo
def test_open_refuses_a_named_pipe_at_once(win, pipe):
    p = pipe("pipe.json")
    _refused_quickly(win, lambda: win.open_path(p), p, "is a named pipe, not a file")


@needs_dev_zero
def test_open_refuses_a_device(win):
    p = Path("/dev/zero")
    _refused_quickly(win, lambda: win.open_path(p), p, "is a device, not a file")


@needs_fifo
@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_import_matrix_refuses_a_named_pipe_at_once(win, pipe, suffix):
    p = pipe("pipe" + suffix)
    _refused_quickly(win, lambda: win.import_matrix("X", p), p, "is a named pipe, not a file")


@needs_dev_zero
def test_import_matrix_refuses_a_device(win):
    p = Path("/dev/zero")
    _refused_quickly(win, lambda: win.import_matrix("Wq", p), p, "is a device, not a file")
