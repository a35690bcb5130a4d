"""Two texts side by side: a chosen token's residual stream in text A and in text B, layer by
layer (cosine similarity and distance), and each head's attention of that token in A and in B
with the keys aligned by their token pieces.

A token is chosen by its text ("bank"), matched against the pieces with the leading space and
the case ignored (SmolLM2's " bank", MiniLM's "bank"); its first occurrence is used unless an
occurrence is given.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .heads import Array

__all__ = ["Comparison", "align_pieces", "compare_traces", "find_token", "normal_piece"]


def normal_piece(piece: str) -> str:
    """A piece as a token is matched against it: stripped and in lower case."""
    return piece.strip().lower()


def find_token(pieces: list[str], token: str, occurrence: int = 0) -> int:
    """The position of the ``occurrence``-th piece that reads ``token`` (-1: the last one);
    raises ValueError naming the text's tokens when there is none."""
    want = normal_piece(token)
    if not want:
        raise ValueError("the chosen token is empty: give a word of the text, e.g. bank")
    hits = [i for i, p in enumerate(pieces) if normal_piece(p) == want]
    if not hits or len(hits) <= occurrence:
        shown = " ".join(repr(p) for p in pieces)
        raise ValueError(f"the token {token!r} is not in the text (its tokens: {shown})")
    return hits[occurrence]


def align_pieces(a: list[str], b: list[str]) -> list[tuple[str, int | None, int | None]]:
    """The pieces of A and B in one order: (piece, its position in A or None, in B or None);
    equal runs of pieces are matched, the rest kept in order."""
    na, nb = [normal_piece(p) for p in a], [normal_piece(p) for p in b]
    out: list[tuple[str, int | None, int | None]] = []
    sm = difflib.SequenceMatcher(a=na, b=nb, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out += [(a[i], i, j) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
        else:
            out += [(a[i], i, None) for i in range(i1, i2)]
            out += [(b[j], None, j) for j in range(j1, j2)]
    return out


@dataclass(frozen=True)
class Comparison:
    """The chosen token at ``position_a`` in A and ``position_b`` in B.

    ``cosine`` and ``distance`` (layers + 1,): entry l compares the streams entering layer l
    (entry 0: the embeddings, the last: after the last layer). ``columns`` lists the aligned
    keys (piece, position in A or None, in B or None); ``attention_a`` and ``attention_b``
    (layers, heads, len(columns)) the token's weights on them, 0 where the text lacks the key.
    """

    position_a: int
    position_b: int
    cosine: Array
    distance: Array
    columns: list[tuple[str, int | None, int | None]]
    attention_a: Array
    attention_b: Array


def _aligned(weights: Array, row: int, cols: list[int | None]) -> Array:
    w = np.asarray(weights)[:, :, row, :]
    out = np.zeros((*w.shape[:2], len(cols)), np.float32)
    for c, pos in enumerate(cols):
        if pos is not None:
            out[:, :, c] = w[:, :, pos]
    return out


def compare_traces(
    trace_a: Any, pieces_a: list[str], trace_b: Any, pieces_b: list[str], token: str
) -> Comparison:
    """Compare the token ``token`` in two forward traces of one model, at its last occurrence
    in each text: where it has read the most of its text (the final "to" of the names pair,
    whose next word is the name; the repeated "seven" of the repeated sequence)."""
    pa, pb = find_token(pieces_a, token, -1), find_token(pieces_b, token, -1)
    xa = np.asarray(trace_a.resid, dtype=np.float64)[:, pa]
    xb = np.asarray(trace_b.resid, dtype=np.float64)[:, pb]
    size = np.maximum(np.linalg.norm(xa, axis=-1) * np.linalg.norm(xb, axis=-1), 1e-30)
    cos = (xa * xb).sum(axis=-1) / size
    dist = np.linalg.norm(xa - xb, axis=-1)
    cols = align_pieces(pieces_a, pieces_b)
    att_a = _aligned(trace_a.weights, pa, [c[1] for c in cols])
    att_b = _aligned(trace_b.weights, pb, [c[2] for c in cols])
    return Comparison(pa, pb, cos.astype(np.float32), dist.astype(np.float32), cols, att_a, att_b)
