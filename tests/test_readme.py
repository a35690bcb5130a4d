"""The README's lists that must follow the code: the panel ids `--panels` takes."""

from __future__ import annotations

import re
from pathlib import Path

from attnsim.panels import PANEL_SPECS

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_names_every_panel_id_in_the_windows_order() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("The panel ids that `--panels` takes")
    paragraph = text[start : text.index("\n\n", start)]
    named = re.findall(r"`([a-z0-9_]+)`", paragraph)
    assert named == [spec.panel_id for spec in PANEL_SPECS]


def test_the_readmes_lecture_takes_the_presets_in_the_menus_teaching_order() -> None:
    from attnsim.resources import TEACHING_ORDER

    text = README.read_text(encoding="utf-8")
    start = text.index("## Teaching with attnsim")
    section = text[start : text.index("\n## ", start + 1)]
    order = [name for name, _ in TEACHING_ORDER]
    named = [n for n in dict.fromkeys(re.findall(r"`([a-z0-9-]+)`", section)) if n in order]
    assert len(named) >= 12  # the lecture names nearly every preset
    assert named == [n for n in order if n in named]  # and in the menu's order


def test_the_readmes_preset_table_is_in_the_teaching_order() -> None:
    from attnsim.resources import TEACHING_ORDER

    text = README.read_text(encoding="utf-8")
    start = text.index("The presets (in `attnsim/resources/scenarios/`)")
    table = text[start : text.index("\n\n", text.index("| preset |", start))]
    named = [n for n in re.findall(r"`([a-z0-9-]+)`", table) if n in dict(TEACHING_ORDER)]
    assert named == [name for name, _ in TEACHING_ORDER]
