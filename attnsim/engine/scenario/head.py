"""One head's projection matrices, validated and read-only."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import Array, _frozen, check_text


@dataclass(frozen=True, eq=False)
class Head:
    """One head's projections: ``Wq``, ``Wk`` (d, d_k) and ``Wv`` (d, d_v)."""

    Wq: Array
    Wk: Array
    Wv: Array
    name: str = ""

    def __post_init__(self) -> None:
        for n in ("Wq", "Wk", "Wv"):
            object.__setattr__(self, n, _frozen(getattr(self, n), n))
        check_text(self.name, "name")  # shown beside the head's panels, like a label

    def replace(self, **changes: Any) -> Head:
        return dataclasses.replace(self, **changes)

    def equals(self, other: Head) -> bool:
        return self.name == other.name and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in ("Wq", "Wk", "Wv")
        )
