"""The layering rules, checked on every module rather than a hand-picked few.

- Every module of ``attnsim.engine``, ``attnsim.viewmodels`` and ``attnsim.lessons`` imports without
  loading Qt or pyqtgraph. Each is imported alone in a fresh interpreter, so one module's import
  cannot hide another's.
- ``attnsim.model`` loads no widgets.
- No file of a registered panel (module or package) imports another panel: panels talk to each other
  only through the workbench.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from pathlib import Path

import pytest

import attnsim
from attnsim.panels import PANEL_SPECS, PENDING_PANEL_SPECS

pytestmark = pytest.mark.process

QT_ROOTS = ("PySide6", "pyqtgraph", "shiboken6", "PyQt5", "PyQt6")
WIDGET_MODULES = ("PySide6.QtWidgets", "pyqtgraph")


def _modules_of(package: str) -> list[str]:
    try:
        pkg = import_module(package)
    except ModuleNotFoundError:
        return []
    names = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        names.append(info.name)
    return sorted(names)


def _loaded_after_import(module: str) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(attnsim.__file__).parent.parent,
        timeout=120,
    )
    return json.loads(out.stdout.splitlines()[-1])


QT_FREE = (
    _modules_of("attnsim.engine")
    + _modules_of("attnsim.viewmodels")
    + _modules_of("attnsim.lessons")
)


def test_the_qt_free_packages_are_all_found() -> None:
    # a guard on the guard: if module discovery broke, the parametrised test would pass vacuously
    assert "attnsim.engine.attention" in QT_FREE and "attnsim.lessons.session" in QT_FREE
    assert len(QT_FREE) >= 10


def test_each_module_alone_loads_only_what_its_layer_may() -> None:
    # One fresh interpreter per module, several at a time: each import is alone (one module's
    # import cannot hide another's), and the whole check takes the time of a few.
    jobs = {m: "no Qt" for m in QT_FREE} | {m: "no widgets" for m in _modules_of("attnsim.model")}
    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) * 2)) as pool:
        loaded = dict(zip(jobs, pool.map(_loaded_after_import, jobs), strict=True))
    problems = []
    for module, rule in jobs.items():
        roots = QT_ROOTS if rule == "no Qt" else ()
        bad = [
            m for m in loaded[module]
            if m.split(".")[0] in roots or (rule == "no widgets" and m.startswith(WIDGET_MODULES))
        ]  # fmt: skip
        if bad:
            problems.append(f"{module} loads {bad[:5]} ({rule} allowed)")
    assert problems == []


def _imported_modules(path: Path, package: str) -> set[str]:
    """Absolute names of the modules a source file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            found.add(mod)
            # `from . import vectors` names a module through the alias
            found.update(f"{mod}.{alias.name}" for alias in node.names)
    return found


PANEL_MODULES = sorted({spec.module for spec in [*PANEL_SPECS, *PENDING_PANEL_SPECS]})


def _panel_sources(module: str) -> list[tuple[Path, str]]:
    """Every source file of a panel with the package its relative imports resolve against.

    A small panel is one module; a large one is a package of sub-views, and every file of it
    counts, so a sub-view cannot reach into another panel either.
    """
    path = Path(import_module(module).__file__ or "")
    if path.name != "__init__.py":
        return [(path, module.rsplit(".", 1)[0])]
    sources = []
    for file in sorted(path.parent.rglob("*.py")):
        rel = file.relative_to(path.parent).with_suffix("").parts
        inner = ".".join((module, *rel[:-1])) if rel[-1] == "__init__" else ".".join((module, *rel))
        sources.append((file, inner if file.name == "__init__.py" else inner.rsplit(".", 1)[0]))
    return sources


def _names_a_panel(imported: str, panel: str) -> bool:
    return imported == panel or imported.startswith(panel + ".")


@pytest.mark.parametrize("module", PANEL_MODULES)
def test_panel_imports_no_other_panel(module: str) -> None:
    sources = _panel_sources(module)
    assert sources, module
    for path, package in sources:
        imported = _imported_modules(path, package)
        others = sorted(
            m
            for m in imported
            for other in PANEL_MODULES
            if other != module and _names_a_panel(m, other)
        )
        assert others == [], f"{path.name} of {module} imports the panels {others}"


def test_a_package_panel_is_checked_file_by_file(tmp_path: Path) -> None:
    # a sub-view two levels down that imports another panel must be seen, and an import of its
    # own package must not count
    pkg = tmp_path / "lab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .panel import LabPanel\n")
    (pkg / "view.py").write_text("from ..heatmap.canvas import X\nfrom . import panel\n")
    imported = _imported_modules(pkg / "view.py", "attnsim.panels.lab")
    assert _names_a_panel("attnsim.panels.heatmap.canvas", "attnsim.panels.heatmap")
    assert "attnsim.panels.heatmap.canvas" in imported
    assert not any(_names_a_panel(m, "attnsim.panels.heatmap") for m in ["attnsim.panels.lab"])
    assert "attnsim.panels.lab.panel" in imported


def test_the_panel_import_check_sees_a_panel_import(tmp_path: Path) -> None:
    # the checker itself must notice both spellings of importing another panel
    src = tmp_path / "p.py"
    src.write_text("from .heatmap import X\nfrom attnsim.panels import vectors\n")
    imported = _imported_modules(src, "attnsim.panels")
    assert "attnsim.panels.heatmap" in imported
    assert "attnsim.panels.vectors" in imported


VIEWS_DIR = Path(import_module("attnsim.viewmodels").__file__ or "").parent
VIEW_UNITS = sorted(
    f"attnsim.viewmodels.{p.stem}"
    for p in VIEWS_DIR.iterdir()
    if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
)


@pytest.mark.parametrize("unit", VIEW_UNITS)
def test_a_view_model_imports_no_other_view_model(unit: str) -> None:
    # What two view-models share is computation, and computation lives in the engine.
    path = VIEWS_DIR / unit.rsplit(".", 1)[1]
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    for file in files:
        rel = file.relative_to(VIEWS_DIR).with_suffix("").parts
        package = ".".join(("attnsim.viewmodels", *rel[:-1]))
        if rel[-1] == "__init__":
            package = ".".join(("attnsim.viewmodels", *rel[:-1]))
        imported = _imported_modules(file, package)
        others = sorted(
            m for m in imported for o in VIEW_UNITS if o != unit and _names_a_panel(m, o)
        )
        assert others == [], f"{file.name} of {unit} imports the view-models {others}"
