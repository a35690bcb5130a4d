"""A lesson's edits as data: what a step sets up, what "Show me" applies, what a prediction's
reveal shows. Each is one small table (``{ set = "temperature", value = 0.2 }``) turned into
the engine's own scenario edits, so a lesson file never runs code. No Qt.

========================  ==========================================================
``set``                    with
========================  ==========================================================
``temperature``            ``value``: a number
``scale``                  ``value``: true (divide by √d_k) or false
``mask``                   ``value``: "none" or "causal"
``mask_value``             ``value``: "-inf" or 0 (the masking mistake)
``vector``                 ``token``, ``value``: a token's input vector (its query, key
                           and value in a scenario of queries and keys given directly)
``query`` / ``key``        ``token``, ``value`` (and ``head``): move that token's query or
                           key there (the smallest change of Wq or Wk that does it)
``Wq`` / ``Wk`` / ``Wv``   ``value`` (a matrix) or ``preset`` (a named Wq of the scenario),
                           and ``head``
``induction_preset``       ``value``: the induction lab's model, "train", "hand_built" or
                           "skip_trigram"
``ablate``                 ``value``: the induction lab's heads to remove, as [layer, head]
                           pairs counted from 0 as the lab names them (L1H0 is [1, 0]);
                           [] removes none
``ablation_mode``          ``value``: "zero" or "mean"
``train``                  ``value``: train the induction lab's model this many more steps
``reset_training``         nothing: the induction lab's model back to its seed's start
========================  ==========================================================

The last five set the induction lab (:mod:`.labs`), not the scenario: :func:`apply_edits`
leaves them out and :func:`apply_lab_edits` applies them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attnsim.engine import edits as scenario_edits
from attnsim.engine.scenario import Scenario

from .labs import INDUCTION_PRESETS, MAX_TRAIN_STEPS, Labs, induction_shape
from .quantities import token_index

__all__ = ["EDIT_KINDS", "LAB_EDITS", "Edit", "apply_edits", "apply_lab_edits"]

# set -> the keys it takes besides "set" (required, optional)
EDIT_KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "temperature": (frozenset({"value"}), frozenset()),
    "scale": (frozenset({"value"}), frozenset()),
    "mask": (frozenset({"value"}), frozenset()),
    "mask_value": (frozenset({"value"}), frozenset()),
    "vector": (frozenset({"token", "value"}), frozenset()),
    "query": (frozenset({"token", "value"}), frozenset({"head"})),
    "key": (frozenset({"token", "value"}), frozenset({"head"})),
    "Wq": (frozenset(), frozenset({"value", "preset", "head"})),
    "Wk": (frozenset({"value"}), frozenset({"head"})),
    "Wv": (frozenset({"value"}), frozenset({"head"})),
    "induction_preset": (frozenset({"value"}), frozenset()),
    "ablate": (frozenset({"value"}), frozenset()),
    "ablation_mode": (frozenset({"value"}), frozenset()),
    "train": (frozenset({"value"}), frozenset()),
    "reset_training": (frozenset(), frozenset()),
}
LAB_EDITS = frozenset({"induction_preset", "ablate", "ablation_mode", "train", "reset_training"})


@dataclass(frozen=True)
class Edit:
    """One edit of a lesson (see the module's table)."""

    set: str
    value: Any = None
    token: str | int | None = None
    head: int = 1
    preset: str | None = None


def _numbers(value: Any, shape_of: np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape_of.shape:
        want = " × ".join(str(s) for s in shape_of.shape)
        raise ValueError(f"{what} needs {want} numbers, got shape {arr.shape}")
    return arr


def apply_edit(sc: Scenario, e: Edit) -> Scenario:
    """``sc`` with ``e`` applied; ValueError (or ScenarioError) naming the problem."""
    k = e.set
    if k == "temperature":
        if isinstance(e.value, bool) or not isinstance(e.value, int | float):
            raise ValueError(f"the temperature is a number, got {e.value!r}")
        return sc.replace(temperature=float(e.value))
    if k == "scale":
        if not isinstance(e.value, bool):
            raise ValueError(f"scale is true or false, got {e.value!r}")
        return sc.replace(scale=e.value)
    if k == "mask":
        if e.value not in ("none", "causal"):
            raise ValueError(f'a mask is "none" or "causal", got {e.value!r}')
        return sc.replace(mask=e.value)
    if k == "mask_value":
        if e.value not in ("-inf", 0):
            raise ValueError(f'mask_value is "-inf" or 0, got {e.value!r}')
        return sc.replace(mask_value=-np.inf if e.value == "-inf" else 0.0)
    heads = len(sc.heads) if sc.mode == "tokens" else 1
    if not 1 <= e.head <= heads:
        raise ValueError(f"there is no head {e.head} (there are {heads})")
    h = e.head - 1
    if k == "vector":
        assert e.token is not None
        row = token_index(sc, e.token)
        if sc.mode == "tokens":
            assert sc.X is not None
            return scenario_edits.set_vector(sc, "x", row, _numbers(e.value, sc.X[row], "vector"))
        raise ValueError("a scenario of queries and keys has no input vectors: set query or key")
    if k in ("query", "key"):
        assert e.token is not None
        row = token_index(sc, e.token, query=k == "query")
        # the query/key width, read from the matrices (no need to run the head for it)
        if sc.mode == "tokens":
            width = getattr(sc.heads[h], "Wq" if k == "query" else "Wk").shape[1]
        else:
            width = (sc.Q if k == "query" else sc.K).shape[1]  # type: ignore[union-attr]
        target = _numbers(e.value, np.empty(width), k)
        return scenario_edits.place_vector(sc, k, row, target, h)
    if sc.mode != "tokens":
        raise ValueError(f"a scenario of queries and keys has no {k}")
    old_w = getattr(sc.heads[h], k)
    if e.preset is not None:
        if k != "Wq" or e.value is not None:
            raise ValueError("'preset' names a Wq of the scenario, instead of 'value'")
        if e.preset not in sc.wq_presets:
            named = ", ".join(sc.wq_presets) or "none"
            raise ValueError(f"this scenario has no Wq named {e.preset!r} (it has {named})")
        return scenario_edits.set_matrix(sc, k, sc.wq_presets[e.preset], h)
    if e.value is None:
        raise ValueError(f"setting {k} needs 'value' (a matrix) or, for Wq, 'preset'")
    return scenario_edits.set_matrix(sc, k, _numbers(e.value, old_w, k), h)


def apply_edits(sc: Scenario, edits: Sequence[Edit]) -> Scenario:
    """``sc`` with every edit of the scenario applied in order (the lab edits left out)."""
    for e in edits:
        if e.set not in LAB_EDITS:
            sc = apply_edit(sc, e)
    return sc


def _heads(value: Any) -> tuple[tuple[int, int], ...]:
    def whole(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 64

    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and whole(p[0]) and whole(p[1]) for p in value
    ):
        raise ValueError(
            f"ablate takes a list of [layer, head] pairs counted from 0, like [[1, 0]], "
            f"got {value!r}"
        )
    return tuple(sorted({(p[0], p[1]) for p in value}))


def apply_lab_edit(labs: Labs, e: Edit) -> Labs:
    """``labs`` with the lab edit ``e`` applied; ValueError naming the problem."""
    k, v = e.set, e.value
    if k == "induction_preset":
        if v not in INDUCTION_PRESETS:
            raise ValueError(f"the induction lab's model is one of {', '.join(INDUCTION_PRESETS)}")
        return replace(labs, induction=replace(labs.induction, preset=v))
    if k == "ablate":
        heads = _heads(v)
        layers, per_layer = induction_shape(labs.induction)
        for layer, head in heads:
            if layer >= layers or head >= per_layer:
                raise ValueError(
                    f"the induction lab's model has no head L{layer}H{head} "
                    f"({layers} layers of {per_layer} head{'s' if per_layer > 1 else ''})"
                )
        return labs.with_ablated(heads)
    if k == "ablation_mode":
        if v not in ("zero", "mean"):
            raise ValueError(f'ablation_mode is "zero" or "mean", got {v!r}')
        return replace(labs, induction=replace(labs.induction, ablation_mode=v))
    if k == "train":
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_TRAIN_STEPS:
            raise ValueError(f"train takes a whole number of steps from 1 to {MAX_TRAIN_STEPS}")
        return replace(labs, trained=labs.trained + v)
    if k == "reset_training":
        return replace(labs, trained=0)
    raise AssertionError(k)


def apply_lab_edits(labs: Labs, edits: Sequence[Edit]) -> Labs:
    """``labs`` with every lab edit applied in order (the scenario's edits left out)."""
    for e in edits:
        if e.set in LAB_EDITS:
            labs = apply_lab_edit(labs, e)
    return labs
