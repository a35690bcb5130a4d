"""What every command shares: the usage error, the parser class that raises it, the option
value types, and loading a scenario by name or path."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = [
    "Parser",
    "UsageError",
    "load_scenario",
    "panel_ids",
    "parse_formats",
    "parse_number",
    "parse_scale",
    "parse_size",
    "whole",
]


class UsageError(Exception):
    """Bad arguments or a bad scenario: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1600x1000, got {text!r}") from None
    if not (200 <= w <= 8000 and 200 <= h <= 8000):
        raise argparse.ArgumentTypeError(f"size {w}x{h} is out of range (200 to 8000 per side)")
    return w, h


def parse_formats(text: str) -> tuple[str, ...]:
    from attnsim.export.registry import names as format_names

    known = format_names()
    items = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    bad = [f for f in items if f not in known]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown format {bad[0] if bad else text!r}; choose from {', '.join(known)}"
        )
    return items


def parse_scale(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"scale must be a number, got {text!r}") from None
    if not 1.0 <= v <= 4.0:
        raise argparse.ArgumentTypeError(f"scale must be between 1 and 4, got {v}")
    return v


def parse_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None


def whole(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must lie in [{lo}, {hi}], got {v}")
        return v

    return parse


def panel_ids(text: str) -> list[str]:
    from attnsim.panels import PANEL_SPECS

    known = [s.panel_id for s in PANEL_SPECS]
    items = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in items if p not in known]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown panel {bad[0] if bad else text!r}; choose from {', '.join(known)}"
        )
    return list(dict.fromkeys(items))


def load_scenario(name_or_path: str):
    from attnsim.engine.scenario import ScenarioError
    from attnsim.resources import resolve_scenario

    try:
        return resolve_scenario(name_or_path)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
