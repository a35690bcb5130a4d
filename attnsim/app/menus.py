"""The menu bar, Help (the whole help, the help of the panel in use, What's This) and About;
the Help window's shortcut list is read from the menus."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QMainWindow,
    QMessageBox,
    QWhatsThis,
)

from attnsim.model.workbench import Workbench
from attnsim.panels import Panel
from attnsim.resources import presets_in_order
from attnsim.resources.panel_help import has_help

from .clicks import ClickTracker, panel_of

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
    _clicks: ClickTracker

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
        for fmt, text in (("py", "P&ython script"), ("ipynb", "Jupyter note&book")):
            self._action(m, f"Export as {text}…", lambda _=False, f=fmt: self._code_dialog(f))
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
        self._action(
            h,
            "attnsim &Help",
            self.show_help,
            QKeySequence.StandardKey.HelpContents,
            "Every panel's help and the shortcuts, opened at the panel in use",
        )
        self._action(
            h,
            "Help on this &panel",
            self.show_panel_help,
            "Shift+F1",
            "What the panel in use shows, what to try and what to notice",
        )
        whats_this = QWhatsThis.createAction(self)
        whats_this.setShortcut(QKeySequence())  # Shift+F1 is "Help on this panel"
        whats_this.setStatusTip("Click any panel to read its help")
        h.addAction(whats_this)
        self._action(h, "&About attnsim", self.about)
        self._refresh_recent_menu()

    def _code_dialog(self, fmt: str) -> None:
        from .code_export import export_code_dialog  # loaded when first used

        export_code_dialog(self, fmt)

    def help_markdown(self) -> str:
        """The Help window's text: every panel's help (what it shows, what to try, what to
        notice, its reference), every shortcut of the menus (read from the actions themselves),
        and the version."""
        from attnsim import __version__

        from .help_window import help_markdown  # the help windows load when first opened

        return help_markdown(self.shortcuts(), __version__)

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

    def help_panel(self) -> Panel | None:
        """The panel the user means by "this panel": the one with the keyboard focus, else
        the one last clicked (None when neither is in this window)."""
        for panel in (panel_of(QApplication.focusWidget()), self._clicks.last):
            if panel is not None and panel.window() is self and has_help(panel.panel_id):
                return panel
        return None

    def show_help(self, panel_id: str | None = None) -> QDialog:
        """The Help window, at the help of ``panel_id`` (by default the panel in use)."""
        dialog = getattr(self, "_help", None)
        if dialog is None:
            from .help_window import HelpWindow

            dialog = HelpWindow(self)
            avail = self._available()
            dialog.resize(min(900, avail.width() - 40), min(680, avail.height() - 80))
            self._help = dialog
            self.help_browser = dialog.browser
        dialog.set_text(self.help_markdown())
        dialog.show()
        dialog.raise_()
        if not isinstance(panel_id, str):  # a triggered action passes its checked state
            panel = self.help_panel()
            panel_id = panel.panel_id if panel is not None else None
        dialog.show_panel(panel_id)
        return dialog

    def show_panel_help(self, panel_id: str | None = None) -> QDialog:
        """The help of one panel alone (the panel in use by default; the whole Help window
        when no panel is in use)."""
        if not isinstance(panel_id, str):
            panel = self.help_panel()
            if panel is None:
                return self.show_help()
            panel_id = panel.panel_id
        dialog = getattr(self, "_panel_help", None)
        if dialog is None:
            from .help_window import PanelHelpWindow

            dialog = PanelHelpWindow(self)
            dialog.all_help.clicked.connect(lambda: self.show_help(dialog.panel_id))
            avail = self._available()
            dialog.resize(min(560, avail.width() - 40), min(560, avail.height() - 80))
            self._panel_help = dialog
        dialog.show_panel(panel_id)
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
            "each panel and lists the shortcuts; Shift+F1 explains the panel in use.",
        )
