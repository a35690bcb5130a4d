"""Help written for people: for every panel, what it shows, what to try, what to notice, and
which experiment of the reference texts it reproduces.

Each panel's help is one Markdown file, ``help/<panel id>.md`` next to this module, in four
sections under the panel's title::

    # Scores and weights
    ## What it shows
    ## Try this          (a list of two to four things to do)
    ## What to notice
    ## Reference

The Help window, each panel's What's This and "Help on this panel" all read the text from here,
so the help and the panel cannot drift apart; the lessons build on it too. No Qt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from . import resource_path

__all__ = ["SECTIONS", "PanelHelp", "has_help", "help_ids", "panel_help", "parse_help"]

# The sections of every panel's help, in this order.
SECTIONS: tuple[str, ...] = ("What it shows", "Try this", "What to notice", "Reference")
TRY_MIN, TRY_MAX = 2, 4
_ITEM = re.compile(r"^[-*] +", re.MULTILINE)


@dataclass(frozen=True)
class PanelHelp:
    """One panel's help: its title and the four sections (the "Try this" items one by one)."""

    panel_id: str
    title: str
    shows: str
    try_this: tuple[str, ...]
    notice: str
    reference: str

    def sections(self) -> tuple[tuple[str, str], ...]:
        """(heading, Markdown body) of the four sections, in order."""
        items = "\n".join(f"- {item}" for item in self.try_this)
        return tuple(zip(SECTIONS, (self.shows, items, self.notice, self.reference), strict=True))

    def markdown(self, level: int = 1) -> str:
        """The whole help as Markdown, its title a heading of ``level`` (1 = ``#``) and the
        sections one level below."""
        head, sub = "#" * level, "#" * (level + 1)
        parts = [f"{head} {self.title}"]
        for heading, body in self.sections():
            parts += [f"{sub} {heading}", body]
        return "\n\n".join(parts) + "\n"


def parse_help(panel_id: str, text: str) -> PanelHelp:
    """Read one help file; a file without its title, a section or its list of things to try
    is refused with ValueError naming what is missing."""
    lines = text.strip().splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError(f"the help of {panel_id} must start with '# ' and the panel's title")
    title = lines[0][2:].strip()
    bodies: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[1:]:
        if line.startswith("## "):
            name = line[3:].strip()
            if name not in SECTIONS or name in bodies:
                raise ValueError(f"the help of {panel_id} has an unknown or repeated section "
                                 f"{name!r}; its sections are {', '.join(SECTIONS)}")  # fmt: skip
            current = bodies[name] = []
        elif current is not None:
            current.append(line)
        elif line.strip():
            raise ValueError(f"the help of {panel_id} has text before its first section")
    if list(bodies) != list(SECTIONS):
        raise ValueError(f"the help of {panel_id} must have the sections {', '.join(SECTIONS)} "
                         f"in this order; it has {', '.join(bodies) or 'none'}")  # fmt: skip
    text_of = {name: "\n".join(body).strip() for name, body in bodies.items()}
    tries = text_of["Try this"]
    items = tuple(" ".join(i.split()) for i in _ITEM.split(tries) if i.strip())
    if not _ITEM.match(tries) or not TRY_MIN <= len(items) <= TRY_MAX:
        raise ValueError(f"'Try this' in the help of {panel_id} must be a list of {TRY_MIN} "
                         f"to {TRY_MAX} things to do")  # fmt: skip
    empty = [name for name, body in text_of.items() if not body]
    if empty:
        raise ValueError(f"the help of {panel_id} has an empty section: {', '.join(empty)}")
    return PanelHelp(panel_id, title, text_of["What it shows"], items,
                     text_of["What to notice"], text_of["Reference"])  # fmt: skip


def help_ids() -> list[str]:
    """The panel ids that have a help text, sorted."""
    return sorted(p.stem for p in resource_path("help").glob("*.md"))


def has_help(panel_id: str) -> bool:
    return resource_path("help", f"{panel_id}.md").is_file()


@cache
def panel_help(panel_id: str) -> PanelHelp:
    """The help of one panel by its id (KeyError when the panel has none)."""
    path = resource_path("help", f"{panel_id}.md")
    if not path.is_file():
        raise KeyError(f"no help for the panel {panel_id!r}")
    return parse_help(panel_id, path.read_text(encoding="utf-8"))
