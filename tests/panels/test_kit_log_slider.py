"""The one logarithmic slider: the scale is Qt-free arithmetic, the widget only speaks it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE
from attnsim.panels.kit.log_slider import TEMPERATURE, LogScale, LogSlider


def test_temperature_scale_covers_the_whole_scenario_range_with_one_in_the_middle():
    assert TEMPERATURE.value(0) == MIN_TEMPERATURE
    assert TEMPERATURE.value(TEMPERATURE.steps) == MAX_TEMPERATURE
    assert TEMPERATURE.position(1.0) * 2 == TEMPERATURE.steps
    assert TEMPERATURE.value(TEMPERATURE.steps // 2) == 1.0


@pytest.mark.parametrize("t", [0.25, 0.5, 2.0, 4.0, 0.01, 100.0, 1.5, 0.125])
def test_round_values_come_back_from_their_own_position(t):
    assert TEMPERATURE.value(TEMPERATURE.position(t)) == t


def test_out_of_range_values_and_positions_clamp():
    assert TEMPERATURE.position(1e9) == TEMPERATURE.steps
    assert TEMPERATURE.position(0.0) == 0
    assert TEMPERATURE.value(-5) == MIN_TEMPERATURE
    assert TEMPERATURE.value(10**9) == MAX_TEMPERATURE


@given(st.integers(min_value=0, max_value=TEMPERATURE.steps - 1))
def test_positions_are_monotone_and_equal_ratios(pos):
    a, b = TEMPERATURE.value(pos), TEMPERATURE.value(pos + 1)
    assert a <= b
    # One step is 0.23 % in T; rounding to 3 digits may add at most 0.5 %.
    assert b / a < 1.0 + 0.0023 + 0.011


def test_a_scale_needs_an_ordered_positive_range():
    with pytest.raises(ValueError):
        LogScale(0.0, 1.0)
    with pytest.raises(ValueError):
        LogScale(2.0, 1.0)


def test_slider_maps_positions_and_shows_values(qtbot):
    s = LogSlider()
    qtbot.addWidget(s)
    assert (s.minimum(), s.maximum()) == (0, TEMPERATURE.steps)
    s.show_value(4.0)
    assert s.log_value() == 4.0 and s.value_at(s.value()) == 4.0
    small = LogSlider(LogScale(0.1, 10.0, per_decade=50, digits=2))
    qtbot.addWidget(small)
    assert small.maximum() == 100
    small.show_value(1.0)
    assert small.value() == 50 and math.isclose(small.value_at(75), 3.2)
