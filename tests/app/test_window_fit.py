"""The window on real screen sizes: inside the screen, docks apart, status messages seen,
numbers whole, the title true, and a Help window that lists what the app really has."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication

from attnsim import __version__
from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS
from attnsim.resources import resolve_scenario

PROBE = Path(__file__).with_name("screen_probe.py")


def probe(
    tmp_path, width: int, height: int, *, dpr: int = 1, scale: str | None = None,
    args: tuple[str, ...] = (),
) -> dict:  # fmt: skip
    """The window's geometry on an offscreen screen of this size (a fresh Qt process)."""
    config = tmp_path / f"screen-{width}x{height}.json"
    screen = {"name": "s", "x": 0, "y": 0, "width": width, "height": height,
              "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": dpr}  # fmt: skip
    config.write_text(json.dumps({"screens": [screen]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               ATTNSIM_HOME=str(tmp_path / "home"))  # fmt: skip
    if scale:
        env["QT_SCALE_FACTOR"] = scale
    r = subprocess.run(
        [sys.executable, str(PROBE), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def qrect(r: list[int]) -> QRect:
    return QRect(*r)


@pytest.mark.parametrize(
    ("width", "height", "scale", "args"),
    [
        (1280, 800, None, ()),
        (1024, 768, None, ()),
        (2560, 1600, "2", ()),
        (1280, 800, None, ("--explorer-tokens",)),
        (1024, 768, None, ("--explorer-tokens",)),
    ],
    ids=["1280x800", "1024x768", "2560x1600@2x", "1280x800-tokens", "1024x768-tokens"],
)
def test_window_fits_the_screen_and_docks_do_not_overlap(tmp_path, width, height, scale, args):
    g = probe(tmp_path, width, height, scale=scale, args=args)
    avail = qrect(g["available"])
    assert avail.contains(qrect(g["frame"])), g
    client = qrect(g["client"])
    docks = {pid: qrect(r) for pid, r in g["docks"].items()}
    assert len(docks) == 4  # the front tab of each of the four groups
    for pid, r in docks.items():
        assert client.contains(r), (pid, r, client)
    ids = sorted(docks)
    for a in range(len(ids)):
        for b in range(a + 1, len(ids)):
            assert not docks[ids[a]].intersects(docks[ids[b]]), (ids[a], ids[b])
    bar = qrect(g["statusbar"])
    assert client.contains(bar) and bar.width() > 0
    assert not any(r.intersects(bar) for r in docks.values())
    for pid, (w, h, min_w, min_h) in g["panels"].items():
        assert w >= min_w and h >= min_h, (pid, g["panels"][pid])
    assert len(g["tabs"]) == len(PANEL_SPECS)
    for text, width, needs, _ in g["tabs"]:
        assert width >= needs, (text, width, needs)  # never "Routin…": the bar scrolls instead
    # The matrix of a 3-token preset is read with its numbers at every size a lecture uses.
    assert g["heatmap_numbers_hidden"] is False, g["panels"].get("heatmap")
    ex = g["explorer"]
    plot = qrect(ex["plot"])
    for slider in ex["sliders"]:
        assert not plot.intersects(qrect(slider)), (plot, slider)  # no slider over the axis
    title = qrect(ex["title"])
    assert title.height() >= ex["title_needs"]  # every line of the title shown
    assert not title.intersects(qrect(ex["first_row"]))
    assert ex["height"] >= ex["needs"], ex  # no row squeezed onto the next


@pytest.mark.parametrize(
    ("width", "height", "groups"),
    [(1600, 1000, 1), (1920, 1080, 2)],  # 800 x 500 and 960 x 540 at 2x
    ids=["1600x1000@2x", "1920x1080@2x"],
)
def test_a_small_screen_at_twice_the_scale_gets_fewer_tab_groups_and_the_window_fits(
    tmp_path, width, height, groups
):
    # QT_SCALE_FACTOR=2 on a 1600 x 1000 screen leaves 800 x 500 logical pixels: the four
    # groups side by side needed 842 x 550, and the window ran off the screen.
    g = probe(tmp_path, width, height, scale="2")
    avail = qrect(g["available"])
    assert avail.width() == width // 2
    assert avail.contains(qrect(g["frame"])), g
    assert len(g["docks"]) == groups, g["docks"]
    for pid, (w, h, min_w, min_h) in g["panels"].items():
        assert w >= min_w and h >= min_h, (pid, g["panels"][pid])
    assert len(g["tabs"]) == len(PANEL_SPECS)  # every panel still a tab, none lost
    for text, tab_width, needs, _ in g["tabs"]:
        assert tab_width >= needs, text


def test_every_dock_tab_is_whole_and_in_view_on_a_large_screen(tmp_path):
    g = probe(tmp_path, 1600, 1000)
    assert sorted(t[0] for t in g["tabs"]) == sorted(s.dock_name for s in PANEL_SPECS)
    for text, width, needs, fits in g["tabs"]:
        assert width >= needs and fits, (text, width, needs, fits)


@pytest.fixture
def shown_window(qtbot, home):
    def make(width: int, height: int, scenario: str = "river-bank") -> MainWindow:
        win = MainWindow(Workbench(resolve_scenario(scenario)), ask=lambda *_: True,
                         restore_layout=False)  # fmt: skip
        qtbot.addWidget(win)
        win.resize(width, height)
        win.show()
        qtbot.waitExposed(win)
        QApplication.processEvents()
        return win

    return make


def _in_window(win, w) -> QRect:
    return QRect(w.mapTo(win, QPoint(0, 0)), w.size())


@pytest.mark.parametrize("width", [1600, 1024])
def test_transient_messages_are_visible(shown_window, width):
    win = shown_window(width, 700)
    text = "Saved /home/someone/lessons/attention.json"
    win.statusBar().showMessage(text, 5000)
    QApplication.processEvents()
    label = win.message_label
    assert label.isVisible() and label.text() == text
    r = _in_window(win, label)
    assert r.width() >= label.fontMetrics().horizontalAdvance(text)
    assert QRect(0, 0, win.width(), win.height()).contains(r)
    assert not win._status.isVisible()  # the formula steps aside while a message lasts
    win.statusBar().clearMessage()
    QApplication.processEvents()
    assert not label.isVisible() and win._status.isVisible()


def test_formula_under_a_message_is_current_when_the_message_goes(shown_window):
    win = shown_window(1600, 700)
    win.statusBar().showMessage("Dragging a key edits Wk", 5000)
    QApplication.processEvents()
    assert win.wb.receiving != 1
    win.wb.set_receiving(1)  # changes the formula while the message hides it
    win.statusBar().clearMessage()
    QApplication.processEvents()
    assert win._status.isVisible()
    label = win.wb.scenario.query_labels[1]
    assert win._status.text().startswith(f"{label} attends:"), win._status.text()
    assert win._status.toolTip() == win.status_text()


def test_workbench_messages_reach_the_status_bar(shown_window):
    win = shown_window(1024, 700)
    win.wb.say("Drag a tip to move it in the screen plane")
    QApplication.processEvents()
    assert win.message_label.isVisible()
    assert win.message_label.text().startswith("Drag a tip")


def test_status_numbers_are_formatted_and_never_cut(shown_window):
    win = shown_window(1024, 700, "three-fields")
    full = win.status_text()
    assert "e+" not in full and " ," not in full and "[0." not in full.split("output")[0]
    output = full.split("output ")[1]
    assert re.fullmatch(r"\[(−?\d+\.\d\d, ){5}−?\d+\.\d\d, …\]", output), output
    shown = win._status.text()
    assert shown != full and shown.endswith(" …")
    kept = shown.removesuffix(" …")
    assert full.startswith(kept)
    # cut between items: what follows the kept text starts a new item
    assert full[len(kept)] == " "
    fm = win._status.fontMetrics()
    assert fm.horizontalAdvance(shown) <= win._status.width()


def test_output_vector_uses_the_number_format(home, qtbot):
    from attnsim.engine import edits

    win = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: True,
                     restore_layout=False)  # fmt: skip
    qtbot.addWidget(win)
    sc = win.wb.scenario
    for i in range(sc.n_tokens):  # every token the same: the output is that vector
        sc = edits.set_vector(sc, "x", i, [0.5, 0.5, 0.8, 0.2])
    win.wb.edit(sc, "same")
    text = win.status_text()
    assert text.endswith("output [0.50, 0.50, 0.80, 0.20]"), text


def test_title_names_the_file_after_save_as(shown_window, tmp_path):
    win = shown_window(1024, 700)
    assert "preset river-bank" in win.windowTitle()
    path = tmp_path / "mine.json"
    assert win.save_to(path)
    assert "preset" not in win.windowTitle()
    assert str(path) in win.windowTitle()


def test_help_lists_every_panel_every_shortcut_and_the_version(shown_window):
    win = shown_window(1024, 700)
    acts = {a.text().replace("&", ""): a for m in win.menuBar().actions() if m.menu()
            for a in m.menu().actions()}  # fmt: skip
    help_act = acts["attnsim Help"]
    assert help_act.shortcut().toString() == "F1"
    help_act.trigger()
    dialog = win._help
    assert dialog.isVisible()
    text = win.help_browser.toPlainText()
    for spec in PANEL_SPECS:
        assert spec.title in text
    shortcuts = win.shortcuts()
    assert len(shortcuts) >= 8
    for what, seq in shortcuts:
        assert what in text and seq in text
    for must in ("Ctrl+Z", "Ctrl+E", "F1", "Ctrl+S"):
        assert must in text
    assert __version__ in text


def test_plot_strokes_scale_with_the_screen(tmp_path):
    def thickness(scale: str | None) -> tuple[float, int]:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_HOME=str(tmp_path))
        env.pop("QT_SCALE_FACTOR", None)
        if scale:
            env["QT_SCALE_FACTOR"] = scale
        probe = Path(__file__).with_name("stroke_probe.py")
        r = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
        assert r.returncode == 0, r.stderr
        dpr, rows = r.stdout.split()
        return float(dpr), int(rows)

    dpr1, at_1x = thickness(None)
    dpr2, at_2x = thickness("2")
    assert (dpr1, dpr2) == (1.0, 2.0)
    assert 2 <= at_1x <= 4
    assert at_2x >= 2 * at_1x - 1  # as heavy next to the text as at 1x


def test_status_fit_by_halving_keeps_what_fit_parts_keeps():
    import random

    from attnsim.app.status import fit_items
    from attnsim.panels.kit.labels import fit_parts

    rng = random.Random(7)
    for _ in range(2000):
        parts = [
            "".join(rng.choice("ab ·0123") for _ in range(rng.randint(1, 12)))
            for _ in range(rng.randint(0, 20))
        ]
        room = rng.uniform(0, 160)
        assert fit_items(parts, len, room) == fit_parts(parts, len, room, sep=" ")
