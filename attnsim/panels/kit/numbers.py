"""One family of number formats for everything a person reads: status bar, readout, tooltips.

Never NumPy's repr (``[0.5 , 0.5 ]``, ``1.e+200``): fixed decimals for ordinary magnitudes,
scientific notation for magnitudes whose fixed form would run to many digits, a true minus
sign, and ∞ / NaN spelled out, so a number is never cut or misread. Tiny values round to
zero in fixed form, as tables of weights are read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

MINUS = "−"
# From this magnitude on, fixed decimals would be too long for a cell or a status line.
SCI_ABOVE = 1e5


def fmt_number(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals, or in scientific notation when fixed would mislead.

    ``fmt_number(0.5, 2) == "0.50"``, ``fmt_number(-2, 1) == "−2.0"``,
    ``fmt_number(1e200) == "1.000e+200"``, ``fmt_number(float("inf")) == "∞"``,
    ``fmt_number(-1e-9, 2) == "0.00"``.
    """
    v = float(x)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return MINUS + "∞" if v < 0 else "∞"
    digits = max(int(digits), 0)
    if abs(v) >= SCI_ABOVE:
        text = f"{v:.{max(digits, 1)}e}"
    else:
        text = f"{v:.{digits}f}"
        if float(text) == 0:
            text = text.lstrip("-")  # no "-0.00"
    return text.replace("-", MINUS)


def fmt_vector(values: Iterable[float], digits: int = 2, max_items: int | None = None) -> str:
    """``[0.21, 0.52, −0.34]``; with ``max_items``, longer vectors end in ``, …]``."""
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    flat = arr.ravel()
    shown = flat if max_items is None else flat[:max_items]
    body = ", ".join(fmt_number(v, digits) for v in shown)
    if max_items is not None and flat.size > max_items:
        body += ", …"
    return f"[{body}]"


def fmt_percent(fraction: float, digits: int = 1) -> str:
    """A fraction as a percentage: ``fmt_percent(0.4712) == "47.1%"``; NaN shows as "NaN"."""
    v = float(fraction)
    if not math.isfinite(v):
        return fmt_number(v)
    return f"{fmt_number(100 * v, digits)}%"


def ordinal_label(index0: int) -> str:
    """The 1-based number people see for a 0-based index (tables and tooltips agree)."""
    return str(int(index0) + 1)


__all__ = ["fmt_number", "fmt_percent", "fmt_vector", "ordinal_label"]
