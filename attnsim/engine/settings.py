"""A lab's settings, declared once next to its frozen state dataclass, and the one check of them.

Each setting is a :class:`Setting`: the state's field ``name``, the ``label`` a reader sees (on
its control and in every sentence about it), and what it may hold: a whole number or a real one
in ``lo`` .. ``hi``, one of ``choices``, or on / off. ``offset`` is added to a value wherever it
is shown (a 0-based index shown from 1). A lab's :class:`LabSettings` lists them with the rules
that tie several together (g divides h), and gives the one check (:meth:`LabSettings.check`),
the one edit (:meth:`LabSettings.with_setting`) and the one text of that edit in the undo
history (:meth:`LabSettings.edit_text`).

Every refusal is worded the same way: "<label> must be a whole number, got x", "<label> must
lie between lo and hi, got x", "<label> must be one of a, b, got x", "<label> must be on or off,
got x". Qt-free, so view-models, the engine and the command line check the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

__all__ = ["LabSettings", "Setting", "real_number", "shown_number", "whole_number"]

Bound = float | Callable[[Any], float]  # a number, or one read from the state (k <= K)


def shown_number(value: object) -> str:
    """``value`` as a refusal quotes it: 3, 2.5, nan, 'relu'."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        return f"{v:g}" if math.isfinite(v) and v == int(v) and abs(v) < 1e16 else repr(v)
    return repr(value)


def _bound(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def whole_number(value: object, label: str, lo: float, hi: float) -> int:
    """``value`` as an int if it is a whole number (not a bool) in [lo, hi], else ValueError in
    the one wording."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{label} must be a whole number, got {shown_number(value)}")
    if not lo <= int(value) <= hi:
        raise ValueError(
            f"{label} must lie between {_bound(lo)} and {_bound(hi)}, got {shown_number(value)}"
        )
    return int(value)


def real_number(value: object, label: str, lo: float, hi: float, *, open_lo: bool = False) -> float:
    """``value`` as a float if it is a finite number in [lo, hi] (above lo with ``open_lo``),
    else ValueError in the one wording."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{label} must be a number, got {shown_number(value)}")
    v = float(value)
    below = v <= lo if open_lo else v < lo
    if not math.isfinite(v) or below or v > hi:
        low = f"above {_bound(lo)} and at most" if open_lo else f"between {_bound(lo)} and"
        raise ValueError(f"{label} must lie {low} {_bound(hi)}, got {shown_number(value)}")
    return v


@dataclass(frozen=True)
class Setting:
    """One field of a lab's state: what it may hold and how it is named and shown.

    ``kind`` is "whole", "real", "choice" or "flag". A number lies in ``lo`` .. ``hi`` (either
    may be a function of the state, e.g. ``lambda st: st.k_max``), above ``lo`` with
    ``open_lo``. A choice is one of ``choices`` (shown by ``names`` when given); a flag is True
    or False (shown by ``names``, default "on" / "off"). ``offset`` is added where the value is
    shown. ``then`` adjusts the other fields after this one changes (a narrower d keeps the
    pair shown within it). ``tip`` is the control's tooltip.
    """

    name: str
    label: str
    kind: str = "whole"
    lo: Bound = 0
    hi: Bound = 10**6
    open_lo: bool = False
    choices: tuple[Any, ...] = ()
    names: tuple[str, ...] = ()
    offset: int = 0
    then: Callable[[Any], Any] | None = None
    tip: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("whole", "real", "choice", "flag"):
            raise ValueError(f"a setting is whole, real, choice or flag, not {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"the choice {self.name!r} names no choices")

    def bounds(self, state: Any) -> tuple[float, float]:
        """``lo`` and ``hi`` for ``state`` (as stored, without the offset)."""
        lo = self.lo(state) if callable(self.lo) else self.lo
        hi = self.hi(state) if callable(self.hi) else self.hi
        return lo, hi

    def check(self, value: object, state: Any = None) -> object:
        """``value`` if this setting may hold it (bounds read from ``state``), else ValueError
        in the one wording, with the numbers as they are shown."""
        if self.kind == "choice":
            if value not in self.choices:
                listed = ", ".join(self.shown(c) for c in self.choices)
                raise ValueError(f"{self.label} must be one of {listed}, got {shown_number(value)}")
            return value
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise ValueError(f"{self.label} must be on or off, got {shown_number(value)}")
            return value
        lo, hi = self.bounds(state)
        off = self.offset
        if self.kind == "real":
            return real_number(value, self.label, lo, hi, open_lo=self.open_lo)
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            return whole_number(value, self.label, lo, hi)
        whole_number(int(value) + off, self.label, lo + off, hi + off)
        return int(value)

    def shown(self, value: object) -> str:
        """``value`` as the reader sees it: the choice's or flag's name, the number plus the
        offset."""
        if self.kind == "choice" and self.names and value in self.choices:
            return self.names[self.choices.index(value)]
        if self.kind == "flag":
            on, off = self.names or ("on", "off")
            return on if value else off
        if self.kind == "whole" and isinstance(value, int | np.integer):
            return str(int(value) + self.offset)
        if self.kind == "real" and isinstance(value, float):
            return f"{value:g}"
        return str(value)


@dataclass(frozen=True)
class LabSettings:
    """A lab's settings: ``lab`` (how the undo history names the lab), its ``state_type``, the
    declared ``settings`` in the order they are checked (a bound read from another field comes
    after it), and ``rules``: functions of the whole state returning "" or why it is refused."""

    lab: str
    state_type: type
    settings: tuple[Setting, ...]
    rules: tuple[Callable[[Any], str], ...] = ()
    by_name: Mapping[str, Setting] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {f.name for f in fields(self.state_type)}
        unknown = [s.name for s in self.settings if s.name not in names]
        if unknown:
            raise ValueError(f"{self.state_type.__name__} has no fields {unknown}")
        object.__setattr__(self, "by_name", {s.name: s for s in self.settings})

    def __getitem__(self, name: str) -> Setting:
        try:
            return self.by_name[name]
        except KeyError:
            raise ValueError(f"the lab has no setting {name!r}") from None

    def check(self, state: Any) -> Any:
        """``state`` if every setting and rule allows it, else ValueError naming the first
        setting refused and its value."""
        for s in self.settings:
            s.check(getattr(state, s.name), state)
        for rule in self.rules:
            why = rule(state)
            if why:
                raise ValueError(why)
        return state

    def with_setting(self, state: Any, name: str, value: object) -> Any:
        """``state`` with ``name`` set to ``value`` (and what that setting's ``then`` adjusts),
        checked; ValueError in the one wording when refused."""
        s = self[name]
        new = replace(state, **{name: value})
        s.check(value, new)
        if s.then is not None:
            new = s.then(new)
        return self.check(new)

    def edit_text(self, name: str, value: object) -> str:
        """The undo history's name of the edit: "Position lab: query position m = 5"."""
        s = self[name]
        return f"{self.lab}: {s.label} = {s.shown(value)}"
