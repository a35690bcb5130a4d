"""The number formats panels use; defined Qt-free in :mod:`attnsim.engine.numbers`."""

from attnsim.engine.numbers import (
    MINUS,
    SCI_ABOVE,
    fmt_cell_short,
    fmt_fixed,
    fmt_number,
    fmt_percent,
    fmt_significant,
    fmt_vector,
    ordinal_label,
)

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
