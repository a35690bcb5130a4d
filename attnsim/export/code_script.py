"""The session as a Python script that needs only NumPy: the sections of
:mod:`.code_sections` one after another, each heading and paragraph as comments."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .session import SessionExporter

if TYPE_CHECKING:
    from attnsim.engine.scenario import Scenario

__all__ = ["EXPORTER", "render"]

WIDTH = 96


def _comment(lines: Sequence[str]) -> list[str]:
    out = []
    for text in lines:
        for line in text.splitlines() or [""]:  # every kind of line break starts a comment line
            parts = textwrap.wrap(line, WIDTH - 2)
            out += [f"# {part}" for part in parts] if parts else ["#"]
    return out


def render(sc: Scenario, *, notes: Sequence[str] = ()) -> str:
    """The script's text."""
    from attnsim import __version__

    from .code_sections import header_lines, sections

    head = header_lines(sc, __version__, notes)
    head.insert(3, "Run it with python; add --figure to draw the weights, --json for every number.")
    head.insert(3, "")
    out = _comment(head)
    for s in sections(sc):
        out += ["", "", f"# ---- {s.title} " + "-" * max(4, WIDTH - 8 - len(s.title))]
        out += _comment([s.prose])
        out.append(s.code_for(script=True))
    return "\n".join(out) + "\n"


EXPORTER = SessionExporter("py", "Python script", render)
