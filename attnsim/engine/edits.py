"""Pure edits of a Scenario: each returns a new, validated scenario and leaves the old one.

The workbench wraps each in an undoable command; scripts can use them directly.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from .geometry import minimal_row_update
from .scenario import Scenario, ScenarioError

Matrix = Literal["Wq", "Wk", "Wv"]
VectorKind = Literal["x", "q", "k", "v"]

__all__ = [
    "add_token",
    "move_token",
    "place_key",
    "place_query",
    "place_vector",
    "placed_matrix",
    "remove_token",
    "rename_token",
    "set_cell",
    "set_head_matrix",
    "set_mask_cell",
    "set_matrix",
    "set_vector",
    "toggle_mask_cell",
]


# A row edit of a large array (a drag's every move at n = 4,096, d = 1,024: 32 MB) copied the
# array into new memory. Faulting those pages in could wait 75-90 ms of system time while a
# trace on another thread mapped or unmapped its own large arrays. The copy now reuses the
# memory of an earlier row edit's array that nothing refers to any more (a drag move that was
# replaced before it went in): CPython's reference count says so exactly (before 3.14, whose
# interpreter may hold references it does not count, the reuse is off).
RECYCLE_BYTES = 8 << 20
_RECENT = 4  # the move in, one traced ahead, the move waiting, and one dropped
_recent: list[np.ndarray] = []
_recent_lock = threading.Lock()
_COUNTS_EXACT = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def _copy_of(base: np.ndarray) -> np.ndarray:
    """A writable copy of ``base``, in the memory of a dropped row edit's array if there is one."""
    if not _COUNTS_EXACT or base.nbytes < RECYCLE_BYTES:
        return base.copy()
    out = None
    with _recent_lock:  # (edits may be made on a worker's thread too: a sweep, a script)
        for i in range(len(_recent)):
            spare = _recent[i]
            # three references: the list's, ``spare`` and getrefcount's argument; no other
            if (sys.getrefcount(spare) == 3 and spare.shape == base.shape
                    and spare.dtype == base.dtype):  # fmt: skip
                out = _recent.pop(i)
                break
            del spare
    if out is None:
        out = base.copy()
    else:
        out.flags.writeable = True
        np.copyto(out, base)
    with _recent_lock:
        _recent.append(out)
        del _recent[:-_RECENT]
    return out


def _row_array(base: np.ndarray, row: int, value: ArrayLike, field: str) -> np.ndarray:
    vec = np.asarray(value, dtype=float)
    if vec.shape != (base.shape[1],):
        raise ScenarioError(field, f"row must have {base.shape[1]} numbers, got shape {vec.shape}")
    if not np.isfinite(vec).all():
        raise ScenarioError(field, f"refused {vec.tolist()}: values must be finite numbers")
    if not 0 <= row < base.shape[0]:
        raise ScenarioError(field, f"row {row} does not exist (there are {base.shape[0]})")
    out = _copy_of(base)
    out[row] = vec
    out.flags.writeable = False  # the scenario keeps this copy rather than copying it again
    return out


def vector_field(sc: Scenario, kind: VectorKind) -> str:
    """The scenario field that holds vectors of this kind, for a drag or a table edit."""
    if sc.mode == "tokens":
        if kind != "x":
            raise ScenarioError(kind, "token scenarios edit X; queries and keys follow from Wq, Wk")
        return "X"
    if kind == "x":
        raise ScenarioError("X", "direct scenarios have no X; edit q, k or v")
    return kind.upper()


def set_vector(sc: Scenario, kind: VectorKind, row: int, value: ArrayLike) -> Scenario:
    """Replace one row of X (tokens mode) or of Q / K / V (direct mode)."""
    name = vector_field(sc, kind)
    base = getattr(sc, name)
    return sc.replace(**{name: _row_array(base, row, value, name)})


def set_cell(sc: Scenario, kind: VectorKind, row: int, col: int, value: float) -> Scenario:
    name = vector_field(sc, kind)
    base = getattr(sc, name)
    vec = base[row].copy()
    if not 0 <= col < vec.size:
        raise ScenarioError(name, f"column {col} does not exist (there are {vec.size})")
    vec[col] = float(value)
    return set_vector(sc, kind, row, vec)


def set_head_matrix(sc: Scenario, head: int, which: Matrix, W: ArrayLike) -> Scenario:
    """Replace Wq, Wk or Wv of one head (tokens mode)."""
    if sc.mode != "tokens":
        raise ScenarioError(which, "direct scenarios have no projection matrices")
    if not 0 <= head < len(sc.heads):
        raise ScenarioError("heads", f"head {head} does not exist (there are {len(sc.heads)})")
    old = getattr(sc.heads[head], which)
    arr = np.asarray(W, dtype=float)
    if arr.shape != old.shape:
        raise ScenarioError(
            f"heads[{head}].{which}", f"must keep its shape {old.shape}, got {arr.shape}"
        )
    heads = list(sc.heads)
    heads[head] = heads[head].replace(**{which: arr})
    return sc.replace(heads=tuple(heads))


def placed_matrix(sc: Scenario, kind: str) -> str:
    """The matrix that :func:`place_vector` changes: Q / K (direct) or Wq / Wk (tokens)."""
    if kind not in ("query", "key"):
        raise ValueError(f"only a query or a key can be placed, not {kind!r}")
    if sc.mode == "direct":
        return "Q" if kind == "query" else "K"
    return "Wq" if kind == "query" else "Wk"


def place_vector(sc: Scenario, kind: str, row: int, target: ArrayLike, head: int = 0) -> Scenario:
    """Put this query (key) here: query or key ``row`` becomes ``target`` (d_k,).

    The one implementation of the gesture, so that the 3-D view, the explorer and the routing
    lab move a tip the same way. A direct scenario changes only that row of Q (K). A token
    scenario computes queries and keys, so Wq (Wk) of ``head`` takes the smallest change
    (Frobenius norm) that maps the token's input ``X[row]`` to ``target``; every other query
    (key) moves with it. Refused (ScenarioError / ValueError, nothing changed) for a row or head
    that does not exist, a non-finite target, or a token whose input is zero.
    """
    which = placed_matrix(sc, kind)
    if sc.mode == "direct":
        return set_vector(sc, "q" if kind == "query" else "k", row, target)
    if not 0 <= head < len(sc.heads):
        raise ScenarioError("heads", f"head {head} does not exist (there are {len(sc.heads)})")
    assert sc.X is not None
    if not 0 <= row < sc.X.shape[0]:
        raise ScenarioError(which, f"token {row} does not exist (there are {sc.X.shape[0]})")
    W = getattr(sc.heads[head], which)
    new_W = minimal_row_update(sc.X[row], W, target)
    return set_head_matrix(sc, head, which, new_W)  # type: ignore[arg-type]


def place_query(sc: Scenario, row: int, target: ArrayLike, head: int = 0) -> Scenario:
    """:func:`place_vector` for query ``row``."""
    return place_vector(sc, "query", row, target, head)


def place_key(sc: Scenario, row: int, target: ArrayLike, head: int = 0) -> Scenario:
    """:func:`place_vector` for key ``row``."""
    return place_vector(sc, "key", row, target, head)


def set_matrix(sc: Scenario, name: str, W: ArrayLike, head: int = 0) -> Scenario:
    """Replace a named matrix: Wq / Wk / Wv (of ``head``), Wo, X, Q, K or V."""
    if name in ("Wq", "Wk", "Wv"):
        return set_head_matrix(sc, head, name, W)  # type: ignore[arg-type]
    old = getattr(sc, name, None)
    if name not in ("Wo", "X", "Q", "K", "V") or old is None:
        raise ScenarioError(name, f"this scenario has no matrix {name}")
    arr = np.asarray(W, dtype=float)
    if arr.shape != old.shape:
        raise ScenarioError(name, f"must keep its shape {old.shape}, got {arr.shape}")
    return sc.replace(**{name: arr})


def _mask_without(sc: Scenario, keep_rows: Sequence[int] | None, keep_cols: Sequence[int]):
    if isinstance(sc.mask, str):
        return sc.mask
    m = np.asarray(sc.mask)
    if keep_rows is not None:
        m = m[list(keep_rows)]
    return m[:, list(keep_cols)]


def add_token(
    sc: Scenario,
    name: str,
    vector: ArrayLike | None = None,
    *,
    index: int | None = None,
    value: ArrayLike | None = None,
) -> Scenario:
    """Insert a token (tokens mode: a row of X) or a key/value pair (direct mode).

    ``vector`` defaults to zeros; ``index`` to the end. In direct mode ``vector`` is the key and
    ``value`` the value.
    """
    n = sc.n_tokens
    i = n if index is None else index
    if not 0 <= i <= n:
        raise ScenarioError("tokens", f"cannot insert at {i}; positions run from 0 to {n}")
    tokens = (*sc.tokens[:i], name, *sc.tokens[i:])
    changes: dict[str, object] = {"tokens": tokens}
    if sc.mode == "tokens":
        assert sc.X is not None
        row = np.zeros(sc.d) if vector is None else np.asarray(vector, dtype=float)
        changes["X"] = np.insert(np.asarray(sc.X), i, row, axis=0)
        if not isinstance(sc.mask, str):
            m = np.insert(np.asarray(sc.mask), i, True, axis=1)
            changes["mask"] = np.insert(m, i, True, axis=0)
        if sc.receiving >= i:
            changes["receiving"] = sc.receiving + 1
    else:
        assert sc.K is not None and sc.V is not None
        krow = np.zeros(sc.d_k) if vector is None else np.asarray(vector, dtype=float)
        vrow = np.zeros(sc.d_v) if value is None else np.asarray(value, dtype=float)
        changes["K"] = np.insert(np.asarray(sc.K), i, krow, axis=0)
        changes["V"] = np.insert(np.asarray(sc.V), i, vrow, axis=0)
        if not isinstance(sc.mask, str):
            changes["mask"] = np.insert(np.asarray(sc.mask), i, True, axis=1)
    return sc.replace(**changes)


def remove_token(sc: Scenario, i: int) -> Scenario:
    n = sc.n_tokens
    if n <= 1:
        raise ScenarioError("tokens", "cannot remove the last token")
    if not 0 <= i < n:
        raise ScenarioError("tokens", f"token {i} does not exist (there are {n})")
    keep = [j for j in range(n) if j != i]
    changes: dict[str, object] = {"tokens": tuple(sc.tokens[j] for j in keep)}
    if sc.mode == "tokens":
        assert sc.X is not None
        changes["X"] = np.asarray(sc.X)[keep]
        changes["mask"] = _mask_without(sc, keep, keep)
        r = sc.receiving
        changes["receiving"] = r - 1 if r > i else min(r, n - 2)
    else:
        assert sc.K is not None and sc.V is not None
        changes["K"] = np.asarray(sc.K)[keep]
        changes["V"] = np.asarray(sc.V)[keep]
        changes["mask"] = _mask_without(sc, None, keep)
    return sc.replace(**changes)


def rename_token(sc: Scenario, i: int, name: str) -> Scenario:
    if not 0 <= i < sc.n_tokens:
        raise ScenarioError("tokens", f"token {i} does not exist (there are {sc.n_tokens})")
    tokens = list(sc.tokens)
    tokens[i] = name
    return sc.replace(tokens=tuple(tokens))


def move_token(sc: Scenario, i: int, j: int) -> Scenario:
    """Move token i to position j (sentence order matters under a causal mask)."""
    n = sc.n_tokens
    if not (0 <= i < n and 0 <= j < n):
        raise ScenarioError("tokens", f"cannot move {i} to {j}; positions run from 0 to {n - 1}")
    order = list(range(n))
    order.insert(j, order.pop(i))
    changes: dict[str, object] = {"tokens": tuple(sc.tokens[k] for k in order)}
    if sc.mode == "tokens":
        assert sc.X is not None
        changes["X"] = np.asarray(sc.X)[order]
        changes["mask"] = _mask_without(sc, order, order)
        changes["receiving"] = order.index(sc.receiving)
    else:
        assert sc.K is not None and sc.V is not None
        changes["K"] = np.asarray(sc.K)[order]
        changes["V"] = np.asarray(sc.V)[order]
        changes["mask"] = _mask_without(sc, None, order)
    return sc.replace(**changes)


def set_mask_cell(sc: Scenario, row: int, col: int, allowed: bool) -> Scenario:
    """Allow or forbid one query-key pair; the mask becomes custom. A row keeps one legal key."""
    m = sc.mask_matrix()
    full = np.ones((sc.n_queries, sc.n_tokens), dtype=bool) if m is None else m.copy()
    full[row, col] = bool(allowed)
    if not full[row].any():
        label = sc.query_labels[row]
        raise ScenarioError(
            "mask", f"refused: {label!r} would have no key left to attend to (a row needs one)"
        )
    return sc.replace(mask=full)


def toggle_mask_cell(sc: Scenario, row: int, col: int) -> Scenario:
    m = sc.mask_matrix()
    allowed = True if m is None else bool(m[row, col])
    return set_mask_cell(sc, row, col, not allowed)
