"""The edited vectors' tips in a plane and the share of their squared length it holds, kept
from one refresh to the next: an edit of one row re-projects that row only.

A refresh after an edit of one token's vector at n = 4,096, d = 1,024 projected and squared
all 4 million numbers again (tens of milliseconds on the window's thread); a
:class:`Projection` made with the one before redoes the rows that changed and sums n row
totals. Its numbers are those :func:`.plane.project` and :func:`.plane.fraction_in_plane`
give for the whole matrix (each row is computed the same way, alone or among the others).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .plane import Array, Plane, plane_share, project, squared_lengths

# Beyond this share of changed rows everything is recomputed (as fast, and simpler).
REDO_SHARE = 0.25

__all__ = ["REDO_SHARE", "Projection", "ShownVectors", "changed_rows"]


def changed_rows(before: Array | None, after: Array) -> NDArray[np.int_] | None:
    """The rows (ascending) in which ``after`` differs from ``before`` (both (n, d)); None if
    they cannot be compared row by row (no ``before``, or another shape)."""
    if before is None or before.shape != after.shape or after.ndim != 2:
        return None
    if before is after:
        return np.zeros(0, dtype=int)
    return np.flatnonzero(np.any(before != after, axis=1))


@dataclass(frozen=True, eq=False)
class Projection:
    """``matrix`` (n, d) seen in ``plane``: ``tips`` (n, 2), each row's squared length
    ``lengths`` (n,) and the ``share`` of the total in the plane."""

    matrix: Array
    plane: Plane
    tips: Array
    lengths: Array
    share: float

    @classmethod
    def of(
        cls,
        matrix: Array,
        plane: Plane,
        before: Projection | None = None,
        rows: NDArray[np.int_] | None = None,
    ) -> Projection:
        """``matrix`` in ``plane``; with ``before`` (the same plane, the previous matrix) only the
        rows that changed are projected anew. ``rows``: those rows if the caller knows them."""
        M = np.asarray(matrix, dtype=float)
        if before is not None and before.plane is plane and before.matrix is M:
            return before
        if before is not None and (before.plane is plane or before.plane.same_as(plane)):
            if rows is None:
                rows = changed_rows(before.matrix, M)
            if rows is not None and len(rows) <= REDO_SHARE * len(M):
                tips, lengths = before.tips.copy(), before.lengths.copy()
                if len(rows):
                    part = M[rows]
                    tips[rows] = project(part, plane)
                    lengths[rows] = squared_lengths(part)
                return cls._made(M, plane, tips, lengths)
        return cls._made(M, plane, project(M, plane), squared_lengths(M))

    @classmethod
    def _made(cls, M: Array, plane: Plane, tips: Array, lengths: Array) -> Projection:
        tips.flags.writeable = False
        lengths.flags.writeable = False
        return cls(M, plane, tips, lengths, plane_share(tips, lengths))


class ShownVectors:
    """What a view showed last: the edited matrix and its :class:`Projection`. ``changed``
    says which rows a new matrix changed, ``projection`` projects it reusing the rest."""

    def __init__(self) -> None:
        self.matrix: Array | None = None
        self.rows: NDArray[np.int_] | None = None  # the rows the last ``changed`` found
        self.before: Array | None = None
        self.projection: Projection | None = None

    def changed(self, matrix: Array) -> NDArray[np.int_] | None:
        """The rows of ``matrix`` that differ from the one shown before (None: unknown)."""
        self.rows = changed_rows(self.matrix, matrix)
        self.before, self.matrix = self.matrix, matrix
        return self.rows

    def project(self, matrix: Array, plane: Plane) -> Projection:
        """``matrix`` (given to :meth:`changed` first) in ``plane``."""
        old = self.projection
        known = self.rows if old is not None and old.matrix is self.before else None
        self.projection = Projection.of(matrix, plane, old, known)
        return self.projection
