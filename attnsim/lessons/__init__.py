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

from importlib import import_module
from typing import Any

# Loaded on first use, so that a caller of one small module (the window reads the progress
# file's name from .progress at start-up) does not pay for the file reader and the checks.
_WHERE = {
    "CheckedStep": "check", "StepStates": "check", "check_lesson": "check", "solve": "check",
    "step_states": "check", "Lesson": "format", "LessonError": "format",
    "parse_lesson": "format", "read_lesson": "format", "check_file": "shipped",
    "panel_ids": "shipped", "preset": "shipped", "shipped_lessons": "shipped",
    "solve_lesson": "shipped",
}  # fmt: skip

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
