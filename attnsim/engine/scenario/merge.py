"""Two edits made from the same scenario, put together (a three-way merge).

At large n a drag's latest move can wait for the trace before it (see the workbench's
background traces) while another edit is made, say a value typed in the vector editor. That
edit was built from the scenario without the move; applied as it stands it would put the
dragged vector back where it was. :func:`merge_edits` keeps both: whatever ``theirs`` changed
from ``base`` wins, everything else comes from ``ours``.

Fields are compared by identity first (an edit shares every field it did not change) and then
by value. Arrays of one shape changed by both are merged entry by entry, and heads head by
head, so a typed value in one row keeps a dragged vector in another. Where both changed the
same field in ways that cannot be merged (a different number of tokens, another mask), the
later edit, ``theirs``, wins.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .head import Head
from .model import Scenario, _field_equal


def _same(a: Any, b: Any) -> bool:
    return a is b or _field_equal(a, b)


def _merge_value(base: Any, ours: Any, theirs: Any) -> Any:
    if _same(theirs, base):
        return ours
    if _same(ours, base):
        return theirs
    if (
        isinstance(base, np.ndarray)
        and isinstance(ours, np.ndarray)
        and isinstance(theirs, np.ndarray)
        and base.shape == ours.shape == theirs.shape
    ):
        return np.where(theirs != base, theirs, ours)
    if isinstance(base, Head) and isinstance(ours, Head) and isinstance(theirs, Head):
        return _merge_fields(base, ours, theirs)
    if (
        isinstance(base, tuple)
        and isinstance(ours, tuple)
        and isinstance(theirs, tuple)
        and len(base) == len(ours) == len(theirs)
        and all(isinstance(h, Head) for h in (*base, *ours, *theirs))
    ):
        return tuple(_merge_value(b, o, t) for b, o, t in zip(base, ours, theirs, strict=True))
    return theirs


def _merge_fields(base: Any, ours: Any, theirs: Any) -> Any:
    changes = {}
    for f in dataclasses.fields(base):
        t = getattr(theirs, f.name)
        merged = _merge_value(getattr(base, f.name), getattr(ours, f.name), t)
        if merged is not t:
            changes[f.name] = merged
    return dataclasses.replace(theirs, **changes) if changes else theirs


def merge_edits(base: Scenario, ours: Scenario, theirs: Scenario) -> Scenario:
    """``theirs`` (an edit of ``base``) applied on top of ``ours`` (another edit of ``base``).

    Raises ScenarioError when the merged scenario is not valid (the caller keeps ``theirs``).
    """
    if ours is base:
        return theirs
    if theirs is base:
        return ours
    return _merge_fields(base, ours, theirs)
