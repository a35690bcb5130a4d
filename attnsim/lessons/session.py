"""A lesson being taken: which step, what its challenge reads now, how an answer compares with
what the engine computes, what the learner did (:mod:`.progress`). The Lessons panel binds it
to the workbench (edits, undo, the panels brought forward); this module holds the rules and
the sentences, and imports no Qt.

Checking a challenge costs a few array lookups on the result the workbench computed anyway
(the quantities are resolved once per scenario shape), so it runs on every mouse move of a
drag (``attnsim bench``'s ``lesson_check`` row measures it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from attnsim.engine.numbers import fmt_significant
from attnsim.engine.scenario import Scenario, ScenarioResult

from .edits import apply_edits
from .format import Lesson
from .labs import LAB_QUANTITIES
from .progress import Progress, StepRecord
from .quantities import Reading, resolve

__all__ = ["Answer", "ChallengeStatus", "LessonRun", "Line"]

LabValues = Callable[[], Mapping[str, float]]  # the lab quantities now (.labs.lab_values)


@dataclass(frozen=True)
class Line:
    """One check as the learner reads it: "bank's weight on river: 0.31 (goal: at least 0.7)"."""

    text: str
    ok: bool


@dataclass(frozen=True)
class ChallengeStatus:
    lines: tuple[Line, ...]
    passed: bool  # every check holds now
    unreadable: str = ""  # why the checks cannot be read in this scenario ("" when they can)


@dataclass(frozen=True)
class Answer:
    """A prediction answered: the sentence comparing it with the engine, and if it was right."""

    text: str
    correct: bool


def _shape_key(sc: Scenario) -> tuple:
    heads = len(sc.heads) if sc.mode == "tokens" else 1
    return (sc.mode, sc.tokens, sc.axes, sc.qk_axes, sc.v_axes, heads, sc.n_queries)


class LessonRun:
    """``lesson`` at step ``index``, recording into ``progress``."""

    def __init__(self, lesson: Lesson, progress: Progress, index: int | None = None) -> None:
        self.lesson = lesson
        self.progress = progress
        last = len(lesson.steps) - 1
        self.index = min(progress.current(lesson.id) if index is None else index, last)
        self._readings: tuple[tuple, list[Reading] | str] | None = None

    # ---- where we are --------------------------------------------------------------------------
    @property
    def step(self):
        return self.lesson.steps[self.index]

    @property
    def record(self) -> StepRecord:
        return self.progress.step(self.lesson.id, self.index)

    def heading(self) -> str:
        n = len(self.lesson.steps)
        return f"{self.lesson.title} · step {self.index + 1} of {n}: {self.step.title}"

    def go(self, index: int) -> None:
        self.index = max(0, min(index, len(self.lesson.steps) - 1))
        self._readings = None
        self.progress.set_current(self.lesson.id, self.index)

    def start_state(self, current: Scenario, preset: Scenario | None) -> Scenario:
        """Where the step starts: its preset (given by the caller) or ``current``, then its
        setup edits."""
        base = preset if preset is not None else current
        return apply_edits(base, self.step.setup)

    # ---- the challenge -------------------------------------------------------------------------
    def _resolved(self, sc: Scenario) -> list[Reading] | str:
        challenge = self.step.challenge
        assert challenge is not None
        key = _shape_key(sc)
        if self._readings is None or self._readings[0] != key:
            try:
                made: list[Reading] | str = [resolve(c.quantity, sc) for c in challenge.checks]
            except ValueError as exc:
                made = (
                    f"This challenge cannot be checked on this scenario ({exc}). Press Back and "
                    "Next to start the step again."
                )
            self._readings = (key, made)
        return self._readings[1]

    def reads_labs(self) -> bool:
        """Whether the step's challenge or prediction reads a lab's quantity."""
        st = self.step
        checks = [*(st.challenge.checks if st.challenge else ()),
                  *(st.predict.claim if st.predict else ())]  # fmt: skip
        named = [c.quantity.name for c in checks]
        if st.predict is not None and st.predict.number is not None:
            named.append(st.predict.number.name)
        return any(name in LAB_QUANTITIES for name in named)

    def status(
        self, sc: Scenario, result: ScenarioResult, labs: LabValues = dict
    ) -> ChallengeStatus | None:
        """The challenge's checks on the current state (None: the step has no challenge);
        ``labs()`` gives the lab quantities (:func:`.labs.lab_values`)."""
        challenge = self.step.challenge
        if challenge is None:
            return None
        readings = self._resolved(sc)
        if isinstance(readings, str):
            return ChallengeStatus((), False, readings)
        lines, passed = [], True
        for check, r in zip(challenge.checks, readings, strict=True):
            value = r.read(sc, result, labs)
            ok = check.holds(value)
            passed &= ok
            lines.append(Line(f"{r.words}: {fmt_significant(value)} (goal: {check.bounds()})", ok))
        return ChallengeStatus(tuple(lines), passed)

    def record_pass(self) -> bool:
        """Note the challenge as passed; True the first time."""
        if self.record.passed:
            return False
        self.progress.set_step(self.lesson.id, self.index, passed=True)
        return True

    def next_hint(self) -> str | None:
        """The next hint (recorded as read), or None when every hint has been read."""
        challenge = self.step.challenge
        if challenge is None or self.record.hints >= len(challenge.hints):
            return None
        shown = self.record.hints + 1
        self.progress.set_step(self.lesson.id, self.index, hints=shown)
        return challenge.hints[shown - 1]

    def hints_read(self) -> tuple[str, ...]:
        challenge = self.step.challenge
        return () if challenge is None else challenge.hints[: self.record.hints]

    def solution(self, sc: Scenario) -> Scenario:
        """``sc`` with the step's solution applied (recorded as shown)."""
        challenge = self.step.challenge
        assert challenge is not None
        after = apply_edits(sc, challenge.solution)
        self.progress.set_step(self.lesson.id, self.index, shown=True)
        return after

    # ---- the prediction ------------------------------------------------------------------------
    def reveal_state(self, sc: Scenario) -> Scenario:
        pr = self.step.predict
        assert pr is not None
        return apply_edits(sc, pr.show)

    def answer(
        self, given: str | int, revealed: Scenario, result: ScenarioResult, labs: LabValues = dict
    ) -> Answer:
        """Compare ``given`` (a choice's index, or the typed number) with the truth on the
        revealed state, and record it. ValueError for a number that cannot be read."""
        pr = self.step.predict
        assert pr is not None
        if pr.number is None:
            assert isinstance(given, int)
            right = pr.choices[pr.answer]
            correct = given == pr.answer
            said = pr.choices[given]
            text = (
                f"You said {said!r}: right."
                if correct
                else f"You said {said!r}; the answer is {right!r}."
            )
        else:
            value = _number(str(given))
            r = resolve(pr.number, revealed)
            truth = r.read(revealed, result, labs)
            correct = abs(value - truth) <= pr.tolerance
            said = fmt_significant(value)
            verdict = "within" if correct else "not within"
            text = (
                f"You said {said}; the engine computes {r.words} = {fmt_significant(truth)}, "
                f"{verdict} {fmt_significant(pr.tolerance)} of it."
            )
        self.progress.set_step(self.lesson.id, self.index, answer=said, correct=correct)
        return Answer(text, correct)


def _number(text: str) -> float:
    cleaned = text.strip().replace("−", "-").replace(",", ".")
    if cleaned.endswith("%"):
        return float(cleaned[:-1]) / 100
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip() or 'an empty answer'!r} is not a number") from None
    if value != value or abs(value) == float("inf"):
        raise ValueError(f"{text.strip()!r} is not a finite number")
    return value
