"""The command line and the exporters are packages, and the export formats are registered once.

- No ``cli_*.py`` or ``export*.py`` module is left at the package root: ``attnsim/cli/`` and
  ``attnsim/export/`` hold them, and the export dialog lives in ``app/``.
- Every registered format is offered by the Export panel dialog and accepted (and listed) by
  ``attnsim export --format``; a format registered in a test appears in both, and a figure is
  written through it, so the registry really is the one list.
- No module outside the registry spells the format list out.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import attnsim
from attnsim.cli import build_parser
from attnsim.export import registry
from attnsim.export.exporter import Exporter

ROOT = Path(attnsim.__file__).parent


def test_no_cli_or_export_module_at_the_package_root() -> None:
    root = sorted(p.name for p in ROOT.glob("*.py"))
    stray = [n for n in root if n.startswith(("cli", "export"))]
    assert stray == [], f"move these into attnsim/cli/ or attnsim/export/: {stray}"
    for package in ("cli", "export"):
        assert (ROOT / package / "__init__.py").is_file(), package
    assert (ROOT / "app" / "export_dialog.py").is_file()
    assert "__main__.py" in root  # `python -m attnsim` still starts the command line


def test_the_console_script_names_a_function_that_exists() -> None:
    import tomllib
    from importlib import import_module

    scripts = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["attnsim"].partition(":")
    assert callable(getattr(import_module(module), name))


def _export_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["export"]


def _format_action(export: argparse.ArgumentParser) -> argparse.Action:
    return next(a for a in export._actions if "--format" in a.option_strings)


def _dialog_formats(qtbot) -> list[str]:
    from attnsim.app.export_dialog import ExportDialog

    dialog = ExportDialog({"heatmap": "Heatmap", "vectors": "Vectors"}, "vectors")
    qtbot.addWidget(dialog)
    shown = [dialog.format_box.itemText(i) for i in range(dialog.format_box.count())]
    assert shown == [registry.exporter(n).label for n in dialog.formats()]
    return dialog.formats()


def test_the_built_in_formats_are_registered_in_order() -> None:
    assert registry.names() == ("png", "svg", "pdf")
    assert [e.suffix for e in registry.exporters()] == [".png", ".svg", ".pdf"]
    assert [e.vector for e in registry.exporters()] == [False, True, True]
    assert registry.exporter_for("a/b.SVG").name == "svg"
    assert registry.exporter_for("a/b.svg", "pdf").name == "pdf"
    with pytest.raises(ValueError, match="unknown figure format 'gif'; choose one of png, svg"):
        registry.exporter("gif")


def test_every_registered_format_is_offered_by_the_dialog(qtbot) -> None:
    from attnsim.app.export_dialog import ExportDialog

    offered = _dialog_formats(qtbot)
    assert sorted(offered) == sorted(registry.names())
    assert offered[0] == registry.DIALOG_FIRST  # the dialog starts on SVG, as it always has
    dialog = ExportDialog({"heatmap": "Heatmap"}, "heatmap")
    qtbot.addWidget(dialog)
    assert dialog.scale_box.toolTip() == "PNG pixels per screen pixel (SVG and PDF are vector)"


def test_every_registered_format_is_accepted_and_listed_by_the_cli() -> None:
    export = _export_parser()
    action = _format_action(export)
    assert action.type(action.default) == registry.names()  # the default: all of them
    for name in registry.names():
        assert action.type(name) == (name,)
        assert name in action.help
    with pytest.raises(argparse.ArgumentTypeError, match="choose from png, svg, pdf"):
        action.type("png,gif")


@pytest.fixture
def fake_format():
    written: list[tuple[object, Path, float, str]] = []

    def write(fig, path: Path, *, scale: float = 2.0, title: str = "") -> None:
        path.write_bytes(b"fake figure\n")
        written.append((fig, path, scale, title))

    exp = registry.register(Exporter("fakefmt", "a format only this test knows", False, write))
    try:
        yield exp, written
    finally:
        registry.unregister("fakefmt")
    assert "fakefmt" not in registry.names()


def test_a_registered_format_appears_in_the_dialog_and_the_cli(qtbot, fake_format) -> None:
    assert "fakefmt" in _dialog_formats(qtbot)
    export = _export_parser()
    action = _format_action(export)
    assert "fakefmt" in action.help and "fakefmt" in action.default.split(",")
    args = build_parser().parse_args(
        ["export", "--scenario", "river-bank", "--out", "x", "--format", "svg,fakefmt"]
    )
    assert args.format == ("svg", "fakefmt")
    assert "fakefmt" in export.format_help()


def test_a_figure_is_written_through_a_registered_format(tmp_path, fake_format) -> None:
    from attnsim.export import write_figure

    _, written = fake_format
    marker = object()  # the exporter gets the figure as it is: no other code looks at it
    out = write_figure(marker, tmp_path / "f.fakefmt", scale=1.5, title="T")  # type: ignore[arg-type]
    assert out.read_bytes() == b"fake figure\n"
    assert written == [(marker, tmp_path / "f.fakefmt", 1.5, "T")]


def test_the_dialog_scale_follows_raster_or_vector(qtbot, fake_format) -> None:
    from attnsim.app.export_dialog import ExportDialog

    dialog = ExportDialog({"heatmap": "Heatmap"}, "heatmap")
    qtbot.addWidget(dialog)
    for exp in registry.exporters():
        dialog.format_box.setCurrentText(exp.label)
        assert dialog.choice().fmt == exp.name
        assert dialog.scale_box.isEnabled() is (not exp.vector), exp.name
    assert dialog.scale_box.toolTip() == (
        "PNG and FAKEFMT pixels per screen pixel (SVG and PDF are vector)"
    )


def test_the_registry_and_the_parser_load_no_qt() -> None:
    # the command line lists the formats in its help without starting Qt
    code = (
        "import json, sys\n"
        "from attnsim.cli import build_parser\n"
        "build_parser().parse_args(['export', '--scenario', 'x', '--out', 'y'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        cwd=ROOT.parent, timeout=120,
    )  # fmt: skip
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert "attnsim.export.registry" in loaded
    assert [m for m in loaded if m.startswith(("PySide6", "shiboken6", "pyqtgraph"))] == []


def _literal_format_lists(path: Path) -> list[int]:
    """Lines where a tuple or list of two or more format names, or "png,svg,pdf", is written."""
    names = set(registry.names())
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(values) == len(node.elts) >= 2 and set(values) <= names:
                lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts = node.value.split(",")
            if len(parts) >= 2 and set(parts) <= names:
                lines.append(node.lineno)
    return lines


def test_the_format_list_is_written_nowhere_but_the_registry(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('A = ("png", "svg", "pdf")\nB = "svg,png"\nC = ("png", "x")\n')
    assert _literal_format_lists(probe) == [1, 2]  # the check sees both spellings
    found = {
        p.relative_to(ROOT).as_posix(): lines
        for p in sorted(ROOT.rglob("*.py"))
        if (lines := _literal_format_lists(p))
    }
    assert found == {}, f"ask attnsim.export.registry instead: {found}"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("export", ("attnsim.app", "attnsim.cli")), ("engine", ("attnsim.cli", "attnsim.export"))],
)
def test_the_new_packages_keep_the_layers(package: str, forbidden: tuple[str, ...]) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert len(files) >= 5, package
    bad = {
        p.relative_to(ROOT).as_posix(): sorted(m for m in _imports(p) if m.startswith(forbidden))
        for p in files
    }
    assert {k: v for k, v in bad.items() if v} == {}
