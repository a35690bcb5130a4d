"""Vector geometry for attention: products, projections, subspaces, camera and picking.

Everything here returns arrays, so the panels draw what these functions compute and the tests
check arrays rather than pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.floating]

__all__ = [
    "Camera",
    "angle",
    "attentionviz_layout",
    "best_subspace",
    "bilinear_form",
    "canonical_basis",
    "canonical_sign",
    "cosine",
    "dot",
    "minimal_row_update",
    "null_space",
    "pick",
    "projection",
    "projection_vector",
    "reparametrize",
    "row_space",
    "scaled_dot",
    "score_change_under_reparametrization",
]


def _vec(a: ArrayLike, name: str) -> Array:
    arr = np.asarray(a, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains a non-finite value")
    return arr


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    va, vb = _vec(a, "a"), _vec(b, "b")
    if va.shape != vb.shape:
        raise ValueError(f"a and b must have the same length, got {va.shape[0]} and {vb.shape[0]}")
    return va, vb


def _nonzero_norm(v: Array, name: str) -> float:
    n = float(np.linalg.norm(v))
    if n == 0.0:
        raise ValueError(
            f"{name} is the zero vector, so its direction (and this angle) is undefined"
        )
    return n


def dot(a: ArrayLike, b: ArrayLike) -> float:
    """Dot product of two vectors of shape (d,)."""
    va, vb = _pair(a, b)
    return float(va @ vb)


def cosine(a: ArrayLike, b: ArrayLike) -> float:
    """Cosine similarity of two non-zero vectors of shape (d,); a zero vector is an error."""
    va, vb = _pair(a, b)
    value = float(va @ vb) / (_nonzero_norm(va, "a") * _nonzero_norm(vb, "b"))
    return max(-1.0, min(1.0, value))


def scaled_dot(a: ArrayLike, b: ArrayLike, d_k: int | None = None) -> float:
    """``a · b / sqrt(d_k)``; ``d_k`` defaults to the vectors' length."""
    va, vb = _pair(a, b)
    dk = va.shape[0] if d_k is None else d_k
    if int(dk) != dk or dk < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    return float(va @ vb) / math.sqrt(dk)


def projection(a: ArrayLike, b: ArrayLike) -> float:
    """Signed length of the shadow of a on b's line: ``a · b / ||b||``."""
    va, vb = _pair(a, b)
    return float(va @ vb) / _nonzero_norm(vb, "b")


def projection_vector(a: ArrayLike, b: ArrayLike) -> Array:
    """The shadow of a on b's line as a vector, shape (d,): ``(a · b / ||b||²) b``."""
    va, vb = _pair(a, b)
    nb = _nonzero_norm(vb, "b")
    return (float(va @ vb) / (nb * nb)) * vb


def angle(a: ArrayLike, b: ArrayLike, *, degrees: bool = False) -> float:
    """Angle between two non-zero vectors, in radians (or degrees)."""
    va, vb = _pair(a, b)
    na, nb = _nonzero_norm(va, "a"), _nonzero_norm(vb, "b")
    # Kahan's formula: accurate near 0 and pi, where arccos of the cosine is not.
    u, w = va * nb, vb * na
    theta = 2.0 * math.atan2(float(np.linalg.norm(u - w)), float(np.linalg.norm(u + w)))
    return math.degrees(theta) if degrees else theta


def _matrix(M: ArrayLike, name: str = "M") -> Array:
    arr = np.asarray(M, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains a non-finite value")
    return arr


# Entries whose magnitudes differ by less than this (relative) count as tied: rounding in a
# different BLAS/LAPACK path must not decide which of two equal entries is "the largest".
SIGN_TIE_RTOL = 1e-9


def canonical_sign(vectors: ArrayLike, axis: int = 0) -> Array:
    """``vectors`` with each one's sign fixed so that its largest-magnitude entry is positive.

    ``axis`` is the axis that runs along one vector: ``axis=0`` for column vectors (d, k),
    ``axis=-1`` or 1 for row vectors (k, d); a 1-D array is one vector. Entries within
    ``SIGN_TIE_RTOL`` of the largest magnitude are tied and the first of them decides, so the
    result does not depend on which sign an SVD, eigen- or QR decomposition happened to return.
    Zero vectors stay zero. Returns a new float array of the same shape.
    """
    a = np.array(vectors, dtype=float)
    if a.ndim == 0:
        raise ValueError("canonical_sign needs at least a 1-D array")
    moved = np.moveaxis(a, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    for v in flat:
        mag = np.abs(v)
        peak = float(mag.max()) if mag.size else 0.0
        if peak == 0.0 or not math.isfinite(peak):
            continue
        j = int(np.flatnonzero(mag >= peak * (1.0 - SIGN_TIE_RTOL))[0])
        if v[j] < 0:
            v *= -1.0
    return np.moveaxis(flat.reshape(moved.shape), -1, axis).copy()


def canonical_basis(basis: ArrayLike) -> Array:
    """The orthonormal basis (d, r) of the span of ``basis``'s orthonormal columns that depends
    only on the subspace, not on the columns given.

    A decomposition may return any rotation of a basis of a subspace of dimension > 1 (and any
    sign in dimension 1). This one is Gram-Schmidt on the columns of the projector ``B B^T``,
    taking at each step the column with the largest remaining part (the first of ties within
    ``SIGN_TIE_RTOL``), then :func:`canonical_sign`. For a line it is the unit vector with its
    largest entry positive.
    """
    B = np.asarray(basis, dtype=float)
    if B.ndim != 2:
        raise ValueError(f"basis must be a 2-D (d, r) array, got shape {B.shape}")
    d, r = B.shape
    if r == 0:
        return np.zeros((d, 0))
    if r == 1:
        return canonical_sign(B / float(np.linalg.norm(B[:, 0])), axis=0)
    P = B @ B.T
    out = np.zeros((d, r))
    rest = P.copy()
    for c in range(r):
        norms = np.linalg.norm(rest, axis=0)
        peak = float(norms.max())
        j = int(np.flatnonzero(norms >= peak * (1.0 - SIGN_TIE_RTOL))[0])
        u = rest[:, j] / norms[j]
        # twice: one pass leaves a visible residue when columns are nearly dependent
        u = u - out[:, :c] @ (out[:, :c].T @ u)
        u /= float(np.linalg.norm(u))
        out[:, c] = u
        rest = rest - np.outer(u, u @ rest)
    return canonical_sign(out, axis=0)


def _rank_and_svd(M: Array, rtol: float | None) -> tuple[int, Array, Array, Array]:
    U, s, Vt = np.linalg.svd(M, full_matrices=True)
    tol = (rtol if rtol is not None else max(M.shape) * np.finfo(float).eps) * (
        s[0] if s.size else 0.0
    )
    rank = int(np.sum(s > tol))
    return rank, U, s, Vt


def null_space(M: ArrayLike, rtol: float | None = None) -> Array:
    """Orthonormal basis of the null space of ``M`` (m, n): columns of shape (n, n - rank).

    The basis is :func:`canonical_basis` of the space, the same on every machine.
    """
    A = _matrix(M)
    rank, _, _, Vt = _rank_and_svd(A, rtol)
    return canonical_basis(Vt[rank:].T)


def row_space(M: ArrayLike, rtol: float | None = None) -> Array:
    """Orthonormal basis of the row space of ``M`` (m, n): columns of shape (n, rank).

    The columns are the right singular vectors, most amplified first, made independent of the
    LAPACK path (a canonical sign, and a canonical basis among equal singular values).
    """
    A = _matrix(M)
    rank, _, s, Vt = _rank_and_svd(A, rtol)
    return _canonical_singular_vectors(Vt[:rank], s[:rank], rank)


def bilinear_form(Wq: ArrayLike, Wk: ArrayLike) -> Array:
    """``M = Wq @ Wk.T`` of shape (d, d), so that the raw score is ``x_i M x_j^T``."""
    A, B = _matrix(Wq, "Wq"), _matrix(Wk, "Wk")
    if A.shape != B.shape:
        raise ValueError(f"Wq {A.shape} and Wk {B.shape} must have the same shape")
    return A @ B.T


def reparametrize(Wq: ArrayLike, Wk: ArrayLike, R: ArrayLike) -> tuple[Array, Array]:
    """Return ``(Wq R, Wk R^-T)`` for an invertible (d_k, d_k) matrix R; scores are unchanged."""
    A, B, Rm = _matrix(Wq, "Wq"), _matrix(Wk, "Wk"), _matrix(R, "R")
    if Rm.shape != (A.shape[1], A.shape[1]):
        raise ValueError(f"R must be ({A.shape[1]}, {A.shape[1]}), got {Rm.shape}")
    if np.linalg.cond(Rm) > 1e12:
        raise ValueError("R is singular (or nearly so); the reparametrization needs an inverse")
    return A @ Rm, B @ np.linalg.inv(Rm).T


def score_change_under_reparametrization(
    X: ArrayLike, Wq: ArrayLike, Wk: ArrayLike, R: ArrayLike
) -> float:
    """Largest absolute change of ``Q K^T`` when (Wq, Wk) becomes (Wq R, Wk R^-T)."""
    Xa = _matrix(X, "X")
    before = (Xa @ np.asarray(Wq, float)) @ (Xa @ np.asarray(Wk, float)).T
    Wq2, Wk2 = reparametrize(Wq, Wk, R)
    after = (Xa @ Wq2) @ (Xa @ Wk2).T
    return float(np.max(np.abs(after - before))) if before.size else 0.0


def best_subspace(points: ArrayLike, k: int) -> tuple[Array, Array]:
    """Best k-dimensional subspace through the origin for arrows drawn from the origin.

    Parameters
    ----------
    points : (m, d)
    k : int, 1 <= k <= d

    Returns
    -------
    basis : (d, k), orthonormal columns, signs fixed so each column's largest entry is positive
    explained : (k,), fraction of the total squared length captured by each direction
        (all zero when every point is the origin).
    """
    P = _matrix(points, "points")
    d = P.shape[1]
    if not 1 <= k <= d:
        raise ValueError(f"k must be between 1 and d = {d}, got {k}")
    if P.shape[0] == 0 or not np.any(P):
        return np.eye(d)[:, :k].copy(), np.zeros(k)
    # Rescaling changes neither the directions nor the fractions, and keeps s**2 from
    # underflowing (tiny inputs) or overflowing (huge ones).
    P = P / np.max(np.abs(P))
    # The reduced SVD suffices when there are at least k points (and costs O(m d^2), not the
    # O(m^2) memory of the full one); with fewer, the full one completes the basis.
    _, s, Vt = np.linalg.svd(P, full_matrices=P.shape[0] < k)
    basis = _canonical_singular_vectors(Vt, s, k)
    energy = np.zeros(d)
    energy[: s.size] = s**2
    total = float(energy.sum())
    return basis, energy[:k] / total


def _canonical_singular_vectors(Vt: Array, s: Array, k: int) -> Array:
    """The first ``k`` right singular vectors (d, k), independent of the LAPACK that made them.

    A singular value with a unique vector fixes it up to sign; equal singular values (within
    ``SIGN_TIE_RTOL``, e.g. three equal clusters on orthogonal axes) fix only the span of
    their vectors, so those are replaced by :func:`canonical_basis` of that span, in order.
    """
    d = Vt.shape[1]
    sv = np.zeros(d)
    sv[: s.size] = s
    zero = max(Vt.shape) * np.finfo(float).eps * float(sv[0])
    out = np.zeros((d, k))
    start = 0
    while start < k:
        if sv[start] <= zero:
            # Directions that capture nothing: any completion of the basis is as good, so
            # take the canonical basis of the whole remaining complement.
            group = null_space(out[:, :start].T) if start else np.eye(d)
            out[:, start:] = group[:, : k - start]
            break
        end = start + 1
        while end < Vt.shape[0] and sv[end] >= sv[start] * (1.0 - SIGN_TIE_RTOL):
            end += 1
        group = canonical_basis(Vt[start:end].T)
        take = min(end, k) - start
        out[:, start : start + take] = group[:, :take]
        start = end
    return out


def minimal_row_update(x: ArrayLike, W: ArrayLike, target: ArrayLike) -> Array:
    """Smallest change (Frobenius norm) to W so that ``x @ W_new == target``.

    Parameters
    ----------
    x : (d,), the token's input vector (must be non-zero)
    W : (d, d_out)
    target : (d_out,)

    Returns
    -------
    W_new : (d, d_out) = ``W + x^T (target - x W) / (x · x)``
    """
    xv = _vec(x, "x")
    Wm = _matrix(W, "W")
    tv = _vec(target, "target")
    if Wm.shape != (xv.shape[0], tv.shape[0]):
        raise ValueError(f"W must be {(xv.shape[0], tv.shape[0])}, got {Wm.shape}")
    xx = float(xv @ xv)
    if xx == 0.0:
        raise ValueError(
            "this token's input vector is zero, so no change of the projection can move it"
        )
    return Wm + np.outer(xv, tv - xv @ Wm) / xx


def attentionviz_layout(Q: ArrayLike, K: ArrayLike) -> tuple[Array, Array, Array, float]:
    """Make distance follow attention without changing any weight (AttentionViz-style).

    Keys are translated by ``t = mean(Q) - mean(K)`` (adds ``q_i · t`` to every score of row i,
    a constant softmax ignores), then queries are scaled by ``c`` and keys by ``1 / c`` so their
    mean norms match (leaves every ``q · k`` unchanged).

    Returns ``(Q_new (n_q, d_k), K_new (n_k, d_k), t (d_k,), c)``.
    """
    Qa, Ka = _matrix(Q, "Q"), _matrix(K, "K")
    if Qa.shape[1] != Ka.shape[1]:
        raise ValueError(f"Q and K widths differ: {Qa.shape[1]} vs {Ka.shape[1]}")
    t = Qa.mean(axis=0) - Ka.mean(axis=0)
    K2 = Ka + t
    mq = float(np.linalg.norm(Qa, axis=1).mean())
    mk = float(np.linalg.norm(K2, axis=1).mean())
    c = math.sqrt(mk / mq) if mq > 0 and mk > 0 else 1.0
    return Qa * c, K2 / c, t, c


@dataclass(frozen=True)
class Camera:
    """An orbit camera around the origin: yaw about the vertical axis, then pitch.

    ``distance`` is in data units from the origin; ``fov_deg`` the vertical field of view;
    ``zoom`` multiplies the projected size.
    """

    yaw_deg: float = 35.0
    pitch_deg: float = 25.0
    distance: float = 6.0
    fov_deg: float = 35.0
    zoom: float = 1.0

    def rotation(self) -> Array:
        """World-to-camera rotation (3, 3). World axes: x right, y depth, z up."""
        yaw, pitch = math.radians(self.yaw_deg), math.radians(self.pitch_deg)
        cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
        # Camera basis in world coordinates. At yaw = pitch = 0 the camera looks along +y, so
        # x is to the right and z is up; positive pitch looks down from above.
        # up = right x forward, written out (np.cross and np.stack cost ~0.1 ms a call, and a
        # drag's move asks twice): the same products, so the same floats to the last bit.
        fx, fy = sy * cp, cy * cp
        return np.array(
            [
                [cy, -sy, 0.0],
                [(-sy) * (-sp) - 0.0 * fy, 0.0 * fx - cy * (-sp), cy * fy - (-sy) * fx],
                [fx, fy, -sp],
            ]
        )

    def project(self, points: ArrayLike, width: float, height: float) -> tuple[Array, Array]:
        """Project world points (m, 3) to screen pixels.

        Returns ``(xy (m, 2), depth (m,))``; larger depth is farther from the camera. Screen y
        grows downwards, as in Qt.
        """
        P = np.asarray(points, dtype=float).reshape(-1, 3)
        cam = P @ self.rotation().T
        depth = cam[:, 2] + self.distance
        focal = self.zoom * 0.5 * height / math.tan(math.radians(self.fov_deg) / 2)
        safe = np.maximum(depth, 1e-6 * self.distance)
        xy = np.empty((P.shape[0], 2))
        xy[:, 0] = width / 2 + focal * cam[:, 0] / safe
        xy[:, 1] = height / 2 - focal * cam[:, 1] / safe
        return xy, depth

    def unproject(self, xy: ArrayLike, depth: float, width: float, height: float) -> Array:
        """The world point (3,) that projects to screen point ``xy`` at camera depth ``depth``."""
        x, y = (float(v) for v in np.asarray(xy, dtype=float).reshape(2))
        focal = self.zoom * 0.5 * height / math.tan(math.radians(self.fov_deg) / 2)
        cam = np.array(
            [
                (x - width / 2) * depth / focal,
                -(y - height / 2) * depth / focal,
                depth - self.distance,
            ]
        )
        return cam @ self.rotation()

    def orbit(self, d_yaw: float, d_pitch: float) -> Camera:
        pitch = max(-90.0, min(90.0, self.pitch_deg + d_pitch))
        return Camera((self.yaw_deg + d_yaw) % 360.0, pitch, self.distance, self.fov_deg, self.zoom)

    def zoomed(self, factor: float) -> Camera:
        z = max(0.05, min(50.0, self.zoom * factor))
        return Camera(self.yaw_deg, self.pitch_deg, self.distance, self.fov_deg, z)


def pick(screen_xy: ArrayLike, x: float, y: float, radius: float) -> int | None:
    """Index of the screen point nearest to (x, y) within ``radius`` pixels, else None."""
    P = np.asarray(screen_xy, dtype=float).reshape(-1, 2)
    if P.shape[0] == 0:
        return None
    d2 = (P[:, 0] - x) ** 2 + (P[:, 1] - y) ** 2
    i = int(np.argmin(d2))
    return i if d2[i] <= radius * radius else None
