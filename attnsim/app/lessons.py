"""The window's side of the lessons: Help ▸ Lessons, File ▸ Open lesson…, the first start's
offer of the first lesson, the panels a step wants brought to the front, and a column of its
own for the Lessons panel while a lesson runs (so that the panels it points at are never
hidden behind it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QWidget,
)

from attnsim.model.workbench import Workbench

from .home import app_home, settings

if TYPE_CHECKING:
    from attnsim.panels.lessons import LessonsPanel

    _Base = QMainWindow
else:
    _Base = object

LESSONS = "lessons"
OFFERED_KEY = "lessons/offered"
OUTLINE = "outline: 3px solid #e07000; border: 3px solid #e07000; border-radius: 3px;"
OUTLINE_MS = 4000


def _words(w: QWidget) -> str:
    text = w.text() if isinstance(w, QAbstractButton | QLabel) else ""
    return " ".join(text.replace("&", "").split()).casefold()


def control_named(panel: QWidget, words: str) -> QWidget | None:
    """The visible button or label in ``panel`` whose text contains ``words`` (a label's
    buddy, the control it names, when it has one)."""
    want = " ".join(words.split()).casefold()
    for w in panel.findChildren(QWidget):
        if isinstance(w, QAbstractButton | QLabel) and w.isVisibleTo(panel) and want in _words(w):
            buddy = w.buddy() if isinstance(w, QLabel) else None
            return buddy or w
    return None


def outline(w: QWidget) -> None:
    """An orange outline around ``w`` for OUTLINE_MS, then its own style back."""
    if w.property("lessonOutline"):
        return
    before = w.styleSheet()
    w.setProperty("lessonOutline", True)
    w.setStyleSheet(before + OUTLINE)

    def restore() -> None:
        w.setStyleSheet(before)
        w.setProperty("lessonOutline", False)

    QTimer.singleShot(OUTLINE_MS, w, restore)


class LessonsMixin(_Base):
    """The MainWindow's lesson actions."""

    wb: Workbench
    docks: dict[str, QDockWidget]

    def _build_lessons(self, file_menu, help_menu) -> None:
        self.wb.panels_wanted.connect(self.bring_forward)
        self.wb.control_wanted.connect(self.point_at)
        if LESSONS not in self.docks:
            return
        act = self._action(
            help_menu, "&Lessons", self.show_lessons, None, "Guided lessons, checked as you go"
        )
        help_menu.insertAction(help_menu.actions()[0], act)
        open_act = self._action(file_menu, "Open &lesson…", self.open_lesson_dialog)
        file_menu.insertAction(file_menu.actions()[1], open_act)

    def lessons_panel(self) -> LessonsPanel:
        panel = self.panels[LESSONS]
        if not getattr(panel, "_window_hooked", False):
            panel.running_changed.connect(self._lesson_running)
            panel._window_hooked = True
        return panel

    def show_lessons(self) -> None:
        self.lessons_panel()
        self.bring_forward((LESSONS,))

    def bring_forward(self, panel_ids: tuple[str, ...]) -> None:
        """Show these panels' docks and put their tabs in front (the first named last, so that
        of two panels sharing a tab group the first is the one in front)."""
        for pid in reversed(panel_ids):
            dock = self.docks.get(pid)
            if dock is None:
                continue
            dock.show()
            dock.raise_()

    def point_at(self, panel_id: str, words: str) -> QWidget | None:
        """Outline, for a few seconds, the control of ``panel_id`` whose words (its own text,
        or a label's beside it) contain ``words``; the control, or None if there is none."""
        if panel_id not in self.docks:
            return None
        found = control_named(self.panels[panel_id], words)
        if found is not None:
            outline(found)
        return found

    def open_lesson(self, path: str | Path) -> bool:
        """Start the lesson in ``path`` (or the shipped lesson of that id); a file that is not
        a usable lesson is refused in the status bar with what is wrong, and nothing changes."""
        from attnsim.lessons import LessonError

        panel = self.lessons_panel()
        try:
            if str(path) in {lesson.id for lesson in panel.lessons}:
                panel.start(str(path))
            else:
                panel.open_file(path)
        except LessonError as exc:
            self.statusBar().showMessage(f"Refused: {exc}", 15000)
            return False
        self.bring_forward((LESSONS,))
        return True

    def open_lesson_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open lesson", "", "Lessons (*.toml)")
        if path:
            self.open_lesson(path)

    def _lesson_running(self, running: bool) -> None:
        """A column of its own on the right while a lesson runs; back among its tabs after."""
        dock = self.docks[LESSONS]
        if running:
            home = self.tabifiedDockWidgets(dock)
            if not home:
                return  # already on its own (or moved there by the user)
            room = self._available().width()
            self.addDockWidget(
                Qt.DockWidgetArea.RightDockWidgetArea, dock, Qt.Orientation.Horizontal
            )
            if self.minimumSizeHint().width() > room:
                # no room for a column on this screen (QT_SCALE_FACTOR=2 on 1600 pixels):
                # the lesson stays a tab, and the window stays on the screen
                self.tabifyDockWidget(home[0], dock)
            else:
                width = max(300, min(420, self.width() // 4))
                self.resizeDocks([dock], [width], Qt.Orientation.Horizontal)
        else:
            home = self.docks.get("vectors")
            if home is not None and dock not in self.tabifiedDockWidgets(home):
                self.tabifyDockWidget(home, dock)
        dock.show()
        dock.raise_()

    def offer_first_lesson(self) -> None:
        """The first start ever: the Lessons panel in front, and a sentence saying so. After a
        crash in the middle of a lesson: where the learner's document from before it is."""
        if LESSONS not in self.docks:
            return
        from attnsim.lessons.progress import KEPT_FILE

        kept = app_home() / KEPT_FILE
        if kept.is_file():
            self.statusBar().showMessage(
                "attnsim stopped during a lesson: your unsaved document from before it is kept "
                f"in {kept}; open it with File ▸ Open.",
                60000,
            )
            return
        store = settings()
        if store.value(OFFERED_KEY, False, type=bool):
            return
        store.setValue(OFFERED_KEY, True)
        self.bring_forward((LESSONS,))
        self.statusBar().showMessage(
            "New to attention? The Lessons tab starts with Mixing: how bank gathers from river.",
            20000,
        )
