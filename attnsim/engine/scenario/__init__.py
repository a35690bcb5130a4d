"""Scenario: the editable state of attnsim as plain, validated, immutable data.

A scenario is either a *token* scenario (a sentence ``X`` and one or more heads of projection
matrices) or a *direct* scenario (queries, keys and values given as vectors, as in the routing
laboratory). It is saved as readable JSON (``format: attnsim-scenario``, ``version: 1``).

Scenarios are immutable: every edit makes a new one through :meth:`Scenario.replace`, which
validates again. Arrays inside are read-only, so an undo stack can keep old scenarios by
reference and restore exactly the previous arrays.

The package: ``checks`` (limits, ``ScenarioError``, one value at a time), ``head`` (``Head``),
``fields`` (what a token or a direct scenario must hold), ``json_io`` (the file format),
``model`` (``Scenario``, ``compute``) and ``merge`` (two edits of one scenario put together).
Import from here; the modules are its inside.
"""

from .checks import (
    MAX_ABS_VALUE,
    MAX_DIM,
    MAX_HEADS,
    MAX_TEMPERATURE,
    MAX_TOKENS,
    MIN_TEMPERATURE,
    ScenarioError,
    ScenarioTooLargeError,
)
from .head import Head
from .json_io import FORMAT, VERSION
from .merge import merge_edits
from .model import Scenario, ScenarioResult, compute, random_scenario

__all__ = [
    "FORMAT",
    "MAX_ABS_VALUE",
    "MAX_DIM",
    "MAX_HEADS",
    "MAX_TEMPERATURE",
    "MAX_TOKENS",
    "MIN_TEMPERATURE",
    "VERSION",
    "Head",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "ScenarioTooLargeError",
    "compute",
    "merge_edits",
    "random_scenario",
]

# Importable from here as before the split, though not part of __all__ (the matrix importer
# checks its matrices with the scenario's own checks).
from .checks import MAX_FILE_BYTES as MAX_FILE_BYTES
from .checks import Array as Array
from .checks import _frozen as _frozen
from .checks import out_of_range as out_of_range
from .checks import value_problem as value_problem
from .json_io import parse_json as parse_json
from .model import MaskSpec as MaskSpec
