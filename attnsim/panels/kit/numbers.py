"""The number formats panels use; defined Qt-free in :mod:`attnsim.engine.numbers`."""

from attnsim.engine.numbers import (
    fmt_cell_short,
    fmt_fixed,
    fmt_number,
    fmt_percent,
    fmt_significant,
    fmt_vector,
    ordinal_label,
)

__all__ = [
    "fmt_cell_short",
    "fmt_fixed",
    "fmt_number",
    "fmt_percent",
    "fmt_significant",
    "fmt_vector",
    "ordinal_label",
]
