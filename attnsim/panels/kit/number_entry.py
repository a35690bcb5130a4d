"""Reading and showing typed numbers, without Qt: ``parse_number`` for a matrix cell,
``parse_typed_number`` for a number box (scientific notation, a decimal comma), ``check_entry``
for the scenario's value range, ``significant_text`` for the boxes' display."""

from __future__ import annotations

import math
import re

import numpy as np

from attnsim.engine.scenario import MAX_ABS_VALUE

__all__ = ["check_entry", "parse_number", "parse_typed_number", "significant_text"]


def parse_number(text: str) -> float:
    """A finite number typed into a cell; raises ValueError naming the problem otherwise.

    Accepts the typographic minus the cells display ('−0.5') as well as '-0.5'.
    """
    cleaned = text.strip().replace("−", "-").replace(",", ".")
    if not cleaned:
        raise ValueError("an empty cell is not a number")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number") from None
    if math.isnan(value):
        raise ValueError("NaN is not allowed: enter a finite number")
    if math.isinf(value):
        raise ValueError("infinity is not allowed: enter a finite number")
    return value


def check_entry(value: float) -> float:
    """``value`` if a scenario may hold it (|value| ≤ MAX_ABS_VALUE); else ValueError saying so.

    Panels check a typed entry with this before building a scenario, so the refusal can name
    the cell ("bank · water: 1e+200 is outside ±1e+06") and nothing is pushed.
    """
    if not abs(value) <= MAX_ABS_VALUE:
        raise ValueError(f"{value:g} is outside ±{MAX_ABS_VALUE:g}")
    return value


def significant_text(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, positional, no trailing zeros ("0.001234")."""
    if not math.isfinite(value):
        return str(value)
    return np.format_float_positional(
        float(value), precision=digits, unique=False, fractional=False, trim="-"
    )


# What a number looks like while it is being typed: sign, digits, one decimal point (either
# mark; the box decides which it accepts), an exponent. Anything else is not a number.
_NUMBER_PREFIX = re.compile(r"[+\-−]?(\d*([.,]\d*)?)?([eE][+\-−]?\d*)?")
_THOUSANDS = re.compile(r"[+\-]?[1-9]\d{0,2},\d{3}")


def parse_typed_number(text: str, decimal_point: str = ".") -> float:
    """A number typed into a box, in C notation or with the locale's ``decimal_point``.

    Scientific notation ('1e-3', '2E2', '1.5e1'), a leading point ('.5', '-.5') and the
    typographic minus are accepted, and so is a decimal comma ('2,5'). Where the locale's
    decimal point is '.', a comma that could be a thousands separator ('1,000': one thousand,
    or one?) is refused rather than guessed. Raises ValueError naming the problem for anything
    that is not one finite number.
    """
    cleaned = text.strip().replace("−", "-")
    if not cleaned:
        raise ValueError("an empty box is not a number")
    if "," in cleaned:
        if "." in cleaned or cleaned.count(",") > 1:
            raise ValueError(f"{text.strip()!r} is not a number: use '.' for the decimal point")
        if decimal_point != "," and _THOUSANDS.fullmatch(cleaned):
            raise ValueError(
                f"{text.strip()!r} is ambiguous (a thousands separator or a decimal comma?): "
                "type it without the comma, or with '.' for the decimal point"
            )
        cleaned = cleaned.replace(",", ".")
    if not _NUMBER_PREFIX.fullmatch(cleaned):
        lowered = cleaned.lower().lstrip("+-")
        if lowered in ("nan", "inf", "infinity"):
            kind = "NaN" if lowered == "nan" else "infinity"
            raise ValueError(f"{kind} is not allowed: enter a finite number")
        raise ValueError(f"{text.strip()!r} is not a number")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a complete number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()!r} is too large: enter a finite number")
    return value
