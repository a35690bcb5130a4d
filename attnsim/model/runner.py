"""Background work for the workbench: one thread pool, cancellable jobs, results on the GUI thread.

A job is a plain function ``fn(progress, cancelled)``: it calls ``progress(fraction)`` now and
then and returns early once ``cancelled()`` is true. The runner delivers its progress and its
result as Qt signals, which reach GUI-thread slots through the event loop (queued), so panels
never touch a thread. A job submitted under a key supersedes (cancels) the older job with that
key; a result that arrives after its job was cancelled or superseded is dropped.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

JobFn = Callable[[Callable[[float], None], Callable[[], bool]], Any]

# glibc's mallopt parameter for the number of heaps ("arenas") threads allocate from.
_M_ARENA_MAX = -8
ARENAS = 2


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Let glibc keep at most ``arenas`` heaps for all threads (True if it was set).

    By default every thread that allocates while the others hold their heap's lock gets a heap
    of its own, up to eight per core, and each keeps the pages it touched: measured in the
    monkey's 10,000-action memory test, seed 7 grew 67 MB with the default and 26 MB with two
    heaps, seed 1915 23 and 15 MB (and started 96 MB smaller). The background jobs allocate
    large arrays rarely; sharing two heaps costs them nothing measurable. A no-op where libc
    is not glibc.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_ARENA_MAX, int(arenas)))
    except (OSError, AttributeError):
        return False


class Job(QObject):
    """One submitted piece of work. Signals arrive on the thread that created the job.

    Signals
    -------
    progress(float)
        A fraction in [0, 1] reported by the work.
    finished(object)
        The work's result (not emitted when the job was cancelled or superseded).
    failed(str)
        The work raised; the text of the exception.
    """

    progress = Signal(float)
    finished = Signal(object)
    failed = Signal(str)
    _progress_from_worker = Signal(float)
    _done_from_worker = Signal(object, str, bool)

    def __init__(self, key: object, tag: str | None = None) -> None:
        super().__init__()
        self.key = key
        self.tag = tag
        self.memo: object = None
        self.on_delivered: Callable[[Job], None] | None = None
        self.fraction = 0.0
        self.result: Any = None
        self.error: str | None = None
        self.elapsed = 0.0
        self._cancel = threading.Event()
        self._ended = threading.Event()  # the worker function returned (or never will run)
        self._delivered = False
        # Emitted from the worker, received here: Qt queues them onto this object's thread.
        self._progress_from_worker.connect(self._on_progress)
        self._done_from_worker.connect(self._on_done)

    # ---- state --------------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        """True until the worker function has returned."""
        return not self._ended.is_set()

    @property
    def done(self) -> bool:
        """The outcome reached this thread (result, failure or cancellation)."""
        return self._delivered

    def cancel(self) -> None:
        """Ask the work to stop; its result, if it still comes, is dropped."""
        self._cancel.set()

    def wait(self, timeout_s: float = 60.0) -> bool:
        """Block until the worker function returned (export uses it; the GUI never does).

        The outcome is delivered by the next event-loop turn, or at once by :meth:`deliver`.
        """
        return self._ended.wait(timeout_s)

    def deliver(self) -> None:
        """Deliver a finished job's outcome now instead of on the next event-loop turn."""
        if not self._ended.is_set() or self._delivered:
            return
        self._on_done(self.result, self.error or "", self.cancelled)

    # ---- worker side -----------------------------------------------------------------------
    def _on_progress(self, fraction: float) -> None:
        if not self.cancelled and not self._delivered:
            self.fraction = fraction
            self.progress.emit(fraction)

    def _on_done(self, result: object, error: str, cancelled: bool) -> None:
        if self._delivered:
            return
        self._delivered = True
        ok = not (cancelled or self.cancelled)
        if ok:
            self.result, self.error = result, error or None
        if self.on_delivered is not None:
            self.on_delivered(self)
        if not ok:
            return
        if error:
            self.failed.emit(error)
        else:
            self.finished.emit(result)


class _Worker(QRunnable):
    def __init__(self, job: Job, fn: JobFn) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._job: Job | None = job
        self._fn = fn
        self.returned = threading.Event()

    def run(self) -> None:
        # The worker must not hold the last reference to the job: a QObject freed on this
        # thread, with its "done" signal still queued for the GUI thread, crashes Qt. The
        # runner keeps the job until this worker has let go of it (see Runner._release).
        job, self._job = self._job, None
        try:
            self._run(job)
        finally:
            del job
            self.returned.set()

    def _run(self, job: Job) -> None:
        started = time.perf_counter()
        result, error = None, ""
        try:
            if not job.cancelled:
                result = self._fn(job._progress_from_worker.emit, job._cancel.is_set)
        except Exception as exc:  # delivered as failed(str); a worker must not die silently
            error = str(exc) or type(exc).__name__
        finally:
            job.elapsed = time.perf_counter() - started
            job.result, job.error = result, error or None
            job._ended.set()
            # At interpreter exit the job's QObject may be gone: nobody is left to tell.
            with contextlib.suppress(RuntimeError):
                job._done_from_worker.emit(result, error, job.cancelled)


_live_runners: weakref.WeakSet[Runner] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # Without an event loop to quit (scripts, tests) nothing else stops a run before the
    # interpreter tears down the objects its worker still reports to.
    for runner in list(_live_runners):
        with contextlib.suppress(RuntimeError):  # its Qt object (and pool) already deleted
            runner.shutdown(timeout_s=5.0)


class Runner(QObject):
    """The workbench's background runner (a private QThreadPool)."""

    def __init__(
        self, parent: QObject | None = None, max_threads: int = 1, memo_size: int = 16
    ) -> None:
        super().__init__(parent)
        limit_malloc_arenas()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._jobs: dict[object, Job] = {}
        # Results that are a pure function of their settings, so undo/redo shows them at once.
        self._memo: OrderedDict[tuple[object, object], object] = OrderedDict()
        self._memo_size = memo_size
        # Every submitted job with the event its worker sets once it holds no reference to it:
        # a job is let go here, on the GUI thread, only after both (superseded jobs included).
        self._held: dict[Job, threading.Event] = {}
        _live_runners.add(self)

    def submit(
        self, fn: JobFn, *, key: object = None, tag: str | None = None, memo: object = None
    ) -> Job:
        """Start ``fn`` in the pool; an unfinished job with the same key is cancelled.

        ``tag`` names a group of jobs that :meth:`cancel_tagged` drops together (the workbench
        tags the jobs whose result belongs to the current scenario). With ``memo`` (hashable:
        the settings the result is a pure function of) a finished result is kept, and
        :meth:`recall` returns it for the same key and memo without running again.
        """
        old = self._jobs.get(key)
        if old is not None:
            old.cancel()
        job = Job(key, tag)
        job.memo = memo
        self._jobs[key] = job
        job.on_delivered = self._forget
        worker = _Worker(job, fn)
        self._held[job] = worker.returned
        self._release()
        self._pool.start(worker)
        return job

    def _release(self) -> None:
        """Let go of the jobs that were delivered and whose worker has returned."""
        for job, returned in list(self._held.items()):
            if job.done and returned.is_set():
                del self._held[job]

    def held_jobs(self) -> int:
        """Jobs still kept alive for their worker (tests check none is kept for ever)."""
        self._release()
        return len(self._held)

    def _forget(self, job: Job) -> None:
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]
        # the worker may still be returning: look again once the event loop comes back here
        with contextlib.suppress(RuntimeError):  # the runner (its window) is already gone
            QTimer.singleShot(0, self, self._release)
        if job.memo is not None and not job.cancelled and job.error is None:
            self._memo[(job.key, job.memo)] = job.result
            while len(self._memo) > self._memo_size:
                self._memo.popitem(last=False)

    def recall(self, key: object, memo: object) -> Any:
        """A kept result of a job submitted with this key and memo (None if there is none)."""
        found = self._memo.get((key, memo))
        if found is not None:
            self._memo.move_to_end((key, memo))
        return found

    def job(self, key: object = None) -> Job | None:
        """The newest unfinished job submitted under ``key``."""
        return self._jobs.get(key)

    def cancel(self, key: object = None) -> None:
        job = self._jobs.get(key)
        if job is not None:
            job.cancel()

    def cancel_tagged(self, tag: str) -> None:
        for job in list(self._jobs.values()):
            if job.tag == tag:
                job.cancel()

    def cancel_all(self) -> None:
        for job in list(self._jobs.values()):
            job.cancel()

    def active_threads(self) -> int:
        return self._pool.activeThreadCount()

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Cancel every job and wait for the pool's threads; True when none is left running."""
        self.cancel_all()
        self._pool.clear()  # jobs not started yet never run
        stopped = bool(self._pool.waitForDone(round(timeout_s * 1000)))
        if stopped:
            self._held.clear()  # no worker holds a job any more: let go of them here
        return stopped
