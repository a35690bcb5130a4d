"""Whether a figure is being painted: what a widget draws only for the screen (how to drag,
click or zoom; "widen the panel") it leaves out while :func:`painting_figure` is true.

The export sets it around painting a figure (content only); a whole-panel export, like the
screen, keeps everything. Qt-free and import-light, so any panel's painting code may ask.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["figure_painting", "painting_figure"]

_depth = 0


def painting_figure() -> bool:
    """True while a figure (content only) is being painted."""
    return _depth > 0


@contextmanager
def figure_painting(on: bool = True) -> Iterator[None]:
    """Inside (when ``on``), :func:`painting_figure` is true; nests, and survives exceptions."""
    global _depth
    step = 1 if on else 0
    _depth += step
    try:
        yield
    finally:
        _depth -= step
