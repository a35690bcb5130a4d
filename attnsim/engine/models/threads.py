"""One BLAS thread for the models' forward passes.

A forward multiplies small matrices (64 tokens by 576 features for SmolLM2, by 384 for MiniLM):
several OpenBLAS threads on a busy 2-core machine made a 256-token SmolLM2 forward ten times
slower (10 s against 1.0 s) and a 23-token MiniLM forward took 0.7 s.
"""

from __future__ import annotations

from typing import Any

__all__ = ["one_blas_thread"]

_controller: Any = None


def one_blas_thread() -> Any:
    """A context in which every BLAS library that NumPy loaded uses one thread (restored after).

    The libraries are looked up once per process and kept: ``threadpool_limits`` looks them up
    again on every entry, which cost 0.5 ms per forward with torch loaded beside NumPy. A BLAS
    loaded later (torch's MKL, say) is left alone, which is all a NumPy forward needs.
    """
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")
