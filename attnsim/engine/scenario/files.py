"""Reading a file the user named: only a regular file, never more than a limit.

A named pipe would block the reader until some other program writes to it (File ▸ Open on a
FIFO hung the window), a device such as ``/dev/zero`` never ends (it raised MemoryError), and a
folder is not a file at all. The path is looked at with ``os.stat`` before it is opened, opened
without blocking, looked at again through the open descriptor (the path may have been swapped in
between), and read up to the limit and no further, so a file that grows while it is read, or
claims a size of 0 (as files under ``/proc`` do), still costs at most the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .checks import ScenarioError

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_FLAGS |= getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


def not_a_file(mode: int) -> str | None:
    """Why a file of this ``st_mode`` cannot be read as a document, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    return "is not a regular file"


def _too_large(size: int, limit: int) -> str:
    return f"is {size:,} bytes, larger than the {limit:,}-byte limit"


def read_bytes(path: str | Path, field_name: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them).

    Anything else is refused with a :class:`ScenarioError` on ``field_name`` naming the file:
    a missing or unreadable path, a folder, a named pipe, a device, a socket, or a file larger
    than ``limit``.
    """
    file = str(path)

    def refuse(problem: str) -> ScenarioError:
        return ScenarioError(field_name, problem, file)

    try:
        st = os.stat(path)
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or exc}") from None
    why = not_a_file(st.st_mode)
    if why is not None:
        raise refuse(why)
    if st.st_size > limit:
        raise refuse(_too_large(st.st_size, limit))
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or exc}") from None
    try:
        why = not_a_file(os.fstat(fd).st_mode)
        if why is not None:  # swapped for something else between the stat and the open
            raise refuse(why)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except BlockingIOError:
        raise refuse("cannot be read now (it would wait for another program)") from None
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if got > limit:
        # it grew while it was read, or it does not tell its size (as files under /proc)
        raise refuse(f"holds more than the {limit:,}-byte limit (more than its size said)")
    return b"".join(chunks)
