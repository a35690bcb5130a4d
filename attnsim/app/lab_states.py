"""The labs' settings in a recovery file: each lab's frozen dataclass as JSON, and back again
only when every field has the type its declaration names (a hostile file restores nothing it
cannot check)."""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from importlib import import_module
from typing import Any

_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class _UnfitError(ValueError):
    pass


def lab_name(key: str) -> str:
    """'attnsim.viewmodels.precision_lab:PrecisionLabState' -> 'precision lab'."""
    name = key.rsplit(":", 1)[-1].rsplit(".", 1)[-1].removesuffix("State")
    words = re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", name) or [name]
    return " ".join(w.lower() for w in words) or "a lab"


def _key(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


def _plain(v: object) -> object:
    if isinstance(v, bool | int | str) or v is None:
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    raise _UnfitError(type(v).__name__)


def encode_labs(labs: dict[type, object]) -> dict[str, Any]:
    """``{"module:Class": {field: value}}``; a state that JSON cannot hold is listed as lost."""
    out: dict[str, Any] = {}
    lost: list[str] = []
    for kind, state in labs.items():
        try:
            out[_key(kind)] = {
                f.name: _plain(getattr(state, f.name)) for f in dataclasses.fields(state)
            }
        except _UnfitError:
            lost.append(_key(kind))
    if lost:
        out["_lost"] = lost
    return out


def _fit(value: object, hint: Any) -> object:
    """``value`` (from JSON) as the type ``hint`` names, or :class:`_UnfitError`."""
    origin = typing.get_origin(hint)
    if hint is type(None) or hint is None:
        if value is None:
            return None
        raise _UnfitError(value)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return _fit(value, option)
            except _UnfitError:
                continue
        raise _UnfitError(value)
    if origin is typing.Literal:
        if value in typing.get_args(hint) and not isinstance(value, bool | list):
            return value
        raise _UnfitError(value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _UnfitError(value)
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _UnfitError(value)
    if hint is float:
        if isinstance(value, str) and value in _NON_FINITE:
            return _NON_FINITE[value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _UnfitError(value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise _UnfitError(value)
    if origin is tuple:
        if not isinstance(value, list):
            raise _UnfitError(value)
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_fit(x, args[0]) for x in value)
        if len(args) != len(value):
            raise _UnfitError(value)
        return tuple(_fit(x, a) for x, a in zip(value, args, strict=True))
    raise _UnfitError(value)  # a type this file does not hold


def _kind(key: str) -> type:
    module, _, name = key.partition(":")
    if not module.startswith("attnsim.") or not name.isidentifier():
        raise _UnfitError(key)
    try:
        kind = getattr(import_module(module), name)
    except (ImportError, AttributeError):
        raise _UnfitError(key) from None
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        raise _UnfitError(key)
    return kind


def decode_labs(data: object) -> tuple[dict[type, object], list[str]]:
    """The lab states that pass every check, and the names of the labs that do not."""
    if not isinstance(data, dict):
        return {}, ["the labs' settings"]
    labs: dict[type, object] = {}
    lost = [lab_name(str(k)) for k in data.get("_lost", []) if isinstance(k, str)]
    for key, fields in data.items():
        if key == "_lost":
            continue
        try:
            kind = _kind(str(key))
            if not isinstance(fields, dict):
                raise _UnfitError(fields)
            hints = typing.get_type_hints(kind)
            declared = {f.name for f in dataclasses.fields(kind) if f.init}
            if not set(fields) <= declared:
                raise _UnfitError(fields)
            values = {name: _fit(v, hints[name]) for name, v in fields.items()}
            labs[kind] = kind(**values)
        except (_UnfitError, TypeError, ValueError, NameError, RecursionError):
            lost.append(lab_name(str(key)))
    return labs, lost
