"""The formatter family's newer members keep the exact texts the panels showed before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.panels.kit.numbers import (
    fmt_cell_short,
    fmt_fixed,
    fmt_number,
    fmt_significant,
    fmt_vector,
)
from attnsim.panels.stepper import fmt_num, parse_num


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [(0.5, 2, "0.50"), (-1.25, 3, "−1.250"), (-math.inf, 2, "−∞"), (np.float64(math.inf), 1, "∞"),
     (123456.0, 1, "123456.0"), (3, 2, "3.00")],
)  # fmt: skip
def test_fixed_keeps_its_decimals_and_spells_infinity(x, digits, text):
    assert fmt_fixed(x, digits) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.0, "0"), (0.03125, "0.0312"), (12345.0, "1.23e+04"), (1.5e-5, "1.5e-05"), (-2.0, "-2")],
)
def test_significant_reads_in_a_sentence(x, text):
    assert fmt_significant(x) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.0, "0"), (0.25, "0.250"), (-1e-5, "−1.0e−05"), (-math.inf, "−∞"), (0.0005, "0.001")],
)
def test_short_cells_show_zero_as_zero_and_parse_back(x, text):
    assert fmt_cell_short(x) == text == fmt_num(x)
    if math.isfinite(x):
        assert parse_num(text) == pytest.approx(x, rel=0.06, abs=1e-3)


def test_vectors_take_any_member_for_their_items():
    v = np.array([0.5, -1e6, 0.0])
    assert fmt_vector(v, 1) == "[0.5, −1.0e+06, 0.0]"
    assert fmt_vector(v, 1, item=fmt_fixed) == "[0.5, −1000000.0, 0.0]"
    assert fmt_vector([1, 2, 3], 0, max_items=2, item=fmt_number) == "[1, 2, …]"
