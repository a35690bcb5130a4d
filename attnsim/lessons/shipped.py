"""The shipped lessons and the app's presets and panels that lessons are checked against."""

from __future__ import annotations

from pathlib import Path

from attnsim.engine.scenario import Scenario
from attnsim.resources import preset_names, resolve_scenario, resource_path
from attnsim.resources.panel_help import help_ids

from .check import CheckedStep, StepStates, check_lesson, solve
from .format import Lesson, read_lesson

__all__ = ["check_file", "panel_ids", "preset", "shipped_lessons", "solve_lesson"]


def preset(name: str) -> Scenario:
    """The shipped preset ``name``; ValueError for anything else (a lesson names presets
    only, never a path)."""
    if name not in preset_names():
        raise ValueError(name)
    return resolve_scenario(name)


def panel_ids() -> list[str]:
    """The panels a lesson may bring to the front (every panel has a help text)."""
    return help_ids()


def shipped_lessons() -> list[Lesson]:
    """The lessons that come with attnsim, in their teaching order."""
    folder = resource_path("lessons")
    lessons = [read_lesson(p) for p in sorted(folder.glob("*.toml"))]
    return sorted(lessons, key=lambda lesson: (lesson.order, lesson.id))


def check_file(path: str | Path) -> tuple[Lesson, list[StepStates]]:
    """The lesson in ``path`` read and its references checked (LessonError if not)."""
    lesson = read_lesson(path)
    return lesson, check_lesson(lesson, preset, panel_ids())


def solve_lesson(lesson: Lesson) -> list[CheckedStep]:
    """:func:`.check.solve` against the shipped presets and panels."""
    return solve(lesson, preset, panel_ids())
