"""The one declaration and check of a lab's settings: the one wording of every refusal, bounds
read from the state, the display offset, ``then`` and the rules."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from attnsim.engine.settings import LabSettings, Setting, real_number, whole_number


@dataclass(frozen=True)
class S:
    heads: int = 4
    head: int = 0
    p: float = 0.5
    on: bool = False
    mode: str = "a"


DECL = LabSettings("Test lab", S, (
    Setting("heads", "heads", lo=1, hi=8),
    Setting("head", "head", hi=lambda st: st.heads - 1, offset=1,
            then=lambda st: replace(st, on=True)),
    Setting("p", "p", "real", hi=1.0, open_lo=True),
    Setting("on", "switch", "flag", names=("up", "down")),
    Setting("mode", "mode", "choice", choices=("a", "b"), names=("first", "second")),
), rules=(lambda st: "p must stay below 0.9 with the switch up" if st.on and st.p >= 0.9
          else "",))  # fmt: skip


def refusal(call) -> str:
    """The one sentence ``call()`` is refused with."""
    with pytest.raises(ValueError) as err:
        call()
    return str(err.value)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (2.5, "n must be a whole number, got 2.5"),
        (True, "n must be a whole number, got True"),
        ("3", "n must be a whole number, got '3'"),
        (0, "n must lie between 1 and 5, got 0"),
        (np.int64(6), "n must lie between 1 and 5, got 6"),
    ],
)
def test_a_whole_number_is_refused_in_the_one_wording(value, words):
    assert refusal(lambda: whole_number(value, "n", 1, 5)) == words
    assert whole_number(np.int64(3), "n", 1, 5) == 3 and type(whole_number(3, "n", 1, 5)) is int


def test_a_real_number_is_refused_in_the_one_wording():
    assert (
        refusal(lambda: real_number(math.nan, "x", 0, 2)) == "x must lie between 0 and 2, got nan"
    )
    assert (
        refusal(lambda: real_number(0.0, "x", 0, 2, open_lo=True))
        == "x must lie above 0 and at most 2, got 0"
    )
    assert refusal(lambda: real_number(None, "x", 0, 2)) == "x must be a number, got None"
    assert real_number(2, "x", 0, 2) == 2.0


def test_bounds_come_from_the_state_and_are_shown_with_the_offset():
    assert DECL.check(S(heads=4, head=3)) == S(heads=4, head=3)
    assert refusal(lambda: DECL.check(S(heads=4, head=4))) == "head must lie between 1 and 4, got 5"
    assert DECL.edit_text("head", 2) == "Test lab: head = 3"
    assert DECL.edit_text("on", False) == "Test lab: switch = down"
    assert DECL.edit_text("mode", "b") == "Test lab: mode = second"


def test_with_setting_applies_then_and_the_rules_and_refuses_in_the_one_wording():
    new = DECL.with_setting(S(), "head", 2)
    assert new == S(head=2, on=True)  # ``then`` switched it on
    assert (
        refusal(lambda: DECL.with_setting(new, "p", 0.95))
        == "p must stay below 0.9 with the switch up"
    )
    assert refusal(lambda: DECL.with_setting(S(), "on", 1)) == "switch must be on or off, got 1"
    assert (
        refusal(lambda: DECL.with_setting(S(), "mode", "c"))
        == "mode must be one of first, second, got 'c'"
    )
    with pytest.raises(ValueError, match="no setting 'nope'"):
        DECL.with_setting(S(), "nope", 1)


def test_a_declaration_naming_no_field_or_no_choice_is_an_error():
    with pytest.raises(ValueError, match="no fields"):
        LabSettings("Bad", S, (Setting("heds", "heads"),))
    with pytest.raises(ValueError, match="names no choices"):
        Setting("mode", "mode", "choice")
    with pytest.raises(ValueError, match="whole, real, choice or flag"):
        Setting("mode", "mode", "text")
