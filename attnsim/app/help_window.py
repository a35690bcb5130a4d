"""The Help window (every panel's help and the shortcuts) and the help of one panel.

Both show the panels' help texts from ``attnsim.resources.panel_help`` through Qt's Markdown
support, the same text each panel carries as its What's This, so the three cannot disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextBlock
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from attnsim.panels import PANEL_SPECS
from attnsim.resources.panel_help import has_help, panel_help

SHORTCUTS_TITLE = "Shortcuts"
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>#])")


def _plain(text: str) -> str:
    """``text`` as Markdown that shows it literally (an action's name, a key sequence)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def help_markdown(shortcuts: Sequence[tuple[str, str]], version: str) -> str:
    """The Help window's text: an introduction, every panel's help in registry order, and
    every shortcut of the menus."""
    parts = [
        f"# attnsim {_plain(version)}",
        "A visual simulator of scaled dot-product attention: drag a vector and every panel "
        "follows. Every edit can be undone. For the panel you are working in, press Shift+F1 "
        "(Help ▸ Help on this panel), or choose Help ▸ What's This? and click any panel.",
    ]
    for spec in PANEL_SPECS:
        if has_help(spec.panel_id):
            parts.append(panel_help(spec.panel_id).markdown(level=2).strip())
        else:  # a panel registered without its help text (a test checks there is none)
            parts.append(f"## {_plain(spec.title)}")
    rows = "\n".join(f"| {_plain(seq)} | {_plain(what)} |" for what, seq in shortcuts)
    parts.append(f"## {SHORTCUTS_TITLE}\n\n| Keys | Action |\n|---|---|\n{rows}")
    return "\n\n".join(parts) + "\n"


def heading_block(browser: QTextBrowser, title: str, level: int = 2) -> QTextBlock | None:
    """The block of the heading ``title`` at ``level`` in the browser's document, if any."""
    block = browser.document().begin()
    while block.isValid():
        if block.blockFormat().headingLevel() == level and block.text().strip() == title:
            return block
        block = block.next()
    return None


def scroll_to(browser: QTextBrowser, title: str) -> bool:
    """Put the heading ``title`` at the top of the browser; False when there is none."""
    block = heading_block(browser, title)
    if block is None:
        return False
    top = browser.document().documentLayout().blockBoundingRect(block).top()
    browser.verticalScrollBar().setValue(int(top))
    return True


class HelpWindow(QDialog):
    """The Help window: a list of the panels (and the shortcuts) beside the whole text; a click
    in the list scrolls to that section."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("help-window")
        self.setWindowTitle("attnsim Help")
        layout = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        self.contents = QListWidget(split)
        self.contents.setObjectName("help-contents")
        self.contents.setToolTip("Go to the help of this panel")
        for spec in PANEL_SPECS:
            item = QListWidgetItem(spec.title)
            item.setData(Qt.ItemDataRole.UserRole, spec.panel_id)
            self.contents.addItem(item)
        self.contents.addItem(SHORTCUTS_TITLE)
        self.contents.currentTextChanged.connect(self._go_to)
        self.browser = QTextBrowser(split)
        self.browser.setOpenExternalLinks(False)
        split.addWidget(self.contents)
        split.addWidget(self.browser)
        split.setStretchFactor(1, 1)
        split.setSizes([180, 560])
        layout.addWidget(split)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)

    def set_text(self, markdown: str) -> None:
        bar = self.browser.verticalScrollBar()
        where = bar.value()
        self.browser.setMarkdown(markdown)
        bar.setValue(where)

    def show_panel(self, panel_id: str | None) -> None:
        """Scroll to the help of ``panel_id`` (None: leave the text where it is)."""
        titles = {spec.panel_id: spec.title for spec in PANEL_SPECS}
        if panel_id in titles:
            self._go_to(titles[panel_id])

    def _go_to(self, title: str) -> None:
        if title:
            scroll_to(self.browser, title)


class PanelHelpWindow(QDialog):
    """One panel's help alone: what "Help on this panel" (Shift+F1) opens."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("panel-help-window")
        self.panel_id = ""
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(False)
        layout.addWidget(self.browser)
        row = QHBoxLayout()
        self.all_help = QPushButton("All panels and shortcuts…", self)
        self.all_help.setToolTip("Open the whole Help window at this panel")
        row.addWidget(self.all_help)
        row.addStretch(1)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close)
        row.addWidget(close)
        layout.addLayout(row)

    def show_panel(self, panel_id: str) -> None:
        help_text = panel_help(panel_id)
        self.panel_id = panel_id
        self.setWindowTitle(f"Help: {help_text.title}")
        self.browser.setMarkdown(help_text.markdown(level=1))
        self.browser.verticalScrollBar().setValue(0)


__all__ = [
    "SHORTCUTS_TITLE",
    "HelpWindow",
    "PanelHelpWindow",
    "heading_block",
    "help_markdown",
    "scroll_to",
]
