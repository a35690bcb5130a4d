"""A sweep of one quantity for an animation: what changes, from where to where, in how many
frames, and the caption of each frame ("T = 0.25"). Qt-free.

Written on the command line as ``QUANTITY[:WHERE...]:START:END:FRAMES``:

- ``temperature:0.1:10:60``: the softmax temperature, in even steps of its logarithm;
- ``scale:0.1:5:60``: the score scale, the factor every score is multiplied by before the
  softmax (the same as the temperature 1 / scale), in even steps of its logarithm;
- ``vector:TOKEN:AXIS:-1:2:30``: one coordinate of a token's vector (the token by its label or
  its position from 1, the axis by its name or its number from 1);
- ``wq:HEAD:ROW:COL:-1:1:30``: one coefficient of a head's query map Wq (all from 1);
- ``k:0:32:33``: the number of distractor keys in the long-context lab (whole steps).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from attnsim.engine import edits
from attnsim.engine.numbers import fmt_significant
from attnsim.engine.scenario import MAX_TEMPERATURE, MIN_TEMPERATURE, Scenario, ScenarioError

__all__ = ["MAX_FRAMES", "MAX_SCALE", "MIN_SCALE", "QUANTITIES", "Sweep", "parse_sweep"]

QUANTITIES = ("temperature", "scale", "vector", "wq", "k")
# How many positions each quantity names before START:END:FRAMES.
_WHERE = {"temperature": 0, "scale": 0, "vector": 2, "wq": 3, "k": 0}
MAX_FRAMES = 2000
# Multiplying the scores by s is dividing them by the temperature 1 / s: the scale's range is
# the temperature's, turned over.
MIN_SCALE = 1.0 / MAX_TEMPERATURE
MAX_SCALE = 1.0 / MIN_TEMPERATURE
LOG_STEPS = ("temperature", "scale")  # swept in even steps of their logarithm
# quantity -> (lowest, highest, what it is in a refusal)
_BOUNDED = {
    "temperature": (MIN_TEMPERATURE, MAX_TEMPERATURE, "the temperature"),
    "scale": (
        MIN_SCALE,
        MAX_SCALE,
        "the score scale (what every score is multiplied by before the softmax)",
    ),
}
LAB_PANELS = {"k": "context_lab"}  # a lab quantity shows only in its lab's panel
_FORMS = {
    "temperature": "temperature:START:END:FRAMES",
    "scale": "scale:START:END:FRAMES",
    "vector": "vector:TOKEN:AXIS:START:END:FRAMES",
    "wq": "wq:HEAD:ROW:COL:START:END:FRAMES",
    "k": "k:START:END:FRAMES",
}


@dataclass(frozen=True)
class Sweep:
    """``quantity`` from ``start`` to ``end`` in ``frames`` frames; ``where`` says which
    coordinate (0-based: token and axis, or head, row and column)."""

    quantity: str
    start: float
    end: float
    frames: int
    where: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.quantity not in QUANTITIES:
            raise ValueError(
                f"cannot sweep {self.quantity!r}; sweep one of {', '.join(QUANTITIES)}"
            )
        if not 2 <= self.frames <= MAX_FRAMES:
            raise ValueError(f"a sweep has 2 to {MAX_FRAMES} frames, got {self.frames}")
        if not (np.isfinite(self.start) and np.isfinite(self.end)):
            raise ValueError("a sweep starts and ends at finite numbers")
        if self.start == self.end:
            raise ValueError(f"a sweep needs two different ends, got {self.start:g} twice")
        if self.quantity in _BOUNDED:
            lo, hi, what = _BOUNDED[self.quantity]
            for v in (self.start, self.end):
                if not lo <= v <= hi:
                    raise ValueError(f"{what} runs from {lo:g} to {hi:g}, got {v:g}")
        if self.quantity == "k":
            if (
                self.start != int(self.start)
                or self.end != int(self.end)
                or min(self.start, self.end) < 0
            ):
                raise ValueError("the number of distractor keys is a whole number from 0")
            span = int(abs(self.end - self.start)) + 1
            if self.frames > span:
                raise ValueError(
                    f"the distractor keys go in whole steps: {self.start:g} to {self.end:g} "
                    f"has at most {span} frames, not {self.frames}"
                )

    # ---- the values and what each frame says --------------------------------------------
    def values(self) -> np.ndarray:
        """The swept value of every frame, ``start`` and ``end`` included."""
        if self.quantity in LOG_STEPS:
            return np.geomspace(self.start, self.end, self.frames)
        vals = np.linspace(self.start, self.end, self.frames)
        return np.round(vals) if self.quantity == "k" else vals

    @property
    def panel(self) -> str | None:
        """The one panel that shows this quantity (None: any panel)."""
        return LAB_PANELS.get(self.quantity)

    def caption(self, value: float, sc: Scenario) -> str:
        v = fmt_significant(float(value))
        if self.quantity == "temperature":
            return f"T = {v}"
        if self.quantity == "scale":
            return f"score × {v}"
        if self.quantity == "k":
            n = int(value)
            return f"k = {n} distractor key{'s' if n != 1 else ''}"
        if self.quantity == "vector":
            token, axis = self.where
            return f"{sc.tokens[token]}: {_axis_name(sc, axis)} = {v}"
        head, row, col = self.where
        heads = f" of head {head + 1}" if len(sc.heads) > 1 else ""
        cols = sc.qk_axes[col] if col < len(sc.qk_axes) else str(col + 1)
        return f"Wq{heads}, row {_axis_name(sc, row)}, column {cols} = {v}"

    # ---- applying a value -------------------------------------------------------------------
    def check(self, sc: Scenario) -> None:
        """Refuse, in a sentence, a sweep that ``sc`` cannot take."""
        if self.quantity in ("vector", "wq") and sc.mode != "tokens":
            raise ValueError(
                f"{sc.name} gives its queries and keys directly: it has no token vectors "
                "or Wq to sweep"
            )
        self.scenario_at(sc, self.start)
        self.scenario_at(sc, self.end)

    def scenario_at(self, sc: Scenario, value: float) -> Scenario:
        """``sc`` with the swept quantity at ``value`` (unchanged for a lab's quantity)."""
        q = self.quantity
        try:
            if q == "temperature":
                return sc.replace(temperature=float(value))
            if q == "scale":
                t = float(np.clip(1.0 / float(value), MIN_TEMPERATURE, MAX_TEMPERATURE))
                return sc.replace(temperature=t)
            if q == "vector":
                token, axis = self.where
                return edits.set_cell(sc, "x", token, axis, float(value))
            if q == "wq":
                head, row, col = self.where
                if not 0 <= head < len(sc.heads):
                    raise ValueError(f"{sc.name} has {len(sc.heads)} head(s), not {head + 1}")
                W = np.array(sc.heads[head].Wq, dtype=float)
                if not (0 <= row < W.shape[0] and 0 <= col < W.shape[1]):
                    raise ValueError(
                        f"Wq is {W.shape[0]} × {W.shape[1]}: it has no row {row + 1}, "
                        f"column {col + 1}"
                    )
                W[row, col] = float(value)
                return edits.set_head_matrix(sc, head, "Wq", W)
        except ScenarioError as exc:
            raise ValueError(str(exc)) from None
        return sc

    def lab_at(self, state: object, value: float) -> object:
        """The long-context lab's ``state`` with ``k`` distractors (its K raised to reach)."""
        k = int(value)
        k_max = max(state.k_max, int(max(self.start, self.end)))  # type: ignore[attr-defined]
        return dataclasses.replace(state, k=k, k_max=k_max)  # type: ignore[type-var]


def _axis_name(sc: Scenario, axis: int) -> str:
    return sc.axes[axis] if axis < len(sc.axes) else f"axis {axis + 1}"


def _index(text: str, names: tuple[str, ...], what: str, size: int) -> int:
    """A 0-based index from a name in ``names`` or a position from 1."""
    if text in names:
        return names.index(text)
    try:
        i = int(text)
    except ValueError:
        shown = f" ({', '.join(names)})" if names else ""
        raise ValueError(f"{text!r} is not a {what} of the scenario{shown} nor a number") from None
    if not 1 <= i <= size:
        raise ValueError(f"{what} {i} is out of range: there are {size} (1 to {size})")
    return i - 1


def parse_sweep(text: str, sc: Scenario) -> Sweep:
    """The sweep ``text`` writes, on scenario ``sc`` (see the module's help for the forms)."""
    parts = text.strip().split(":")
    quantity = parts[0].strip().lower()
    if quantity not in _WHERE:
        raise ValueError(
            f"cannot sweep {parts[0]!r}; sweep one of {', '.join(QUANTITIES)} "
            "(e.g. temperature:0.1:10:60 or scale:0.1:5:60)"
        )
    form = _FORMS[quantity]
    if len(parts) != _WHERE[quantity] + 4:
        raise ValueError(f"a {quantity} sweep is written {form}, got {text!r}")
    where_text, numbers = parts[1 : 1 + _WHERE[quantity]], parts[1 + _WHERE[quantity] :]
    try:
        start, end = float(numbers[0]), float(numbers[1])
    except ValueError:
        raise ValueError(f"a sweep's START and END are numbers ({form}), got {text!r}") from None
    try:
        frames = int(numbers[2])
    except ValueError:
        raise ValueError(
            f"a sweep's FRAMES is a whole number ({form}), got {numbers[2]!r}"
        ) from None
    where: tuple[int, ...] = ()
    if quantity == "vector":
        if sc.mode != "tokens":
            raise ValueError(f"{sc.name} gives its queries and keys directly: no token vectors")
        where = (
            _index(where_text[0], sc.tokens, "token", sc.n_tokens),
            _index(where_text[1], sc.axes, "axis", sc.d),
        )
    elif quantity == "wq":
        if sc.mode != "tokens":
            raise ValueError(f"{sc.name} gives its queries and keys directly: it has no Wq")
        head = _index(where_text[0], (), "head", len(sc.heads))
        rows, cols = sc.heads[head].Wq.shape
        where = (head, _index(where_text[1], sc.axes, "row", rows),
                 _index(where_text[2], sc.qk_axes, "column", cols))  # fmt: skip
    sweep = Sweep(quantity, start, end, frames, where)
    sweep.check(sc)
    return sweep
