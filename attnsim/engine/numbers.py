"""One family of number formats for everything a person reads: status bar, readout, tooltips,
cells, plot labels. Each member states which readers it serves. It lives in the engine, with
the 1-2-5 ticks, so that the Qt-free view-models and the panels (through ``panels.kit.numbers``)
print numbers the same way.

Never NumPy's repr (``[0.5 , 0.5 ]``, ``1.e+200``): fixed decimals for ordinary magnitudes,
scientific notation for magnitudes whose fixed form would run to many digits, a true minus
sign, and ∞ / NaN spelled out, so a number is never cut or misread. Tiny values round to
zero in fixed form, as tables of weights are read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

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


def fmt_fixed(x: float, digits: int = 3) -> str:
    """Always ``digits`` decimals (plot labels and notes, whose magnitudes the scenario bounds):
    a true minus sign, ±∞ spelled out; ``fmt_fixed(-0.5, 2) == "−0.50"``."""
    if isinstance(x, float | np.floating) and math.isinf(x):
        return MINUS + "∞" if x < 0 else "∞"
    return f"{x:.{digits}f}".replace("-", MINUS)


def fmt_significant(x: float) -> str:
    """Three significant digits, exact zero as "0", tiny magnitudes in scientific notation
    (a change reported in a sentence: ``max Δw 0.0312``, ``1.5e-05``)."""
    return "0" if x == 0 else (f"{x:.3g}" if abs(x) >= 1e-3 else f"{x:.1e}")


def fmt_cell_short(x: float) -> str:
    """A small matrix cell: exact zero as "0" (so a zero gradient reads as zero), three
    decimals, and magnitudes that would round to 0.000 in scientific notation."""
    x = float(x)
    if x == 0.0:
        return "0"
    if math.isinf(x):
        return MINUS + "∞" if x < 0 else "∞"
    text = f"{x:.1e}" if abs(x) < 5e-4 else f"{x:.3f}"
    return text.replace("-", MINUS)


def fmt_vector(
    values: Iterable[float],
    digits: int = 2,
    max_items: int | None = None,
    item: Callable[[float, int], str] = fmt_number,
) -> str:
    """``[0.21, 0.52, −0.34]``; with ``max_items``, longer vectors end in ``, …]``; ``item``
    formats each entry (``fmt_number`` by default)."""
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    flat = arr.ravel()
    shown = flat if max_items is None else flat[:max_items]
    body = ", ".join(item(float(v), digits) for v in shown)
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


__all__ = [
    "MINUS",
    "SCI_ABOVE",
    "fmt_cell_short",
    "fmt_fixed",
    "fmt_number",
    "fmt_percent",
    "fmt_significant",
    "fmt_vector",
    "ordinal_label",
]
