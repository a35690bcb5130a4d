"""Files shipped with attnsim: preset scenarios, icons and the stylesheet.

They live inside the package, so the same lookup works from a checkout, an editable install
and a built wheel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from attnsim.engine.scenario import Scenario, ScenarioError

__all__ = [
    "TEACHING_ORDER",
    "Preset",
    "preset_names",
    "preset_titles",
    "presets_in_order",
    "resolve_scenario",
    "resource_path",
    "scenario_path",
]

# The presets in the order a course meets them (README's "Teaching with attnsim" takes the
# same order), each with the line the Presets menu and `attnsim scenarios` show: basic mixing
# first (the river bank), what the weights and the values each decide, the query map, causal
# masking (the bank river after the river bank), routing, the geometry of many keys, several
# heads. A test checks that every shipped preset has its place here.
TEACHING_ORDER: tuple[tuple[str, str], ...] = (
    ("river-bank", "Basic mixing: bank gathers the water coordinate from river, in numbers you "
     "can check by hand."),
    ("money-bank", "The same bank in another sentence: the weights stay the same, the mixture "
     "changes with the values."),
    ("eiffel-raw", "Raw similarity asks the wrong question: tower scores Eiffel no higher than a "
     "zero filler."),
    ("eiffel-swap-query", "A query map that swaps two coordinates makes tower look for Eiffel."),
    ("eiffel-swap-values", "Swapping the values as well changes what is gathered, not where "
     "attention goes."),
    ("wq-find-water", "One query map asks bank's question about water, and river answers it."),
    ("wq-find-finance", "The same keys, with a query map that asks about finance instead."),
    ("wq-find-structure", "The same keys, with a query map that asks about structure instead."),
    ("bank-river", "A causal mask hides the future: with river after bank, bank cannot read it."),
    ("tired-cat", "A five-token head, bidirectional or causal: each row shares its weight over "
     "the keys it may see."),
    ("routing-lab", "The address is not the message: rotate the query to move the route, swap "
     "the values to change the output."),
    ("code-definition", "Two keys advertise two definitions of a limit, and the query has to "
     "pick the approved one."),
    ("three-fields", "Three fields of keys in 12 dimensions: a query inside one field, one "
     "between two, one pointing nowhere."),
    ("two-heads", "Two heads read the same sentence, one asking for water and one for finance."),
)  # fmt: skip


@dataclass(frozen=True)
class Preset:
    """A preset as the menus list it: its name, title and one-line description."""

    name: str
    title: str
    blurb: str


def resource_path(*parts: str) -> Path:
    """Path of a shipped resource file (a real file: the package is never zipped)."""
    return Path(str(resources.files("attnsim.resources").joinpath(*parts)))


def preset_names() -> list[str]:
    """Names of the preset scenarios, sorted."""
    folder = resource_path("scenarios")
    return sorted(p.stem for p in folder.glob("*.json"))


def _about(name: str) -> tuple[str, str]:
    """A preset's title and description, read from its file without building the scenario."""
    data = json.loads(scenario_path(name).read_text(encoding="utf-8"))
    return str(data.get("title", name)), str(data.get("description", ""))


def preset_titles() -> dict[str, str]:
    """Preset name -> its title, in name order."""
    return {name: _about(name)[0] for name in preset_names()}


def presets_in_order() -> list[Preset]:
    """Every preset in :data:`TEACHING_ORDER`; one not declared there (a file just added)
    follows in name order, described by the first sentence of its description."""
    declared = dict(TEACHING_ORDER)
    names = set(preset_names())
    order = [n for n, _ in TEACHING_ORDER if n in names] + sorted(names - declared.keys())
    out = []
    for name in order:
        title, description = _about(name)
        blurb = declared.get(name) or description.split(". ")[0].rstrip(".") + "."
        out.append(Preset(name, title, blurb))
    return out


def scenario_path(name: str) -> Path:
    """Path of a preset by name (without .json)."""
    path = resource_path("scenarios", f"{name}.json")
    if not path.is_file():
        raise ScenarioError(
            "scenario", f"no preset named {name!r}; presets: {', '.join(preset_names())}"
        )
    return path


def resolve_scenario(name_or_path: str) -> Scenario:
    """Load a preset by name, or a scenario file by path."""
    p = Path(name_or_path)
    if p.suffix == ".json" or p.exists() or "/" in name_or_path or "\\" in name_or_path:
        return Scenario.load(p)
    return Scenario.load(scenario_path(name_or_path))
