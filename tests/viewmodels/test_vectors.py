"""The 2-D plane of the vector editor: bases, projections, drags within a plane, snapping."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.engine.scenario import ScenarioError, random_scenario
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.vectors import (
    DETAIL_LIMIT,
    FEATURED,
    PlaneChoice,
    affine_map,
    arrow_geometry,
    arrow_naming,
    axis_plane,
    checked_axes,
    choose_plane,
    direction_label,
    editor_data,
    featured_rows,
    fitted_plane,
    fraction_in_plane,
    grid_lines,
    label_positions,
    moved_vector,
    named_refusal,
    nice_step,
    picked_axis,
    plane_controls,
    plane_hint,
    plane_info,
    plane_picture,
    project,
    snap,
    stack_indices,
    target,
    tip_text,
    unique_name,
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


# ---- what the editor edits and shows -------------------------------------------------------------
def test_unique_name_counts_up_from_two():
    assert unique_name(("a", "b")) == "new"
    assert unique_name(("new", "new2", "x")) == "new3"
    assert unique_name(("tok",), "tok") == "tok2"


def test_named_refusal_puts_the_cell_first_and_keeps_the_problem_only():
    err = named_refusal(ScenarioError("X", "value too large"), "bank · water")
    assert isinstance(err, ValueError) and str(err) == "bank · water: value too large"
    assert str(named_refusal(ValueError("not a number"), "a · b")) == "a · b: not a number"


def test_target_of_a_token_scenario_is_x_whatever_the_choice():
    sc = resolve_scenario("river-bank")
    for choice in ("q", "k", "v", "x"):
        t = target(sc, choice, receiving=1, focused_key=0)
        assert t.kind == "x" and t.what == "X" and t.structural
        assert np.array_equal(t.matrix, sc.X)
        assert t.rows == sc.tokens and t.axes == sc.axes
        assert t.header == ("token", *sc.axes)
        assert t.highlight == 1  # the receiving token, not the focused key


def test_target_of_a_direct_scenario_follows_the_choice():
    sc = resolve_scenario("routing-lab")
    q = target(sc, "q", receiving=0, focused_key=2)
    assert (q.kind, q.rows, q.axes, q.highlight) == ("q", ("q",), ("x", "y"), 0)
    assert q.header[0] == "query" and not q.structural
    assert np.array_equal(q.matrix, sc.Q)
    k = target(sc, "k", receiving=0, focused_key=2)
    assert (k.rows, k.axes, k.highlight) == (("A", "B", "C"), ("x", "y"), 2)
    assert np.array_equal(k.matrix, sc.K) and k.structural and k.header[0] == "token"
    v = target(sc, "v", receiving=0, focused_key=None)
    assert v.axes == ("v1", "v2") and v.highlight is None and np.array_equal(v.matrix, sc.V)
    assert target(sc, "x", 0, None).kind == "q"  # an unknown choice falls back to Q


def test_plane_controls_offer_the_best_plane_only_beyond_two_axes():
    assert plane_controls(("a", "b", "c"), (0, 2), "best").best
    assert not plane_controls(("a", "b"), (0, 1), "best").best
    c = plane_controls(("a", "b", "c"), (2, 1), "axes")
    assert not c.best and c.d == 3 and c.picked == (2, 1)


def test_plane_info_on_axes_and_on_the_best_plane():
    sc = resolve_scenario("river-bank")
    t = target(sc, "q", receiving=2, focused_key=None)
    axes = plane_controls(t.axes, (1, 3), "axes")
    info = plane_info(t, axis_plane(4, 1, 3), axes)
    share = fraction_in_plane(sc.X, axis_plane(4, 1, 3))
    assert info.startswith(f"water × generic hold {share:.0%} of ‖X‖²; other coordinates")
    assert "Dashed" not in info and "Drag" not in info  # a caption, no instructions
    assert "Shift snaps to 0.05" in plane_hint(axes) and "within the plane" not in plane_hint(axes)
    best = plane_controls(t.axes, (0, 1), "best")
    plane, explained = fitted_plane(sc.X)
    text = plane_info(t, plane, best)
    assert text == f"plane explains {explained.sum():.0%} of ‖X‖²."
    assert plane_hint(best).startswith("Drags move only within the plane. Drag a tip")
    assert "refit" not in text
    stale = plane_info(t, axis_plane(4, 0, 1), best)  # a plane kept from before some edits
    assert "(refit: " in stale


def test_plane_picture_of_keys_shows_the_receiving_query_dashed():
    sc = resolve_scenario("routing-lab")
    t = target(sc, "k", receiving=0, focused_key=1)
    controls = plane_controls(t.axes, (0, 1), "axes")
    pic = plane_picture(sc, t, axis_plane(2, 0, 1), controls, receiving=0)
    assert np.array_equal(pic.tips, sc.K) and pic.labels == ("A", "B", "C")
    assert pic.highlight == 1 and pic.style == "k"
    assert np.array_equal(pic.ref_tips, sc.Q[[0]]) and pic.ref_labels == ("q",)
    assert (pic.x_label, pic.y_label) == ("x", "y")
    assert pic.info.endswith("Dashed: the receiving query.")
    tq = target(sc, "q", receiving=0, focused_key=None)
    q = plane_picture(sc, tq, axis_plane(2, 1, 0), controls, receiving=0)
    assert np.array_equal(q.ref_tips, sc.K[:, [1, 0]]) and q.ref_labels == ("A", "B", "C")
    assert q.info.endswith("Dashed: the keys.")
    v = plane_picture(sc, target(sc, "v", 0, None), axis_plane(2, 0, 1), controls, 0)
    assert v.ref_tips is None and v.ref_labels == () and v.style == "v"


def test_plane_picture_names_principal_directions_on_the_best_plane():
    sc = resolve_scenario("river-bank")
    t = target(sc, "q", receiving=2, focused_key=None)
    plane, _ = fitted_plane(sc.X)
    pic = plane_picture(sc, t, plane, plane_controls(t.axes, (0, 1), "best"), 2)
    assert pic.x_label == f"PC1 ≈ {direction_label(plane.basis[:, 0], sc.axes)}"
    assert pic.y_label.startswith("PC2 ≈ ")
    assert np.allclose(pic.tips, sc.X @ plane.basis)
    one = random_scenario(3, 1, seed=1)
    t1 = target(one, "q", receiving=0, focused_key=None)
    flat = plane_picture(
        one, t1, axis_plane(1, 0, None), plane_controls(t1.axes, (0, 0), "axes"), 0
    )
    assert flat.y_label == "" and flat.tips.shape == (3, 2)


def test_tip_text_lists_every_coordinate_and_nothing_for_no_row():
    sc = resolve_scenario("river-bank")
    t = target(sc, "q", receiving=0, focused_key=None)
    text = tip_text(t, 2, lambda v: f"{v:.1f}")
    assert text.splitlines() == [
        "bank  (X row 3)",
        "finance = 0.5",
        "water = 0.5",
        "structure = 0.8",
        "generic = 0.2",
    ]
    assert tip_text(t, 3, str) == "" and tip_text(t, -1, str) == ""


def test_arrow_naming_names_every_arrow_up_to_the_detail_limit():
    tips = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    n = arrow_naming(tips, highlight=2)
    assert n.others.tolist() == [0, 1] and n.named.all()
    assert n.stack.tolist() == [0.0, 1.0, 0.0]  # the second name at (1, 0) goes below


def test_arrow_naming_of_a_long_sequence_and_during_a_drag():
    rng = np.random.default_rng(3)
    tips = rng.normal(size=(DETAIL_LIMIT + 40, 2))
    n = arrow_naming(tips, highlight=5)
    assert 0 < len(n.others) <= FEATURED and 5 not in n.others
    assert n.named.sum() == len(n.others) + 1 and n.named[5]
    assert np.all(n.stack[~n.named] == 0)
    # While row 7 is dragged the names chosen before stay, and row 7 joins them.
    dragged = arrow_naming(tips * 3, highlight=5, dragged=7, featured=n.others)
    assert set(dragged.others.tolist()) == set(n.others.tolist()) | {7}
    fresh = arrow_naming(tips, highlight=None, dragged=7)
    assert 7 in fresh.others and fresh.named.sum() == len(fresh.others)


def test_editor_data_follows_the_target_and_keeps_the_selector_choice():
    sc = resolve_scenario("routing-lab")
    t = target(sc, "k", receiving=0, focused_key=1)
    data = editor_data(sc, t, "k", receiving=0, refit_columns=True)
    assert data.direct and data.kind == "k" and data.structural and data.refit_columns
    assert data.names == ("A", "B", "C") and data.header == ("token", "x", "y")
    assert data.receiving_labels == ("q",) and data.bold_row == 1
    assert np.array_equal(data.values, sc.K)
    tokens = resolve_scenario("river-bank")
    plain = editor_data(tokens, target(tokens, "x", 2, None), "x", 2)
    assert not plain.direct and plain.kind == "q" and not plain.refit_columns


def test_choose_plane_keeps_the_fitted_plane_until_something_else_is_shown():
    sc = resolve_scenario("river-bank")
    t = target(sc, "q", receiving=2, focused_key=None)
    choice, plane = choose_plane(PlaneChoice(mode="best"), sc, t)
    assert plane is choice.fitted and plane.same_as(fitted_plane(sc.X)[0])
    again, plane2 = choose_plane(choice, sc, t)
    assert plane2 is plane and again is choice  # nothing new shown: nothing to recompute
    renamed = sc.replace(tokens=("a", "river", "bank"))
    moved, plane3 = choose_plane(choice, renamed, target(renamed, "q", 2, None))
    assert plane3 is not plane and moved.fitted is plane3
    axes, on_axes = choose_plane(PlaneChoice(axes=(3, 1)), sc, t)
    assert axes.axes == (0, 1)  # a first sight (a new document) starts on the first two axes
    kept, on_axes = choose_plane(replace(axes, axes=(3, 1)), renamed, target(renamed, "q", 2, None))
    assert kept.axes == (3, 1) and on_axes.axes == (3, 1)  # same document and shape: kept
    one = random_scenario(3, 1, seed=1)
    flat_choice, flat = choose_plane(PlaneChoice(mode="best"), one, target(one, "q", 0, None))
    assert flat.axes == (0, None) and flat_choice.fitted is None  # one axis: no best plane


def test_picked_axis_swaps_when_the_other_axis_is_picked_and_checked_axes_refuses():
    assert picked_axis((0, 1), 0, 2) == (2, 1)
    assert picked_axis((0, 1), 0, 1) == (1, 0)
    assert picked_axis((2, 3), 1, 2) == (3, 2)
    assert checked_axes((1, 3), 4) == (1, 3) and checked_axes((0, 0), 1) == (0, 0)
    for bad in ((1, 1), (0, 4), (-1, 0)):
        with pytest.raises(ValueError, match="not two different axes of 4"):
            checked_axes(bad, 4)
