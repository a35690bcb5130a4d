"""What a scenario may hold: the size and value limits, the error that names a refused field,
and the checks of one value at a time (matrices, labels, axes, the mask, the scalars).

Shared by the scenario's constructor, its JSON reader and the matrix importer, so a value is
refused with the same words wherever it comes from.
"""

from __future__ import annotations

import errno
import math
import re
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

MAX_TOKENS = 4096
MAX_DIM = 1024
MAX_HEADS = 64
# A saved scenario must open again, so the file limit fits the largest scenario of the usual
# shape as the app saves it: MAX_TOKENS tokens of MAX_DIM numbers, one head of three
# MAX_DIM x MAX_DIM projections and a custom mask, every number at its longest (24 characters,
# as in -1.2345678901234567e-300, and the ", " after it) and every mask cell "false, ", with
# 16 MiB to spare for the names, the description and the line layout: 325,058,560 bytes
# (310 MiB). The old 64 MiB did not hold even X at full precision (a 32 MiB .npy import of a
# 4,096 x 1,024 X saves as about 90 MB). A larger scenario (several heads this wide, many Wq
# presets) is refused when it is saved, with its size, rather than written to a file that
# could not be opened again (see ``Scenario.save``).
_SAVED_NUMBER_BYTES = 26
_SAVED_MASK_CELL_BYTES = 7
MAX_FILE_BYTES = (
    (MAX_TOKENS * MAX_DIM + 3 * MAX_DIM * MAX_DIM) * _SAVED_NUMBER_BYTES
    + MAX_TOKENS * MAX_TOKENS * _SAVED_MASK_CELL_BYTES
    + 16 * 1024 * 1024
)
# What the engine holds for a scenario, bounded as a whole so that every accepted scenario fits
# the app's memory goal (the whole window, every panel drawn, within 1.5 GB). Each head keeps
# per (query, key) cell its logits, its masked logits (while a panel shows them) and its weights
# in float64, and the mask: CELL_BYTES. Its queries, keys, values, output and projections are
# float64 numbers, as are the sentence X, the concatenated heads, Wo, the update and Y. The
# budget is the largest one-head scenario the other limits allow (MAX_TOKENS tokens, MAX_DIM
# wide, d_k = d_v = MAX_DIM): about 0.72 GB, which the benchmark ``app_peak_rss`` measures
# with the whole window. So MAX_HEADS heads are accepted only at short lengths: at 4,096 tokens
# one head, at 2,048 five to six (d_k = 256 to 64), at 512 all 64 of width 64.
CELL_BYTES = 3 * 8 + 1
NUMBER_BYTES = 8


def attention_bytes(n: int, heads: int, d: int, d_k: int, d_v: int) -> int:
    """About how many bytes the engine's results for a token scenario of ``n`` tokens hold
    (see CELL_BYTES). A direct scenario (one head, Q, K and V given) always fits."""
    per_head = n * n * CELL_BYTES + (2 * n * (d_k + d_v) + d * (2 * d_k + d_v)) * NUMBER_BYTES
    shared = (3 * n * d + n * heads * d_v + heads * d_v * d) * NUMBER_BYTES  # X, Δ, Y; concat; Wo
    return heads * per_head + shared


MAX_ATTENTION_BYTES = attention_bytes(MAX_TOKENS, 1, MAX_DIM, MAX_DIM, MAX_DIM)


def check_attention_size(n: int, heads: int, d: int, d_k: int, d_v: int) -> None:
    """Refuse (on the field ``heads``) a token scenario whose attention results would not fit
    :data:`MAX_ATTENTION_BYTES`, naming its size and the most heads that fit at its length."""
    need = attention_bytes(n, heads, d, d_k, d_v)
    if need <= MAX_ATTENTION_BYTES:
        return
    fits = 0
    while fits < heads and attention_bytes(n, fits + 1, d, d_k, d_v) <= MAX_ATTENTION_BYTES:
        fits += 1
    raise ScenarioError(
        "heads",
        f"{n:,} tokens × {heads} heads need about {need / 1e9:.1f} GB for the attention scores "
        f"and weights; attnsim holds at most {fits} head{'s' if fits != 1 else ''} of this "
        f"width at this length (about {MAX_ATTENTION_BYTES / 1e9:.1f} GB, so that the whole "
        "app stays within 1.5 GB of memory)",
    )


# The app's temperature range: wide enough for any teaching point, narrow enough that every
# control can show the value and no logit under- or overflows on the way.
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 1e3
MAX_ABS_VALUE = 1e6


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


class ScenarioTooLargeError(ScenarioError, OSError):
    """A scenario whose file would be larger than a file that can be opened (MAX_FILE_BYTES).

    Also an ``OSError`` (errno EFBIG, the message as ``strerror``), so a caller that reports a
    failed write already reports this one: nothing is written, the old file is kept.
    """

    def __init__(self, size: int, file: str | None = None, limit: int = MAX_FILE_BYTES) -> None:
        problem = (
            f"the scenario would be {size:,} bytes as a file, larger than the "
            f"{limit:,} bytes a scenario file may have to be opened again; "
            "nothing was written (remove heads, presets or tokens to make it smaller)"
        )
        super().__init__("(file)", problem, file)
        self.errno = errno.EFBIG
        self.strerror = problem
        self.size = size

    def __str__(self) -> str:  # the scenario's own words, not OSError's "[Errno 27] ..."
        return ScenarioError.__str__(self)


# The ids of values a scenario already holds, validated, while a copy of it is made with some
# fields changed (``Scenario.replace``): a label tuple or a read-only matrix that is one of them
# is kept as it is, not checked again (at 4,096 tokens and 1,024 dimensions the checks of X and
# of the labels took about 40 ms of every drag move). The values are alive while the copy is
# made (the scenario holds them), so an id cannot be reused meanwhile.
CHECKED: ContextVar[frozenset[int]] = ContextVar("checked", default=frozenset())


def _checked_before(a: Any) -> bool:
    return id(a) in CHECKED.get()


def _frozen(a: Any, field_name: str, *, ndim: int = 2) -> Array:
    """A validated read-only float64 copy of ``a`` (or ``a`` itself if it is one already)."""
    # Kept as it is when nothing else can write to it: it owns its numbers, or they are an
    # immutable bytes object's (an unpickled array's).
    shared = (
        isinstance(a, np.ndarray) and a.dtype == np.float64 and not a.flags.writeable
        and (a.base is None or type(a.base) is bytes)
    )  # fmt: skip
    if shared and a.ndim == ndim and _checked_before(a):
        return a
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
    if arr.size == 0:
        return None
    # The extremes first, read without a temporary array (NaN propagates and compares False):
    # 4 M numbers in about 5 ms, against 15-80 for the table of comparisons below.
    lo, hi = np.minimum.reduce(arr, axis=None), np.maximum.reduce(arr, axis=None)
    if lo >= -MAX_ABS_VALUE and hi <= MAX_ABS_VALUE:
        return None
    ok = np.abs(arr) <= MAX_ABS_VALUE  # NaN compares False
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

    def check_cells(cells: Any, where: Any) -> None:
        # The types of a row first, at C speed (a file of 4,096 rows of 1,024 numbers took
        # 8 s cell by cell, a quarter of a second so): only a row holding something other
        # than floats, or an int (which may be past the bound), is looked at cell by cell.
        kinds = set(map(type, cells))
        if kinds <= {float}:
            return
        if kinds <= {float, int} and not any(
            abs(x) > MAX_ABS_VALUE for x in cells if type(x) is int
        ):
            return
        for j, x in enumerate(cells):
            check_cell(x, where(j))

    if ndim == 1:
        check_cells(a, lambda i: f"{field_name}[{i}]")
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
        check_cells(cells, lambda j, i=i: f"{field_name}[{i}, {j}]")


def _default_axes(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i + 1}" for i in range(n))


# Characters a label may not hold: the C0 and C1 control characters (NUL, tab, line breaks,
# escape, DEL ...). They survive the file (JSON escapes them as \u0000 and reads them back),
# but a label is one line on screen, in a heat map's margin or a CSV header: there a control
# character is invisible or breaks the line, so 'the' and 'the' + NUL could not be told apart
# although labels must differ. Free text (title, description, source) may hold tabs and
# line breaks, and no other control character, for the same reason.
_BAD_IN_LABEL = re.compile(r"[\ud800-\udfff\x00-\x1f\x7f-\x9f]")
_BAD_IN_TEXT = re.compile(r"[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Why ``value`` cannot be kept (saved as UTF-8 and told apart on screen), or None.

    A lone surrogate (JSON can spell one, as ``"\\ud800"``) is no character at all: UTF-8 has
    no bytes for it, so a scenario holding one could be opened but never saved or autosaved.
    """
    found = (_BAD_IN_TEXT if multiline else _BAD_IN_LABEL).search(value)
    if found is None:
        return None
    c, at = ord(found.group()), found.start() + 1
    if 0xD800 <= c <= 0xDFFF:
        return (
            f"contains a lone surrogate (\\u{c:04x}) at character {at}, which cannot be saved "
            "as UTF-8 text (it is half of a character whose other half is missing)"
        )
    allowed = "; text may hold tabs and line breaks only" if multiline else ""
    return (
        f"contains the control character U+{c:04X} at character {at}, which would be "
        f"invisible or break the line on screen{allowed}"
    )


def check_text(value: Any, field_name: str, *, multiline: bool = False) -> str:
    """``value`` if it is a string that can be kept, else a :class:`ScenarioError`."""
    if not isinstance(value, str):
        raise ScenarioError(field_name, f"must be a string, got {_short(value)}")
    problem = text_problem(value, multiline=multiline)
    if problem is not None:
        raise ScenarioError(field_name, f"{_short(value)} {problem}")
    return value


def labels(values: Any, field_name: str) -> tuple[str, ...]:
    if type(values) is tuple and _checked_before(values):
        return values
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ScenarioError(field_name, "must be a list of strings")
    out = []
    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        if not isinstance(v, str) or not v.strip():
            raise ScenarioError(
                f"{field_name}[{i}]", f"must be a non-empty string, got {_short(v)}"
            )
        problem = text_problem(v)
        if problem is not None:
            raise ScenarioError(f"{field_name}[{i}]", f"{_short(v)} {problem}")
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


def axes_or_default(axes: Any, field_name: str, size: int, prefix: str) -> tuple[str, ...]:
    if not axes:
        return _default_axes(prefix, size)
    names = labels(axes, field_name)
    if len(names) != size:
        raise ScenarioError(field_name, f"names {len(names)} axes but the width is {size}")
    return names


def validate_mask(mask: Any, n_q: int, n_k: int) -> Any:
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
        raise ScenarioError("mask", f"must have shape {(n_q, n_k)} (queries × keys), got {m.shape}")
    if m is mask and (m.flags.writeable or m.base is not None):
        m = m.copy()  # never freeze (or share) the caller's array; a frozen one is reused
    empty = np.flatnonzero(~m.any(axis=1))
    if empty.size:
        raise ScenarioError(
            "mask", f"row {int(empty[0])} has no legal key; every query needs at least one"
        )
    m.flags.writeable = False
    return m


def check_mask_value(value: Any) -> float:
    mv = value
    if isinstance(mv, str):
        mv = {"-inf": -math.inf, "zero": 0.0, "0": 0.0}.get(mv.strip().lower(), mv)
    if mv != -math.inf and mv != 0.0:
        raise ScenarioError("mask_value", f"must be '-inf' or 0, got {value!r}")
    return float(mv)


def check_temperature(t: Any) -> float:
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
    return float(t)


def check_scale(scale: Any) -> bool:
    if not isinstance(scale, bool | np.bool_):
        raise ScenarioError("scale", f"must be true or false, got {scale!r}")
    return bool(scale)


def check_receiving(r: Any, query_labels: tuple[str, ...]) -> int:
    """The receiving query's index, from an index (negative counts from the end) or a label
    (the last query of that name)."""
    n_q = len(query_labels)
    if isinstance(r, str):
        if r not in query_labels:
            raise ScenarioError(
                "receiving", f"{r!r} is not one of the query tokens {list(query_labels)}"
            )
        r = n_q - 1 - list(reversed(query_labels)).index(r)
    if isinstance(r, bool) or not isinstance(r, int | np.integer) or not -n_q <= r < n_q:
        raise ScenarioError("receiving", f"must be a query index in [0, {n_q}), got {r!r}")
    return int(r) % n_q
