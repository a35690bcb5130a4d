"""Repeated SmolLM2 forwards reuse the memory of the traces dropped before them.

glibc's malloc serves a request at or above its "mmap threshold" (128 kB at first) with new
pages from the kernel, and raises that threshold to the size of the largest such block freed,
up to 32 MB; the heap memory freed above twice the threshold (the trim threshold) goes back to
the kernel. A 64-token forward allocates about 39 MB (its trace, 12.6 MB of logits and its
buffers) and frees it when the trace is dropped: with the threshold left at the logits' 12.6
MB, the heap shrank after each forward and the next one faulted 11 MB back in (about 2,900
page faults, 9-17 ms of system time a forward on one thread, about 5 % of it). One block of
30 MB allocated and freed once raises the threshold to 30 MB and the trim threshold to 60 MB,
after which repeated forwards reuse the heap's memory with no faults. A process that has
loaded torch had raised it already, so the bench's comparison with transformers is unchanged.

Where malloc is not glibc's, or its threshold was fixed (``MALLOC_MMAP_THRESHOLD_``), this is
one short-lived allocation and changes nothing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RAISE_BYTES", "keep_freed_memory"]

RAISE_BYTES = 30 << 20  # under glibc's 32 MB ceiling for the threshold it raises itself
_done = False


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds once per process (see the module's docstring)."""
    global _done
    if not _done:
        np.empty(RAISE_BYTES, np.uint8)  # allocated and freed at once
        _done = True
