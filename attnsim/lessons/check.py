"""A lesson checked against the app: its presets, tokens, axes, panels and edits exist
(:func:`check_lesson`), and every graded step works (:func:`solve`): a challenge is not
passed where its step starts and is passed once its solution is applied, and a prediction's
claims hold at its reveal. No Qt.

Where a step starts: its preset (or, without one, where the previous step ended), then its
setup. A prediction's reveal applies its ``show`` edits; a challenge starts after that.
Where a step ends: after its solution (for ``solve``; in the app, wherever the learner left it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from attnsim.engine.numbers import fmt_significant
from attnsim.engine.scenario import Scenario, ScenarioError

from .edits import Edit, apply_edits, apply_lab_edits
from .format import Check, Lesson, LessonError, Step
from .labs import Labs, lab_values
from .quantities import Reading, resolve

__all__ = ["CheckedStep", "StepStates", "check_lesson", "goal_words", "solve", "step_states"]

Presets = Callable[[str], Scenario]


@dataclass(frozen=True)
class StepStates:
    """The scenarios of one step: where it starts, its reveal, after its solution; and the
    labs at each of the three."""

    start: Scenario
    revealed: Scenario
    solved: Scenario
    start_labs: Labs = field(default_factory=Labs)
    revealed_labs: Labs = field(default_factory=Labs)
    solved_labs: Labs = field(default_factory=Labs)


@dataclass(frozen=True)
class CheckedStep:
    """What :func:`solve` found for one step, in sentences for ``attnsim lesson solve``."""

    step: int
    lines: tuple[str, ...]
    ok: bool


def _edited(sc: Scenario, labs: Labs, edits: Iterable[Edit], where: str) -> tuple[Scenario, Labs]:
    """``sc`` and ``labs`` with each edit applied; LessonError naming the edit (``setup[2]``)
    if one does not apply."""
    for n, e in enumerate(edits, 1):
        try:
            sc, labs = apply_edits(sc, (e,)), apply_lab_edits(labs, (e,))
        except (ValueError, ScenarioError, OverflowError) as exc:
            problem = exc.problem if isinstance(exc, ScenarioError) else str(exc)
            raise LessonError(f"{where}[{n}]", problem) from None
    return sc, labs


def _readings(checks: Iterable[Check], sc: Scenario, where: str) -> list[Reading]:
    out = []
    for n, c in enumerate(checks, 1):
        try:
            out.append(resolve(c.quantity, sc))
        except ValueError as exc:
            raise LessonError(f"{where}[{n}]", str(exc)) from None
    return out


def step_states(lesson: Lesson, presets: Presets) -> list[StepStates]:
    """Each step's scenarios, in order; LessonError naming the step and field if a preset or
    an edit does not exist or does not apply."""
    out: list[StepStates] = []
    here: Scenario | None = None
    labs = Labs()
    for n, step in enumerate(lesson.steps, 1):
        where = f"step {n}"
        if step.scenario is not None:
            try:
                here = presets(step.scenario)
            except (ValueError, ScenarioError, OSError):
                raise LessonError(
                    f"{where}.scenario", f"there is no preset {step.scenario!r}"
                ) from None
        assert here is not None  # the first step loads a preset (parse_lesson checks it)
        start, start_labs = _edited(here, labs, step.setup, f"{where}.setup")
        revealed, revealed_labs = start, start_labs
        if step.predict is not None:
            revealed, revealed_labs = _edited(
                start, start_labs, step.predict.show, f"{where}.predict.show"
            )
        solved, solved_labs = revealed, revealed_labs
        if step.challenge is not None:
            solved, solved_labs = _edited(
                revealed, revealed_labs, step.challenge.solution, f"{where}.challenge.solution"
            )
        out.append(StepStates(start, revealed, solved, start_labs, revealed_labs, solved_labs))
        here, labs = solved, solved_labs
    return out


def check_lesson(lesson: Lesson, presets: Presets, panel_ids: Iterable[str]) -> list[StepStates]:
    """Every reference of ``lesson`` resolved: LessonError (with the lesson's file) at the first
    preset, token, axis, head, panel or edit that does not exist. Returns the step states."""
    try:
        states = step_states(lesson, presets)
        panels = set(panel_ids)
        for n, (step, st) in enumerate(zip(lesson.steps, states, strict=True), 1):
            if step.highlight is not None and step.highlight[0] not in panels:
                raise LessonError(
                    f"step {n}.highlight.panel", f"there is no panel {step.highlight[0]!r}"
                )
            for p in step.panels:
                if p not in panels:
                    raise LessonError(
                        f"step {n}.panels",
                        f"there is no panel {p!r} (there are {', '.join(sorted(panels))})",
                    )
            if step.predict is not None:
                pr = step.predict
                _readings(pr.claim, st.revealed, f"step {n}.predict.claim")
                if pr.number is not None:
                    try:
                        resolve(pr.number, st.revealed)
                    except ValueError as exc:
                        raise LessonError(f"step {n}.predict.number", str(exc)) from None
            if step.challenge is not None:
                _readings(step.challenge.checks, st.revealed, f"step {n}.challenge.checks")
        return states
    except LessonError as exc:
        raise LessonError(exc.where, exc.problem, lesson.file) from None


def goal_words(check: Check, reading: Reading) -> str:
    """The check as a goal: "bank's weight on river at least 0.7"."""
    return f"{reading.words} {check.bounds()}"


def _passes(step: Step, sc: Scenario, labs: Labs) -> tuple[bool, list[str]]:
    assert step.challenge is not None
    result = sc.compute()
    ok, said = True, []
    for c, r in zip(
        step.challenge.checks, _readings(step.challenge.checks, sc, "checks"), strict=True
    ):
        value = r.read(sc, result, lambda: lab_values(labs))
        ok &= c.holds(value)
        said.append(f"{r.words} {fmt_significant(value)}")
    return ok, said


def solve(lesson: Lesson, presets: Presets, panel_ids: Iterable[str]) -> list[CheckedStep]:
    """Every step run headless: each challenge must fail where it starts and pass after its
    solution; each prediction's claims must hold at its reveal (and its answer is computed)."""
    states = check_lesson(lesson, presets, panel_ids)
    out = []
    for n, (step, st) in enumerate(zip(lesson.steps, states, strict=True), 1):
        lines, ok = [], True
        if step.predict is not None:
            pr = step.predict
            result = st.revealed.compute()
            labs = partial(lab_values, st.revealed_labs)
            if pr.number is not None:
                r = resolve(pr.number, st.revealed)
                value = r.read(st.revealed, result, labs)
                lines.append(f"the answer is {r.words} = {fmt_significant(value)}")
            else:
                lines.append(f"the answer is {pr.choices[pr.answer]!r}")
            for c, r in zip(pr.claim, _readings(pr.claim, st.revealed, "claim"), strict=True):
                value = r.read(st.revealed, result, labs)
                good = c.holds(value)
                ok &= good
                verdict = "holds" if good else "does NOT hold"
                lines.append(f"claim {verdict}: {goal_words(c, r)} ({fmt_significant(value)})")
        if step.challenge is not None:
            before, said_before = _passes(step, st.revealed, st.revealed_labs)
            after, said_after = _passes(step, st.solved, st.solved_labs)
            if before:
                ok = False
                lines.append(
                    f"the challenge is passed before the learner acts ({'; '.join(said_before)})"
                )
            else:
                lines.append(f"not passed at the start ({'; '.join(said_before)})")
            if after:
                lines.append(f"passed after Show me ({'; '.join(said_after)})")
            else:
                ok = False
                lines.append(f"the solution does NOT pass ({'; '.join(said_after)})")
        out.append(CheckedStep(n, tuple(lines), ok))
    return out
