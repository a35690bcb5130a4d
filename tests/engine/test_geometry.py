"""Geometry: products, projections, subspaces, the bilinear form, the camera."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.engine import (
    Camera,
    angle,
    attention,
    attentionviz_layout,
    best_subspace,
    bilinear_form,
    cosine,
    minimal_row_update,
    null_space,
    projection,
    reparametrize,
    row_space,
    score_change_under_reparametrization,
)

rng = np.random.default_rng(3)


def test_cosine_of_zero_vector_is_an_error():
    with pytest.raises(ValueError, match="zero vector"):
        cosine([0.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="b is the zero vector"):
        projection([1.0, 2.0], [0.0, 0.0])


def test_angle():
    assert angle([1, 0], [0, 1], degrees=True) == pytest.approx(90.0)
    assert angle([1, 0], [1, 1e-9]) == pytest.approx(1e-9, rel=1e-6)
    assert angle([1, 0], [-1, 0], degrees=True) == pytest.approx(180.0)


def test_row_and_null_space_split_the_input_space():
    M = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    R, N = row_space(M), null_space(M)
    assert R.shape == (3, 2) and N.shape == (3, 1)
    np.testing.assert_allclose(M @ N, 0.0, atol=1e-12)
    np.testing.assert_allclose(np.hstack([R, N]).T @ np.hstack([R, N]), np.eye(3), atol=1e-12)


def test_bilinear_form_gives_the_scores():
    X = rng.normal(size=(4, 5))
    Wq, Wk = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    M = bilinear_form(Wq, Wk)
    np.testing.assert_allclose(X @ M @ X.T, (X @ Wq) @ (X @ Wk).T, rtol=1e-12)
    assert np.linalg.matrix_rank(M) <= 3


def test_reparametrization_leaves_scores_unchanged():
    X = rng.normal(size=(4, 5))
    Wq, Wk = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    R = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    Wq2, _Wk2 = reparametrize(Wq, Wk, R)
    assert not np.allclose(Wq2, Wq)
    assert score_change_under_reparametrization(X, Wq, Wk, R) < 1e-10
    with pytest.raises(ValueError, match="singular"):
        reparametrize(Wq, Wk, np.zeros((3, 3)))


def test_best_subspace_recovers_a_plane():
    basis = np.linalg.qr(rng.normal(size=(5, 2)))[0]
    pts = rng.normal(size=(40, 2)) @ basis.T
    B, explained = best_subspace(pts, 2)
    assert explained.sum() == pytest.approx(1.0)
    # same plane: projecting the true basis onto B loses nothing
    np.testing.assert_allclose(B @ (B.T @ basis), basis, atol=1e-10)
    _B3, e3 = best_subspace(pts, 3)
    assert e3[2] == pytest.approx(0.0, abs=1e-12)


def test_minimal_row_update_hits_the_target_with_least_change():
    x = np.array([0.5, 0.5, 0.8, 0.2])
    W = rng.normal(size=(4, 3))
    target = np.array([1.0, -2.0, 0.5])
    W2 = minimal_row_update(x, W, target)
    np.testing.assert_allclose(x @ W2, target, rtol=1e-12)
    delta = W2 - W
    assert np.linalg.matrix_rank(delta) == 1
    # any other solution W2 + z (with x @ z = 0) is farther from W
    z = np.outer(null_space(x[None, :])[:, 0], [1.0, 0.0, 0.0])
    assert np.linalg.norm(W2 + z - W) > np.linalg.norm(delta)
    with pytest.raises(ValueError, match="input vector is zero"):
        minimal_row_update(np.zeros(4), W, target)


def test_attentionviz_layout_keeps_every_weight():
    Q, K, V = rng.normal(size=(5, 3)) * 3, rng.normal(size=(7, 3)) + 4, rng.normal(size=(7, 2))
    Q2, K2, _t, c = attentionviz_layout(Q, K)
    _, w = attention(Q, K, V)
    _, w2 = attention(Q2, K2, V)
    np.testing.assert_allclose(w2, w, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(Q2.mean(axis=0) / c, K2.mean(axis=0) * c, atol=1e-12)
    assert np.linalg.norm(Q2, axis=1).mean() == pytest.approx(np.linalg.norm(K2, axis=1).mean())


def test_camera_projects_and_unprojects():
    cam = Camera(yaw_deg=30, pitch_deg=20, distance=6)
    pts = rng.normal(size=(10, 3))
    xy, depth = cam.project(pts, 800, 600)
    for p, s, dep in zip(pts, xy, depth, strict=True):
        np.testing.assert_allclose(cam.unproject(s, dep, 800, 600), p, atol=1e-10)
    # the origin projects to the centre; nearer points have smaller depth
    c, dep0 = cam.project(np.zeros(3), 800, 600)
    np.testing.assert_allclose(c[0], [400, 300])
    assert dep0[0] == pytest.approx(6.0)


def test_camera_front_view_axes():
    cam = Camera(yaw_deg=0, pitch_deg=0)
    xy, _ = cam.project(np.array([[1, 0, 0], [0, 0, 1]]), 100, 100)
    assert xy[0, 0] > 50 and xy[0, 1] == pytest.approx(50)  # x to the right
    assert xy[1, 1] < 50 and xy[1, 0] == pytest.approx(50)  # z up (screen y shrinks)


def test_camera_rotation_is_orthonormal():
    for yaw, pitch in [(0, 0), (90, 45), (200, -90), (10, 90)]:
        R = Camera(yaw, pitch).rotation()
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
        # right, up, into-the-screen: a left-handed frame, the same at every angle
        assert math.isclose(np.linalg.det(R), -1.0, rel_tol=1e-9)


def test_camera_rotation_is_the_cross_product_frame():
    # The rows are right, right x forward and forward, written out: the same products as
    # np.cross makes, at any angle (the same floats to the last bit on this machine; compared
    # within 1e-15 of rows of length 1, as floats are compared everywhere in the suite).
    gen = np.random.default_rng(7)
    angles = [(0, 0), (90, 90), (-90, -90), (180, 0), (35, 25)]
    for yaw, pitch in angles + [tuple(a) for a in gen.uniform(-720, 720, (500, 2))]:
        R = Camera(float(yaw), float(pitch)).rotation()
        right, forward = R[0].copy(), R[2].copy()
        expected = np.stack([right, np.cross(right, forward), forward])
        assert R.dtype == np.float64 and R.shape == (3, 3)
        np.testing.assert_allclose(R, expected, rtol=0, atol=1e-15, err_msg=f"{yaw}, {pitch}")


@pytest.mark.parametrize("magnitude", [1e-228, 1e-5, 1.0, 1e150])
def test_best_subspace_is_scale_free(magnitude):
    pts = rng.normal(size=(12, 4))
    B1, e1 = best_subspace(pts, 2)
    B2, e2 = best_subspace(pts * magnitude, 2)
    assert np.isfinite(e2).all()
    np.testing.assert_allclose(e2, e1, rtol=1e-9)
    np.testing.assert_allclose(np.abs(B2.T @ B1), np.eye(2), atol=1e-9)
