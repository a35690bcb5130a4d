"""Causal linear attention: softmax-free attention as a sum and as a running memory.

It sits beside :mod:`attnsim.engine.attention` (not in geometry) because it is an attention
variant; the two forms are kept so a reader can see that the sum equals the recurrence.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

# one validation of input arrays for the whole engine
from .geometry import _matrix

Array = NDArray[np.floating]

__all__ = ["linear_attention_recurrent", "linear_attention_sum"]


def linear_attention_sum(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> Array:
    """Unnormalised causal linear attention as a sum: ``y_i = sum_{j<=i} (q_i · k_j) v_j``.

    Q (n, d_k), K (n, d_k), V (n, d_v) -> (n, d_v).
    """
    Qa, Ka, Va = _matrix(Q, "Q"), _matrix(K, "K"), _matrix(V, "V")
    scores = np.tril(Qa @ Ka.T)
    return scores @ Va


def linear_attention_recurrent(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[Array, Array]:
    """The same as :func:`linear_attention_sum`, as a running memory read by each query.

    ``S_i = S_{i-1} + v_i k_i^T`` (d_v, d_k), ``y_i = S_i q_i``.
    Returns ``(Y (n, d_v), S (n, d_v, d_k))``, the outputs and every memory state.
    """
    Qa, Ka, Va = _matrix(Q, "Q"), _matrix(K, "K"), _matrix(V, "V")
    n = Qa.shape[0]
    S = np.zeros((Va.shape[1], Ka.shape[1]))
    Y = np.empty((n, Va.shape[1]))
    states = np.empty((n, Va.shape[1], Ka.shape[1]))
    for i in range(n):
        S = S + np.outer(Va[i], Ka[i])
        Y[i] = S @ Qa[i]
        states[i] = S
    return Y, states
