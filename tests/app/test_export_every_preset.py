"""Every preset (token and direct scenarios) exports every panel in every registered format, as
a figure and as the whole panel, with nothing printed on the terminal: panels with nothing to
show are skipped with one note each, File ▸ Export all panels says so on the status bar.

One window per preset, all its panels in all formats in that one window: the suite pays about
as much as one ``attnsim export`` per preset and mode."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QImage

from attnsim.app import MainWindow
from attnsim.export import registry
from attnsim.model.workbench import Workbench
from attnsim.resources import preset_names, resolve_scenario

# What the offscreen platform says about window hints: about the test machine, not the export.
PLATFORM_NOISE = ("propagateSizeHints",)


@pytest.fixture
def qt_messages():
    """Every warning Qt prints while the test runs (what a user would see on the terminal)."""
    seen: list[str] = []

    def handler(kind, context, message):
        if kind != QtMsgType.QtDebugMsg and not any(n in message for n in PLATFORM_NOISE):
            seen.append(message)

    previous = qInstallMessageHandler(handler)
    try:
        yield seen
    finally:
        qInstallMessageHandler(previous)


def make_window(qtbot, scenario: str) -> MainWindow:
    win = MainWindow(Workbench(resolve_scenario(scenario)), ask=lambda *_: False,
                     restore_layout=False)  # fmt: skip
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    qtbot.waitExposed(win)
    return win


def check_file(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 500, path
    if path.suffix == ".png":
        assert not QImage(str(path)).isNull(), path
    elif path.suffix == ".svg":
        ET.fromstring(data)  # well-formed XML
        assert b"<text" in data or b"<path" in data, path
    elif path.suffix == ".pdf":
        assert data.startswith(b"%PDF-") and b"%%EOF" in data[-64:], path


@pytest.mark.parametrize("scenario", preset_names())
def test_every_panel_exports_in_every_format_as_figure_and_panel(
    qtbot, home, tmp_path, qt_messages, scenario
):
    win = make_window(qtbot, scenario)
    panels = list(win.panels)
    formats = registry.names()
    for mode in ("figure", "panel"):
        skipped: dict[str, str] = {}
        folder = tmp_path / mode
        files = win.export_all(folder, None, 1.0, mode=mode, skipped=skipped)
        written = {(f.stem, f.suffix.lstrip(".")) for f in files}
        expected = {(pid, fmt) for pid in panels if pid not in skipped for fmt in formats}
        assert written == expected, f"{mode}: missing {sorted(expected - written)}"
        for f in files:
            check_file(f)
        if mode == "panel":
            assert skipped == {}  # the whole panel always has something to show
        # A skipped panel says why, in a sentence, and writes nothing.
        for pid, why in skipped.items():
            assert len(why.split()) >= 5 and pid not in why, why
            assert not any(folder.glob(f"{pid}.*"))
    assert qt_messages == []  # e.g. no "QPdfEngine: unable to create a gradient ..."


@pytest.mark.parametrize("scenario", ["routing-lab"])
def test_export_all_panels_from_the_menu_notes_each_skipped_panel(
    qtbot, home, tmp_path, monkeypatch, qt_messages, scenario
):
    from PySide6.QtWidgets import QFileDialog

    win = make_window(qtbot, scenario)
    told: list[tuple[str, str]] = []
    monkeypatch.setattr(win, "_tell", lambda title, text: told.append((title, text)))
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(out))
    win.export_all_dialog()
    assert told == []  # no error box
    message = win.statusBar().currentMessage()
    skipped = {pid for pid in win.panels if not any(out.glob(f"{pid}.*"))}
    assert skipped  # each of these presets leaves some lab (or the projections) out
    n_files = len(list(out.iterdir()))
    assert n_files == len(registry.names()) * (len(win.panels) - len(skipped))
    assert message.startswith(f"Wrote {n_files} files to {out}.")
    for pid in skipped:
        assert message.count(f"Skipped {win.panels.title(pid)}: ") == 1, message
    assert message.count("Skipped ") == len(skipped)
    assert qt_messages == []
