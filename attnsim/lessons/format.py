"""The lesson file: TOML, one table per step, read into frozen dataclasses. No Qt.

A lesson file (``docs/lessons.md`` documents it for teachers)::

    format = "attnsim-lesson"
    version = 1
    id = "mixing"
    title = "Mixing: what bank takes from its neighbours"
    summary = "One sentence for the list of lessons."

    [[steps]]
    title = "Weights are a recipe"
    text = "Markdown shown to the learner."
    scenario = "river-bank"           # a preset; the step starts from it (optional)
    setup = [{ set = "temperature", value = 1 }]   # edits after loading it (optional)
    panels = ["heatmap", "vectors"]   # brought to the front (optional)
    highlight = { panel = "heatmap", control = "Temperature" }   # a control pointed at

    [steps.predict]                   # a question answered before the reveal (optional)
    question = "..."
    choices = ["up", "down"]          # and answer = 1 (from 1); or instead of choices:
    number = { quantity = "weight", of = "bank", on = "river" }   # and tolerance = 0.02
    show = [{ set = "temperature", value = 0.2 }]   # applied at the reveal (optional)
    reveal = "Markdown shown after the answer."
    claim = [{ quantity = "weight", of = "bank", on = "bank", at_least = 0.6 }]

    [steps.challenge]                 # passed when every check holds (optional)
    goal = "Make bank take at least 70 % of its weight from river."
    checks = [{ quantity = "weight", of = "bank", on = "river", at_least = 0.7 }]
    hints = ["First hint", "Second, more precise hint"]
    solution = [{ set = "query", token = "bank", value = [0, 4, 0, 0] }]

Every key is checked: an unknown one (a typo) is refused, so is a value of the wrong type, and
the file says where (line for TOML errors, step and field otherwise). A lesson never runs code:
quantities are names (:mod:`.quantities`), edits are tables (:mod:`.edits`).
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnsim.engine.numbers import fmt_significant
from attnsim.engine.scenario import ScenarioError
from attnsim.engine.scenario.files import read_bytes

from .edits import EDIT_KINDS, Edit
from .quantities import QUANTITIES, Quantity

__all__ = [
    "FORMAT",
    "MAX_LESSON_BYTES",
    "VERSION",
    "Challenge",
    "Check",
    "Lesson",
    "LessonError",
    "Prediction",
    "Step",
    "parse_lesson",
    "read_lesson",
]

FORMAT = "attnsim-lesson"
VERSION = 1
MAX_LESSON_BYTES = 256 * 1024
MAX_STEPS = 40
MAX_TEXT = 6000  # characters of one text
MAX_ITEMS = 12  # checks, hints, edits, choices, panels
MAX_DEPTH = 5  # tables within tables
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
# every inline link or image target "](target", and every reference definition "[r]: target"
_TARGET = re.compile(r"\]\(\s*(<[^>]*>|[^)\s]*)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(\S+)", re.MULTILINE)
_HTML_IMAGE = re.compile(r"<\s*img\b", re.IGNORECASE)


class LessonError(ValueError):
    """A lesson that cannot be used: the file, where in it (a line, a step), the field and the
    problem, in one sentence."""

    def __init__(self, where: str, problem: str, file: str | None = None) -> None:
        self.file, self.where, self.problem = file, where, problem
        prefix = f"{file}: " if file else ""
        super().__init__(f"{prefix}{where}: {problem}" if where else f"{prefix}{problem}")


@dataclass(frozen=True)
class Check:
    """A quantity compared with a threshold (``at_least`` and / or ``at_most``)."""

    quantity: Quantity
    at_least: float | None = None
    at_most: float | None = None

    def bounds(self) -> str:
        """The thresholds in words: "at least 0.7", "at least 0.2 and at most 0.4"."""
        parts = []
        if self.at_least is not None:
            parts.append(f"at least {fmt_significant(self.at_least)}")
        if self.at_most is not None:
            parts.append(f"at most {fmt_significant(self.at_most)}")
        return " and ".join(parts)

    def holds(self, value: float) -> bool:
        if value != value:  # NaN passes no threshold
            return False
        lo_ok = self.at_least is None or value >= self.at_least
        return lo_ok and (self.at_most is None or value <= self.at_most)


@dataclass(frozen=True)
class Prediction:
    question: str
    choices: tuple[str, ...] = ()
    answer: int = 0  # 0-based index into choices
    number: Quantity | None = None
    tolerance: float = 0.0
    show: tuple[Edit, ...] = ()
    reveal: str = ""
    claim: tuple[Check, ...] = ()


@dataclass(frozen=True)
class Challenge:
    goal: str
    checks: tuple[Check, ...]
    hints: tuple[str, ...] = ()
    solution: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    scenario: str | None = None
    setup: tuple[Edit, ...] = ()
    panels: tuple[str, ...] = ()
    # a control to point at: (panel id, the words on or beside it as the learner sees them)
    highlight: tuple[str, str] | None = None
    predict: Prediction | None = None
    challenge: Challenge | None = None

    @property
    def graded(self) -> bool:
        return self.predict is not None or self.challenge is not None


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    summary: str
    steps: tuple[Step, ...]
    order: int = 100
    file: str | None = None

    def step_name(self, i: int) -> str:
        return f"step {i + 1} ({self.steps[i].title})"


# ---- reading ------------------------------------------------------------------------------------
class _Reader:
    """Typed reads of one table, each failure a LessonError naming the field."""

    def __init__(self, table: Any, where: str, allowed: set[str], required: set[str]) -> None:
        self.where = where
        if not isinstance(table, dict):
            raise LessonError(where, f"must be a table, got {_kind(table)}")
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise LessonError(
                where,
                f"unknown field {unknown[0]!r} (the fields here: {', '.join(sorted(allowed))})",
            )
        missing = sorted(required - set(table))
        if missing:
            raise LessonError(where, f"missing field {missing[0]!r}")
        self.t = table

    def field(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def text(self, key: str, default: str | None = None, limit: int = MAX_TEXT) -> str:
        v = self.t.get(key, default)
        if not isinstance(v, str):
            raise LessonError(self.field(key), f"must be text, got {_kind(v)}")
        if len(v) > limit:
            raise LessonError(self.field(key), f"is {len(v):,} characters; at most {limit:,}")
        if key != "text" and "\n" in v.strip() and limit < MAX_TEXT:
            raise LessonError(self.field(key), "must be one line")
        if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in v):
            raise LessonError(self.field(key), "contains control characters")
        return v

    def number(self, key: str, default: float | None = None) -> float | None:
        v = self.t.get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or not _finite(v):
            raise LessonError(self.field(key), f"must be a finite number, got {_short(v)}")
        return float(v)

    def whole(self, key: str, default: int, lo: int, hi: int) -> int:
        v = self.t.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise LessonError(self.field(key), f"must be a whole number, got {_short(v)}")
        if not lo <= v <= hi:
            raise LessonError(self.field(key), f"must lie between {lo} and {hi}, got {v}")
        return v

    def items(self, key: str, limit: int = MAX_ITEMS) -> list[Any]:
        v = self.t.get(key, [])
        if not isinstance(v, list):
            raise LessonError(self.field(key), f"must be a list, got {_kind(v)}")
        if len(v) > limit:
            raise LessonError(self.field(key), f"has {len(v)} entries; at most {limit}")
        return v

    def texts(self, key: str, limit: int = MAX_ITEMS) -> tuple[str, ...]:
        out = []
        for n, v in enumerate(self.items(key, limit), 1):
            if not isinstance(v, str) or not v.strip():
                raise LessonError(f"{self.field(key)}[{n}]", f"must be text, got {_short(v)}")
            if len(v) > MAX_TEXT:
                raise LessonError(f"{self.field(key)}[{n}]", f"is longer than {MAX_TEXT:,}")
            out.append(v)
        return tuple(out)


def _finite(v: int | float) -> bool:
    """A number a lesson can use: finite, and an integer no larger than a float holds."""
    try:
        return math.isfinite(float(v)) and abs(v) <= 1e15
    except OverflowError:
        return False


def _kind(v: Any) -> str:
    return {
        dict: "a table", list: "a list", str: "text", bool: "true or false", int: "a number",
        float: "a number",
    }.get(type(v), type(v).__name__)  # fmt: skip


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _token_ref(r: _Reader, key: str) -> str | int | None:
    v = r.t.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, str | int) or (isinstance(v, str) and not v):
        raise LessonError(
            r.field(key), f"must name a token (its text or position), got {_short(v)}"
        )
    return v


def _quantity(table: Any, where: str, extra: set[str] = frozenset()) -> tuple[Quantity, _Reader]:
    keys = {"quantity", "of", "on", "axis", "head"}
    r = _Reader(table, where, keys | extra, {"quantity"})
    name = r.text("quantity", limit=40)
    if name not in QUANTITIES:
        raise LessonError(
            r.field("quantity"),
            f"there is no quantity {_short(name)}; a lesson can read {', '.join(QUANTITIES)}",
        )
    axis = r.t.get("axis")
    if axis is not None and (isinstance(axis, bool) or not isinstance(axis, str | int)):
        raise LessonError(
            r.field("axis"), f"must name an axis or give its number, got {_short(axis)}"
        )
    q = Quantity(name, _token_ref(r, "of"), _token_ref(r, "on"), axis, r.whole("head", 1, 1, 64))
    return q, r


def _check(table: Any, where: str) -> Check:
    q, r = _quantity(table, where, {"at_least", "at_most"})
    lo, hi = r.number("at_least"), r.number("at_most")
    if lo is None and hi is None:
        raise LessonError(where, "a check needs at_least or at_most (or both)")
    if lo is not None and hi is not None and lo > hi:
        raise LessonError(where, f"at_least {lo:g} is above at_most {hi:g}: nothing passes")
    return Check(q, lo, hi)


def _edits(r: _Reader, key: str) -> tuple[Edit, ...]:
    out = []
    for n, t in enumerate(r.items(key), 1):
        where = f"{r.field(key)}[{n}]"
        if not isinstance(t, dict):
            raise LessonError(where, 'must be a table like { set = "temperature", value = 2 }')
        kind = t.get("set")
        if kind not in EDIT_KINDS:
            raise LessonError(
                f"{where}.set",
                f"cannot set {_short(kind)}; a lesson can set {', '.join(EDIT_KINDS)}",
            )
        need, may = EDIT_KINDS[kind]
        e = _Reader(t, where, {"set"} | need | may, {"set"} | need)
        value = t.get("value")
        _plain_value(value, f"{where}.value")
        preset = e.text("preset", limit=60) if "preset" in t else None
        out.append(Edit(kind, value, _token_ref(e, "token"), e.whole("head", 1, 1, 64), preset))
    return tuple(out)


def _plain_value(v: Any, where: str, depth: int = 0) -> None:
    """A value is a number, true/false, a short text or a list (of lists) of numbers."""
    if depth > 2:
        raise LessonError(where, "a value nests lists at most two deep (a matrix)")
    if v is None or isinstance(v, bool):
        return
    if isinstance(v, int | float):
        if not _finite(v):
            raise LessonError(where, f"must be a finite number, got {_short(v)}")
        return
    if isinstance(v, str):
        if len(v) > 40:
            raise LessonError(where, f"text values are short names, got {_short(v)}")
        return
    if isinstance(v, list):
        if len(v) > 64:
            raise LessonError(where, f"has {len(v)} entries; at most 64")
        for x in v:
            _plain_value(x, where, depth + 1)
        return
    raise LessonError(where, f"must be a number, true/false or a list of numbers, got {_kind(v)}")


def _images(text: str, where: str) -> None:
    """Images (and links) only from the lesson's own folder: a plain relative name, no scheme,
    no ``..``; no raw HTML images."""
    if _HTML_IMAGE.search(text):
        raise LessonError(where, "raw HTML images are not allowed; use ![words](picture.png)")
    for target in _TARGET.findall(text) + _REFERENCE.findall(text):
        p = target.strip().strip("<>").replace("\\", "/")
        if not p or ":" in p or p.startswith("/") or ".." in p.split("/"):
            raise LessonError(
                where, f"image or link {_short(target)} must be a file in the lesson's own folder"
            )


def _prediction(table: Any, where: str) -> Prediction:
    keys = {"question", "choices", "answer", "number", "tolerance", "show", "reveal", "claim"}
    r = _Reader(table, where, keys, {"question", "reveal"})
    choices = r.texts("choices")
    number = None
    if "number" in r.t:
        number, _ = _quantity(r.t["number"], r.field("number"))
    if bool(choices) == (number is not None):
        raise LessonError(where, "a prediction has either choices (with answer) or a number")
    answer = 0
    if choices:
        if len(choices) < 2:
            raise LessonError(r.field("choices"), "a question needs at least two choices")
        if "answer" not in r.t:
            raise LessonError(r.field("answer"), "missing: which choice is right, counted from 1")
        answer = r.whole("answer", 0, 1, len(choices)) - 1
        if "tolerance" in r.t:
            raise LessonError(r.field("tolerance"), "only a number prediction has a tolerance")
    else:
        if "answer" in r.t:
            raise LessonError(
                r.field("answer"), "a number prediction's answer is computed: remove it"
            )
        tol = r.number("tolerance")
        if tol is None or tol <= 0:
            raise LessonError(r.field("tolerance"), "a number prediction needs a tolerance above 0")
    reveal = r.text("reveal")
    _images(reveal, r.field("reveal"))
    claim = tuple(_check(t, f"{r.field('claim')}[{n}]") for n, t in enumerate(r.items("claim"), 1))
    return Prediction(
        question=r.text("question", limit=600),
        choices=choices,
        answer=answer,
        number=number,
        tolerance=r.number("tolerance", 0.0) or 0.0,
        show=_edits(r, "show"),
        reveal=reveal,
        claim=claim,
    )


def _challenge(table: Any, where: str) -> Challenge:
    r = _Reader(
        table, where, {"goal", "checks", "hints", "solution"}, {"goal", "checks", "solution"}
    )
    checks = tuple(
        _check(t, f"{r.field('checks')}[{n}]") for n, t in enumerate(r.items("checks"), 1)
    )
    if not checks:
        raise LessonError(r.field("checks"), "a challenge needs at least one check")
    solution = _edits(r, "solution")
    if not solution:
        raise LessonError(r.field("solution"), "a challenge needs a solution (Show me applies it)")
    return Challenge(r.text("goal", limit=600), checks, r.texts("hints", 5), solution)


def _step(table: Any, where: str) -> Step:
    keys = {"title", "text", "scenario", "setup", "panels", "highlight", "predict", "challenge"}
    r = _Reader(table, where, keys, {"title", "text"})
    highlight = None
    if "highlight" in r.t:
        h = _Reader(
            r.t["highlight"], r.field("highlight"), {"panel", "control"}, {"panel", "control"}
        )
        words = h.text("control", limit=60).strip()
        if not words:
            raise LessonError(h.field("control"), "must name the control's words")
        highlight = (h.text("panel", limit=40), words)
    text = r.text("text")
    _images(text, r.field("text"))
    scenario = r.text("scenario", limit=60) if "scenario" in r.t else None
    predict = _prediction(r.t["predict"], r.field("predict")) if "predict" in r.t else None
    challenge = _challenge(r.t["challenge"], r.field("challenge")) if "challenge" in r.t else None
    return Step(
        title=r.text("title", limit=120),
        text=text,
        scenario=scenario,
        setup=_edits(r, "setup"),
        panels=r.texts("panels"),
        highlight=highlight,
        predict=predict,
        challenge=challenge,
    )


def _depth(v: Any, level: int = 0) -> int:
    if isinstance(v, dict):
        return max([_depth(x, level + 1) for x in v.values()] or [level + 1])
    if isinstance(v, list):
        return max([_depth(x, level) for x in v] or [level])
    return level


def parse_lesson(text: str, file: str | None = None) -> Lesson:
    """The lesson in ``text``; LessonError (naming ``file``) if anything in it is wrong.

    This checks the file on its own; :func:`attnsim.lessons.check.check_lesson` then checks
    its references (presets, tokens, panels) and :func:`~attnsim.lessons.check.solve` that
    every challenge can be passed and is not passed before the learner acts."""
    if len(text) > MAX_LESSON_BYTES:
        raise LessonError("", f"is larger than {MAX_LESSON_BYTES:,} characters", file)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LessonError("", f"is not valid TOML: {exc}", file) from None
    except RecursionError:
        problem = f"nests tables or lists too deeply (at most {MAX_DEPTH})"
        raise LessonError("", problem, file) from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise LessonError("", f"cannot be read: {exc}", file) from None
    try:
        if _depth(data) > MAX_DEPTH:
            raise LessonError("", f"nests tables more than {MAX_DEPTH} deep")
        r = _Reader(data, "", {"format", "version", "id", "title", "summary", "order", "steps"},
                    {"format", "version", "id", "title", "steps"})  # fmt: skip
        if r.t["format"] != FORMAT:
            raise LessonError("format", f"must be {FORMAT!r}, got {_short(r.t['format'])}")
        version = r.t["version"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise LessonError("version", f"must be a whole number, got {_short(version)}")
        if version > VERSION:
            raise LessonError(
                "version", f"is {version}: this attnsim reads lesson files up to version {VERSION}"
            )
        if version < 1:
            raise LessonError("version", f"must be 1 or more, got {version}")
        lesson_id = r.text("id", limit=40)
        if not _ID.match(lesson_id):
            raise LessonError("id", "must be lower-case letters, digits and dashes (like 'mixing')")
        steps = r.items("steps", MAX_STEPS)
        if not steps:
            raise LessonError("steps", "a lesson needs at least one step")
        parsed = tuple(_step(t, f"step {n}") for n, t in enumerate(steps, 1))
        titles = [s.title for s in parsed]
        for n, title in enumerate(titles, 1):
            if titles.index(title) != n - 1:
                raise LessonError(
                    f"step {n}.title",
                    f"{title!r} is already step {titles.index(title) + 1}'s title",
                )
        if parsed[0].scenario is None:
            raise LessonError("step 1.scenario", "the first step must load a preset to start from")
        return Lesson(
            id=lesson_id,
            title=r.text("title", limit=120),
            summary=r.text("summary", "", limit=400),
            steps=parsed,
            order=r.whole("order", 100, 0, 10_000),
            file=file,
        )
    except LessonError as exc:
        raise LessonError(exc.where, exc.problem, file) from None


def read_lesson(path: str | Path) -> Lesson:
    """The lesson in the file ``path``: a regular UTF-8 file of at most MAX_LESSON_BYTES."""
    file = str(path)
    try:
        raw = read_bytes(path, "lesson", MAX_LESSON_BYTES)
    except ScenarioError as exc:
        raise LessonError("", exc.problem, file) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError("", f"is not UTF-8 text (byte {exc.start + 1})", file) from None
    return parse_lesson(text, file)
