"""The menu bar, and the Help and About windows (whose shortcut list is read from the menus)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QMainWindow,
    QMessageBox,
    QTextBrowser,
    QVBoxLayout,
)

from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS
from attnsim.resources import presets_in_order

# An action's name in the shortcut list, where its text changes with the state (Undo, Redo).
PLAIN_NAME = "plainName"

if TYPE_CHECKING:
    # For type checkers only: a mixin's methods run on the MainWindow.
    _Base = QMainWindow
else:
    _Base = object


class MenusMixin(_Base):
    """The MainWindow's menus and help."""

    wb: Workbench
    docks: dict[str, QDockWidget]

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        bar = self.menuBar()
        m = bar.addMenu("&File")
        self._action(m, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = m.addMenu("Open &Recent")
        self._action(m, "&Save", self.save, QKeySequence.StandardKey.Save)
        self._action(m, "Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs)
        m.addSeparator()
        self._action(m, "&Export panel…", self.export_panel_dialog, "Ctrl+E")
        self._action(m, "Export &all panels…", self.export_all_dialog, "Ctrl+Shift+E")
        self._action(m, "Copy panel &image", self.copy_panel_image, "Ctrl+Shift+C")
        self._action(m, "Expor&t animation…", self.export_animation_dialog)
        self.record_action = self._action(m, "Recor&d for an animation", self.toggle_recording)
        m.addSeparator()
        self._action(m, "Export &matrices (CSV folder)…", self.export_matrices_csv)
        self._action(m, "Export matrices (.&npz)…", self.export_matrices_npz)
        self._action(m, "&Import matrix (CSV or .npy)…", self.import_matrix_dialog)
        self._action(m, "Copy scenario as &JSON", self.copy_json)
        self._action(m, "&Paste scenario JSON", self.paste_json)
        m.addSeparator()
        self._action(m, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        e = bar.addMenu("&Edit")
        undo = self.wb.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.wb.undo_stack.createRedoAction(self, "&Redo")
        # Their text names the step they would undo; the shortcut list names the action.
        undo.setProperty(PLAIN_NAME, "Undo")
        redo.setProperty(PLAIN_NAME, "Redo")
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        e.addAction(undo)
        e.addAction(redo)

        v = bar.addMenu("&View")
        for pid, dock in self.docks.items():
            act = dock.toggleViewAction()
            act.setText(self.panels.title(pid))
            v.addAction(act)
        v.addSeparator()
        self._action(v, "&Reset layout", self.reset_layout)

        p = bar.addMenu("&Presets")
        p.setToolTipsVisible(True)
        for preset in presets_in_order():  # a teaching order, each with one line on what it shows
            act = QAction(preset.title, self)
            act.setData(preset.name)
            act.setToolTip(preset.blurb)
            act.setStatusTip(preset.blurb)
            act.triggered.connect(lambda _=False, n=preset.name: self.open_preset(n))
            p.addAction(act)

        h = bar.addMenu("&Help")
        self._action(h, "attnsim &Help", self.show_help, QKeySequence.StandardKey.HelpContents)
        self._action(h, "&About attnsim", self.about)
        self._refresh_recent_menu()

    def help_html(self) -> str:
        """The Help window's text: every panel and what it shows, every shortcut of the menus
        (read from the actions themselves), and the version."""
        from html import escape

        from attnsim import __version__

        rows = []
        for spec in PANEL_SPECS:
            doc = (import_module(spec.module).__doc__ or "").strip().split("\n\n")[0]
            rows.append(
                f"<dt><b>{escape(spec.title)}</b></dt><dd>{escape(' '.join(doc.split()))}</dd>"
            )
        keys = [
            f"<tr><td><code>{escape(seq)}</code></td><td>{escape(what)}</td></tr>"
            for what, seq in self.shortcuts()
        ]
        return (
            f"<h2>attnsim {escape(__version__)}</h2>"
            "<p>A visual simulator of scaled dot-product attention: drag a vector and every panel "
            "follows. Every edit can be undone.</p>"
            "<h3>Panels</h3><dl>" + "".join(rows) + "</dl>"
            "<h3>Shortcuts</h3><table cellspacing='4'>" + "".join(keys) + "</table>"
        )

    def shortcuts(self) -> list[tuple[str, str]]:
        """(action name, key sequence) for every menu action that has a shortcut: the action's
        plain name ("Redo"), not the step it would redo today."""
        out: list[tuple[str, str]] = []

        def walk(menu_actions) -> None:
            for act in menu_actions:
                if act.menu() is not None:
                    walk(act.menu().actions())
                    continue
                seqs = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in act.shortcuts()]
                seqs = [s for s in seqs if s]
                if seqs:
                    name = act.property(PLAIN_NAME) or act.text().replace("&", "").rstrip("…")
                    out.append((str(name), ", ".join(seqs)))

        walk(self.menuBar().actions())
        return out

    def show_help(self) -> QDialog:
        dialog = getattr(self, "_help", None)
        if dialog is None:
            dialog = QDialog(self)
            dialog.setObjectName("help-window")
            dialog.setWindowTitle("attnsim Help")
            layout = QVBoxLayout(dialog)
            self.help_browser = QTextBrowser(dialog)
            self.help_browser.setOpenExternalLinks(False)
            layout.addWidget(self.help_browser)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
            buttons.rejected.connect(dialog.close)
            layout.addWidget(buttons)
            avail = self._available()
            dialog.resize(min(720, avail.width() - 40), min(640, avail.height() - 80))
            self._help = dialog
        self.help_browser.setHtml(self.help_html())
        dialog.show()
        dialog.raise_()
        return dialog

    def about(self) -> None:
        from attnsim import __version__

        QMessageBox.about(
            self,
            "About attnsim",
            f"attnsim {__version__} — a visual simulator of scaled dot-product attention.\n"
            "Drag a vector and watch every panel follow. Help ▸ attnsim Help (F1) explains "
            "each panel and lists the shortcuts.",
        )
