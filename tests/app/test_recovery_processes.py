"""Crash recovery with real processes: a window killed with SIGKILL mid-work, several windows
at once, and start-up beside hostile recovery and settings files (each through ``attnsim gui``)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from attnsim.app.recovery import MAX_RECOVERY_BYTES, Work
from attnsim.resources import resolve_scenario

pytestmark = pytest.mark.process

DRIVER = Path(__file__).with_name("recovery_driver.py")
ROOT = Path(__file__).resolve().parents[2]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, ATTNSIM_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


class Driver:
    """A window working by itself in its own process (see recovery_driver.py)."""

    def __init__(self, home: Path, mode: str, amount: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(DRIVER), mode, str(amount)],
            env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self.edits: list[tuple[float, float]] = []  # (value, time)
        # Lines are read on a thread of their own, so that a window that stops talking fails
        # the test at the timeout instead of blocking it in readline() for good.
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(ValueError, OSError):  # the pipe closed by the fixture
            for line in self.proc.stdout:
                self.lines.put(line)
        self.lines.put("")  # the window's output ended

    def wait_for(self, word: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if not line:
                raise AssertionError(f"the window exited before '{word}'")
            parts = line.split()
            if parts[0] == "edit":
                self.edits.append((float(parts[1]), float(parts[2])))
            if parts[0] == word:
                return
        raise AssertionError(f"no '{word}' within {timeout} s")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def drivers():
    made: list[Driver] = []
    yield made
    for d in made:
        if d.proc.poll() is None:
            d.kill()
        d.reader.join(10)  # the killed window's output ends
        if d.proc.stdout is not None:
            d.proc.stdout.close()


def start_gui(home: Path, answer: str = "no", timeout: float = 60.0) -> dict:
    """``attnsim gui`` as a user starts it; what it asked and showed (see app/report.py)."""
    out = home.parent / f"report-{time.monotonic_ns()}.json"
    done = subprocess.run(
        [sys.executable, "-m", "attnsim", "gui"],
        env=_env(home, ATTNSIM_STARTUP_REPORT=str(out), ATTNSIM_STARTUP_ANSWER=answer),
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["visible"]
    return report


def recovery_files(home: Path) -> list[Path]:
    return sorted((home / "recovery").glob("*.json"))


@pytest.mark.slow
def test_sigkill_after_twenty_seconds_of_edits_loses_at_most_two_seconds(tmp_path, drivers):
    home = tmp_path / "home"
    d = Driver(home, "edits", 20)
    drivers.append(d)
    d.wait_for("done", timeout=90)
    d.kill()  # right after the last edit
    _, last_time = d.edits[-1]
    report = start_gui(home, answer="yes")
    assert report["restored"], report
    when = {value: t for value, t in d.edits}
    restored = report["temperature"]
    assert restored in when, (restored, d.edits[-5:])
    lost = last_time - when[restored]
    print(f"edits: {len(d.edits)}; restored the edit of {lost:.2f} s before the kill")
    assert lost <= 2.0


@pytest.mark.slow
def test_sigkill_during_a_ten_second_drag_keeps_the_drag_as_it_was(tmp_path, drivers):
    home = tmp_path / "home"
    d = Driver(home, "drag", 10)
    drivers.append(d)
    d.wait_for("done", timeout=60)
    d.kill()
    _, last_time = d.edits[-1]
    report = start_gui(home, answer="yes")
    assert report["restored"], report
    when = {round(value, 9): t for value, t in d.edits}
    restored = round(report["x00"], 9)
    assert restored in when
    lost = last_time - when[restored]
    print(f"drag moves: {len(d.edits)}; restored the drag as it was {lost:.2f} s before the kill")
    assert lost <= 2.0


@pytest.mark.slow
def test_windows_never_touch_each_others_work(tmp_path, drivers):
    home = tmp_path / "home"
    alive = Driver(home, "idle", 2.5)
    drivers.append(alive)
    alive.wait_for("saved")
    alive_file = recovery_files(home)
    assert len(alive_file) == 1
    # A second window while the first runs: nothing to offer, and its quit leaves the file.
    report = start_gui(home)
    assert report["asked"] == [] and not report["restored"]
    assert recovery_files(home) == alive_file
    # A window that crashed: the next window offers it, and only it; declining removes it alone.
    crashed = Driver(home, "idle", 7.5)
    drivers.append(crashed)
    crashed.wait_for("saved")
    crashed.kill()
    assert len(recovery_files(home)) == 2
    report = start_gui(home, answer="no")
    assert len(report["asked"]) == 1 and "river-bank" in report["asked"][0]
    assert recovery_files(home) == alive_file
    # The first window crashes too: its work is offered now, and restored.
    alive.kill()
    report = start_gui(home, answer="yes")
    assert len(report["asked"]) == 1 and report["restored"]
    assert report["temperature"] == 2.5


# ---- hostile files at start-up ----------------------------------------------------------------
def _recovery(**fields) -> str:
    data = json.loads(Work(resolve_scenario("river-bank"), None, {}).encode())
    data.update(fields)
    return json.dumps(data)


def _scenario_with(**fields) -> str:
    data = json.loads(_recovery())
    data["scenario"].update(fields)
    return json.dumps(data)


DEEP = "[" * 200_000 + "]" * 200_000
RECOVERY_CORPUS = {
    "empty": b"",
    "not-utf8": b'{"format": "attnsim-recovery", "name": "\xff\xfe"}',
    "truncated": _recovery()[:200],
    "a-list": "[1, 2, 3]",
    "a-number": "42",
    "deep-nesting": DEEP,
    "deep-in-scenario": _scenario_with(X=json.loads("[" * 500 + "]" * 500)),
    "saved-at-text": _recovery(saved_at="yesterday"),
    "saved-at-nan": _recovery().replace('"saved_at": ', '"saved_at": NaN, "x": '),
    "saved-at-huge": _recovery(saved_at=1e300),
    "saved-at-bool": _recovery(saved_at=True),
    "path-number": _recovery(path=5),
    "path-nul": _recovery(path="a\u0000b"),
    "no-scenario": json.dumps({"format": "attnsim-recovery", "version": 1, "saved_at": 1.0}),
    "scenario-text": _recovery(scenario="river-bank"),
    "value-out-of-range": _scenario_with(temperature=1e200),
    "tokens-numbers": _scenario_with(tokens=[1, 2, 3, 4]),
    "negative-temperature": _scenario_with(temperature=-1),
    "matrix-of-text": _scenario_with(X=[["a"]]),
    "wrong-format": _recovery(format="something-else"),
    "future-version": _recovery(version=99),
    "unknown-mode": _scenario_with(mode="sideways"),
}
SPECIAL = ["enormous", "a-folder", "symlink-loop", "dangling-symlink", "named-pipe"]


def _plant(home: Path, case: str) -> Path:
    folder = home / "recovery"
    folder.mkdir(parents=True, exist_ok=True)
    # The valid work of a crashed window beside it, which must still be offered.
    valid = json.loads(Work(resolve_scenario("money-bank"), None, {}).encode())
    (folder / "20260101-000000-1-1.json").write_text(json.dumps(valid), encoding="utf-8")
    bad = folder / f"20260101-000000-2-{case}.json"
    if case in RECOVERY_CORPUS:
        content = RECOVERY_CORPUS[case]
        bad.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    elif case == "enormous":
        with open(bad, "wb") as fh:
            fh.truncate(MAX_RECOVERY_BYTES + 1)  # sparse: takes no disk
    elif case == "a-folder":
        bad.mkdir()
    elif case == "symlink-loop":
        bad.symlink_to(bad.name)
    elif case == "dangling-symlink":
        bad.symlink_to(folder / "nowhere.json")
    elif case == "named-pipe":
        os.mkfifo(bad)
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("case", [*RECOVERY_CORPUS, *SPECIAL])
def test_a_hostile_recovery_file_never_stops_the_window(tmp_path, case):
    home = tmp_path / "home"
    bad = _plant(home, case)
    report = start_gui(home)
    assert any("'money-bank'" in q for q in report["asked"]), report  # the valid one is offered
    assert not (bad.exists() or bad.is_symlink()), "the hostile file was not set aside"
    assert list(bad.parent.glob(f"{bad.name}.bad-*")), "the hostile file was deleted"
    assert bad.name in report["status"]


def _settings_cases(path: Path, case: str) -> None:
    from PySide6.QtCore import QSettings

    if case == "not-utf8":
        path.write_bytes(b"[General]\nrecent=\xff\xfe\xfd\n")
    elif case == "a-folder":
        path.mkdir()
    elif case == "enormous":
        with open(path, "wb") as fh:
            fh.truncate(64 << 20)
    elif case == "named-pipe":
        os.mkfifo(path)
    elif case == "symlink-loop":
        path.symlink_to(path.name)
    else:
        s = QSettings(str(path), QSettings.Format.IniFormat)
        key, value = {
            "recent-a-map": ("recent", {"a": 1}),
            "layout-text": ("state", "not a layout"),
            "geometry-number": ("geometry", 12.5),
            "recent-numbers": ("recent", [{"x": 1}]),
        }[case]
        s.setValue(key, value)
        s.sync()


SETTINGS_CASES = [
    "not-utf8", "a-folder", "enormous", "named-pipe", "symlink-loop", "recent-a-map",
    "layout-text", "geometry-number", "recent-numbers",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", SETTINGS_CASES)
def test_a_hostile_settings_file_never_stops_the_window(qapp, tmp_path, case):
    home = tmp_path / "home"
    _plant(home, "none")  # the valid file alone
    settings = home / "settings.ini"
    _settings_cases(settings, case)
    report = start_gui(home)
    assert any("'money-bank'" in q for q in report["asked"]), report
    assert list(home.glob("settings.ini.bad-*")), "the settings file was not set aside"
    assert "settings.ini" in report["status"]


def test_the_corpus_is_large_enough():
    assert len(RECOVERY_CORPUS) + len(SPECIAL) + len(SETTINGS_CASES) >= 20
    assert len(RECOVERY_CORPUS) + len(SPECIAL) >= 20
