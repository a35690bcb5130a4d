"""The Lessons panel: guided, graded lessons over the other panels (see :mod:`.panel`)."""

from __future__ import annotations

from .panel import LessonsPanel

__all__ = ["LessonsPanel"]
