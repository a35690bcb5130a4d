"""Crash recovery inside one process: autosave under continuous work, the labs' settings, a disk
that refuses the write, and the checks on what a recovery file may hold."""

from __future__ import annotations

import errno
import itertools
import json
import time

import pytest
from PySide6.QtCore import QTimer

from attnsim.app import MainWindow, recovery_dir
from attnsim.app import recovery as recovery_mod
from attnsim.app.lab_states import decode_labs, encode_labs, lab_name
from attnsim.app.recovery import read_recovery, scan_orphans
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.precision_lab import PrecisionLabState
from attnsim.viewmodels.routing_lab.lab import RoutingLabState


@pytest.fixture
def window(qtbot, home):
    def make(scenario="river-bank", answer=True, **kw):
        answers: list[str] = []
        wb = Workbench(resolve_scenario(scenario))
        win = MainWindow(wb, ask=lambda title, text: answers.append(text) or answer, **kw)
        qtbot.addWidget(win)
        win.answers = answers
        return win

    return make


def _saved_temperature(win) -> float | None:
    f = win.recovery_path
    if f is None or not f.exists():
        return None
    return read_recovery(f).scenario.temperature


def test_continuous_edits_are_autosaved_while_they_go_on(window, qtbot):
    # An edit every 50 ms never leaves a quiet moment of 300 ms: the deadline saves anyway.
    win = window(autosave_ms=300, autosave_max_ms=400)
    step = {"k": 0}
    seen: list[tuple[float, float | None]] = []

    def edit() -> None:
        step["k"] += 1
        win.wb.edit(win.wb.scenario.replace(temperature=1 + step["k"] / 100), "T")
        seen.append((time.monotonic(), _saved_temperature(win)))

    timer = QTimer()
    timer.timeout.connect(edit)
    timer.start(50)
    # Waited for while the edits go on (never a quiet moment), with room for a loaded machine:
    # a first autosave, then a later one that holds a later edit (the file keeps up).
    qtbot.waitUntil(lambda: bool(seen) and seen[-1][1] is not None, timeout=10000)
    first = seen[-1][1]
    qtbot.waitUntil(lambda: seen[-1][1] is not None and seen[-1][1] > first, timeout=10000)
    timer.stop()
    k = step["k"]
    assert all(b >= a for (_, a), (_, b) in itertools.pairwise(seen) if a is not None)
    assert seen[-1][1] <= 1 + k / 100  # never ahead of the edits


def test_a_long_drag_is_saved_as_it_is_now(window, qtbot):
    from attnsim.model.workbench import new_drag_id

    win = window(autosave_ms=300, autosave_max_ms=400)
    drag = new_drag_id()
    x0 = win.wb.scenario.X.copy()
    for k in range(30):  # 1.5 s of one drag, one undo step
        X = x0.copy()
        X[0, 0] += (k + 1) / 10
        win.wb.edit(win.wb.scenario.replace(X=X), "Drag", drag=drag)
        qtbot.wait(50)
    assert win.wb.undo_stack.count() == 1
    qtbot.waitUntil(lambda: win.recovery_path is not None and win.recovery_path.exists())
    qtbot.wait(500)
    kept = read_recovery(win.recovery_path).scenario.X[0, 0]
    assert kept == pytest.approx(x0[0, 0] + 3.0, abs=1e-12)


def test_lab_settings_are_part_of_the_recovered_work(window, qtbot):
    win = window(autosave_ms=10, autosave_max_ms=10)
    win.wb.set_lab_state(PrecisionLabState(dtype="bfloat16", p=0.25, seed=3), "lab")
    win.wb.set_lab_state(RoutingLabState(d=0.5), "route")
    qtbot.waitUntil(lambda: win.recovery_path is not None and win.recovery_path.exists())
    qtbot.wait(100)
    win._recovery.abandon()  # a crash
    win2 = window("eiffel-raw")
    assert win2.offer_recovery()
    assert win2.wb.lab_state(PrecisionLabState) == PrecisionLabState(
        dtype="bfloat16", p=0.25, seed=3
    )
    assert win2.wb.lab_state(RoutingLabState).d == 0.5
    assert win2.wb.dirty


def test_lab_settings_that_fail_their_checks_are_named_not_restored(window, qtbot):
    win = window(autosave_ms=10, autosave_max_ms=10)
    win.wb.edit(win.wb.scenario.replace(temperature=2.0), "T")
    qtbot.waitUntil(lambda: win.recovery_path is not None and win.recovery_path.exists())
    qtbot.wait(100)
    data = json.loads(win.recovery_path.read_text(encoding="utf-8"))
    data["labs"] = {
        "attnsim.viewmodels.precision_lab:PrecisionLabState": {"dtype": 16, "p": "high"},
        "os:system": {"command": "rm -rf /"},
        "attnsim.viewmodels.routing_lab.lab:RoutingLabState": {"d": 0.75},
    }
    win.recovery_path.write_text(json.dumps(data), encoding="utf-8")
    win._recovery.abandon()
    win2 = window("eiffel-raw")
    assert win2.offer_recovery()
    assert win2.wb.scenario.temperature == 2.0
    assert win2.wb.lab_state(PrecisionLabState) == PrecisionLabState()
    assert win2.wb.lab_state(RoutingLabState).d == 0.75
    status = win2.statusBar().currentMessage()
    assert "precision lab" in status and "could not be restored" in status


@pytest.mark.parametrize(
    "fields",
    [
        {"dtype": 16}, {"p": "x"}, {"p": True}, {"pad": 1.5}, {"boost": 1}, {"nope": 1},
        {"seed": [1]}, {"seed": None},
    ],
)  # fmt: skip
def test_a_lab_field_of_the_wrong_type_restores_nothing_of_that_lab(fields):
    labs, lost = decode_labs({"attnsim.viewmodels.precision_lab:PrecisionLabState": fields})
    assert labs == {} and lost == ["precision lab"]


def test_lab_states_round_trip_through_the_file_format():
    from attnsim.viewmodels.nullspace_lab import NullSpaceLabState
    from attnsim.viewmodels.real_model import RealModelState

    states = {
        NullSpaceLabState: NullSpaceLabState(e=(1.5, -2.0, float("inf"))),
        RealModelState: RealModelState(ablated=((1, 2), (3, 4)), text="é 🐈 \u05e9"),
        RoutingLabState: RoutingLabState(d=None),
    }
    encoded = json.loads(json.dumps(encode_labs(states), allow_nan=False))
    labs, lost = decode_labs(encoded)
    assert lost == [] and labs == states
    assert lab_name("attnsim.viewmodels.real_model:RealModelState") == "real model"


def test_a_full_disk_says_so_once_in_the_status_bar(window, qtbot, monkeypatch):
    win = window(autosave_ms=10, autosave_max_ms=10)
    messages: list[str] = []
    win.statusBar().messageChanged.connect(lambda text: text and messages.append(text))

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(recovery_mod.os, "fsync", full)
    for k in range(5):
        win.wb.edit(win.wb.scenario.replace(temperature=2.0 + k), "T")
        qtbot.wait(80)
    qtbot.waitUntil(lambda: any("Autosave failed" in m for m in messages))
    qtbot.wait(200)
    failures = [m for m in messages if "Autosave failed" in m]
    assert len(failures) == 1 and "No space left on device" in failures[0]
    assert "Save As" in failures[0]
    assert not list(recovery_dir().glob("*.tmp"))  # nothing half-written left behind
    monkeypatch.undo()
    win.wb.edit(win.wb.scenario.replace(temperature=9.0), "T")
    qtbot.waitUntil(lambda: _saved_temperature(win) == 9.0)
    qtbot.waitUntil(lambda: any("Autosave works again" in m for m in messages))


def test_saving_removes_the_file_and_a_write_under_way_does_not_bring_it_back(
    window, qtbot, tmp_path
):
    win = window(autosave_ms=10, autosave_max_ms=10)
    win.wb.edit(win.wb.scenario.replace(temperature=2.0), "T")
    qtbot.waitUntil(lambda: win.recovery_path is not None and win.recovery_path.exists())
    win.wb.edit(win.wb.scenario.replace(temperature=3.0), "T")
    win.write_recovery()  # a write starts ...
    assert win.save_to(tmp_path / "saved.json")  # ... and the save clears the file meanwhile
    qtbot.wait(300)
    assert not win.recovery_path.exists()


def test_each_window_owns_its_file_and_a_quit_removes_only_its_own(window, qtbot):
    a = window(autosave_ms=10, autosave_max_ms=10)
    b = window("eiffel-raw", autosave_ms=10, autosave_max_ms=10)
    a.wb.edit(a.wb.scenario.replace(temperature=2.0), "T")
    b.wb.edit(b.wb.scenario.replace(temperature=4.0), "T")
    qtbot.waitUntil(lambda: all(w.recovery_path and w.recovery_path.exists() for w in (a, b)))
    assert a.recovery_path != b.recovery_path
    assert scan_orphans().orphans == []  # both are running: neither is offered
    b.close()  # the ask answers yes: quit without saving
    assert not b.recovery_path if b.recovery_path is None else not b.recovery_path.exists()
    assert a.recovery_path.exists() and _saved_temperature(a) == 2.0


def test_several_crashed_windows_are_offered_newest_first_and_one_is_restored(window, qtbot):
    made = []
    for k, name in enumerate(["river-bank", "money-bank", "tired-cat"]):
        w = window(name, autosave_ms=10, autosave_max_ms=10)
        w.wb.edit(w.wb.scenario.replace(temperature=2.0 + k), "T")
        qtbot.waitUntil(lambda w=w: w.recovery_path is not None and w.recovery_path.exists())
        qtbot.wait(50)
        made.append(w)
        time.sleep(0.02)
    for w in made:
        w._recovery.abandon()
    answers = [False, True]
    asked: list[str] = []
    win = MainWindow(
        Workbench(resolve_scenario("eiffel-raw")),
        ask=lambda title, text: asked.append(text) or (answers.pop(0) if answers else True),
    )
    qtbot.addWidget(win)
    assert win.offer_recovery()
    assert "'tired-cat'" in asked[0] and "(1 of 3)" in asked[0]
    assert "'money-bank'" in asked[1]
    assert win.wb.scenario.name == "money-bank" and win.wb.scenario.temperature == 3.0
    assert not made[2].recovery_path.exists()  # declined: removed
    assert made[0].recovery_path.exists()  # not asked yet: kept for the next start
    assert "1 more autosaved scenario is kept" in win.statusBar().currentMessage()


def _plant_valid(folder, stem="20260101-000000-1-1"):
    from attnsim.app.recovery import Work

    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(
        Work(resolve_scenario("money-bank"), None, {}).encode(), encoding="utf-8"
    )
    return folder / f"{stem}.lock"


def test_a_lock_file_full_of_garbage_does_not_hide_the_work_for_ever(window):
    import os

    lock = _plant_valid(recovery_dir())
    lock.write_bytes(b"\x00\xffnot a lock")
    win = window("eiffel-raw")
    assert not win.offer_recovery()  # a fresh unreadable lock may be a window starting up
    old = time.time() - 60
    os.utime(lock, (old, old))
    assert win.offer_recovery() and win.wb.scenario.name == "money-bank"


def test_a_folder_in_place_of_a_lock_leaves_the_window_starting(window):
    lock = _plant_valid(recovery_dir())
    lock.mkdir()
    win = window("eiffel-raw")
    assert not win.offer_recovery()
    assert win.isWindow() and win.wb.scenario.name == "eiffel-raw"
