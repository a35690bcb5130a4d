"""The explorer's arithmetic: readouts from geometry, hold modes, the q-k plane, the strip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.engine import geometry
from attnsim.views import explorer as em

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def vec(d: int):
    return arrays(np.float64, d, elements=finite)


def test_the_twenty_degree_example():
    a = 10 * np.array([math.cos(math.radians(20)), math.sin(math.radians(20))])
    r = em.pair_readout(a, [1.0, 0.0], 4)
    assert round(r.dot, 2) == 9.40 and round(r.projection, 2) == 9.40
    assert r.angle_deg == pytest.approx(20.0)
    assert r.cosine == pytest.approx(math.cos(math.radians(20)))
    assert r.scaled_dot == pytest.approx(r.dot / 2)
    assert np.allclose(r.projection_vector, [r.dot, 0.0])


@pytest.mark.parametrize(
    ("q", "k", "dot", "cos"),
    [((1, 0), (1, 0), 1, 1), ((10, 0), (10, 0), 100, 1), ((1, 0), (0, 1), 0, 0),
     ((1, 0), (-1, 0), -1, -1)],
)  # fmt: skip
def test_reference_table_of_dot_and_cosine(q, k, dot, cos):
    r = em.pair_readout(q, k, 2)
    assert r.dot == dot and r.cosine == pytest.approx(cos)


def test_zero_vectors_are_undefined_not_nan():
    r = em.pair_readout([0.0, 0.0], [1.0, 2.0], 2)
    assert r.cosine is None and r.angle_deg is None
    assert r.dot == 0.0 and r.projection == 0.0
    r = em.pair_readout([1.0, 2.0], [0.0, 0.0], 2)
    assert r.projection is None and r.projection_vector is None and r.cosine is None
    assert em.signed_angle([0, 0], [1, 0]) is None
    assert em.angle_arc([0, 0], [1, 0], 1.0).shape == (0, 2)


@given(vec(2), vec(2))
def test_signed_angle_has_geometry_magnitude_and_rotates_b_onto_a(a, b):
    turn = em.signed_angle(a, b)
    if not (np.linalg.norm(a) > 1e-6 and np.linalg.norm(b) > 1e-6):
        return
    assert abs(turn) == pytest.approx(geometry.angle(a, b, degrees=True))
    rebuilt = em.with_angle(a, b, turn)
    assert np.allclose(rebuilt, a, atol=1e-6 * max(1.0, np.linalg.norm(a)))


@given(vec(2), vec(2))
def test_hold_lengths_keeps_the_length(start, target):
    out = em.constrain_drag("lengths", start, target)
    assert np.linalg.norm(out) == pytest.approx(np.linalg.norm(start), abs=1e-9)
    if np.linalg.norm(target) > 1e-6 and np.linalg.norm(start) > 1e-6:
        assert geometry.cosine(out, target) == pytest.approx(1.0)


@given(vec(2), vec(2), vec(2))
def test_hold_angle_keeps_the_angle_to_any_b(start, target, b):
    out = em.constrain_drag("angle", start, target)
    ok = min(np.linalg.norm(start), np.linalg.norm(b)) > 1e-6
    if ok and np.linalg.norm(out) > 1e-9:
        assert geometry.angle(out, b) == pytest.approx(geometry.angle(start, b), abs=1e-6)
    assert np.all(np.isfinite(out))


def test_hold_angle_never_goes_behind_the_origin_and_modes_are_checked():
    assert np.array_equal(em.constrain_drag("angle", [1.0, 0.0], [-3.0, 2.0]), [0.0, 0.0])
    assert np.allclose(em.constrain_drag("angle", [0.0, 0.0], [3.0, 3.0], [0.0, 1.0]), [0, 3])
    assert np.array_equal(em.constrain_drag("free", [1.0, 0.0], [-3.0, 2.0]), [-3.0, 2.0])
    with pytest.raises(ValueError, match="unknown hold mode"):
        em.constrain_drag("sideways", [1, 0], [0, 1])


def test_with_length_keeps_direction_and_refuses_negative():
    assert np.allclose(em.with_length([3.0, 4.0], 10.0), [6.0, 8.0])
    assert np.allclose(em.with_length([0.0, 0.0], 2.0, [0.0, -1.0]), [0.0, -2.0])
    with pytest.raises(ValueError, match="length"):
        em.with_length([1.0, 0.0], -1.0)


@settings(max_examples=60)
@given(st.integers(2, 8).flatmap(lambda d: st.tuples(vec(d), vec(d))))
def test_plane_basis_is_orthonormal_and_keeps_dot_and_lengths(pair):
    q, k = pair
    B = em.plane_basis(q, k)
    assert np.allclose(B.T @ B, np.eye(2), atol=1e-9)
    q2, k2 = em.to_plane(q, B), em.to_plane(k, B)
    tol = 1e-7 * max(1.0, np.linalg.norm(q) * np.linalg.norm(k))
    assert float(q2 @ k2) == pytest.approx(geometry.dot(q, k), abs=tol)
    assert np.linalg.norm(q2) == pytest.approx(
        np.linalg.norm(q), abs=1e-7 * max(1, np.linalg.norm(q))
    )
    assert np.allclose(em.from_plane(q2, B, q), q, atol=1e-7 * max(1.0, np.linalg.norm(q)))
    if np.linalg.norm(k) > 0:
        assert k2[1] == pytest.approx(0.0, abs=1e-9 * max(1.0, np.linalg.norm(k)))
        assert k2[0] > 0


def test_plane_basis_degenerate_cases():
    parallel = em.plane_basis([2.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    assert np.allclose(parallel.T @ parallel, np.eye(2))
    zero = em.plane_basis([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert np.allclose(zero.T @ zero, np.eye(2))
    only_q = em.plane_basis([0.0, 3.0, 0.0], [0.0, 0.0, 0.0])
    assert np.allclose(only_q[:, 0], [0.0, 1.0, 0.0])
    one_d = em.plane_basis([2.0], [-1.0])
    assert np.allclose(one_d, [[-1.0, 0.0]])
    with pytest.raises(ValueError, match="one length"):
        em.plane_basis([1.0, 2.0], [1.0, 2.0, 3.0])


def test_plane_basis_keeps_its_orientation_and_its_plane():
    k = np.array([1.0, 0.0, 0.0])
    B = em.plane_basis([1.0, 1.0, 0.0], k)
    below = em.plane_basis([1.0, -1.0, 0.0], k, previous=B)  # q crossed k's line: no flip
    assert np.allclose(below[:, 1], B[:, 1])
    along = em.plane_basis([2.0, 0.0, 0.0], k, previous=B)  # q on k's line: same plane
    assert np.allclose(along, B)


def test_from_plane_keeps_the_out_of_plane_part():
    B = em.plane_basis([0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    old = np.array([1.0, 2.0, 5.0])
    assert np.allclose(em.from_plane([3.0, 4.0], B, old), [3.0, 4.0, 5.0])
    assert em.in_plane([3.0, 4.0, 0.0], B) and not em.in_plane(old, B)


def test_shadow_geometry_drop_is_perpendicular_to_b():
    a, b = np.array([3.0, 4.0]), np.array([2.0, 1.0])
    g = em.shadow_geometry(a, b, 10.0)
    foot = g.shadow[1]
    assert np.allclose(foot, geometry.projection_vector(a, b))
    assert float((g.drop[0] - g.drop[1]) @ b) == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.norm(g.line[1]) == pytest.approx(10.0)
    flat = em.shadow_geometry(a, [0.0, 0.0], 10.0)
    assert np.all(np.isfinite(np.concatenate([flat.line, flat.shadow, flat.drop])))


def test_angle_arc_runs_from_b_to_a_the_short_way():
    arc = em.angle_arc([0.0, -2.0], [1.0, 0.0], 0.5, n=9)
    assert arc.shape == (9, 2)
    assert np.allclose(arc[0], [0.5, 0.0]) and np.allclose(arc[-1], [0.0, -0.5])
    assert np.all(arc[:, 1] <= 1e-12)  # clockwise, not round the long way


def test_view_bounds_hold_every_point_and_the_origin():
    box = em.view_bounds(np.array([[9.4, 3.4], [1.0, 0.0]]))
    assert box[0] < 0 < 9.4 < box[1] and box[2] < 0 < 3.4 < box[3]
    flat = em.view_bounds(np.array([[5.0, 0.0]]))
    assert flat[3] - flat[2] >= 0.4 * 5.0


def test_softmax_strip_reference_numbers():
    _, raw, d1 = em.softmax_strip([4, 2, 0])
    assert d1 == 1.0 and [round(100 * w, 1) for w in raw] == [86.7, 11.7, 1.6]
    logits, scaled, d2 = em.softmax_strip([4, 2, 0], scale=True, d_k=4)
    assert d2 == 2.0 and np.allclose(logits, [2, 1, 0])
    assert [round(100 * w, 1) for w in scaled] == [66.5, 24.5, 9.0]
    _, hot, _ = em.softmax_strip([4, 2, 0], 2.0)  # T = 2 is the same as dividing by sqrt(4)
    assert np.allclose(hot, scaled)
    with pytest.raises(ValueError, match="temperature"):
        em.softmax_strip([1, 2], 0.0)
    with pytest.raises(ValueError, match="d_k"):
        em.softmax_strip([1, 2], scale=True, d_k=0)


def test_parse_scores():
    assert np.array_equal(em.parse_scores("4, 2, 0"), [4.0, 2.0, 0.0])
    assert np.array_equal(em.parse_scores("[1 −2;3]"), [1.0, -2.0, 3.0])
    for bad, why in [("4, x", "'x' is not a number"), ("1", "at least two"),
                     ("1, inf", "finite"), (",".join("1" * 11), "at most")]:  # fmt: skip
        with pytest.raises(ValueError, match=why):
            em.parse_scores(bad)
