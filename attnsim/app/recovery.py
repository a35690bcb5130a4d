"""Crash recovery: each window's autosave file, written off the UI thread, and the work of
windows that are no longer running, offered back at start-up.

Every window that has unsaved work owns one *slot* in the recovery folder: ``<id>.json`` (the
work) beside ``<id>.lock``, a :class:`QLockFile` the window holds for as long as it runs. A
crashed window's lock is stale (its process is gone), so a new window can take it: that is how
it tells the work of a crashed window from the work of one still running, which it never
touches. A file that cannot be read is set aside (renamed with ``.bad-`` and the time), never
deleted, and never stops the window from starting.
"""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from PySide6.QtCore import QLockFile, QObject, Signal

from attnsim.engine.scenario import Scenario

from .home import app_home, read_startup_file, recovery_dir, set_aside
from .lab_states import decode_labs, encode_labs

FORMAT = "attnsim-recovery"
VERSION = 1
LEGACY_NAME = "recovery.json"  # one file for every window, before slots
# Larger than any recovery file attnsim writes: the largest scenario it accepts (64 heads of
# three 1,024 x 1,024 matrices, Wo, X of 4,096 x 1,024) is about 2.4 GB as base64.
MAX_RECOVERY_BYTES = 4 << 30
# A lock file that says nothing about its owner is only trusted while it is this young: an
# owner writes its details right after creating the file.
UNREADABLE_LOCK_GRACE_S = 10.0

_ids = itertools.count(1)


class RecoveryError(ValueError):
    """A recovery file that cannot be used; the message says why, in a sentence."""


@dataclass
class Recovered:
    """What a recovery file holds, checked."""

    scenario: Scenario
    path: Path | None
    saved_at: float
    labs: dict[type, object] = field(default_factory=dict)
    lost_labs: list[str] = field(default_factory=list)  # settings that could not be restored


def _lock(path: Path) -> QLockFile:
    lock = QLockFile(str(path))
    # Only a dead owner makes a lock stale, never its age: a window may run for days.
    lock.setStaleLockTime(0)
    return lock


def _owner_known(lock: QLockFile) -> bool:
    ok, *_ = lock.getLockInfo()
    return bool(ok)


def try_lock(path: Path) -> QLockFile | None:
    """The lock at ``path`` if no running window holds it, else None."""
    lock = _lock(path)
    if lock.tryLock(0):
        return lock
    if lock.error() != QLockFile.LockError.LockFailedError:
        return None  # not a lock we can use (a folder, no permission): leave it be
    if not _owner_known(lock):  # garbage in the lock file: no window can be holding it
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            return None
        if age > UNREADABLE_LOCK_GRACE_S and lock.removeStaleLockFile() and lock.tryLock(0):
            return lock
    return None


# ---- reading ------------------------------------------------------------------------------------
def _number(data: dict[str, Any], key: str) -> float:
    v = data.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise RecoveryError(f"its field '{key}' is {v!r}, not a time")
    if not 0 <= v <= time.time() + 86400:
        raise RecoveryError(f"its field '{key}' is {v!r}, a time that cannot be right")
    return float(v)


def _path_field(data: dict[str, Any]) -> Path | None:
    v = data.get("path")
    if v is None:
        return None
    if not isinstance(v, str) or not v or "\0" in v or len(v) > 4096:
        raise RecoveryError(f"its field 'path' is {_short(v)}, not a file name")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise RecoveryError("its field 'path' is not a file name that can be written") from None
    return Path(v)


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def read_recovery(path: Path, *, legacy: bool = False) -> Recovered:
    """The checked contents of a recovery file; :class:`RecoveryError` says what is wrong."""
    data = read_startup_file(path, MAX_RECOVERY_BYTES, RecoveryError)
    if not isinstance(data, dict):
        raise RecoveryError(f"holds a JSON {type(data).__name__}, not a recovery record")
    if not legacy and (data.get("format") != FORMAT or data.get("version") != VERSION):
        raise RecoveryError(
            f"is not an attnsim recovery file (format {_short(data.get('format'))}, "
            f"version {_short(data.get('version'))})"
        )
    saved_at = _number(data, "saved_at")
    where = _path_field(data)
    if "scenario" not in data:
        raise RecoveryError("has no scenario in it")
    try:
        sc = Scenario.from_dict(_arrays_back(data["scenario"]), file=f"{path.name}: scenario")
    except RecursionError:
        raise RecoveryError("its scenario is nested too deeply to read") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise RecoveryError(f"its scenario cannot be used: {exc}") from None
    labs, lost = decode_labs(data.get("labs", {}))
    return Recovered(sc, where, saved_at, labs, lost)


# ---- the files of windows no longer running --------------------------------------------------
@dataclass
class Orphan:
    """The work of a window that is no longer running; its lock is held while it is offered."""

    file: Path
    recovered: Recovered
    lock: QLockFile | None  # None for the single file of older versions

    @property
    def slot_id(self) -> str:
        return self.file.stem

    def discard(self) -> None:
        """The user declined it: remove the file (and its lock)."""
        self.file.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        """Leave it on disk for another time (a later start offers it again)."""
        if self.lock is not None:
            self.lock.unlock()
            self.lock = None


@dataclass
class Scan:
    orphans: list[Orphan]
    problems: list[str]  # sentences for the status bar: which file was set aside, and why


def _set_aside_problem(path: Path, why: str) -> str:
    try:
        moved = set_aside(path)
    except OSError as exc:
        return f"The recovery file {path} {why}; it could not be moved aside ({exc.strerror})."
    return f"The recovery file {path} {why}; it was moved aside to {moved.name}."


def scan_orphans(own: str | None = None) -> Scan:
    """Recovery files of windows that are no longer running, newest first; bad ones set aside."""
    orphans: list[Orphan] = []
    problems: list[str] = []
    folder = recovery_dir()
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        return Scan([], [f"The recovery folder {folder} cannot be read ({exc.strerror})."])
    names = {p.name for p in entries}
    for entry in entries:
        if entry.suffix != ".json" or entry.stem == own:
            continue
        lock = try_lock(folder / f"{entry.stem}.lock")
        if lock is None:
            continue  # a running window's work: not ours to offer or touch
        try:
            orphans.append(Orphan(entry, read_recovery(entry), lock))
        except RecoveryError as exc:
            problems.append(_set_aside_problem(entry, str(exc)))
            lock.unlock()
        except Exception as exc:  # whatever else a hostile file finds, the window starts
            problems.append(_set_aside_problem(entry, f"cannot be read ({type(exc).__name__})"))
            lock.unlock()
    # Leftovers of windows that are gone: a lock without work, a write cut short.
    for entry in entries:
        stem = entry.name.split(".")[0]
        leftover = entry.name.endswith((".json.tmp", ".lock")) and f"{stem}.json" not in names
        if leftover and stem != own and entry.is_file():
            lock = try_lock(folder / f"{stem}.lock")
            if lock is not None:
                (folder / f"{stem}.json.tmp").unlink(missing_ok=True)
                lock.unlock()
    legacy = app_home() / LEGACY_NAME
    if legacy.exists() or legacy.is_symlink():
        try:
            orphans.append(Orphan(legacy, read_recovery(legacy, legacy=True), None))
        except RecoveryError as exc:
            problems.append(_set_aside_problem(legacy, str(exc)))
        except Exception as exc:
            problems.append(_set_aside_problem(legacy, f"cannot be read ({type(exc).__name__})"))
    orphans.sort(key=lambda o: o.recovered.saved_at, reverse=True)
    return Scan(orphans, problems)


# ---- this window's slot and its writer ----------------------------------------------------------
@dataclass(frozen=True)
class Work:
    """What one autosave writes: taken on the UI thread (references only), encoded off it."""

    scenario: Scenario
    path: Path | None
    labs: dict[type, object]

    def write_to(self, fh: BinaryIO) -> None:
        """The recovery record as JSON, its matrices as base64 bytes (exact, and fast)."""
        head = {
            "format": FORMAT,
            "version": VERSION,
            "saved_at": time.time(),
            "path": str(self.path) if self.path else None,
            "pid": os.getpid(),
            "labs": encode_labs(self.labs),
        }
        fh.write(json.dumps(head, allow_nan=False)[:-1].encode("utf-8"))
        fh.write(b', "scenario": ')
        _write_json(self.scenario.to_dict(arrays=True), fh)
        fh.write(b"}\n")

    def encode(self) -> str:
        buf = io.BytesIO()
        self.write_to(buf)
        return buf.getvalue().decode("utf-8")


# Bytes per base64 piece: a multiple of 3, so the pieces join into one base64 text. Between
# pieces the encoder lets go of the interpreter, and the UI thread runs.
_PIECE = 3 << 17
_DTYPES = {"<f8": np.float64, "|b1": np.bool_}


def _write_json(v: Any, fh: BinaryIO) -> None:
    if isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v.astype(v.dtype.newbyteorder("<"), copy=False))
        if a.dtype.str not in _DTYPES:
            a = a.astype(np.float64)
        meta = json.dumps({"ndarray": a.dtype.str, "shape": list(a.shape)})[:-1]
        fh.write(meta.encode("ascii") + b', "base64": "')
        raw = memoryview(a).cast("B")
        for i in range(0, len(raw), _PIECE):
            fh.write(base64.b64encode(raw[i : i + _PIECE]))
        fh.write(b'"}')
    elif isinstance(v, dict):
        fh.write(b"{")
        for k, (key, val) in enumerate(v.items()):
            fh.write((", " if k else "").encode() + json.dumps(str(key)).encode("utf-8") + b": ")
            _write_json(val, fh)
        fh.write(b"}")
    elif isinstance(v, list | tuple):
        fh.write(b"[")
        for k, val in enumerate(v):
            if k:
                fh.write(b", ")
            _write_json(val, fh)
        fh.write(b"]")
    else:
        fh.write(json.dumps(v, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def _arrays_back(v: Any, depth: int = 0) -> Any:
    """The recovery record's matrices as arrays again, each checked against its own header."""
    if depth > 8:
        raise RecoveryError("its scenario is nested deeper than a scenario can be")
    if isinstance(v, dict) and "ndarray" in v:
        dtype, shape, text = v.get("ndarray"), v.get("shape"), v.get("base64")
        ok_shape = (
            isinstance(shape, list)
            and len(shape) <= 2
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)
        )
        if dtype not in _DTYPES or not ok_shape or not isinstance(text, str):
            raise RecoveryError(f"one of its matrices has a bad header ({_short(v)})")
        count = math.prod(shape)
        if count > MAX_RECOVERY_BYTES // 8:
            raise RecoveryError(f"one of its matrices is {shape}, larger than any scenario")
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:
            raise RecoveryError("one of its matrices is not base64 text") from None
        if len(raw) != count * np.dtype(_DTYPES[dtype]).itemsize:
            raise RecoveryError(f"one of its matrices has {len(raw)} bytes for shape {shape}")
        return np.frombuffer(raw, dtype=_DTYPES[dtype]).reshape(shape)
    if isinstance(v, dict):
        return {k: _arrays_back(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        return [_arrays_back(x, depth + 1) for x in v]
    return v


class _Relay(QObject):
    """Carries a finished write back to the UI thread. It lives as long as the process, so a
    write that finishes after its window has gone still emits on a live object (Qt drops the
    call to a deleted receiver)."""

    done = Signal(int, str)


_relay: _Relay | None = None


def _the_relay() -> _Relay:
    global _relay
    if _relay is None:
        _relay = _Relay()
    return _relay


class RecoverySlot(QObject):
    """This window's recovery file: claimed at the first autosave, written in the background.

    ``written(error)`` arrives on the UI thread after each write: ``""`` when it worked, else a
    sentence naming the file and the problem.
    """

    written = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.slot_id: str | None = None
        self._lock: QLockFile | None = None
        self._guard = threading.Lock()  # a write's rename against clear()
        self._generation = 0
        self._busy = False
        self._pending: Work | None = None
        self.last_write_s = 0.0  # how long the last write took, off the UI thread
        self._token = next(_ids)
        _the_relay().done.connect(self._relayed)

    def _relayed(self, token: int, error: str) -> None:
        if token == self._token:
            self.written.emit(error)

    @property
    def file(self) -> Path | None:
        return None if self.slot_id is None else recovery_dir() / f"{self.slot_id}.json"

    def _claim(self) -> None:
        if self._lock is not None:
            return
        folder = recovery_dir()
        while True:  # a fresh name: the time, the process, a counter
            slot = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_ids)}"
            lock = _lock(folder / f"{slot}.lock")
            if lock.tryLock(0):
                break
            if lock.error() != QLockFile.LockError.LockFailedError:
                raise OSError(f"cannot create a lock in {folder}")
        self.slot_id, self._lock = slot, lock

    def adopt(self, orphan: Orphan) -> None:
        """Take over a restored orphan's file and lock: its work is this window's work now."""
        self.release()
        if orphan.lock is None:  # the single file of an older version: move it into a slot
            self._claim()
            assert self.file is not None
            # If it cannot move, the next autosave writes the slot; the old file stays.
            with contextlib.suppress(OSError):
                orphan.file.replace(self.file)
            return
        self.slot_id, self._lock = orphan.slot_id, orphan.lock
        orphan.lock = None

    # ---- writing ------------------------------------------------------------------------------
    def write(self, work: Work) -> None:
        """Write ``work`` in the background (coalesced: at most one write runs at a time)."""
        if self._busy:
            self._pending = work
            return
        try:
            self._claim()
        except OSError as exc:
            self.written.emit(f"The recovery file cannot be created in {recovery_dir()}: {exc}")
            return
        self._busy = True
        gen = self._generation
        target = self.file
        assert target is not None
        threading.Thread(
            target=self._run, args=(work, target, gen), name="attnsim-autosave", daemon=True
        ).start()

    def _run(self, work: Work, target: Path, gen: int) -> None:
        error = self._write_file(work, target, gen)
        with contextlib.suppress(RuntimeError):
            _the_relay().done.emit(self._token, error)  # queued: handled on the UI thread

    def _write_file(self, work: Work, target: Path, gen: int) -> str:
        t0 = time.perf_counter()
        tmp = target.with_name(target.name + ".tmp")
        try:
            with open(tmp, "wb") as fh:
                work.write_to(fh)
                fh.flush()
                os.fsync(fh.fileno())
            with self._guard:
                if gen != self._generation:  # cleared (saved, or back to clean) meanwhile
                    tmp.unlink(missing_ok=True)
                    return ""
                tmp.replace(target)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            reason = getattr(exc, "strerror", None) or str(exc)
            return f"Autosave failed: cannot write {target} ({reason})."
        finally:
            self.last_write_s = time.perf_counter() - t0
        return ""

    def on_written(self) -> Work | None:
        """Called on the UI thread when a write has finished: the write that waited, if any."""
        self._busy = False
        pending, self._pending = self._pending, None
        return pending

    def clear(self) -> None:
        """No unsaved work any more: remove the file (a write under way is dropped)."""
        with self._guard:
            self._generation += 1
            self._pending = None
            if self.file is not None:
                with contextlib.suppress(OSError):
                    self.file.unlink(missing_ok=True)

    def release(self) -> None:
        """The window is closing: remove the file and the lock."""
        self.clear()
        if self._lock is not None:
            self._lock.unlock()
        self._lock, self.slot_id = None, None

    def abandon(self) -> None:
        """Let go of the lock but keep the file, as a crash would (tests)."""
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None
