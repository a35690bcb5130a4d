"""The routing laboratory's view-model: one query, a few key-value pairs, the interventions.

:mod:`.lab` puts the engine's route on the lab's scenario, builds the lab's edits and words
what the experiments found; :mod:`.display` turns one state of the lab into what each part of
the panel shows.
"""

from __future__ import annotations

from .display import *  # noqa: F403
from .display import __all__ as _display_all
from .lab import *  # noqa: F403
from .lab import __all__ as _lab_all

__all__ = [*_lab_all, *_display_all]
