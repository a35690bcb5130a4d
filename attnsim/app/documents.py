"""Scenario documents: open (file, preset, recent), save, the clipboard's JSON, importing a matrix,
and the autosaved recovery file that survives a crash."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMainWindow, QMenu, QMessageBox

from attnsim.engine import matrix_io
from attnsim.engine.edits import set_matrix
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

from .home import check_settings, home_problems, settings
from .opening import (
    LARGE_PASTE_CHARS,
    LARGE_SAVE_NUMBERS,
    LargeFiles,
    is_large_file,
    scenario_numbers,
)
from .recovery import Recovered, RecoverySlot, Work, scan_orphans

MAX_RECENT = 8

if TYPE_CHECKING:
    # For type checkers only: a mixin's methods run on the MainWindow.
    _Base = QMainWindow
else:
    _Base = object


class DocumentsMixin(_Base):
    """The MainWindow's files: opening, saving, importing and recovering scenarios."""

    wb: Workbench
    recent_menu: QMenu
    _ask: Callable[[str, str], bool]
    _autosave: QTimer
    _autosave_deadline: QTimer
    _autosave_failing: bool
    _recovery: RecoverySlot
    _startup_notes: list[str]
    _update_title: Callable[..., None]  # the window's

    def _ask_dialog(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def _ask_quit_dialog(self) -> str:
        """Save, Discard or Cancel before quitting with unsaved changes."""
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self,
            "Quit attnsim?",
            f"The scenario '{self.wb.scenario.name}' has unsaved changes. "
            "Save them before quitting?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")

    def _tell(self, title: str, text: str) -> None:
        self.statusBar().showMessage(text, 10000)
        if self.isVisible() and QGuiApplication.platformName() != "offscreen":
            QMessageBox.warning(self, title, text)

    def maybe_discard(self) -> bool:
        """True if it is fine to replace the current scenario (saved, or the user agrees)."""
        if not self.wb.dirty:
            return True
        return self._ask(
            "Discard changes?", "The current scenario has unsaved changes. Discard them?"
        )

    def open_scenario(self, scenario: Scenario, path: Path | None = None) -> None:
        self.wb.load(scenario, path)
        if path is not None:
            self._add_recent(path)
        self._update_title()

    def open_path(self, path: str | Path) -> bool:
        """Open a scenario file; on a bad file show why and keep the current scenario.

        A large file is read in a child process while the window keeps answering (the status
        bar says so); its scenario opens when it is read. True when it was opened or is being
        read, False when it was refused (or the user kept the changes on screen)."""
        if is_large_file(path):
            self._large().open(Path(path))
            return True
        try:  # before asking to discard changes: a bad file must not cost the user anything
            sc = Scenario.load(path)
        except ScenarioError as exc:
            self._tell("Cannot open scenario", str(exc))
            return False
        if not self.maybe_discard():
            return False
        self.open_scenario(sc, Path(path))
        return True

    def _large(self) -> LargeFiles:
        large: LargeFiles | None = getattr(self, "_large_files", None)
        if large is None:
            large = self._large_files = LargeFiles(self)
        return large

    def open_preset(self, name: str) -> bool:
        if not self.maybe_discard():
            return False
        try:
            sc = resolve_scenario(name)
        except ScenarioError as exc:
            self._tell("Cannot open preset", str(exc))
            return False
        self.open_scenario(sc, None)
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenarios (*.json)")
        if path:
            self.open_path(path)

    def save(self) -> bool:
        if self.wb.path is None:
            return self.save_as()
        return self.save_to(self.wb.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save scenario", f"{self.wb.scenario.name}.json", "Scenarios (*.json)"
        )
        return bool(path) and self.save_to(Path(path))

    def save_to(self, path: Path) -> bool:
        """Save the scenario to ``path``. A large one is written in the background while the
        window keeps answering (True then means the save has started)."""
        sc = self.wb.snapshot()
        if scenario_numbers(sc) >= LARGE_SAVE_NUMBERS:
            self._large().save(sc, Path(path))
            return True
        try:
            sc.save(path)
        except OSError as exc:
            self._tell("Cannot save", f"{path}: {exc.strerror or exc}")
            return False
        self._saved(Path(path))
        return True

    def _saved(self, path: Path) -> None:
        self.wb.mark_saved(path)
        self._add_recent(path)
        self.clear_recovery()
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 5000)

    def _recent(self) -> list[str]:
        value = settings().value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: Path) -> None:
        items = [str(Path(path).resolve())] + [
            p for p in self._recent() if p != str(Path(path).resolve())
        ]
        settings().setValue("recent", items[:MAX_RECENT])
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        items = self._recent()
        for p in items:
            act = QAction(p, self)
            act.triggered.connect(lambda _=False, path=p: self.open_path(path))
            self.recent_menu.addAction(act)
        self.recent_menu.setEnabled(bool(items))

    def import_matrix_dialog(self) -> None:
        targets = matrix_io.importable_targets(self.wb.scenario)
        target, ok = QInputDialog.getItem(
            self, "Import matrix", "Replace which matrix?", targets, 0, False
        )
        if not ok:
            return
        path, _ = QFileDialog.getOpenFileName(
            self, f"Import {target}", "", "Matrices (*.csv *.npy *.npz *.json)"
        )
        if path:
            self.import_matrix(target, Path(path))

    def import_matrix(self, target: str, path: Path) -> bool:
        """Replace ``target`` (e.g. 'X', 'Wq (head 1)') by the matrix in ``path``; undoable."""
        name, head = matrix_io.parse_target(target)
        try:
            expected = matrix_io.target_shape(self.wb.scenario, name, head)
            M = matrix_io.load_matrix(path, expected_shape=expected, name=target)
            after = set_matrix(self.wb.scenario, name, M, head=head)
        except (ScenarioError, ValueError) as exc:
            self._tell("Cannot import matrix", str(exc))
            return False
        self.wb.edit(after, f"Import {target} from {path.name}")
        return True

    def copy_json(self) -> None:
        sc = self.wb.snapshot()
        if scenario_numbers(sc) >= LARGE_SAVE_NUMBERS:
            self._large().copy(sc)
            return
        QGuiApplication.clipboard().setText(sc.dumps())
        self.statusBar().showMessage("Scenario copied as JSON", 4000)

    def paste_json(self) -> bool:
        """Replace the scenario by the one on the clipboard (one undoable edit). A long text is
        read in the background and pasted when read: True then means it was started."""
        text = QGuiApplication.clipboard().text()
        if len(text) >= LARGE_PASTE_CHARS:
            self._large().paste(text)
            return True
        try:
            sc = Scenario.loads(text, file="clipboard")
        except ScenarioError as exc:
            self._tell("Cannot paste scenario", str(exc))
            return False
        self.wb.edit(sc, f"Paste scenario {sc.name}")
        return True

    # ---- autosave and recovery ----------------------------------------------------------------
    def _schedule_autosave(self) -> None:
        """An edit: save after a quiet moment, and at the latest ``autosave_max_ms`` after the
        first change not yet saved, however the user keeps working (a long drag included)."""
        self._autosave.start()  # restarts: the quiet period
        if not self._autosave_deadline.isActive():
            self._autosave_deadline.start()

    def write_recovery(self) -> None:
        """Write the work as it is now to this window's recovery file, off the UI thread."""
        self._autosave.stop()
        self._autosave_deadline.stop()
        if not self.wb.dirty:
            return
        work = Work(self.wb.snapshot(), self.wb.path, self.wb.lab_states())
        self._recovery.write(work)

    def _on_recovery_written(self, error: str) -> None:
        pending = self._recovery.on_written()
        if error:
            if not self._autosave_failing:  # once, until a write works again: no dialog per edit
                self.statusBar().showMessage(
                    f"{error} Your work is not protected against a crash: save it with "
                    "File ▸ Save As.", 30000
                )  # fmt: skip
            self._autosave_failing = True
        elif self._autosave_failing:
            self._autosave_failing = False
            self.statusBar().showMessage("Autosave works again.", 5000)
        if pending is not None and self.wb.dirty:
            self._recovery.write(pending)

    @property
    def recovery_path(self) -> Path | None:
        """This window's recovery file (None before its first autosave)."""
        return self._recovery.file

    def clear_recovery(self) -> None:
        self._autosave.stop()
        self._autosave_deadline.stop()
        self._recovery.clear()

    def startup_problems(self) -> list[str]:
        """Check the files read at start-up; what was set aside, in sentences."""
        return home_problems() + check_settings()

    def offer_recovery(self) -> bool:
        """After a crash: offer the work of each window that is no longer running, newest
        first; True if one was restored. Bad recovery files are set aside and named."""
        scan = scan_orphans(own=self._recovery.slot_id)
        problems, self._startup_notes = self._startup_notes + scan.problems, []
        restored: Recovered | None = None
        left = 0
        for k, orphan in enumerate(scan.orphans):
            if restored is not None:
                orphan.release()  # kept for the next start
                left += 1
                continue
            rec = orphan.recovered
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.saved_at))
            where = f" (from {rec.path.name})" if rec.path else ""
            count = f" ({k + 1} of {len(scan.orphans)})" if len(scan.orphans) > 1 else ""
            question = (
                f"A window of attnsim did not close cleanly{count}. Restore its scenario "
                f"'{rec.scenario.name}'{where}, autosaved at {when}?"
            )
            if not self._ask("Restore unsaved work?", question):
                orphan.discard()
                continue
            self._restore(rec)
            self._recovery.adopt(orphan)
            restored = rec
        if restored is not None:
            if restored.lost_labs:
                problems.append(
                    "Restored the scenario; the settings of the "
                    + ", ".join(restored.lost_labs)
                    + " could not be restored and are back to their defaults."
                )
            if left:
                problems.append(
                    f"{left} more autosaved scenario{'s are' if left > 1 else ' is'} kept; "
                    "attnsim offers it again the next time it starts."
                )
        if problems:
            self.statusBar().showMessage(" ".join(problems), 30000)
        return restored is not None

    def _restore(self, rec: Recovered) -> None:
        self.wb.load(rec.scenario, rec.path)
        self.wb.restore_lab_states(rec.labs)
        self.wb.undo_stack.resetClean()  # restored work is unsaved work
        self._update_title()
