"""Ctrl+E: a panel picker that starts on the panel the user means, not the one that last had
keyboard focus (often on a tab behind another)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QCursor, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QFileDialog

from attnsim.app import MainWindow
from attnsim.app.export_dialog import ExportDialog
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario


@pytest.fixture
def win(qtbot, home):
    w = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: False,
                   restore_layout=False)  # fmt: skip
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    QCursor.setPos(w.mapToGlobal(QPoint(w.width() // 2, 5)))  # over the menu bar: no panel
    return w


def listed(dialog) -> list[str]:
    return [dialog.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(dialog.list.count())]


def raise_dock(win, pid):
    win.docks[pid].raise_()
    for _ in range(3):
        QApplication.processEvents()
    return win.panels[pid]


def test_picker_starts_on_the_last_clicked_panel_not_the_hidden_focused_one(win, qtbot):
    projections = raise_dock(win, "projections")
    projections.seed.setFocus()  # typing in a panel ...
    qtbot.mouseClick(projections.seed, Qt.MouseButton.LeftButton)
    raise_dock(win, "vectors")  # ... whose tab then goes behind another
    assert projections.visibleRegion().isEmpty()
    assert win.current_panel() is projections  # what Ctrl+E exported before: a hidden tab
    heatmap = win.panels["heatmap"]
    qtbot.mouseClick(heatmap.figure, Qt.MouseButton.LeftButton)
    assert win.default_export_panel() == "heatmap"
    dialog = win.export_dialog()
    assert dialog.choice().panel_id == "heatmap"


def test_picker_prefers_the_panel_under_the_mouse(win, qtbot):
    qtbot.mouseClick(win.panels["heatmap"].figure, Qt.MouseButton.LeftButton)
    space = win.panels["space3d"]
    QCursor.setPos(space.mapToGlobal(space.rect().center()))
    assert QApplication.widgetAt(QCursor.pos()) is not None
    assert win.default_export_panel() == "space3d"


def test_picker_lists_the_open_panels_and_returns_the_choices(win, qtbot):
    win.docks["audit"].close()
    dialog = win.export_dialog()
    qtbot.addWidget(dialog)
    ids = listed(dialog)
    assert "audit" not in ids and set(ids) == set(win.docks) - {"audit"}
    assert dialog.choice().mode == "figure"  # the default: content only
    assert not dialog.scale_box.isEnabled()  # SVG first: vector, no scale
    dialog.format_box.setCurrentText("PNG")
    assert dialog.scale_box.isEnabled()
    dialog.scale_box.setValue(3.0)
    dialog.panel_button.setChecked(True)
    dialog.title_edit.setText("  Attention on the river bank ")
    dialog.list.setCurrentRow(ids.index("explorer"))
    c = dialog.choice()
    assert (c.panel_id, c.mode, c.title, c.fmt, c.scale) == (
        "explorer", "panel", "Attention on the river bank", "png", 3.0
    )  # fmt: skip


def test_ctrl_e_exports_the_picked_panel_with_its_title(win, qtbot, tmp_path, monkeypatch):
    out = tmp_path / "figure.png"

    def run(dialog):
        dialog.list.setCurrentRow(listed(dialog).index("space3d"))
        dialog.format_box.setCurrentText("PNG")
        dialog.scale_box.setValue(1.0)
        dialog.title_edit.setText("Query/key space")
        return ExportDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", run)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    action = next(
        a for a in win.findChildren(type(win.menuBar().actions()[0]))
        if a.shortcut().toString() == "Ctrl+E"
    )  # fmt: skip
    action.trigger()
    image = QImage(str(out))
    assert not image.isNull()
    canvas = win.panels["space3d"].canvas
    # The figure: the 3-D view under a title line, not the whole panel with its controls.
    assert image.width() == canvas.width() + 16
    assert image.height() > canvas.height() + 16 + 15
    assert f"Exported {win.panels.title('space3d')}" in win.statusBar().currentMessage()


def test_copy_image_copies_the_figure_of_the_last_clicked_panel(win, qtbot):
    qtbot.mouseClick(win.panels["heatmap"].figure, Qt.MouseButton.LeftButton)
    raise_dock(win, "vectors")
    win.panels["vectors"].table.setFocus()
    win.copy_panel_image()
    image = QGuiApplication.clipboard().image()
    figure = win.panels["heatmap"].figure
    # The heatmap's figure at 2x (content and margins), not the focused vectors panel.
    assert abs(image.width() - 2 * (figure.width() + 16)) <= 2
    assert "Copied Scores and weights" in win.statusBar().currentMessage()


def test_copy_image_of_a_panel_still_running_says_so_at_once(win, qtbot, monkeypatch):
    # Found by the GUI monkey: Copy panel image on the Real model panel waited for its runs
    # (up to two minutes each) with the window stopped.
    panel = win.panels["heatmap"]
    qtbot.mouseClick(panel.figure, Qt.MouseButton.LeftButton)
    QGuiApplication.clipboard().setText("before")
    monkeypatch.setattr(type(panel), "busy", True, raising=False)
    monkeypatch.setattr(type(panel), "figure_widgets", lambda self: pytest.fail("waited"))
    win.copy_panel_image()
    assert QGuiApplication.clipboard().text() == "before"  # nothing copied
    said = win.statusBar().currentMessage()
    assert said == "Scores and weights is still running: copy its image once the run has finished."


def test_copy_image_of_a_panel_without_content_on_screen_copies_the_whole_panel(
    win, qtbot, monkeypatch
):
    # Found by the GUI monkey: Copy panel image on a panel whose content widgets were all off
    # screen raised "nothing to draw as a figure" inside the event loop.
    panel = win.panels["heatmap"]
    qtbot.mouseClick(panel.figure, Qt.MouseButton.LeftButton)
    monkeypatch.setattr(type(panel), "figure_widgets", lambda self: [])
    win.copy_panel_image()
    image = QGuiApplication.clipboard().image()
    assert not image.isNull()
    assert abs(image.width() - 2 * panel.width()) <= 2  # the whole panel at 2x
    assert "Copied Scores and weights" in win.statusBar().currentMessage()


def test_each_export_dialog_is_deleted_after_use(win, monkeypatch):
    from PySide6.QtCore import QEvent

    monkeypatch.setattr(ExportDialog, "exec", lambda self: ExportDialog.DialogCode.Rejected)
    for _ in range(3):
        win.export_panel_dialog()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the event loop's turn
    assert win.findChildren(ExportDialog) == []


def test_export_of_a_panel_still_running_says_so_before_asking_where(win, qtbot, monkeypatch):
    # File ▸ Export… on the Real model panel in the middle of its run waited for the run (up
    # to two minutes) with the window stopped, as Copy panel image did.
    panel = win.panels["heatmap"]
    monkeypatch.setattr(type(panel), "busy", True, raising=False)
    monkeypatch.setattr(type(panel), "figure_widgets", lambda self: pytest.fail("waited"))
    monkeypatch.setattr(ExportDialog, "exec", lambda d: ExportDialog.DialogCode.Accepted)
    asked: list[object] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: asked.append(a) or ("", ""))
    qtbot.mouseClick(panel.figure, Qt.MouseButton.LeftButton)
    win.export_panel_dialog()
    assert asked == []
    said = win.statusBar().currentMessage()
    assert said == "Scores and weights is still running: export it once the run has finished."


def test_export_all_skips_a_panel_still_running_and_says_why(win, qtbot, tmp_path, monkeypatch):
    panel = win.panels["heatmap"]
    monkeypatch.setattr(type(panel), "busy", True, raising=False)
    monkeypatch.setattr(type(panel), "figure_widgets", lambda self: pytest.fail("waited"))
    skipped: dict[str, str] = {}
    files = win.export_all(tmp_path, ("png",), 1.0, panels=["heatmap", "space3d"], skipped=skipped)
    assert [f.name for f in files] == ["space3d.png"]
    assert skipped == {"heatmap": "it is still running; export it once the run has finished"}
