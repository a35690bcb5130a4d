"""Scenario: the editable state of attnsim as plain, validated, immutable data.

A scenario is either a *token* scenario (a sentence ``X`` and one or more heads of projection
matrices) or a *direct* scenario (queries, keys and values given as vectors, as in the routing
laboratory). It is saved as readable JSON (``format: attnsim-scenario``, ``version: 1``).

Scenarios are immutable: every edit makes a new one through :meth:`Scenario.replace`, which
validates again. Arrays inside are read-only, so an undo stack can keep old scenarios by
reference and restore exactly the previous arrays.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .attention import (
    HeadTrace,
    MultiHeadTrace,
    causal_mask,
    direct_trace,
    head_trace,
    multi_head,
)

Array = NDArray[np.float64]

FORMAT = "attnsim-scenario"
VERSION = 1
MAX_TOKENS = 4096
MAX_DIM = 1024
MAX_HEADS = 64
MAX_FILE_BYTES = 64 * 1024 * 1024
# The app's temperature range: wide enough for any teaching point, narrow enough that every
# control can show the value and no logit under- or overflows on the way.
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 1e3
MAX_ABS_VALUE = 1e6

__all__ = [
    "FORMAT",
    "MAX_ABS_VALUE",
    "MAX_DIM",
    "MAX_HEADS",
    "MAX_TEMPERATURE",
    "MAX_TOKENS",
    "MIN_TEMPERATURE",
    "VERSION",
    "Head",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "compute",
    "random_scenario",
]


class ScenarioError(ValueError):
    """A scenario that cannot be used; names the file, the field and the problem."""

    def __init__(self, field_name: str, problem: str, file: str | None = None) -> None:
        self.file = file
        self.field = field_name
        self.problem = problem
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{field_name}: {problem}")

    def in_file(self, file: str) -> ScenarioError:
        return ScenarioError(self.field, self.problem, file)


def _frozen(a: Any, field_name: str, *, ndim: int = 2) -> Array:
    """A validated read-only float64 copy of ``a`` (or ``a`` itself if it is one already)."""
    shared = (
        isinstance(a, np.ndarray) and a.dtype == np.float64 and not a.flags.writeable
        and a.base is None
    )  # fmt: skip
    if shared:
        arr = a
    else:
        if isinstance(a, list | tuple):
            _check_nested(a, field_name, ndim)
        try:
            arr = np.array(a, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ScenarioError(field_name, "must be a matrix of numbers") from None
    if arr.ndim != ndim:
        kind = "a list of numbers" if ndim == 1 else "a matrix (a list of equal-length rows)"
        raise ScenarioError(field_name, f"must be {kind}, got an array of shape {arr.shape}")
    if any(s > max(MAX_TOKENS, MAX_DIM) for s in arr.shape):
        raise ScenarioError(
            field_name,
            f"shape {arr.shape} is too large (at most {MAX_TOKENS} tokens, {MAX_DIM} dims)",
        )
    bad = out_of_range(arr)
    if bad is not None:
        cell = f"{field_name}[{', '.join(str(i) for i in bad)}]"
        raise ScenarioError(cell, value_problem(float(arr[bad])))
    arr.flags.writeable = False
    return arr


def out_of_range(arr: NDArray) -> tuple[int, ...] | None:
    """Index of the first entry that is not finite or exceeds ``MAX_ABS_VALUE``, else None.

    Every accepted value keeps the engine finite: at the bound, with d = 1024 and T = 1e-3,
    a logit is at most about 1e39, and its square (entropy, norms) stays far below 1e308.
    """
    ok = np.abs(arr) <= MAX_ABS_VALUE  # NaN compares False
    if ok.all():
        return None
    return tuple(int(i) for i in np.argwhere(~ok)[0])


def value_problem(v: float) -> str:
    """Why the value ``v`` is refused (it is non-finite or outside ±MAX_ABS_VALUE)."""
    if not math.isfinite(v):
        return f"{v} is not a finite number; values must be finite"
    text = f"{v:.6g}"
    if abs(float(text)) <= MAX_ABS_VALUE:  # rounded onto the bound: show every digit
        text = repr(v)
    return f"{text} is outside ±{MAX_ABS_VALUE:g}"


def _number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(
        x, bool | np.bool_
    )


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 40 else r[:37] + "..."


def _check_nested(a: list | tuple, field_name: str, ndim: int) -> None:
    """Name the first cell of a list-of-lists that is not a number, or the first ragged row.

    Only ``ndim`` levels are looked at (no recursion), so a deeply nested value costs nothing.
    """

    def check_cell(x: Any, where: str) -> None:
        if not _number(x):
            raise ScenarioError(where, f"{_short(x)} is not a number")
        if isinstance(x, int) and abs(x) > MAX_ABS_VALUE:
            raise ScenarioError(where, f"{_short(x)} is outside ±{MAX_ABS_VALUE:g}")

    if ndim == 1:
        for i, x in enumerate(a):
            check_cell(x, f"{field_name}[{i}]")
        return
    width = None
    for i, row in enumerate(a):
        if isinstance(row, np.ndarray) and row.ndim == 1 and row.dtype.kind in "iuf":
            cells: Any = ()  # numeric already; np.array checks the rest
        elif isinstance(row, list | tuple):
            cells = row
        else:
            raise ScenarioError(
                f"{field_name}[{i}]", f"must be a row (a list of numbers), got {_short(row)}"
            )
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise ScenarioError(
                field_name,
                f"must be a matrix (a list of equal-length rows): row {i} has {len(row)} values "
                f"but row 0 has {width}",
            )
        for j, x in enumerate(cells):
            check_cell(x, f"{field_name}[{i}, {j}]")


def _default_axes(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i + 1}" for i in range(n))


@dataclass(frozen=True, eq=False)
class Head:
    """One head's projections: ``Wq``, ``Wk`` (d, d_k) and ``Wv`` (d, d_v)."""

    Wq: Array
    Wk: Array
    Wv: Array
    name: str = ""

    def __post_init__(self) -> None:
        for n in ("Wq", "Wk", "Wv"):
            object.__setattr__(self, n, _frozen(getattr(self, n), n))

    def replace(self, **changes: Any) -> Head:
        return dataclasses.replace(self, **changes)

    def equals(self, other: Head) -> bool:
        return self.name == other.name and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in ("Wq", "Wk", "Wv")
        )


MaskSpec = Literal["none", "causal"] | NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Scenario:
    """The editable state. See the module docstring and ``docs`` in the README for the JSON."""

    name: str
    tokens: tuple[str, ...]
    mode: Literal["tokens", "direct"] = "tokens"
    title: str = ""
    description: str = ""
    source: str = ""
    axes: tuple[str, ...] = ()
    qk_axes: tuple[str, ...] = ()
    v_axes: tuple[str, ...] = ()
    X: Array | None = None
    heads: tuple[Head, ...] = ()
    Wo: Array | None = None
    wq_presets: Mapping[str, Array] = field(default_factory=dict)
    absent: Mapping[str, Array] = field(default_factory=dict)
    query_tokens: tuple[str, ...] = ()
    Q: Array | None = None
    K: Array | None = None
    V: Array | None = None
    mask: Any = "none"
    mask_value: float = -math.inf
    temperature: float = 1.0
    scale: bool = True
    receiving: int = -1

    # ---- validation -------------------------------------------------------------------------
    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name.strip():
            raise ScenarioError("name", "must be a non-empty string")
        if self.mode not in ("tokens", "direct"):
            raise ScenarioError("mode", f"must be 'tokens' or 'direct', got {self.mode!r}")
        set_(self, "tokens", self._labels(self.tokens, "tokens"))
        n = len(self.tokens)
        if n == 0:
            raise ScenarioError("tokens", "needs at least one token")
        if n > MAX_TOKENS:
            raise ScenarioError("tokens", f"{n} tokens is too many (at most {MAX_TOKENS})")
        if self.mode == "tokens":
            self._validate_tokens_mode(n)
        else:
            self._validate_direct_mode(n)
        n_q = self.n_queries
        set_(self, "mask", self._validate_mask(self.mask, n_q, n))
        mv = self.mask_value
        if isinstance(mv, str):
            mv = {"-inf": -math.inf, "zero": 0.0, "0": 0.0}.get(mv.strip().lower(), mv)
        if mv != -math.inf and mv != 0.0:
            raise ScenarioError("mask_value", f"must be '-inf' or 0, got {self.mask_value!r}")
        set_(self, "mask_value", float(mv))
        t = self.temperature
        if isinstance(t, int) and not isinstance(t, bool) and abs(t) > MAX_TEMPERATURE:
            # checked before math.isfinite, which cannot take an int beyond float range
            raise ScenarioError(
                "temperature",
                f"{_short(t)} is outside the range {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g}",
            )
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise ScenarioError("temperature", f"must be a positive finite number, got {t!r}")
        if not MIN_TEMPERATURE <= t <= MAX_TEMPERATURE:
            raise ScenarioError(
                "temperature",
                f"{t!r} is outside the range {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g}",
            )
        set_(self, "temperature", float(t))
        if not isinstance(self.scale, bool | np.bool_):
            raise ScenarioError("scale", f"must be true or false, got {self.scale!r}")
        set_(self, "scale", bool(self.scale))
        r = self.receiving
        if isinstance(r, str):
            labels = self.query_labels
            if r not in labels:
                raise ScenarioError(
                    "receiving", f"{r!r} is not one of the query tokens {list(labels)}"
                )
            r = len(labels) - 1 - list(reversed(labels)).index(r)
        if isinstance(r, bool) or not isinstance(r, int | np.integer) or not -n_q <= r < n_q:
            raise ScenarioError("receiving", f"must be a query index in [0, {n_q}), got {r!r}")
        set_(self, "receiving", int(r) % n_q)

    @staticmethod
    def _labels(values: Any, field_name: str) -> tuple[str, ...]:
        if isinstance(values, str) or not isinstance(values, Sequence):
            raise ScenarioError(field_name, "must be a list of strings")
        out = []
        seen: dict[str, int] = {}
        for i, v in enumerate(values):
            if not isinstance(v, str) or not v.strip():
                raise ScenarioError(
                    f"{field_name}[{i}]", f"must be a non-empty string, got {_short(v)}"
                )
            if v in seen:
                # Labels name rows, columns and axes on screen and in files: they must be
                # told apart (a repeated word can be written 'the' and 'the 2').
                raise ScenarioError(
                    f"{field_name}[{i}]",
                    f"{v!r} repeats {field_name}[{seen[v]}]; names must differ",
                )
            seen[v] = i
            out.append(v)
        return tuple(out)

    def _validate_tokens_mode(self, n: int) -> None:
        set_ = object.__setattr__
        if self.X is None:
            raise ScenarioError("X", "is required in a token scenario (one row per token)")
        X = _frozen(self.X, "X")
        if X.shape[0] != n:
            raise ScenarioError("X", f"has {X.shape[0]} rows but there are {n} tokens")
        d = X.shape[1]
        if d == 0 or d > MAX_DIM:
            raise ScenarioError("X", f"width {d} is out of range (1 to {MAX_DIM})")
        set_(self, "X", X)
        axes = self._labels(self.axes, "axes") if self.axes else _default_axes("x", d)
        if len(axes) != d:
            raise ScenarioError("axes", f"names {len(axes)} axes but X has {d} columns")
        set_(self, "axes", axes)
        heads = tuple(self.heads)
        if not heads:
            raise ScenarioError("heads", "needs at least one head (Wq, Wk, Wv)")
        if len(heads) > MAX_HEADS:
            raise ScenarioError("heads", f"{len(heads)} heads is too many (at most {MAX_HEADS})")
        d_k = d_v = None
        for h, head in enumerate(heads):
            if not isinstance(head, Head):
                raise ScenarioError(f"heads[{h}]", "must be a Head")
            for m in ("Wq", "Wk", "Wv"):
                W = getattr(head, m)
                if W.shape[0] != d:
                    raise ScenarioError(
                        f"heads[{h}].{m}", f"has {W.shape[0]} rows but X has {d} columns"
                    )
                if W.shape[1] == 0 or W.shape[1] > MAX_DIM:
                    raise ScenarioError(f"heads[{h}].{m}", f"width {W.shape[1]} is out of range")
            if head.Wq.shape != head.Wk.shape:
                raise ScenarioError(
                    f"heads[{h}].Wk",
                    f"shape {head.Wk.shape} differs from Wq {head.Wq.shape}; "
                    "queries and keys must have the same width",
                )
            if d_k is None:
                d_k, d_v = head.Wq.shape[1], head.Wv.shape[1]
            elif (head.Wq.shape[1], head.Wv.shape[1]) != (d_k, d_v):
                raise ScenarioError(
                    f"heads[{h}]", f"all heads must share d_k = {d_k} and d_v = {d_v}"
                )
        set_(self, "heads", heads)
        assert d_k is not None and d_v is not None
        set_(self, "qk_axes", self._axes_or_default(self.qk_axes, "qk_axes", d_k, "k"))
        set_(self, "v_axes", self._axes_or_default(self.v_axes, "v_axes", d_v, "v"))
        if self.Wo is not None:
            Wo = _frozen(self.Wo, "Wo")
            if Wo.shape != (len(heads) * d_v, d):
                raise ScenarioError(
                    "Wo", f"must have shape (h*d_v, d) = {(len(heads) * d_v, d)}, got {Wo.shape}"
                )
            set_(self, "Wo", Wo)
        elif len(heads) * d_v != d and len(heads) > 1:
            raise ScenarioError(
                "Wo", f"is required when h*d_v ({len(heads) * d_v}) differs from d ({d})"
            )
        presets = {}
        for name, W in dict(self.wq_presets).items():
            Wp = _frozen(W, f"wq_presets[{name!r}]")
            if Wp.shape != heads[0].Wq.shape:
                raise ScenarioError(
                    f"wq_presets[{name!r}]",
                    f"must have Wq's shape {heads[0].Wq.shape}, got {Wp.shape}",
                )
            presets[str(name)] = Wp
        set_(self, "wq_presets", presets)
        absent = {}
        for tok, vec in dict(self.absent).items():
            v = _frozen(vec, f"absent[{tok!r}]", ndim=1)
            if v.shape != (d,):
                raise ScenarioError(f"absent[{tok!r}]", f"must have {d} numbers, got {v.shape[0]}")
            absent[str(tok)] = v
        set_(self, "absent", absent)
        if self.query_tokens and tuple(self.query_tokens) != self.tokens:
            raise ScenarioError("query_tokens", "only direct scenarios name queries separately")
        set_(self, "query_tokens", ())
        for m in ("Q", "K", "V"):
            if getattr(self, m) is not None:
                raise ScenarioError(
                    m, "belongs to direct scenarios; token scenarios use X and heads"
                )

    def _validate_direct_mode(self, n: int) -> None:
        set_ = object.__setattr__
        for m in ("Q", "K", "V"):
            if getattr(self, m) is None:
                raise ScenarioError(m, "is required in a direct scenario")
            set_(self, m, _frozen(getattr(self, m), m))
        Q, K, V = self.Q, self.K, self.V
        assert Q is not None and K is not None and V is not None
        if K.shape[0] != n:
            raise ScenarioError("K", f"has {K.shape[0]} rows but there are {n} key tokens")
        if V.shape[0] != n:
            raise ScenarioError("V", f"has {V.shape[0]} rows but there are {n} key tokens")
        if Q.shape[1] != K.shape[1]:
            raise ScenarioError("Q", f"width {Q.shape[1]} differs from the key width {K.shape[1]}")
        for m, arr in (("Q", Q), ("K", K), ("V", V)):
            if arr.shape[1] == 0 or arr.shape[1] > MAX_DIM:
                raise ScenarioError(m, f"width {arr.shape[1]} is out of range (1 to {MAX_DIM})")
        q_tokens = (
            self._labels(self.query_tokens, "query_tokens")
            if self.query_tokens
            else _default_axes("q", Q.shape[0])
        )
        if len(q_tokens) != Q.shape[0]:
            raise ScenarioError(
                "query_tokens", f"names {len(q_tokens)} queries but Q has {Q.shape[0]} rows"
            )
        if Q.shape[0] == 0:
            raise ScenarioError("Q", "needs at least one query")
        set_(self, "query_tokens", q_tokens)
        set_(
            self,
            "qk_axes",
            self._axes_or_default(self.qk_axes or self.axes, "qk_axes", Q.shape[1], "k"),
        )
        set_(self, "axes", self.qk_axes)
        set_(self, "v_axes", self._axes_or_default(self.v_axes, "v_axes", V.shape[1], "v"))
        for m in ("X", "Wo"):
            if getattr(self, m) is not None:
                raise ScenarioError(m, "belongs to token scenarios; direct scenarios use Q, K, V")
        if self.heads:
            raise ScenarioError("heads", "belongs to token scenarios; direct scenarios use Q, K, V")
        if self.wq_presets or self.absent:
            raise ScenarioError("wq_presets", "belongs to token scenarios")

    def _axes_or_default(
        self, axes: Any, field_name: str, size: int, prefix: str
    ) -> tuple[str, ...]:
        if not axes:
            return _default_axes(prefix, size)
        names = self._labels(axes, field_name)
        if len(names) != size:
            raise ScenarioError(field_name, f"names {len(names)} axes but the width is {size}")
        return names

    @staticmethod
    def _validate_mask(mask: Any, n_q: int, n_k: int) -> Any:
        if isinstance(mask, str):
            if mask not in ("none", "causal"):
                raise ScenarioError(
                    "mask", f"must be 'none', 'causal' or a boolean matrix, got {mask!r}"
                )
            return mask
        if isinstance(mask, np.ndarray) and mask.dtype == bool:
            m = mask  # already booleans: skip the element-by-element type check
        else:
            try:
                raw = np.array(mask, dtype=object)
            except (TypeError, ValueError):
                raise ScenarioError("mask", "must be a matrix of true/false") from None
            if raw.shape != (n_q, n_k):
                raise ScenarioError(
                    "mask", f"must have shape {(n_q, n_k)} (queries × keys), got {raw.shape}"
                )
            if not all(isinstance(x, bool | np.bool_) for x in raw.flat):
                raise ScenarioError("mask", "entries must be true or false")
            m = raw.astype(bool)
        if m.shape != (n_q, n_k):
            raise ScenarioError(
                "mask", f"must have shape {(n_q, n_k)} (queries × keys), got {m.shape}"
            )
        if m is mask and (m.flags.writeable or m.base is not None):
            m = m.copy()  # never freeze (or share) the caller's array; a frozen one is reused
        empty = np.flatnonzero(~m.any(axis=1))
        if empty.size:
            raise ScenarioError(
                "mask", f"row {int(empty[0])} has no legal key; every query needs at least one"
            )
        m.flags.writeable = False
        return m

    # ---- derived properties -----------------------------------------------------------------
    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def query_labels(self) -> tuple[str, ...]:
        return self.tokens if self.mode == "tokens" else self.query_tokens

    @property
    def n_queries(self) -> int:
        if self.mode == "tokens":
            return len(self.tokens)
        return 0 if self.Q is None else int(np.asarray(self.Q).shape[0])

    @property
    def d(self) -> int:
        """Width of the token vectors (tokens mode) or of the queries/keys (direct mode)."""
        if self.mode == "tokens":
            assert self.X is not None
            return int(self.X.shape[1])
        assert self.K is not None
        return int(self.K.shape[1])

    @property
    def d_k(self) -> int:
        if self.mode == "tokens":
            return int(self.heads[0].Wq.shape[1])
        assert self.K is not None
        return int(self.K.shape[1])

    @property
    def d_v(self) -> int:
        if self.mode == "tokens":
            return int(self.heads[0].Wv.shape[1])
        assert self.V is not None
        return int(self.V.shape[1])

    @property
    def mask_kind(self) -> str:
        return self.mask if isinstance(self.mask, str) else "custom"

    def mask_matrix(self) -> NDArray[np.bool_] | None:
        """The boolean (n_q, n_k) mask, or None for no mask (read-only)."""
        if isinstance(self.mask, str):
            if self.mask == "none":
                return None
            return _frozen_causal_mask(self.n_queries, self.n_tokens)
        return np.asarray(self.mask, dtype=bool)

    def replace(self, **changes: Any) -> Scenario:
        """A validated copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def equals(self, other: Scenario) -> bool:
        """Field-by-field equality, arrays compared exactly (shared arrays cost nothing)."""
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a is b:
                continue
            if not _field_equal(a, b):
                return False
        return True

    # ---- JSON ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "source": self.source,
            "mode": self.mode,
            "tokens": list(self.tokens),
        }
        if self.mode == "tokens":
            assert self.X is not None
            d["axes"] = list(self.axes)
            d["qk_axes"] = list(self.qk_axes)
            d["v_axes"] = list(self.v_axes)
            d["X"] = self.X.tolist()
            d["heads"] = [
                {"name": h.name, "Wq": h.Wq.tolist(), "Wk": h.Wk.tolist(), "Wv": h.Wv.tolist()}
                for h in self.heads
            ]
            if self.Wo is not None:
                d["Wo"] = self.Wo.tolist()
            if self.wq_presets:
                d["wq_presets"] = {k: v.tolist() for k, v in self.wq_presets.items()}
            if self.absent:
                d["absent"] = {k: v.tolist() for k, v in self.absent.items()}
        else:
            assert self.Q is not None and self.K is not None and self.V is not None
            d["qk_axes"] = list(self.qk_axes)
            d["v_axes"] = list(self.v_axes)
            d["query_tokens"] = list(self.query_tokens)
            d["Q"] = self.Q.tolist()
            d["K"] = self.K.tolist()
            d["V"] = self.V.tolist()
        d["mask"] = self.mask if isinstance(self.mask, str) else np.asarray(self.mask).tolist()
        d["mask_value"] = "-inf" if self.mask_value == -math.inf else 0
        d["temperature"] = self.temperature
        d["scale"] = self.scale
        d["receiving"] = self.receiving
        return d

    def dumps(self) -> str:
        return _dumps(self.to_dict())

    def save(self, path: str | Path) -> None:
        """Write the scenario as JSON, atomically (a temporary file, then a rename)."""
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(self.dumps() + "\n", encoding="utf-8")
        tmp.replace(p)

    @classmethod
    def from_dict(cls, data: Any, *, file: str | None = None) -> Scenario:
        try:
            return cls._from_dict(data)
        except ScenarioError as exc:
            if file:
                raise exc.in_file(file) from None
            raise

    @classmethod
    def _from_dict(cls, data: Any) -> Scenario:
        if not isinstance(data, dict):
            raise ScenarioError("(top level)", "must be a JSON object")
        fmt = data.get("format", FORMAT)
        if fmt != FORMAT:
            raise ScenarioError("format", f"must be {FORMAT!r}, got {fmt!r}")
        version = data.get("version", VERSION)
        if version != VERSION:
            raise ScenarioError(
                "version", f"version {version!r} is not supported (this attnsim reads {VERSION})"
            )
        known = {
            "format", "version", "name", "title", "description", "source", "mode", "tokens",
            "axes", "qk_axes", "v_axes", "X", "heads", "Wq", "Wk", "Wv", "Wo", "wq_presets",
            "absent", "query_tokens", "Q", "K", "V", "mask", "mask_value", "temperature",
            "scale", "receiving",
        }  # fmt: skip
        unknown = sorted(set(data) - known)
        if unknown:
            raise ScenarioError(unknown[0], "is not a scenario field (misspelt?)")
        for req in ("name", "tokens"):
            if req not in data:
                raise ScenarioError(req, "is missing")
        mode = data.get("mode", "tokens")
        if mode not in ("tokens", "direct"):
            raise ScenarioError("mode", f"must be 'tokens' or 'direct', got {_short(mode)}")
        # A field of the other mode would be silently ignored: say so instead.
        other = (
            ("Q", "K", "V")
            if mode == "tokens"
            else ("X", "heads", "Wq", "Wk", "Wv", "Wo", "wq_presets", "absent")
        )
        for k in other:
            if k in data:
                raise ScenarioError(
                    k,
                    f"belongs to {'direct' if mode == 'tokens' else 'token'} scenarios, "
                    f"not to a {mode!r} one",
                )
        kwargs: dict[str, Any] = {
            k: data[k]
            for k in (
                "name", "title", "description", "source", "mode", "tokens", "mask",
                "mask_value", "temperature", "scale", "receiving",
            )
            if k in data
        }  # fmt: skip
        for k in ("axes", "qk_axes", "v_axes", "query_tokens"):
            if k in data:
                kwargs[k] = data[k]
        for k in ("title", "description", "source"):
            if k in kwargs and not isinstance(kwargs[k], str):
                raise ScenarioError(k, "must be a string")
        if mode == "tokens":
            if "X" not in data:
                raise ScenarioError("X", "is missing (one row of numbers per token)")
            X = _frozen(data["X"], "X")
            kwargs["X"] = X
            d = X.shape[1]
            if "heads" in data:
                if any(k in data for k in ("Wq", "Wk", "Wv")):
                    raise ScenarioError(
                        "heads", "give either heads or top-level Wq/Wk/Wv, not both"
                    )
                if not isinstance(data["heads"], list):
                    raise ScenarioError("heads", "must be a list of {Wq, Wk, Wv} objects")
                heads = []
                for i, hd in enumerate(data["heads"]):
                    if not isinstance(hd, dict):
                        raise ScenarioError(f"heads[{i}]", "must be an object with Wq, Wk, Wv")
                    heads.append(_head_from(hd, d, f"heads[{i}]"))
                kwargs["heads"] = tuple(heads)
            else:
                kwargs["heads"] = (_head_from(data, d, ""),)
            if "Wo" in data and data["Wo"] is not None:
                kwargs["Wo"] = _matrix_or_identity(data["Wo"], None, "Wo")
            if "wq_presets" in data:
                if not isinstance(data["wq_presets"], dict):
                    raise ScenarioError("wq_presets", "must be an object of name: matrix")
                kwargs["wq_presets"] = data["wq_presets"]
            if "absent" in data:
                if not isinstance(data["absent"], dict):
                    raise ScenarioError("absent", "must be an object of token: vector")
                kwargs["absent"] = data["absent"]
        elif mode == "direct":
            for k in ("Q", "K", "V"):
                if k not in data:
                    raise ScenarioError(k, "is missing")
                kwargs[k] = data[k]
        return cls(**kwargs)

    @classmethod
    def loads(cls, text: str, *, file: str | None = None) -> Scenario:
        data = parse_json(text, file)
        return cls.from_dict(data, file=file)

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        p = Path(path)
        try:
            size = p.stat().st_size
        except OSError as exc:
            raise ScenarioError("(file)", f"cannot be read: {exc.strerror}", str(p)) from None
        if size > MAX_FILE_BYTES:
            raise ScenarioError(
                "(file)", f"is {size} bytes, larger than the {MAX_FILE_BYTES}-byte limit", str(p)
            )
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ScenarioError("(file)", "is not UTF-8 text", str(p)) from None
        except OSError as exc:
            raise ScenarioError("(file)", f"cannot be read: {exc.strerror}", str(p)) from None
        return cls.loads(text, file=str(p))

    # ---- computation --------------------------------------------------------------------------
    def compute(self) -> ScenarioResult:
        return compute(self)


def random_scenario(
    n: int,
    d: int,
    *,
    seed: int = 0,
    mask: str = "none",
    receiving: int = -1,
    name: str | None = None,
) -> Scenario:
    """``n`` tokens ``t0 .. t{n-1}`` with N(0, 1) vectors of width ``d`` and one identity head.

    For trying long sequences (and for benchmarks and tests): every panel can show it, and its
    weights are those of plain dot products of random vectors.
    """
    rng = np.random.default_rng(seed)
    eye = np.eye(d)
    return Scenario(
        name=name or f"random-{n}x{d}",
        tokens=tuple(f"t{i}" for i in range(n)),
        X=rng.standard_normal((n, d)),
        heads=(Head(eye, eye, eye, name="identity"),),
        mask=mask,
        receiving=receiving,
    )


def parse_json(text: str, file: str | None = None) -> Any:
    """``json.loads`` whose every failure is a :class:`ScenarioError` naming the problem."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            "(JSON)", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", file
        ) from None
    except RecursionError:
        raise ScenarioError("(JSON)", "is nested too deeply to be a scenario", file) from None
    except ValueError as exc:  # e.g. an integer literal with more digits than Python allows
        raise ScenarioError("(JSON)", f"not valid JSON: {exc}", file) from None


@functools.lru_cache(maxsize=8)
def _frozen_causal_mask(n_q: int, n_k: int) -> NDArray[np.bool_]:
    # Every recomputation of a causal scenario needs the same n x n mask (4 MB at 2,048).
    m = causal_mask(n_q, n_k)
    m.flags.writeable = False
    return m


def _field_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, Head) and isinstance(b, Head):
        return a.equals(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return False
        if a == b:  # token and axis names compare in C; heads equal when the same objects
            return True
        return all(_field_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_field_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _matrix_or_identity(value: Any, d: int | None, field_name: str) -> Any:
    if isinstance(value, str):
        if value != "identity":
            raise ScenarioError(field_name, f"must be a matrix or 'identity', got {value!r}")
        if d is None:
            raise ScenarioError(field_name, "'identity' is only allowed for Wq, Wk and Wv")
        return np.eye(d)
    return _frozen(value, field_name)


def _head_from(data: dict[str, Any], d: int, prefix: str) -> Head:
    mats = {}
    for m in ("Wq", "Wk", "Wv"):
        label = f"{prefix}.{m}" if prefix else m
        if m not in data:
            raise ScenarioError(label, "is missing")
        mats[m] = _matrix_or_identity(data[m], d, label)
    name = data.get("name", "")
    if not isinstance(name, str):
        raise ScenarioError(f"{prefix}.name" if prefix else "name", "must be a string")
    try:
        return Head(mats["Wq"], mats["Wk"], mats["Wv"], name=name)
    except ScenarioError as exc:
        raise ScenarioError(f"{prefix}.{exc.field}" if prefix else exc.field, exc.problem) from None


def _dumps(d: dict[str, Any]) -> str:
    """JSON with one matrix row per line: readable and still exact (floats use repr)."""
    lines = ["{"]
    items = list(d.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"  {json.dumps(k)}: {_dump_value(v, 2)}{comma}")
    lines.append("}")
    return "\n".join(lines)


def _dump_value(v: Any, indent: int) -> str:
    pad = " " * (indent + 2)
    if isinstance(v, list) and v and all(isinstance(r, list) for r in v):
        rows = [pad + json.dumps(r, allow_nan=False) for r in v]
        return "[\n" + ",\n".join(rows) + "\n" + " " * indent + "]"
    if isinstance(v, dict) and v:
        parts = [f"{pad}{json.dumps(k)}: {_dump_value(val, indent + 2)}" for k, val in v.items()]
        return "{\n" + ",\n".join(parts) + "\n" + " " * indent + "}"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        parts = [pad + _dump_value(x, indent + 2) for x in v]
        return "[\n" + ",\n".join(parts) + "\n" + " " * indent + "]"
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True, eq=False)
class ScenarioResult:
    """What the engine derives from a scenario: one trace per head, and the block if tokens."""

    heads: tuple[HeadTrace, ...]
    block: MultiHeadTrace | None


def compute(sc: Scenario) -> ScenarioResult:
    """Run the engine on a scenario."""
    mask = sc.mask_matrix()
    if sc.mode == "direct":
        tr = direct_trace(
            sc.Q,  # type: ignore[arg-type]
            sc.K,  # type: ignore[arg-type]
            sc.V,  # type: ignore[arg-type]
            mask=mask,
            temperature=sc.temperature,
            scale=sc.scale,
            mask_value=sc.mask_value,
        )
        return ScenarioResult((tr,), None)
    assert sc.X is not None
    options = {
        "mask": mask,
        "temperature": sc.temperature,
        "scale": sc.scale,
        "mask_value": sc.mask_value,
    }
    if sc.Wo is None and len(sc.heads) * sc.d_v != sc.d:
        # One head whose value width differs from d and no Wo: there is no block output.
        h = sc.heads[0]
        return ScenarioResult((head_trace(sc.X, h.Wq, h.Wk, h.Wv, **options),), None)
    block = multi_head(sc.X, [(h.Wq, h.Wk, h.Wv) for h in sc.heads], sc.Wo, **options)
    return ScenarioResult(block.heads, block)
