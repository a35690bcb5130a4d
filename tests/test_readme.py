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
