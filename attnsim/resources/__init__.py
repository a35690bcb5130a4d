"""Files shipped with attnsim: preset scenarios, icons and the stylesheet.

They live inside the package, so the same lookup works from a checkout, an editable install
and a built wheel.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from attnsim.engine.scenario import Scenario, ScenarioError

__all__ = ["preset_names", "preset_titles", "resolve_scenario", "resource_path", "scenario_path"]


def resource_path(*parts: str) -> Path:
    """Path of a shipped resource file (a real file: the package is never zipped)."""
    return Path(str(resources.files("attnsim.resources").joinpath(*parts)))


def preset_names() -> list[str]:
    """Names of the preset scenarios, sorted."""
    folder = resource_path("scenarios")
    return sorted(p.stem for p in folder.glob("*.json"))


def preset_titles() -> dict[str, str]:
    """Preset name -> its title, read from each file without building the scenario."""
    out = {}
    for name in preset_names():
        data = json.loads(scenario_path(name).read_text(encoding="utf-8"))
        out[name] = str(data.get("title", name))
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
