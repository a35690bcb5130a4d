"""The one "nice 1-2-5 step" rule: grid spacings, tick steps, arrow magnifications and view
extents all round to 1, 2 or 5 times a power of ten, so every panel's axes read alike."""

from __future__ import annotations

import math

__all__ = ["nice_ceil", "nice_floor"]

_MANTISSAS = (1.0, 2.0, 5.0, 10.0)
# Relative slack: 10**k computed in floating point can land a hair off, and 0.2 must not
# become 0.5 because 2 * 10**-1 came out 2e-16 short.
_SLACK = 1e-12


def nice_ceil(x: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``x`` (finite, > 0)."""
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"a 1-2-5 step needs a positive finite value, got {x}")
    power = 10.0 ** math.floor(math.log10(x))
    for m in _MANTISSAS:
        if m * power >= x * (1 - _SLACK):
            return m * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def nice_floor(x: float) -> float:
    """The largest 1, 2 or 5 times a power of ten that is at most ``x`` (finite, > 0)."""
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"a 1-2-5 step needs a positive finite value, got {x}")
    power = 10.0 ** math.floor(math.log10(x))
    for m in (5.0, 2.0, 1.0):
        if m * power <= x * (1 + _SLACK):
            return m * power
    return power  # pragma: no cover - the loop always returns
