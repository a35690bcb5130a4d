"""``attnsim lessons`` (the shipped lessons, one line each) and ``attnsim lesson check|solve
FILE``: a lesson file validated, or run step by step headless (every challenge must fail where
its step starts and pass once its solution is applied). No Qt is started."""

from __future__ import annotations

import argparse
from pathlib import Path

from .options import UsageError

__all__ = ["add_lesson_parsers", "cmd_lesson", "cmd_lessons"]


def add_lesson_parsers(sub) -> None:
    sub.add_parser("lessons", help="list the lessons that come with attnsim")
    p = sub.add_parser("lesson", help="check or solve a lesson file")
    what = p.add_subparsers(dest="lesson_command", required=True, metavar="check|solve")
    c = what.add_parser("check", help="validate a lesson file and its references")
    c.add_argument("file", help="a lesson file (.toml) or a shipped lesson's id")
    s = what.add_parser(
        "solve",
        help="run every step headless: each challenge fails first, then its solution passes",
    )
    s.add_argument("file", help="a lesson file (.toml) or a shipped lesson's id")


def cmd_lessons(args: argparse.Namespace) -> int:
    from attnsim.lessons import shipped_lessons

    for lesson in shipped_lessons():
        graded = sum(step.graded for step in lesson.steps)
        print(f"{lesson.id:<14} {lesson.title} ({len(lesson.steps)} steps, {graded} graded)")
    return 0


def _lesson(ref: str):
    from attnsim.lessons import check_file, shipped_lessons

    path = Path(ref)
    if path.suffix.lower() != ".toml" and not path.exists():
        ids = {lesson.id: lesson for lesson in shipped_lessons()}
        if ref not in ids:
            raise UsageError(
                f"attnsim lesson: no lesson {ref!r}: give a .toml file or one of {', '.join(ids)}"
            )
        path = Path(ids[ref].file or "")
    return check_file(path)


def cmd_lesson(args: argparse.Namespace) -> int:
    from attnsim.lessons import solve_lesson

    lesson, _ = _lesson(args.file)
    if args.lesson_command == "check":
        graded = sum(step.graded for step in lesson.steps)
        steps = len(lesson.steps)
        print(f"{lesson.file}: lesson {lesson.id!r} is valid: {steps} steps, {graded} graded")
        return 0
    failed = 0
    for checked in solve_lesson(lesson):
        mark = "ok" if checked.ok else "FAILED"
        print(f"{lesson.step_name(checked.step - 1)}: {mark}")
        for line in checked.lines:
            print(f"    {line}")
        failed += not checked.ok
    if failed:
        raise ValueError(f"{lesson.file}: {failed} of {len(lesson.steps)} steps do not work")
    print(f"{lesson.id}: every step works")
    return 0
