"""The shared label placer, label shortener and number formats (pure functions, no Qt)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.panels.kit.labels import (
    any_overlap,
    distinct_elide,
    fit_parts,
    place_labels,
    rects_intersect,
)
from attnsim.panels.kit.numbers import fmt_number, fmt_percent, fmt_vector, ordinal_label


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [
        (0.5, 2, "0.50"),
        (-2, 1, "−2.0"),
        (-0.0001, 2, "0.00"),
        (1e-9, 3, "0.000"),
        (-0.004, 2, "0.00"),
        (1e200, 3, "1.000e+200"),
        (-1e200, 2, "−1.00e+200"),
        (123456.0, 2, "1.23e+05"),
        (99999.0, 1, "99999.0"),
        (math.inf, 2, "∞"),
        (-math.inf, 2, "−∞"),
        (math.nan, 2, "NaN"),
        (np.float32(0.25), 3, "0.250"),
        (0.0, 0, "0"),
    ],
)
def test_fmt_number(x, digits, text):
    assert fmt_number(x, digits) == text


def test_fmt_vector_never_leaks_numpy_repr():
    assert fmt_vector(np.array([0.5, 0.5])) == "[0.50, 0.50]"
    assert fmt_vector([1e200, -1.0], 1) == "[1.0e+200, −1.0]"
    assert fmt_vector(np.arange(8.0), 0, max_items=3) == "[0, 1, 2, …]"
    assert fmt_percent(0.4712) == "47.1%" and fmt_percent(math.nan) == "NaN"
    assert ordinal_label(0) == "1"


@given(
    st.floats(-1e300, 1e300) | st.sampled_from([math.inf, -math.inf, math.nan]),
    st.integers(0, 6),
)
@settings(max_examples=300, deadline=None)
def test_fmt_number_is_short_and_reads_back(x, digits):
    text = fmt_number(x, digits)
    assert len(text) <= 12 + digits
    if math.isfinite(x):
        back = float(text.replace("−", "-"))
        assert abs(back - x) <= max(abs(x) * 10.0 ** -max(digits, 1), 0.5 * 10.0**-digits)


def test_labels_at_one_point_do_not_overlap():
    anchors = [(100.0, 100.0)] * 6
    sizes = [(40.0, 12.0), (55.0, 12.0), (20.0, 12.0), (40.0, 12.0), (70.0, 12.0), (30.0, 12.0)]
    placed = place_labels(anchors, sizes)
    assert not any_overlap([p.rect for p in placed])
    assert placed[0].leader is False  # the first label keeps its preferred spot
    assert placed[0].rect[0] > 100.0  # right of the anchor
    assert any(p.leader for p in placed[2:])  # the crowd is pushed out and gets leader lines


def test_labels_avoid_obstacles_and_stay_in_bounds():
    obstacle = (95.0, 80.0, 100.0, 40.0)
    placed = place_labels([(100.0, 100.0), (101.0, 101.0)], [(40.0, 12.0)] * 2,
                          obstacles=[obstacle], bounds=(0.0, 0.0, 300.0, 200.0))  # fmt: skip
    for p in placed:
        assert not rects_intersect(p.rect, obstacle)
        x, y, w, h = p.rect
        assert x >= 0 and y >= 0 and x + w <= 300 and y + h <= 200
    assert not any_overlap([p.rect for p in placed])


@given(
    st.lists(
        st.tuples(st.floats(0, 200), st.floats(0, 200), st.floats(5, 60), st.floats(5, 16)),
        min_size=1,
        max_size=15,
    )
)
@settings(max_examples=200, deadline=None)
def test_placed_labels_never_intersect(items):
    placed = place_labels([(x, y) for x, y, _, _ in items], [(w, h) for _, _, w, h in items])
    assert not any_overlap([p.rect for p in placed])


def test_distinct_elide_keeps_labels_apart():
    labels = ["acoustics 1", "acoustics 3", *(f"control theory {k}" for k in range(1, 5))]
    short = distinct_elide(labels, len, 10)
    assert all(len(s) <= 10 for s in short)
    assert len(set(short)) == len(labels)
    assert short[2] != "control t…"
    # labels that fit are untouched, and plain right elision is used when it is enough
    assert distinct_elide(["the", "river", "banking"], len, 6) == ["the", "river", "banki…"]


@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=8, unique=True),
       st.integers(4, 20))  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_distinct_elide_fits_and_is_distinct_when_possible(labels, width):
    short = distinct_elide(labels, len, width)
    assert all(len(s) <= max(width, 1) for s in short)
    left_kept = [t[-(width - 1) :] if len(t) > width else t for t in labels]
    if len(set(left_kept)) == len(labels) and width >= 2:
        assert len(set(short)) == len(labels)


def test_fit_parts_cuts_between_items():
    parts = ["bank attends: the 0.26 ·", "river 0.31 ·", "bank 0.43", "|   entropy 1.55 bits"]
    assert fit_parts(parts, len, 1000, " ") == " ".join(parts)
    cut = fit_parts(parts, len, 40, " ")
    assert cut == "bank attends: the 0.26 · river 0.31 · …"
    assert fit_parts(parts, len, 5, " ") == "…"
