"""The one 1-2-5 rounding rule behind every grid, tick, extent and magnification."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.engine.ticks import nice_ceil, nice_floor


@pytest.mark.parametrize(
    ("x", "up", "down"),
    [
        (1.0, 1.0, 1.0),
        (0.13, 0.2, 0.1),
        (0.2, 0.2, 0.2),
        (0.21, 0.5, 0.2),
        (3.0, 5.0, 2.0),
        (7.0, 10.0, 5.0),
        (0.0009, 0.001, 0.0005),
        (0.1 * 3, 0.5, 0.2),
    ],
)
def test_rounds_up_and_down_to_one_two_five(x, up, down):
    assert nice_ceil(x) == pytest.approx(up, rel=1e-12)
    assert nice_floor(x) == pytest.approx(down, rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_refuses_what_has_no_step(bad):
    with pytest.raises(ValueError):
        nice_ceil(bad)
    with pytest.raises(ValueError):
        nice_floor(bad)


@given(st.floats(min_value=1e-200, max_value=1e200))
def test_brackets_the_value_within_a_factor_two_and_a_half(x):
    up, down = nice_ceil(x), nice_floor(x)
    assert down <= x * (1 + 1e-9) and up >= x * (1 - 1e-9)
    assert up / down <= 2.5 * (1 + 1e-9)
    mantissa = up / 10.0 ** math.floor(math.log10(up) + 1e-9)
    assert min(abs(mantissa - m) for m in (1.0, 2.0, 5.0, 10.0)) < 1e-6
