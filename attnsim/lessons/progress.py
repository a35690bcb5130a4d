"""What a learner did in each lesson: the step they were on, their answers, the challenges they
passed, the hints they read and whether "Show me" was used. One JSON file, written whole to a
temporary file and renamed over the old one on every change, so a crash leaves the last
complete record. A file that cannot be read is reported and replaced by an empty record;
nothing the learner did is ever overwritten by a bad file. No Qt.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "KEPT_FILE",
    "PROGRESS_FILE",
    "PROGRESS_FORMAT",
    "Progress",
    "StepRecord",
    "load_progress",
]

PROGRESS_FORMAT = "attnsim-lesson-progress"
# In the app's home folder: the learner's record, and their unsaved document while a lesson
# runs (the autosave then keeps the lesson's copy, so a crash in the middle of a lesson must not
# lose the work from before it).
PROGRESS_FILE = "lesson-progress.json"
KEPT_FILE = "document-before-lesson.json"
MAX_PROGRESS_BYTES = 4 << 20


@dataclass(frozen=True)
class StepRecord:
    """One step: the answer given (text), whether it was right, the challenge passed, hints
    read, and whether the solution was shown."""

    answer: str | None = None
    correct: bool | None = None
    passed: bool = False
    hints: int = 0
    shown: bool = False


@dataclass
class Progress:
    """Every lesson's record, keyed by lesson id; ``save()`` writes it to ``path``."""

    path: Path | None = None
    lessons: dict[str, dict[str, Any]] = field(default_factory=dict)

    # ---- reading -------------------------------------------------------------------------------
    def step(self, lesson: str, i: int) -> StepRecord:
        raw = self.lessons.get(lesson, {}).get("steps", {}).get(str(i))
        if not isinstance(raw, dict):
            return StepRecord()
        known = {k: raw[k] for k in StepRecord.__dataclass_fields__ if k in raw}
        try:
            return StepRecord(**known)
        except TypeError:
            return StepRecord()

    def current(self, lesson: str) -> int:
        value = self.lessons.get(lesson, {}).get("current", 0)
        return value if isinstance(value, int) and value >= 0 else 0

    def done(self, lesson: str, graded: list[int]) -> int:
        """How many of the graded steps ``graded`` are answered or passed."""
        return sum(1 for i in graded if (r := self.step(lesson, i)).passed or r.answer is not None)

    # ---- changing ------------------------------------------------------------------------------
    def set_step(self, lesson: str, i: int, **changes: Any) -> StepRecord:
        record = replace(self.step(lesson, i), **changes)
        entry = self.lessons.setdefault(lesson, {})
        entry.setdefault("steps", {})[str(i)] = asdict(record)
        self.save()
        return record

    def set_current(self, lesson: str, i: int) -> None:
        self.lessons.setdefault(lesson, {})["current"] = i
        self.save()

    def reset(self, lesson: str | None = None) -> None:
        """Forget one lesson's record, or every lesson's."""
        if lesson is None:
            self.lessons.clear()
        else:
            self.lessons.pop(lesson, None)
        self.save()

    def save(self) -> None:
        if self.path is None:
            return
        data = {"format": PROGRESS_FORMAT, "version": 1, "lessons": self.lessons}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".progress-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def load_progress(path: Path) -> tuple[Progress, str | None]:
    """The record in ``path`` (empty if there is none) and, if the file could not be used, a
    sentence saying so (the file is then left where it is, renamed with ``.bad``)."""
    if not path.exists():
        return Progress(path), None
    problem = None
    try:
        if path.stat().st_size > MAX_PROGRESS_BYTES:
            raise ValueError("it is too large")
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != PROGRESS_FORMAT:
            raise ValueError("it is not a lesson progress file")
        lessons = data.get("lessons", {})
        if not isinstance(lessons, dict) or not all(isinstance(v, dict) for v in lessons.values()):
            raise ValueError("its lessons are not a table")
        return Progress(path, lessons), None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        problem = str(exc) if not isinstance(exc, json.JSONDecodeError) else "it is not JSON"
    bad = path.with_name(path.name + ".bad")
    try:
        os.replace(path, bad)
    except OSError:
        bad = path
    return Progress(path), (
        f"Your lesson progress in {path} could not be read ({problem}); it was kept as {bad.name} "
        "and the lessons start afresh."
    )
