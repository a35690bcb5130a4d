"""Lessons: the reference texts as guided, graded steps, in files a teacher can write.

- :mod:`.format`: the lesson file (TOML) read into frozen dataclasses, every field checked;
- :mod:`.quantities`: the named quantities a check reads (a weight, an entropy, an output);
- :mod:`.edits`: the edits a step sets up or a solution applies, as data;
- :mod:`.check`: a lesson's references checked against the presets and panels, and ``solve``;
- :mod:`.progress`: what a learner did (answers, challenges passed, hints), saved as JSON.

The shipped lessons are ``resources/lessons/*.toml``, written in the same format. This layer
reads the engine and the resources and imports no Qt; the Lessons panel and the command line
use it.
"""

from __future__ import annotations

from pathlib import Path

from attnsim.engine.scenario import Scenario
from attnsim.resources import preset_names, resolve_scenario, resource_path
from attnsim.resources.panel_help import help_ids

from .check import CheckedStep, StepStates, check_lesson, solve, step_states
from .format import Lesson, LessonError, parse_lesson, read_lesson

__all__ = [
    "CheckedStep",
    "Lesson",
    "LessonError",
    "StepStates",
    "check_file",
    "check_lesson",
    "parse_lesson",
    "preset",
    "read_lesson",
    "shipped_lessons",
    "solve",
    "solve_lesson",
    "step_states",
]


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
