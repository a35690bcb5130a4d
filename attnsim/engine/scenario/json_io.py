"""Scenarios as JSON: the object a file holds, reading one back with every unknown or misplaced
field named, reading a file within its size limit, and writing one matrix row per line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from .checks import MAX_FILE_BYTES, ScenarioError, _frozen, _short
from .files import read_bytes
from .head import Head

if TYPE_CHECKING:
    from .model import Scenario

FORMAT = "attnsim-scenario"
VERSION = 1


def to_dict(sc: Scenario, *, arrays: bool = False) -> dict[str, Any]:
    """The scenario as the JSON object its file holds; with ``arrays``, its matrices stay NumPy
    arrays (the recovery file writes them as bytes, without a list of every number)."""

    def out(a: np.ndarray) -> Any:
        return a if arrays else a.tolist()

    d: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "name": sc.name,
        "title": sc.title,
        "description": sc.description,
        "source": sc.source,
        "mode": sc.mode,
        "tokens": list(sc.tokens),
    }
    if sc.mode == "tokens":
        assert sc.X is not None
        d["axes"] = list(sc.axes)
        d["qk_axes"] = list(sc.qk_axes)
        d["v_axes"] = list(sc.v_axes)
        d["X"] = out(sc.X)
        d["heads"] = [
            {"name": h.name, "Wq": out(h.Wq), "Wk": out(h.Wk), "Wv": out(h.Wv)} for h in sc.heads
        ]
        if sc.Wo is not None:
            d["Wo"] = out(sc.Wo)
        if sc.wq_presets:
            d["wq_presets"] = {k: out(v) for k, v in sc.wq_presets.items()}
        if sc.absent:
            d["absent"] = {k: out(v) for k, v in sc.absent.items()}
    else:
        assert sc.Q is not None and sc.K is not None and sc.V is not None
        d["qk_axes"] = list(sc.qk_axes)
        d["v_axes"] = list(sc.v_axes)
        d["query_tokens"] = list(sc.query_tokens)
        d["Q"] = out(sc.Q)
        d["K"] = out(sc.K)
        d["V"] = out(sc.V)
    d["mask"] = sc.mask if isinstance(sc.mask, str) else out(np.asarray(sc.mask))
    d["mask_value"] = "-inf" if sc.mask_value == -math.inf else 0
    d["temperature"] = sc.temperature
    d["scale"] = sc.scale
    d["receiving"] = sc.receiving
    return d


def from_dict(cls: type[Scenario], data: Any) -> Scenario:
    """A scenario of class ``cls`` from a JSON object, each unknown or misplaced field named."""
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
                raise ScenarioError("heads", "give either heads or top-level Wq/Wk/Wv, not both")
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


def read_text(path: str | Path) -> str:
    """The text of a scenario file; a missing, huge, unreadable or non-UTF-8 file is refused,
    and so is anything that is not a regular file (a folder, a named pipe, a device)."""
    p = Path(path)
    data = read_bytes(p, "(file)", MAX_FILE_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("(file)", "is not UTF-8 text", str(p)) from None


def parse_json(text: str, file: str | None = None) -> Any:
    """``json.loads`` whose every failure is a :class:`ScenarioError` naming the problem.

    Read with orjson first (a file of 4,096 tokens of 1,024 numbers, 100 MB, in 0.6 s against
    2.7, the same numbers to the bit); what it refuses is read again by the standard reader,
    which gives the words for what is wrong, or accepts what only it reads (NaN, integers past
    64 bits, an unpaired surrogate) for the scenario's checks to refuse by name.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
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


def dumps(d: dict[str, Any]) -> str:
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
    rows: Any = None
    if isinstance(v, np.ndarray):
        if v.ndim != 2 or not len(v):
            return json.dumps(v.tolist(), allow_nan=False)
        # a row at a time: the same text as the whole matrix as lists, and a save in the
        # background never holds Python's lock for long (the whole of a 4,096 × 1,024 X as
        # lists was one call of 0.3 s)
        rows = (r.tolist() for r in v)
    elif isinstance(v, list) and v and all(isinstance(r, list) for r in v):
        rows = v
    if rows is not None:
        lines = [pad + json.dumps(r, allow_nan=False) for r in rows]
        return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"
    if isinstance(v, dict) and v:
        parts = [f"{pad}{json.dumps(k)}: {_dump_value(val, indent + 2)}" for k, val in v.items()]
        return "{\n" + ",\n".join(parts) + "\n" + " " * indent + "}"
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        parts = [pad + _dump_value(x, indent + 2) for x in v]
        return "[\n" + ",\n".join(parts) + "\n" + " " * indent + "]"
    return json.dumps(v, ensure_ascii=False, allow_nan=False)
