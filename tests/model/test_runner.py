"""The workbench's background runner: progress and results on the GUI thread, cancellation,
stale results dropped, no thread left running at close."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThread

from attnsim.model.runner import Runner


def steps(n, gate=None, seen_threads=None):
    def work(progress, cancelled):
        if seen_threads is not None:
            seen_threads.append(threading.current_thread())
        for i in range(n):
            if gate is not None:
                gate.wait(5)
            if cancelled():
                return None
            progress((i + 1) / n)
        return n

    return work


def test_progress_and_result_arrive_on_the_gui_thread(qtbot):
    runner = Runner()
    fractions, threads, worker = [], [], []
    job = runner.submit(steps(4, seen_threads=worker))
    job.progress.connect(lambda f: (fractions.append(f), threads.append(QThread.currentThread())))
    with qtbot.waitSignal(job.finished, timeout=5000) as blocker:
        pass
    assert blocker.args == [4] and job.result == 4 and job.done and not job.running
    assert worker and worker[0] is not threading.main_thread()
    assert threads and all(t is QThread.currentThread() for t in threads)
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert runner.shutdown()


def test_a_failure_is_reported_not_raised(qtbot):
    runner = Runner()

    def boom(progress, cancelled):
        raise ValueError("no such d_k")

    job = runner.submit(boom)
    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        pass
    assert blocker.args == ["no such d_k"] and job.error == "no such d_k"
    runner.shutdown()


def test_cancellation_stops_the_work_and_drops_its_result(qtbot):
    runner = Runner()
    gate = threading.Event()
    job = runner.submit(steps(1000, gate))
    finished = []
    job.finished.connect(finished.append)
    job.cancel()
    gate.set()
    assert job.wait(5)
    qtbot.waitUntil(lambda: job.done, timeout=5000)
    assert finished == [] and job.cancelled and runner.job() is None
    assert runner.shutdown()


def test_a_newer_job_with_the_same_key_supersedes_the_older(qtbot):
    runner = Runner()
    gate = threading.Event()
    old = runner.submit(steps(3, gate), key="experiment")
    new = runner.submit(steps(2), key="experiment")
    assert old.cancelled and runner.job("experiment") is new
    old_results = []
    old.finished.connect(old_results.append)
    gate.set()
    with qtbot.waitSignal(new.finished, timeout=5000):
        pass
    assert new.result == 2 and old_results == []
    runner.shutdown()


def test_stale_result_of_an_older_scenario_is_dropped(make_wb, qtbot):
    wb = make_wb("river-bank")
    gate = threading.Event()
    job = wb.run(steps(3, gate), key="view", per_scenario=True)
    keeps = wb.run(steps(3, gate), key="lab")  # not tied to the scenario
    results = []
    job.finished.connect(results.append)
    wb.edit(wb.scenario.replace(temperature=2.0), "T")  # the scenario moves on meanwhile
    gate.set()
    with qtbot.waitSignal(keeps.finished, timeout=5000):
        pass
    qtbot.waitUntil(lambda: job.done, timeout=5000)
    assert results == [] and job.cancelled and keeps.result == 3
    wb.close()


def test_no_thread_left_running_at_close(make_wb, qtbot):
    wb = make_wb("river-bank")
    gate = threading.Event()
    started = threading.Event()

    def forever(progress, cancelled):
        started.set()
        while not cancelled():
            gate.wait(0.01)
        return None

    job = wb.run(forever, key="long")
    queued = wb.run(steps(2), key="queued")  # waits for the one thread: never starts
    assert started.wait(5)
    assert wb.runner.active_threads() == 1
    wb.close()
    assert wb.runner.active_threads() == 0 and not job.running
    assert job.cancelled and queued.cancelled


@pytest.mark.parametrize("n", [1, 50])
def test_wait_and_deliver_give_the_result_without_an_event_loop(n):
    runner = Runner()
    job = runner.submit(steps(n))
    assert job.wait(5)
    job.deliver()
    assert job.done and job.result == n
    runner.shutdown()


def test_memoised_results_are_recalled_and_failures_are_not_kept(qtbot):
    runner = Runner(memo_size=2)
    for n in (3, 4, 5):
        job = runner.submit(steps(n), key="exp", memo=("n", n))
        with qtbot.waitSignal(job.finished, timeout=5000):
            pass
    assert runner.recall("exp", ("n", 3)) is None  # the oldest fell out
    assert runner.recall("exp", ("n", 5)) == 5 and runner.recall("other", ("n", 5)) is None

    def boom(progress, cancelled):
        raise ValueError("bad")

    job = runner.submit(boom, key="exp", memo="bad")
    with qtbot.waitSignal(job.failed, timeout=5000):
        pass
    assert runner.recall("exp", "bad") is None
    runner.shutdown()


def test_a_superseded_job_is_freed_on_the_gui_thread(qtbot):
    # A superseded job nobody else holds used to be freed by its worker, on the worker thread,
    # with its "done" signal still queued for the GUI thread: Qt could crash there.
    from PySide6.QtCore import Qt

    runner = Runner()
    gate = threading.Event()

    def slow(progress, cancelled):
        gate.wait(5.0)
        return 1

    freed_in: list[str] = []
    old = runner.submit(slow, key="k")
    old.destroyed.connect(
        lambda *_: freed_in.append(threading.current_thread().name),
        Qt.ConnectionType.DirectConnection,
    )
    new = runner.submit(lambda progress, cancelled: 2, key="k")
    del old
    gate.set()
    with qtbot.waitSignal(new.finished, timeout=5000):
        pass
    qtbot.waitUntil(lambda: freed_in != [], timeout=5000)
    assert freed_in == [threading.main_thread().name]
    qtbot.waitUntil(lambda: runner.held_jobs() == 0, timeout=5000)
    assert runner.shutdown()


def test_the_runner_limits_glibc_to_two_heaps(monkeypatch):
    import ctypes

    from attnsim.model import runner as runner_module

    calls = []

    class FakeLibc:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    assert runner_module.limit_malloc_arenas() is True
    assert calls == [(-8, 2)]  # M_ARENA_MAX

    def no_libc(name):
        raise OSError(name)

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert runner_module.limit_malloc_arenas() is False  # not glibc: nothing to do
