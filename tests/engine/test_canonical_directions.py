"""Every direction the engine computes for the screen is the same whatever LAPACK made it.

An SVD returns each singular vector up to sign, and a whole group of equal singular values up to
a rotation; which one depends on the CPU kernel. These tests simulate "another LAPACK" by
wrapping ``np.linalg.svd`` so that it returns an equally valid factorization with flipped signs
and rotated degenerate groups, and check that what the engine returns does not change.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine import geometry
from attnsim.engine.geometry import (
    best_subspace,
    canonical_basis,
    canonical_sign,
    null_space,
    row_space,
)
from attnsim.viewmodels.nullspace_lab import query_map_spaces, readable_direction

# Directions computed along two valid LAPACK paths agree to rounding, never up to a sign.
ATOL = 1e-12


def _other_lapack(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Make geometry's SVD return another valid factorization: signs flipped, ties rotated."""
    real_svd = np.linalg.svd
    rng = np.random.default_rng(seed)

    def svd(a, full_matrices=True, compute_uv=True, **kw):
        U, s, Vt = real_svd(a, full_matrices=full_matrices, compute_uv=True, **kw)
        Vt = Vt.copy()
        U = U.copy()
        # Vt rows beyond len(s) (full_matrices) span the null space: any rotation is valid.
        sv = np.zeros(Vt.shape[0])
        sv[: s.size] = s
        start = 0
        while start < Vt.shape[0]:
            end = start + 1
            while end < Vt.shape[0] and abs(sv[end] - sv[start]) <= 1e-12 * max(sv[0], 1.0):
                end += 1
            size = end - start
            R = np.linalg.qr(rng.normal(size=(size, size)))[0]
            Vt[start:end] = R.T @ Vt[start:end]
            if start < U.shape[1]:
                cols = slice(start, min(end, U.shape[1]))
                n_u = cols.stop - cols.start
                U[:, cols] = U[:, cols] @ R[:n_u, :n_u] if n_u == size else U[:, cols]
            start = end
        return U, s, Vt

    monkeypatch.setattr(geometry.np.linalg, "svd", svd)


def test_canonical_sign_makes_the_largest_entry_positive():
    v = np.array([0.3, -0.9, 0.1])
    np.testing.assert_array_equal(canonical_sign(v), [-0.3, 0.9, -0.1])
    cols = np.array([[1.0, 0.2], [-2.0, -0.5]])
    np.testing.assert_array_equal(canonical_sign(cols, axis=0), [[-1.0, -0.2], [2.0, 0.5]])
    rows = cols.T
    np.testing.assert_array_equal(canonical_sign(rows, axis=1), [[-1.0, 2.0], [-0.2, 0.5]])
    np.testing.assert_array_equal(canonical_sign(np.zeros(3)), np.zeros(3))


def test_canonical_sign_breaks_ties_at_the_first_entry_despite_rounding():
    # (0.5, 1, -1) normalized: the 1 and the -1 differ by one ulp on some machines.
    v = np.array([0.5, 1.0, -1.0]) / 1.5
    tilted = v.copy()
    tilted[2] = np.nextafter(tilted[2], -1.0)  # |v[2]| now a hair larger than |v[1]|
    for w in (v, -v, tilted, -tilted):
        out = canonical_sign(w)
        assert out[1] > 0 and out[2] < 0
    np.testing.assert_allclose(readable_direction(-tilted), [0.5, 1.0, -1.0], rtol=1e-12)
    np.testing.assert_allclose(readable_direction(tilted), [0.5, 1.0, -1.0], rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_negating_the_input_basis_gives_the_identical_output(seed):
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.normal(size=(6, 3)))[0]
    np.testing.assert_array_equal(canonical_sign(-B, axis=0), canonical_sign(B, axis=0))
    np.testing.assert_array_equal(canonical_sign(-B.T, axis=1), canonical_sign(B.T, axis=1))
    # a rotated basis of the same subspace gives the same canonical basis
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    C = canonical_basis(B)
    np.testing.assert_allclose(canonical_basis(B @ R), C, atol=ATOL)
    np.testing.assert_allclose(canonical_basis(-B), C, atol=ATOL)
    np.testing.assert_allclose(C.T @ C, np.eye(3), atol=ATOL)
    np.testing.assert_allclose(C @ C.T, B @ B.T, atol=ATOL)  # the same subspace


MAPS = [
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]],  # rank 1: a 2-D null space
    [[2.0, -1.0, 0.5], [0.3, 4.0, -2.0]],  # rank 2: a null line
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],  # equal singular values
    [[0.0, 1.0, -1.0, 0.5], [1.0, 0.0, 0.5, 0.0]],
]


@pytest.mark.parametrize("M", MAPS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_null_and_row_spaces_do_not_depend_on_the_lapack(monkeypatch, M, seed):
    N0, R0 = null_space(M), row_space(M)
    spaces0 = query_map_spaces(M)
    _other_lapack(monkeypatch, seed)
    np.testing.assert_allclose(null_space(M), N0, atol=ATOL)
    np.testing.assert_allclose(row_space(M), R0, atol=ATOL)
    spaces = query_map_spaces(M)
    for key in ("null_dir", "row_dir"):
        np.testing.assert_allclose(getattr(spaces, key), getattr(spaces0, key), atol=ATOL)


def test_the_null_direction_of_the_lab_reads_with_its_first_largest_entry_positive():
    # Row-reduced to x + 2y - 2z = 0 and 2y ... : the lab's (1, 2, -2)/2 example.
    M = [[2.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    sp = query_map_spaces(M)
    np.testing.assert_allclose(sp.null_dir, [0.5, 1.0, -1.0], atol=ATOL)


POINT_SETS = {
    "random": np.random.default_rng(7).normal(size=(12, 5)),
    # three equal clusters on orthogonal axes: three equal singular values
    "three equal fields": np.kron(np.eye(3), np.ones((4, 1))),
    "fewer points than k": np.array([[1.0, 2.0, 0.0, 0.0]]),
    "a line in 4-D": np.outer([1.0, -2.0, 3.0], [0.0, 1.0, -1.0, 0.5]),
}


@pytest.mark.parametrize("name", sorted(POINT_SETS))
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [1, 2])
def test_best_subspace_does_not_depend_on_the_lapack(monkeypatch, name, k, seed):
    P = POINT_SETS[name]
    B0, e0 = best_subspace(P, k)
    _other_lapack(monkeypatch, seed)
    B1, e1 = best_subspace(P, k)
    np.testing.assert_allclose(B1, B0, atol=ATOL)
    np.testing.assert_allclose(e1, e0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(B1.T @ B1, np.eye(k), atol=ATOL)
    for c in range(k):
        j = int(np.argmax(np.abs(B1[:, c]) >= np.abs(B1[:, c]).max() * (1 - 1e-9)))
        assert B1[j, c] > 0
