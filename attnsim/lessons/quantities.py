"""The named quantities a lesson's challenge or prediction reads from the workbench's state.

A quantity is data, never code: a name from :data:`QUANTITIES` and the tokens, axis and head
it is about. :func:`resolve` checks those references against a scenario once (a token that does
not exist, an axis out of range) and returns a :class:`Reading`, which reads the number from a
computed result at the cost of one array lookup, so a challenge can be checked on every mouse
move of a drag. No Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from attnsim.engine.scenario import Scenario, ScenarioResult

from .labs import LAB_QUANTITIES

__all__ = ["QUANTITIES", "Quantity", "Reading", "resolve", "token_index"]


@dataclass(frozen=True)
class Kind:
    """What a quantity needs: a query token (``of``), a key token (``on``), an axis."""

    words: str  # how it reads in a sentence: "{of}'s weight on {on}"
    of: bool = False
    on: bool = False
    axis: str = ""  # "", "qk" (query/key axes), "v" (value / output axes), "x" (the stream's)
    of_optional: bool = False
    tokens_only: bool = False
    lab: bool = False  # read from a lab (.labs), not from the scenario's result


# name -> what it needs. The words are filled with token and axis names for the lesson's text.
QUANTITIES: dict[str, Kind] = {
    "weight": Kind("{of}'s weight on {on}", of=True, on=True),
    "score": Kind("the score of {of}'s query with {on}'s key (q · k)", of=True, on=True),
    "logit": Kind("the score {of} gives {on} after the scale and the temperature", True, True),
    "cosine": Kind("the cosine of {of}'s query and {on}'s key", of=True, on=True),
    "max_weight": Kind("{of}'s largest weight", of=True),
    "entropy": Kind("the entropy of {of}'s weights (bits)", of=True),
    "output": Kind("{of}'s output on {axis}", of=True, axis="v"),
    "residual": Kind("{of}'s new representation on {axis}", of=True, axis="x", tokens_only=True),
    "query": Kind("{of}'s query on {axis}", of=True, axis="qk"),
    "key": Kind("{of}'s key on {axis}", of=True, axis="qk"),
    "forbidden_weight": Kind(
        "the weight {of} puts on keys the mask forbids", of=True, of_optional=True
    ),
    "temperature": Kind("the temperature"),
    **{name: Kind(words, lab=True) for name, words in LAB_QUANTITIES.items()},
}


@dataclass(frozen=True)
class Quantity:
    """A quantity as a lesson file names it: tokens by label (``bank``, ``bank#2`` for the
    second ``bank``) or position from 1, an axis by name or number from 1, a head from 1."""

    name: str
    of: str | int | None = None
    on: str | int | None = None
    axis: str | int | None = None
    head: int = 1


def token_index(sc: Scenario, ref: str | int, *, query: bool = False) -> int:
    """The 0-based position of the token (the query, with ``query``) named ``ref``;
    ValueError naming the tokens if there is none. In a scenario of queries and keys given
    directly, the queries have names of their own."""
    names = _query_names(sc) if query else sc.tokens
    n = len(names)
    what = "query" if query and sc.mode == "direct" else "token"
    if isinstance(ref, int):
        if not 1 <= ref <= n:
            raise ValueError(f"there is no {what} at position {ref} (there are {n})")
        return ref - 1
    if ref in names and names.count(ref) == 1:  # a name with '#' in it ("C#") names itself
        return names.index(ref)
    label, _, nth = ref.rpartition("#") if "#" in ref else (ref, "", "")
    count = int(nth) if nth.isdigit() and int(nth) >= 1 else None
    if nth and count is None:
        raise ValueError(f"{ref!r}: after '#' comes which occurrence, a whole number from 1")
    found = [i for i, t in enumerate(names) if t == label]
    if not found:
        raise ValueError(f"there is no {what} {label!r} (the {what}s are {', '.join(names)})")
    if count is None:
        if len(found) > 1:
            raise ValueError(f"{label!r} occurs {len(found)} times: say which, as {label}#2")
        return found[0]
    if count > len(found):
        raise ValueError(f"{label!r} occurs {len(found)} times, not {count}")
    return found[count - 1]


def _query_names(sc: Scenario) -> tuple[str, ...]:
    """The queries' names: the tokens, or a direct scenario's own query names (numbered when
    it has none)."""
    if sc.mode == "tokens":
        return sc.tokens
    return sc.query_labels or tuple(f"query {i + 1}" for i in range(sc.n_queries))


def _axis_index(names: tuple[str, ...], width: int, ref: str | int) -> tuple[int, str]:
    if isinstance(ref, int):
        if not 1 <= ref <= width:
            raise ValueError(f"there is no axis {ref} (there are {width})")
        return ref - 1, names[ref - 1] if ref - 1 < len(names) else f"axis {ref}"
    if ref not in names[:width]:
        shown = ", ".join(names[:width]) or "none named"
        raise ValueError(f"there is no axis {ref!r} (the axes are {shown})")
    return names.index(ref), ref


def _axes(sc: Scenario, which: str) -> tuple[tuple[str, ...], int]:
    """The names and the width of the input ("x"), query/key ("qk") or value ("v") axes."""
    if which == "x":
        assert sc.X is not None
        return sc.axes, int(sc.X.shape[1])
    if sc.mode == "tokens":
        head = sc.heads[0]
        width = head.Wq.shape[1] if which == "qk" else head.Wv.shape[1]
    else:
        assert sc.Q is not None and sc.V is not None
        width = sc.Q.shape[1] if which == "qk" else sc.V.shape[1]
    names = (sc.qk_axes if which == "qk" else sc.v_axes) or sc.axes
    return tuple(names), int(width)


@dataclass(frozen=True)
class Reading:
    """A quantity resolved against a scenario: ``read(result)`` is its number, ``words`` what
    it is in a sentence ("bank's weight on river")."""

    name: str
    words: str
    head: int  # 0-based
    i: int | None
    j: int | None
    axis: int | None

    @property
    def from_lab(self) -> bool:
        return QUANTITIES[self.name].lab

    def read(
        self, sc: Scenario, result: ScenarioResult, labs: Callable[[], Mapping[str, float]] = dict
    ) -> float:
        """The number now; ``labs()`` gives the lab quantities (:func:`.labs.lab_values`),
        called only for a quantity read from a lab."""
        if self.from_lab:
            return float(labs()[self.name])
        if self.name == "temperature":
            return float(sc.temperature)
        tr = result.heads[self.head]
        i, j, a = self.i, self.j, self.axis
        name = self.name
        if name == "weight":
            return float(tr.weights[i, j])
        if name == "score":
            return tr.score(i, j)  # type: ignore[arg-type]
        if name == "logit":
            return float(tr.logits[i, j])
        if name == "cosine":
            q, k = tr.Q[i], tr.K[j]
            den = float(np.linalg.norm(q) * np.linalg.norm(k))
            return float(q @ k) / den if den > 0 else 0.0
        if name == "max_weight":
            return float(tr.weights[i].max())
        if name == "entropy":
            return float(tr.entropy[i])
        if name == "output":
            return float(tr.output[i, a])
        if name == "residual":
            assert result.block is not None
            return float(result.block.Y[i, a])
        if name == "query":
            return float(tr.Q[i, a])
        if name == "key":
            return float(tr.K[i, a])
        if name == "forbidden_weight":
            fw = tr.forbidden_weight
            return float(fw[i] if i is not None else fw.max())
        raise AssertionError(name)  # resolve() refused every other name


def resolve(q: Quantity, sc: Scenario) -> Reading:
    """``q`` checked against ``sc``: ValueError naming the problem if a name, token, axis or
    head does not exist there."""
    kind = QUANTITIES.get(q.name)
    if kind is None:
        raise ValueError(
            f"there is no quantity {q.name!r}; a lesson can read {', '.join(QUANTITIES)}"
        )
    if kind.tokens_only and sc.mode != "tokens":
        raise ValueError(f"{q.name!r} needs a scenario of tokens with an output projection")
    heads = len(sc.heads) if sc.mode == "tokens" else 1
    if kind.lab and q.head != 1:
        raise ValueError(f"{q.name!r} is measured over the whole lab: remove 'head'")
    if not 1 <= q.head <= heads and not kind.lab:
        raise ValueError(f"there is no head {q.head} (there are {heads})")
    i = j = a = None
    fill = {"of": "", "on": "", "axis": ""}
    if kind.of and q.of is None and not kind.of_optional:
        raise ValueError(f"{q.name!r} needs 'of': the token whose {q.name} it is")
    if q.of is not None:
        if not kind.of:
            raise ValueError(f"{q.name!r} is about no token: remove 'of'")
        is_query = q.name != "key"  # a key is one of the keys' tokens
        i = token_index(sc, q.of, query=is_query)
        fill["of"] = (_query_names(sc) if is_query else sc.tokens)[i]
    elif kind.of_optional:
        kind = Kind("the largest weight a token puts on keys the mask forbids")
    if kind.on:
        if q.on is None:
            raise ValueError(f"{q.name!r} needs 'on': the key token")
        j = token_index(sc, q.on)
        fill["on"] = sc.tokens[j]
    elif q.on is not None:
        raise ValueError(f"{q.name!r} takes no key token: remove 'on'")
    if kind.axis:
        if q.axis is None:
            raise ValueError(f"{q.name!r} needs 'axis': a coordinate's name or number")
        names, width = _axes(sc, kind.axis)
        a, fill["axis"] = _axis_index(names, width, q.axis)
    elif q.axis is not None:
        raise ValueError(f"{q.name!r} takes no axis: remove 'axis'")
    words = kind.words.format(**fill)
    if heads > 1 and q.name != "temperature" and not kind.lab:
        words += f" in head {q.head}"
    return Reading(q.name, words, q.head - 1, i, j, a)
