"""The scenario itself: its fields, what follows from them, equality, and the engine's result.

Construction validates every field (``checks`` for single values, ``fields`` for what depends
on the mode); ``json_io`` reads and writes the file format.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..attention import (
    HeadTrace,
    MultiHeadTrace,
    causal_mask,
    direct_trace,
    head_trace,
    multi_head,
)
from . import json_io
from .checks import (
    CHECKED,
    MAX_FILE_BYTES,
    MAX_TOKENS,
    Array,
    ScenarioError,
    ScenarioTooLargeError,
    check_mask_value,
    check_receiving,
    check_scale,
    check_temperature,
    check_text,
    labels,
    validate_mask,
)
from .fields import direct_fields, token_fields
from .head import Head

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
        check_text(self.name, "name")
        check_text(self.title, "title")
        for text_field in ("description", "source"):
            check_text(getattr(self, text_field), text_field, multiline=True)
        if self.mode not in ("tokens", "direct"):
            raise ScenarioError("mode", f"must be 'tokens' or 'direct', got {self.mode!r}")
        set_(self, "tokens", labels(self.tokens, "tokens"))
        n = len(self.tokens)
        if n == 0:
            raise ScenarioError("tokens", "needs at least one token")
        if n > MAX_TOKENS:
            raise ScenarioError("tokens", f"{n} tokens is too many (at most {MAX_TOKENS})")
        checked = token_fields(self, n) if self.mode == "tokens" else direct_fields(self, n)
        for name, value in checked.items():
            set_(self, name, value)
        set_(self, "mask", validate_mask(self.mask, self.n_queries, n))
        set_(self, "mask_value", check_mask_value(self.mask_value))
        set_(self, "temperature", check_temperature(self.temperature))
        set_(self, "scale", check_scale(self.scale))
        set_(self, "receiving", check_receiving(self.receiving, self.query_labels))

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
        """A validated copy with ``changes`` applied (the fields kept are not checked again)."""
        kept = frozenset(
            id(v)
            for f in dataclasses.fields(self)
            if f.name not in changes and isinstance(v := getattr(self, f.name), tuple | np.ndarray)
        )
        token = CHECKED.set(kept)
        try:
            return dataclasses.replace(self, **changes)
        finally:
            CHECKED.reset(token)

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
    def to_dict(self, *, arrays: bool = False) -> dict[str, Any]:
        return json_io.to_dict(self, arrays=arrays)

    def dumps(self) -> str:
        return json_io.dumps(self.to_dict(arrays=True))

    def save(self, path: str | Path) -> None:
        """Write the scenario as JSON, atomically (a temporary file, then a rename).

        A scenario whose file would be larger than ``MAX_FILE_BYTES`` is not written: it raises
        :class:`ScenarioTooLargeError` (a ScenarioError and an OSError) naming the size.
        """
        p = Path(path)
        data = (self.dumps() + "\n").encode("utf-8")
        if len(data) > MAX_FILE_BYTES:  # a file that Scenario.load would refuse: keep the old
            raise ScenarioTooLargeError(len(data), str(p), MAX_FILE_BYTES)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(p)

    @classmethod
    def from_dict(cls, data: Any, *, file: str | None = None) -> Scenario:
        try:
            return json_io.from_dict(cls, data)
        except ScenarioError as exc:
            if file:
                raise exc.in_file(file) from None
            raise

    @classmethod
    def loads(cls, text: str, *, file: str | None = None) -> Scenario:
        data = json_io.parse_json(text, file)
        return cls.from_dict(data, file=file)

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        p = Path(path)
        return cls.loads(json_io.read_text(p), file=str(p))

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
