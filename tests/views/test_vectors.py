"""The 2-D plane of the vector editor: bases, projections, drags within a plane, snapping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.views.vectors import (
    affine_map,
    arrow_geometry,
    axis_plane,
    direction_label,
    featured_rows,
    fitted_plane,
    fraction_in_plane,
    grid_lines,
    label_positions,
    moved_vector,
    nice_step,
    project,
    snap,
    stack_indices,
    view_range,
)

X = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.2], [0.5, 0.5, 0.8, 0.2]])  # river-bank
finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def test_axis_plane_projects_onto_the_two_coordinates():
    plane = axis_plane(4, 2, 0)
    assert np.array_equal(project(X, plane), X[:, [2, 0]])
    assert plane.axes == (2, 0)
    with pytest.raises(ValueError, match="differ"):
        axis_plane(4, 1, 1)
    with pytest.raises(ValueError, match="does not exist"):
        axis_plane(4, 0, 4)
    line = axis_plane(1, 0, None)
    assert np.array_equal(project([[3.0]], line), [[3.0, 0.0]])


def test_moving_in_an_axis_plane_sets_the_two_coordinates_exactly():
    plane = axis_plane(4, 0, 1)
    x = moved_vector(X[2], plane, [0.35, -0.15])
    assert x.tolist() == [0.35, -0.15, 0.8, 0.2]
    assert X[2].tolist() == [0.5, 0.5, 0.8, 0.2]  # the input is not changed
    with pytest.raises(ValueError, match="finite"):
        moved_vector(X[2], plane, [np.nan, 0.0])


def test_fitted_plane_is_the_best_plane_and_reports_its_share():
    plane, explained = fitted_plane(X)
    B = plane.basis
    assert np.allclose(B.T @ B, np.eye(2))
    s = np.linalg.svd(X, compute_uv=False)
    assert explained.sum() == pytest.approx((s[0] ** 2 + s[1] ** 2) / (s**2).sum())
    assert fraction_in_plane(X, plane) == pytest.approx(explained.sum())
    # No axis plane holds more of the squared length than the best plane.
    for i in range(4):
        for j in range(4):
            if i != j:
                assert fraction_in_plane(X, axis_plane(4, i, j)) <= explained.sum() + 1e-12
    assert fraction_in_plane(np.zeros((2, 4)), plane) == 0.0


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (5, 4), elements=finite),
    st.integers(0, 4),
    st.tuples(finite, finite),
)
def test_a_drag_in_the_fitted_plane_keeps_the_off_plane_part(P, row, target):
    plane, _ = fitted_plane(P)
    B = plane.basis
    x = P[row]
    x_new = moved_vector(x, plane, target)
    off = np.eye(4) - B @ B.T
    assert np.allclose(off @ x_new, off @ x, atol=1e-9)
    if np.allclose(B.T @ B, np.eye(2)):
        assert np.allclose(x_new @ B, target, atol=1e-9)


def test_snap_gives_exact_decimals():
    p = snap([0.349, -0.126, 0.024, 1.075])
    assert p.tolist() == [0.35, -0.15, 0.0, 1.1] or p.tolist() == [0.35, -0.15, 0.0, 1.05]
    assert snap([0.33]).tolist() == [0.35]
    for v in np.linspace(-2, 2, 401):
        s = float(snap([v])[0])
        assert float(f"{s:.2f}") == s and abs(s - v) <= 0.025 + 1e-12
    assert str(float(snap([-0.001])[0])) == "0.0"  # no negative zero


def test_arrow_geometry():
    shafts, heads = arrow_geometry([[1.0, 0.0], [0.0, 0.0], [0.0, 0.1]], 0.1)
    assert shafts.shape == (6, 2) and heads.shape == (3, 3, 2)
    assert np.array_equal(shafts[0], [0, 0]) and 0.9 < shafts[1, 0] < 1.0
    assert np.allclose(heads[0], [[1, 0], [0.9, 0.0275], [0.9, -0.0275]])
    assert np.allclose(heads[1], 0.0)  # a zero arrow has a collapsed head
    # A short arrow's head is at most 40 % of its length.
    assert heads[2, 1, 1] == pytest.approx(0.06)


def test_label_positions_and_stacking():
    pos = label_positions([[2.0, 0.0], [0.0, 0.0]], 0.1)
    assert np.allclose(pos[0], [2.1, 0.0])
    assert np.allclose(pos[1], [0.1 / np.sqrt(2)] * 2)
    assert stack_indices([[0, 0], [1, 0], [0, 0], [0, 0]]).tolist() == [0, 0, 1, 2]


def test_view_range_holds_the_origin_the_points_and_margins():
    r = view_range([[1.0, 2.0], [-0.5, 0.5]], (400, 300), (40, 30))
    assert r[0] < -0.5 and r[1] > 1.0 and r[2] < 0.0 and r[3] > 2.0
    # The margin in view units is margin_px of the inner pixels' scale.
    span_x = 1.5
    assert r[1] - 1.0 == pytest.approx(40 * span_x / (400 - 80))
    tiny = view_range(np.zeros((1, 2)), (300, 300))
    assert tiny[1] - tiny[0] >= 0.5


def test_direction_label():
    axes = ("finance", "water", "structure")
    assert direction_label([0.6, -0.8, 0.0], axes) == "−0.80 water + 0.60 finance"
    assert direction_label([0.5, 0.5, 0.7071], axes, top=2) == "0.71 structure + 0.50 finance …"
    assert direction_label([0.0, 0.0, 0.0], axes) == "0"
    with pytest.raises(ValueError):
        direction_label([1.0], axes)


def test_nice_step_and_grid_lines():
    assert [nice_step(v) for v in (0.13, 0.2, 0.21, 0.7, 3.0, 0.0009)] == [
        0.2, 0.2, 0.5, 1.0, 5.0, 0.001,
    ]  # fmt: skip
    with pytest.raises(ValueError):
        nice_step(0.0)
    seg = grid_lines((-0.3, 1.1), (0.05, 0.6), 0.5)
    vertical, horizontal = seg[:6], seg[6:]
    assert vertical[::2, 0].tolist() == [0.0, 0.5, 1.0]
    assert np.all(vertical[::2, 1] == 0.05) and np.all(vertical[1::2, 1] == 0.6)
    assert horizontal[::2, 1].tolist() == [0.5]
    assert horizontal[0, 0] == -0.3 and horizontal[1, 0] == 1.1


def _stack_by_loop(T: np.ndarray) -> list[float]:
    return [
        float(np.count_nonzero(np.all(np.abs(T[:k] - T[k]) <= 1e-9, axis=1))) for k in range(len(T))
    ]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=0, max_size=24))
def test_stack_indices_counts_earlier_coincident_tips(values):
    T = np.array(values[: len(values) // 2 * 2], dtype=float).reshape(-1, 2)
    assert stack_indices(T).tolist() == _stack_by_loop(T)


def test_featured_rows_are_the_longest_besides_the_highlight():
    tips = np.array([[3.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [0.0, -2.5]])
    assert featured_rows(tips, None, 2).tolist() == [0, 4]
    assert featured_rows(tips, 0, 2).tolist() == [2, 4]  # the highlight is drawn apart
    assert featured_rows(tips, 0, 2, pinned=(3,)).tolist() == [2, 3, 4]  # e.g. being dragged
    assert featured_rows(tips, 0, 0, pinned=(0, 1)).tolist() == [1]
    assert featured_rows(tips, None, 10).tolist() == [0, 1, 2, 3, 4]
    ties = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert featured_rows(ties, None, 2).tolist() == [0, 1]  # ties: the earlier row


def test_featured_rows_keep_names_apart():
    # Row 1 ends right beside row 0 (its name would cover row 0's): the next longest instead.
    tips = np.array([[3.0, 0.0], [2.9, 0.05], [0.0, 2.0], [2.95, 1.0]])
    gap = (0.5, 0.2)
    assert featured_rows(tips, None, 3).tolist() == [0, 1, 3]  # no gap: simply the longest
    assert featured_rows(tips, None, 3, min_gap=gap).tolist() == [0, 2, 3]
    # Apart in y is apart (names are wide and short): rows 0 and 3 both stay.
    assert featured_rows(tips, None, 2, min_gap=gap).tolist() == [0, 3]
    # The highlight's tip counts as taken: row 1 sits on the highlighted row 0.
    assert featured_rows(tips, 0, 2, min_gap=gap).tolist() == [2, 3]


def test_featured_rows_of_many_tips_is_bounded_and_sorted():
    rng = np.random.default_rng(3)
    tips = rng.normal(size=(2048, 2))
    rows = featured_rows(tips, 7, 15, pinned=(5,), min_gap=(0.3, 0.1))
    assert 7 not in rows and 5 in rows and len(rows) <= 16
    assert np.all(np.diff(rows) > 0)
    length = np.hypot(tips[:, 0], tips[:, 1])
    assert length[rows[rows != 5]].min() > np.median(length)  # all among the longest


def test_affine_map_is_origin_plus_coordinates_times_the_axes():
    P = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    out = affine_map(P, (10.0, 20.0), (3.0, 0.0), (0.0, -4.0))
    assert out.tolist() == [[10.0, 20.0], [13.0, 20.0], [10.0, 16.0], [16.0, 24.0]]
    assert affine_map(np.zeros((0, 2)), (1, 1), (1, 0), (0, 1)).shape == (0, 2)
