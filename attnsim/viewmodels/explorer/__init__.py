"""The dot-product explorer's view-model: its 2-D arithmetic (:mod:`.maths`) and what each of
its sub-views shows, with its lab state (:mod:`.pictures`)."""

from __future__ import annotations

from . import maths, pictures
from .maths import *  # noqa: F403
from .pictures import *  # noqa: F403

__all__ = [*maths.__all__, *pictures.__all__]
