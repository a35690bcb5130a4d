"""The Lessons panel: the list of lessons with the learner's progress, then one step at a time.

A lesson works on its own copy: its steps open as untitled documents through the undo stack
(Save asks where, so the learner's file is never written over), and Leave lesson moves the undo
stack back to where it was when the lesson started, which brings back the learner's document,
its file name and its saved or unsaved state exactly. Every edit a step makes (its start,
a reveal, Show me) is one undoable step. Challenges are checked on every change of the
workbench; progress is saved to the app's home folder on every answer, pass and hint.
"""

from __future__ import annotations

import html
import threading
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

from attnsim.engine.scenario import ScenarioError
from attnsim.lessons import Lesson, check_file, preset, read_lesson
from attnsim.lessons.edits import LAB_EDITS
from attnsim.lessons.progress import KEPT_FILE, PROGRESS_FILE, Progress, load_progress
from attnsim.lessons.session import LessonRun
from attnsim.model.runner import Job
from attnsim.model.workbench import Workbench
from attnsim.resources import resource_path

from ..base import Panel
from ..widgets import scrolling
from .lab_link import LabLink
from .list_page import ListPage
from .step_page import MISS_STYLE, PASS_STYLE, StepPage

KEEP_JOB = "lessons.keep_document"


def _lesson_files() -> list[Path]:
    """The shipped lessons' files (those ``attnsim.lessons.shipped_lessons`` reads)."""
    return sorted(resource_path("lessons").glob("*.toml"))


class LessonsPanel(Panel):
    """Guided, graded lessons over the other panels."""

    panel_id = "lessons"
    title = "Lessons"
    # A lesson started or left (the window gives the lesson a column of its own meanwhile).
    running_changed = Signal(bool)

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        home = workbench.home
        self.progress, self.progress_note = (
            load_progress(Path(home) / PROGRESS_FILE) if home is not None else (Progress(), None)
        )
        self.lessons: list[Lesson] = []
        self.run: LessonRun | None = None
        self._start_index = 0  # the undo stack's index when the lesson started
        self._start_documents = 0
        self._kept_lock = threading.Lock()
        self._kept_token: object | None = None
        self.keep_job: Job | None = None
        self.labs = LabLink(workbench)
        self.listing = ListPage()
        self.listing.start_clicked.connect(self.start)
        self.listing.reset_clicked.connect(self.reset_progress)
        self.page = StepPage()
        self.page.back_clicked.connect(lambda: self.go(-1))
        self.page.next_clicked.connect(lambda: self.go(+1))
        self.page.leave_clicked.connect(self.leave)
        self.page.predict.answered.connect(self.answer)
        self.page.challenge.hint_clicked.connect(self.hint)
        self.page.challenge.show_me_clicked.connect(self.show_me)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.listing)
        self.stack.addWidget(scrolling(self.page))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
        # The shipped lessons are read one file a part (Panel.build_later): all ten in one
        # turn held the window about 50 ms when the window opens the panel in steps.
        for path in _lesson_files():
            self.build_later(lambda path=path: self.lessons.append(read_lesson(path)))
        self.build_later(self._list_lessons)

    def _list_lessons(self) -> None:
        """The lessons read, in their teaching order (as ``shipped_lessons`` gives them), in
        the list with the learner's progress."""
        self.lessons.sort(key=lambda lesson: (lesson.order, lesson.id))
        self.listing.show_lessons(self.lessons, self.progress)
        if self.progress_note:
            self.listing.note.setText(self.progress_note)

    # ---- lessons ------------------------------------------------------------------------------
    def open_file(self, path: str | Path) -> Lesson:
        """Read and check a lesson file and start it; LessonError (nothing changes) if it is
        not a usable lesson."""
        lesson, _ = check_file(path)
        self.lessons = [x for x in self.lessons if x.id != lesson.id] + [lesson]
        self.listing.show_lessons(self.lessons, self.progress)
        self.start(lesson)
        return lesson

    def lesson(self, lesson_id: str) -> Lesson:
        return next(x for x in self.lessons if x.id == lesson_id)

    def start(self, lesson: Lesson | str, index: int | None = None) -> None:
        """Begin (or continue, at the step recorded) ``lesson``."""
        if isinstance(lesson, str):
            lesson = self.lesson(lesson)
        if self.run is None:
            self._start_index = self.wb.undo_stack.index()
            self._start_documents = self.wb.documents_opened
            self._keep_document()
        self.run = LessonRun(lesson, self.progress, index)
        self.stack.setCurrentIndex(1)
        self.running_changed.emit(True)
        self._enter_step()

    def go(self, delta: int) -> None:
        run = self.run
        if run is None:
            return
        if run.index + delta >= len(run.lesson.steps):  # Finish
            title = run.lesson.title
            self.leave()
            self.wb.say(f"Lesson finished: {title}. Your own document is back.")
            return
        run.go(run.index + delta)
        self._enter_step()

    def leave(self) -> None:
        """Back to the list, and to the learner's own document as it was before the lesson."""
        if self.run is None:
            return
        self.run = None
        if self.wb.documents_opened == self._start_documents:
            # the lesson's steps are on the undo stack after the learner's own: step back
            self.wb.undo_stack.setIndex(min(self._start_index, self.wb.undo_stack.count()))
        self._forget_kept()
        self.stack.setCurrentIndex(0)
        self.listing.show_lessons(self.lessons, self.progress)
        self.running_changed.emit(False)

    def _kept_path(self) -> Path:
        assert self.wb.home is not None
        return Path(self.wb.home) / KEPT_FILE

    def _keep_document(self) -> None:
        """Write the learner's unsaved document beside the progress (removed on Leave), in the
        background: a large document takes seconds to write (n = 4,096, d = 256: 23 MB, 1 s)."""
        if self.wb.home is None or not self.wb.dirty:
            return
        target, scenario = self._kept_path(), self.wb.scenario  # a scenario never changes
        token = self._kept_token = object()

        def write(progress, cancelled) -> None:
            tmp = target.with_name(f".{target.name}.tmp")
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(scenario.dumps(), encoding="utf-8")
            with self._kept_lock:  # a lesson left meanwhile wants no file left behind
                if self._kept_token is token:
                    tmp.replace(target)
                else:
                    tmp.unlink(missing_ok=True)

        self.keep_job = self.wb.run(write, key=KEEP_JOB)
        self.keep_job.failed.connect(
            lambda why: self.wb.say(f"Your unsaved document could not be kept aside ({why}).")
        )

    def _forget_kept(self) -> None:
        with self._kept_lock:
            self._kept_token = None
            if self.wb.home is not None:
                self._kept_path().unlink(missing_ok=True)

    def reset_progress(self) -> None:
        self.progress.reset()
        self.listing.show_lessons(self.lessons, self.progress)
        self.wb.say("Lesson progress reset: every lesson starts afresh.")

    def _hidden_in_shown_window(self) -> bool:
        # a challenge is checked (and a pass recorded) even while the panel is behind a tab
        return self.run is None and super()._hidden_in_shown_window()

    # ---- one step -----------------------------------------------------------------------------
    def _enter_step(self) -> None:
        run = self.run
        assert run is not None
        step = run.step
        text = f"Lesson: {step.title}"
        try:
            with self.labs.one_step(step.setup, text):
                if step.scenario is not None:
                    sc = run.start_state(self.wb.scenario, preset(step.scenario))
                    title = f"{sc.title or sc.name} (lesson: {run.lesson.title})"
                    self.wb.replace_document(sc.replace(title=title[:200]), text)
                elif any(e.set not in LAB_EDITS for e in step.setup):
                    self.wb.edit(run.start_state(self.wb.scenario, None), text)
                self.labs.apply(step.setup, text)
        except (ScenarioError, ValueError, OSError) as exc:
            self.refuse(exc)
        if run.reads_labs():
            self.labs.follow(self.schedule_refresh)
        if step.highlight is not None:
            self.wb.want_panels((step.highlight[0], *step.panels))
            self.wb.want_control(*step.highlight)
        else:
            self.wb.want_panels(step.panels)
        self._show_step()

    def _show_step(self) -> None:
        run = self.run
        assert run is not None
        step, record, page = run.step, run.record, self.page
        page.heading.setText(run.heading())
        page.text.set_markdown(step.text)
        pr = step.predict
        page.predict.setVisible(pr is not None)
        if pr is not None:
            page.predict.show_question(pr.question, pr.choices)
            feedback = ""
            if record.answer is not None:
                feedback = (
                    f"Your answer: {record.answer} ({'right' if record.correct else 'not quite'})."
                )
            page.predict.show_answer(feedback, record.correct, pr.reveal)
        ch = step.challenge
        page.challenge.setVisible(ch is not None)
        if ch is not None:
            page.challenge.goal.setText(ch.goal)
            self._show_hints()
        page.back.setEnabled(run.index > 0)
        last = run.index == len(run.lesson.steps) - 1
        page.next.setText("Finish" if last else "Next")
        self.schedule_refresh()
        self.flush()

    def _show_hints(self) -> None:
        assert self.run is not None
        box, ch = self.page.challenge, self.run.step.challenge
        assert ch is not None
        read = self.run.hints_read()
        box.hints.setText("\n".join(f"Hint {n}: {h}" for n, h in enumerate(read, 1)))
        box.hints.setVisible(bool(read))
        box.hint_button.setEnabled(len(read) < len(ch.hints))
        box.hint_button.setVisible(bool(ch.hints))

    def refresh(self) -> None:
        """Check the challenge on the current state."""
        run = self.run
        if run is None:
            return
        labs = self.labs.values if run.reads_labs() else dict
        status = run.status(self.wb.scenario, self.wb.result, labs)
        if status is None:
            return
        box = self.page.challenge
        if status.unreadable:
            box.checks.setText(html.escape(status.unreadable))
        else:
            box.checks.setText(
                "<br>".join(
                    f"{'✓' if line.ok else '○'} {html.escape(line.text)}" for line in status.lines
                )
            )
        if status.passed:
            first = run.record_pass()
            box.verdict.setText("Passed with Show me." if run.record.shown else "Passed!")
            box.verdict.setStyleSheet(PASS_STYLE)
            if first:
                self.wb.say(f"Challenge passed: {run.step.challenge.goal}")  # type: ignore[union-attr]
        else:
            was = run.record.passed
            box.verdict.setText("Passed before; not met now." if was else "Not yet.")
            box.verdict.setStyleSheet(MISS_STYLE)

    # ---- the learner's actions ----------------------------------------------------------------
    def answer(self, given: object) -> None:
        run = self.run
        if run is None or run.step.predict is None or run.record.answer is not None:
            return
        show, text = run.step.predict.show, f"Lesson: reveal ({run.step.title})"
        try:
            revealed = run.reveal_state(self.wb.scenario)
            with self.labs.one_step(show, text):
                if any(e.set not in LAB_EDITS for e in show):
                    self.wb.edit(revealed, text)
                self.labs.apply(show, text)
            labs = self.labs.values if run.reads_labs() else dict
            answer = run.answer(given, self.wb.scenario, self.wb.result, labs)  # type: ignore[arg-type]
        except (ScenarioError, ValueError) as exc:
            self.page.predict.feedback.setText(str(exc))
            self.page.predict.feedback.setVisible(True)
            return
        self.page.predict.show_answer(answer.text, answer.correct, run.step.predict.reveal)
        self.flush()

    def hint(self) -> None:
        if self.run is not None and self.run.next_hint() is not None:
            self._show_hints()

    def show_me(self) -> None:
        run = self.run
        if run is None or run.step.challenge is None:
            return
        solution, text = run.step.challenge.solution, f"Show me: {run.step.title}"
        with self.labs.one_step(solution, text):
            if self.propose(lambda: run.solution(self.wb.scenario), text):
                try:
                    self.labs.apply(solution, text)
                except ValueError as exc:
                    self.show_refusal(self.refuse(exc))

    # ---- figures ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        if self.run is None:
            return [self.listing.table]
        return [self.page.heading, self.page.text]
