"""The softmax Jacobian: how one attention row's weights respond to its logits."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .geometry import _vec

Array = NDArray[np.floating]

__all__ = ["softmax_jacobian"]


def softmax_jacobian(weights: ArrayLike, temperature: float = 1.0) -> Array:
    """Jacobian of softmax(z / t) with respect to z at the given weights.

    ``J[i, j] = (1/t) w_i (delta_ij - w_j)``, shape (n, n) for weights of shape (n,).
    """
    w = _vec(weights, "weights")
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be positive and finite, got {temperature!r}")
    return (np.diag(w) - np.outer(w, w)) / temperature
