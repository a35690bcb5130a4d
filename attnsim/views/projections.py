"""What the projections panel shows: Q = X·Wq, K = X·Wk, V = X·Wv of one head, without the
rest of the attention trace. Pure NumPy, no Qt.

The panel needs only the three products; the full trace (n × n scores, softmax, outputs) costs
hundreds of milliseconds at n = 2,048, these three cost a fraction of one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import _as_float

Array = NDArray[np.floating]

__all__ = ["head_products"]


def head_products(X: ArrayLike, Wq: ArrayLike, Wk: ArrayLike, Wv: ArrayLike) -> dict[str, Array]:
    """``{"Wq": Q, "Wk": K, "Wv": V}`` for X (n, d), Wq and Wk (d, d_k), Wv (d, d_v): Q and K
    are (n, d_k), V is (n, d_v). The same arithmetic as :func:`attention.head_trace`, so the
    numbers equal the trace's Q, K, V exactly."""
    Xa = _as_float(X, "X")
    out: dict[str, Array] = {}
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        Wa = _as_float(W, name)
        if Xa.ndim != 2 or Wa.ndim != 2 or Wa.shape[0] != Xa.shape[1]:
            raise ValueError(f"{name} {Wa.shape} does not fit X {Xa.shape}")
        out[name] = Xa @ Wa
    return out
