"""A path that is not a regular file is refused before it is read (issue 22, section 4).

A named pipe blocked Scenario.load (and File ▸ Open) until some other program wrote to it,
``/dev/zero`` read until MemoryError. Each load runs in a thread with a deadline, so a
regression fails here instead of hanging the test run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from attnsim.engine import matrix_io
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.engine.scenario.files import read_bytes

DEADLINE_S = 10.0
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


def refusal(load, path: Path) -> str:
    """The message ``load(path)`` refuses ``path`` with, within the deadline."""
    result: dict[str, BaseException | object] = {}

    def run() -> None:
        try:
            result["value"] = load(path)
        except BaseException as exc:  # reported below, whatever it is
            result["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(DEADLINE_S)
    if t.is_alive():
        if path.exists() and not path.is_file() and hasattr(os, "mkfifo"):
            # let a reader blocked on the pipe go (it then reads nothing)
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"loading {path} still runs after {DEADLINE_S} s (it hangs)")
    assert "value" not in result, f"{path} was accepted"
    err = result["error"]
    assert isinstance(err, ScenarioError), repr(err)
    return str(err)


@pytest.fixture
def fifo(tmp_path):
    def make(name: str) -> Path:
        p = tmp_path / name
        os.mkfifo(p)
        return p

    return make


@needs_fifo
def test_scenario_load_refuses_a_named_pipe_without_waiting(fifo):
    p = fifo("pipe.json")
    msg = refusal(Scenario.load, p)
    assert msg == f"{p}: (file): is a named pipe, not a file"


@needs_dev_zero
def test_scenario_load_refuses_a_device():
    # the old code read /dev/zero (its size says 0) until MemoryError
    msg = refusal(Scenario.load, Path("/dev/zero"))
    assert msg == "/dev/zero: (file): is a device, not a file"


def test_scenario_load_refuses_a_folder(tmp_path):
    (tmp_path / "a.json").mkdir()
    assert refusal(Scenario.load, tmp_path / "a.json").endswith("(file): is a folder, not a file")


@needs_fifo
@pytest.mark.parametrize("suffix", [".csv", ".npy", ".npz", ".json", ".txt"])
def test_matrix_import_refuses_a_named_pipe_without_waiting(fifo, suffix):
    p = fifo("pipe" + suffix)
    msg = refusal(lambda q: matrix_io.load_matrix(q, name="Wq"), p)
    assert msg == f"{p}: Wq: is a named pipe, not a file"


@needs_dev_zero
@pytest.mark.parametrize("suffix", ["", ".npy"])
def test_matrix_import_refuses_a_device(tmp_path, suffix):
    target = Path("/dev/zero")
    if suffix:  # a device behind a name that says .npy
        target = tmp_path / f"zero{suffix}"
        target.symlink_to("/dev/zero")
    msg = refusal(lambda q: matrix_io.load_matrix(q, name="X"), target)
    assert msg == f"{target}: X: is a device, not a file"


def test_a_symlink_to_a_regular_file_is_read(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("1,2\n3,4\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert matrix_io.load_matrix(link).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_a_file_is_read_up_to_its_limit_and_no_further(tmp_path):
    p = tmp_path / "ten.bin"
    p.write_bytes(b"0123456789")
    assert read_bytes(p, "(file)", 10) == b"0123456789"
    with pytest.raises(
        ScenarioError, match=r"^.*ten.bin: \(file\): is 10 bytes, larger than the 9-byte"
    ):
        read_bytes(p, "(file)", 9)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc")
def test_a_file_that_says_it_is_empty_is_still_read_only_up_to_the_limit():
    # files under /proc report a size of 0 but hold text: a reader that trusted the size
    # would read on without bound
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    with pytest.raises(ScenarioError, match="holds more than the 16-byte limit"):
        read_bytes(status, "(file)", 16)
    assert read_bytes(status, "(file)", 1 << 20).startswith(b"Name:")
