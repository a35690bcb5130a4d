"""File ▸ Export as Python script… and Export as Jupyter notebook…: the current scenario as code
(:mod:`attnsim.export.session`), with a note naming the labs changed in this session, whose
settings are not part of the scenario and so are not exported."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from .lab_states import lab_name

if TYPE_CHECKING:
    from attnsim.model.workbench import Workbench

    from .window import MainWindow

__all__ = ["export_code", "export_code_dialog", "not_exported_notes"]


def not_exported_notes(wb: Workbench) -> list[str]:
    """A sentence naming the labs whose settings this session changed, or nothing."""
    changed = sorted(lab_name(f"{k.__module__}:{k.__qualname__}") for k in wb.lab_states())
    if not changed:
        return []
    return [f"Changed in this session and left out: the settings of the {', '.join(changed)}."]


def export_code(win: MainWindow, fmt: str, path: Path) -> Path:
    """Write the window's scenario as ``fmt`` ("py" or "ipynb") to ``path``."""
    from attnsim.export.session import session_exporter

    exp = session_exporter(fmt)
    return exp.write(win.wb.scenario, path, notes=not_exported_notes(win.wb))


def export_code_dialog(win: MainWindow, fmt: str) -> None:
    """Ask where, write, and say so in the status bar (or why it failed)."""
    from attnsim.export.session import session_exporter

    exp = session_exporter(fmt)
    name = f"{win.wb.scenario.name}{exp.suffix}"
    path, _ = QFileDialog.getSaveFileName(
        win, f"Export as {exp.label}", name, f"{exp.label} (*{exp.suffix})"
    )
    if not path:
        return
    if not path.lower().endswith(exp.suffix):
        path += exp.suffix
    try:
        export_code(win, fmt, Path(path))
    except (OSError, ValueError) as exc:
        win._tell("Export failed", f"The scenario could not be written as code: {exc}")
        return
    win.statusBar().showMessage(f"Wrote the scenario as a {exp.label.lower()} to {path}", 5000)
