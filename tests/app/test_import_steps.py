"""The window imports a panel's modules one a turn: ``import_next`` and the packages that name
their modules in ``IMPORT_STEPS``."""

from __future__ import annotations

import sys
from importlib import import_module

import pytest

from attnsim.app.docks import import_next
from attnsim.panels import PANEL_SPECS


def test_import_next_imports_the_package_then_one_named_module_a_call(tmp_path, monkeypatch):
    pkg = tmp_path / "steppedpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        'IMPORT_STEPS = ("steppedpkg.a", "steppedpkg.b")\n', encoding="utf-8"
    )
    (pkg / "a.py").write_text("A = 1\n", encoding="utf-8")
    (pkg / "b.py").write_text("from .a import A\nB = A + 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("steppedpkg", "steppedpkg.a", "steppedpkg.b"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    seen = []
    while import_next("steppedpkg"):
        seen.append({m for m in ("steppedpkg", "steppedpkg.a", "steppedpkg.b") if m in sys.modules})
    assert seen == [
        {"steppedpkg"},
        {"steppedpkg", "steppedpkg.a"},
        {"steppedpkg", "steppedpkg.a", "steppedpkg.b"},
    ]
    assert sys.modules["steppedpkg.b"].B == 2
    assert not import_next("steppedpkg")  # nothing left: the next call does nothing


@pytest.mark.parametrize("spec", PANEL_SPECS, ids=lambda s: s.panel_id)
def test_every_named_import_step_is_a_module_of_the_panel(spec):
    # A step that names no module would stop the window opening the panel.
    package = import_module(spec.module)
    for name in getattr(package, "IMPORT_STEPS", ()):
        assert import_module(name).__name__ == name
    assert spec.load().panel_id == spec.panel_id  # the class is still there after the steps
