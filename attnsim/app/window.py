"""The main window: panels in docks, menus, shortcuts, status bar, settings and recovery.

``MainWindow`` owns the state and the Qt events; each part of its work is a mixin in its own
module (``docks``, ``menus``, ``presentation``, ``status``, ``documents``, ``figures``), so the
window's public methods (``open_path``, ``export_all``, ...) stay where the CLI and the tests
call them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow

from attnsim.model.workbench import Workbench

from .clicks import ClickTracker
from .docks import DocksMixin, _Panels
from .documents import DocumentsMixin
from .figures import FiguresMixin
from .home import app_home
from .lessons import LessonsMixin
from .menus import MenusMixin
from .presentation import PresentationMixin
from .recovery import RecoverySlot
from .status import StatusMixin


class MainWindow(
    DocksMixin,
    MenusMixin,
    PresentationMixin,
    StatusMixin,
    DocumentsMixin,
    FiguresMixin,
    LessonsMixin,
    QMainWindow,
):
    """attnsim's window. ``ask`` answers yes/no questions (tests pass a function).
    ``panels_after_first_frame``: the panels on screen at the start are made in one turn after
    the window's first frame (each dock says "Opening …" meanwhile), as ``attnsim gui``
    opens; otherwise they are made as the window is first shown. ``panels_in``: the last of
    those opened after the first frame is in its dock."""

    panels_in = Signal()

    def __init__(
        self,
        workbench: Workbench,
        *,
        ask: Callable[[str, str], bool] | None = None,
        ask_quit: Callable[[], str] | None = None,
        restore_layout: bool = True,
        autosave_ms: int = 750,
        autosave_max_ms: int = 1000,
        panels_after_first_frame: bool = False,
    ) -> None:
        super().__init__()
        # Before anything reads them: a bad settings file is set aside, and said so.
        self._startup_notes = self.startup_problems()
        self.wb = workbench
        if workbench.parent() is None:
            workbench.setParent(self)  # the workbench lives exactly as long as its window
        self._ask = ask or self._ask_dialog
        if ask_quit is None and ask is not None:  # a yes/no asker (tests): yes quits unsaved
            yes_no = ask

            def ask_quit() -> str:
                return "discard" if yes_no("Quit attnsim?", "Quit without saving?") else "cancel"

        self._ask_quit = ask_quit or self._ask_quit_dialog
        self.setWindowTitle("attnsim")
        self.setDockNestingEnabled(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowNestedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
        )
        if workbench.home is None:
            workbench.home = app_home()  # where the Lessons panel keeps the learner's progress
        self.panels = _Panels(self._make_panel)
        self.docks: dict[str, QDockWidget] = {}
        self._opening = set()
        self._window_up = False
        self._panels_after_first_frame = panels_after_first_frame
        self._share_docks_again = False
        self._start_panels = set()
        self._build_panels()
        self._build_menus()
        self._clicks = ClickTracker(self)  # Ctrl+E offers the panel last clicked
        menus = {a.text(): a.menu() for a in self.menuBar().actions()}
        self._build_presentation(menus["&View"])
        self._build_lessons(menus["&File"], menus["&Help"])
        self._build_status_bar()
        workbench.changed.connect(self._on_changed)
        workbench.lab_changed.connect(self._clear_refusal_message)
        workbench.selection_changed.connect(self._update_status)
        workbench.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        workbench.undo_stack.cleanChanged.connect(self._update_title)
        # After the stack has moved (its clean state is final then), not on `changed`, which
        # fires inside the command's redo().
        workbench.undo_stack.indexChanged.connect(self._on_index_changed)
        # Autosave: after a quiet moment, and at the latest autosave_max_ms after the first
        # unsaved change, so continuous work (a long drag) is saved too.
        self._recovery = RecoverySlot(self)
        self._recovery.written.connect(self._on_recovery_written)
        self._autosave_failing = False
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(autosave_ms)
        self._autosave.timeout.connect(self.write_recovery)
        self._autosave_deadline = QTimer(self)
        self._autosave_deadline.setSingleShot(True)
        self._autosave_deadline.setInterval(max(autosave_ms, autosave_max_ms))
        self._autosave_deadline.timeout.connect(self.write_recovery)
        self.fit_to_screen()
        self._size_docks()
        self._default_state = self.saveState()
        self._sized = False
        if restore_layout:
            self._sized = self._restore_layout()
            self._keep_on_screen()
        self._update_title()
        # A large scenario is traced in the background: the window is up before its numbers.
        workbench.trace_in_background()
        workbench.computing_changed.connect(self._on_computing)
        self._update_status()
        if self._startup_notes:
            self.statusBar().showMessage(" ".join(self._startup_notes), 30000)

    # ---- the window's own events and title ----------------------------------------------------
    def _update_title(self, *_: object) -> None:
        sc = self.wb.scenario
        where = str(self.wb.path) if self.wb.path else f"preset {sc.name}"
        self.setWindowTitle(
            f"{'• ' if self.wb.dirty else ''}{sc.title or sc.name} — {where} — attnsim"
        )

    def _on_computing(self, busy: bool) -> None:
        if not busy:  # in a turn of its own: the panels' redraws wait for the trace too
            QTimer.singleShot(1, self, self._update_status)

    def _on_changed(self, what: frozenset[str]) -> None:
        self._clear_refusal_message()
        self._update_status()

    def _clear_refusal_message(self, *_: object) -> None:
        # An edit went through (or a document came): a refusal no longer describes the state.
        if self.statusBar().currentMessage().startswith("Refused: "):
            self.statusBar().clearMessage()

    def _on_index_changed(self, _index: int) -> None:
        self._update_title()
        if self.wb.dirty:
            self._schedule_autosave()
        else:
            self.clear_recovery()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_status()
        if not self._sized:
            # Dock sizes can only be shared out once the window has its real size.
            self._sized = True
            QTimer.singleShot(0, self._size_docks)
            self._share_docks_again = self._panels_after_first_frame
        if not self._window_up:
            QTimer.singleShot(0, self, self._window_is_up)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_status()
        text = self.statusBar().currentMessage()
        if text:
            self.message_label.setText(self._elided_message(text))

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.wb.dirty:
            answer = self._ask_quit()  # "save", "discard" or "cancel"
            if answer == "cancel" or (answer == "save" and not self.save()):
                event.ignore()  # a cancelled or failed save keeps the window and the work
                return
        self.set_presenting(False)
        self.set_maximised(False)  # the layout saved is the user's, not a maximised panel
        self.save_layout()
        self._autosave.stop()
        self._autosave_deadline.stop()
        self._recovery.release()  # this window's file and lock; never another window's
        event.accept()
