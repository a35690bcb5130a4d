"""Help ▸ attnsim Help (F1), Help on this panel (Shift+F1) and What's This all show the panels'
help texts: the same words as the resource, for every panel, opened at the panel in use."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QTextDocument
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.app import MainWindow
from attnsim.app.help_window import SHORTCUTS_TITLE, heading_block, help_markdown
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS
from attnsim.resources import resolve_scenario
from attnsim.resources.panel_help import panel_help


def _words(text: str) -> str:
    return " ".join(text.split())


def _plain_markdown(markdown: str) -> str:
    doc = QTextDocument()
    doc.setMarkdown(markdown)
    return _words(doc.toPlainText())


def _plain_html(html: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html)
    return _words(doc.toPlainText())


@pytest.fixture
def win(qtbot, home):
    w = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: True,
                   restore_layout=False)  # fmt: skip
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    return w


def _help_actions(win: MainWindow) -> dict:
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Help")
    return {a.text().replace("&", ""): a for a in menu.actions()}


def _top_heading(browser) -> str:
    """The text of the heading at the top of the browser's view."""
    top = browser.verticalScrollBar().value()
    layout = browser.document().documentLayout()
    block = browser.document().begin()
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        if rect.bottom() > top + 1:
            return block.text() if block.blockFormat().headingLevel() else ""
        block = block.next()
    return ""


def test_the_help_window_shows_every_panels_help_and_the_shortcuts(win):
    acts = _help_actions(win)
    acts["attnsim Help"].trigger()
    assert win._help.isVisible()
    shown = _words(win.help_browser.toPlainText())
    for spec in PANEL_SPECS:
        assert _plain_markdown(panel_help(spec.panel_id).markdown()) in shown, spec.panel_id
    # a heading per panel, in registry order, then the shortcuts
    titles = [spec.title for spec in PANEL_SPECS] + [SHORTCUTS_TITLE]
    blocks = [heading_block(win.help_browser, t) for t in titles]
    assert all(b is not None for b in blocks)
    assert [b.position() for b in blocks] == sorted(b.position() for b in blocks)
    for what, seq in win.shortcuts():
        assert what in shown and seq in shown
    assert ("Help on this panel", "Shift+F1") in win.shortcuts()
    # the old help showed docstrings
    assert ":mod:" not in shown and "refresh(" not in shown and "sub-view" not in shown


def test_the_help_markdown_shows_names_and_keys_literally():
    text = help_markdown([("Zoom *in*", "Ctrl++"), ("Split | join", "Ctrl+|")], "9.9")
    shown = _plain_markdown(text)
    assert "Zoom *in*" in shown and "Split | join" in shown and "Ctrl+|" in shown


def test_f1_opens_the_help_at_the_panel_in_use_and_the_contents_list_moves_it(win, qtbot):
    panel = win.panels["heatmap"]
    win.docks["heatmap"].raise_()
    panel.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel)
    _help_actions(win)["attnsim Help"].trigger()
    browser = win.help_browser
    at_heatmap = browser.verticalScrollBar().value()
    assert at_heatmap > 0
    assert _top_heading(browser) == "Scores and weights"
    dialog = win._help
    dialog.contents.setCurrentRow(0)
    assert 0 < browser.verticalScrollBar().value() < at_heatmap  # below the introduction
    assert _top_heading(browser) == PANEL_SPECS[0].title
    dialog.contents.setCurrentRow(dialog.contents.count() - 1)
    assert browser.verticalScrollBar().value() > 0


def test_help_on_this_panel_shows_that_panels_text(win, qtbot):
    panel = win.panels["routing_lab"]
    win.docks["routing_lab"].raise_()
    panel.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel)
    act = _help_actions(win)["Help on this panel"]
    assert act.shortcut().toString() == "Shift+F1"
    act.trigger()
    dialog = win._panel_help
    assert dialog.isVisible() and dialog.windowTitle() == "Help: Routing lab"
    expected = _plain_markdown(panel_help("routing_lab").markdown())
    assert _words(dialog.browser.toPlainText()) == expected
    # ... and from there the whole help, at the same panel
    dialog.all_help.click()
    assert _top_heading(win.help_browser) == "Routing lab"


def test_help_on_this_panel_without_a_panel_in_use_opens_the_whole_help(win):
    win.menuBar().setFocus()
    assert win.help_panel() is None
    win.show_panel_help()
    assert win._help.isVisible()
    assert getattr(win, "_panel_help", None) is None


def test_every_panels_whats_this_is_its_help_text(win):
    for spec in PANEL_SPECS:
        panel = win.panels[spec.panel_id]
        expected = _plain_markdown(panel_help(spec.panel_id).markdown())
        assert _plain_html(panel.whatsThis()) == expected, spec.panel_id
        # the What's This window and "Help on this panel" show the same words
        win.show_panel_help(spec.panel_id)
        assert _words(win._panel_help.browser.toPlainText()) == expected
    assert _help_actions(win)["What's This?"].shortcut().isEmpty()  # Shift+F1 is the panel's


def test_whats_this_on_any_part_of_a_panel_shows_the_panels_help(win, qtbot):
    panel = win.panels["heatmap"]
    win.docks["heatmap"].raise_()
    qtbot.waitUntil(panel.isVisible)
    part = next(w for w in panel.findChildren(QWidget) if w.isVisible() and not w.whatsThis())
    at = QPoint(3, 3)
    QApplication.sendEvent(part, QHelpEvent(QEvent.Type.WhatsThis, at, part.mapToGlobal(at)))
    shown = [w for w in QApplication.topLevelWidgets()
             if w.metaObject().className() == "QWhatsThat" and w.isVisible()]  # fmt: skip
    assert len(shown) == 1
    for w in shown:
        w.close()
