"""The Lessons panel as a learner uses it: start, predict, drag to pass a challenge, Hint,
Show me (one undo step), progress kept across a restart, and Leave restoring the learner's own
document exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnsim.engine import edits
from attnsim.lessons.progress import load_progress
from attnsim.panels.lessons import LessonsPanel
from attnsim.panels.lessons.panel import PROGRESS_FILE
from attnsim.panels.vectors import VectorEditorPanel

RIVER_LESSON = """
format = "attnsim-lesson"
version = 1
id = "river-drag"
title = "Pull bank toward river"

[[steps]]
title = "Drag river"
scenario = "river-bank"
text = "Drag river's tip up the water axis in the Vectors panel."

[steps.challenge]
goal = "Make bank take at least 0.45 of its weight from river."
checks = [{ quantity = "weight", of = "bank", on = "river", at_least = 0.45 }]
hints = ["Water is what bank's query asks about.", "Drag river to water 5."]
solution = [{ set = "vector", token = "river", value = [0, 5, 0, 0.2] }]

[[steps]]
title = "Guess a number"
text = "What now?"

[steps.predict]
question = "How much of bank's weight goes to itself now?"
number = { quantity = "weight", of = "bank", on = "bank" }
tolerance = 0.05
reveal = "The engine's number is below."
"""


def click(button) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    QApplication.processEvents()


@pytest.fixture
def learner(make_wb, show_panel, home, tmp_path):
    """A panel on a workbench with the learner's own document (a saved file, then one unsaved
    edit), its progress kept in a fresh home folder."""

    def make(wb=None):
        if wb is None:
            wb = make_wb("money-bank")
            wb.path = tmp_path / "mine.json"
            wb.undo_stack.setClean()
            wb.edit(edits.set_cell(wb.scenario, "x", 0, 0, 0.25), "my own edit")
        wb.home = home
        return show_panel(LessonsPanel(wb), size=(420, 640))

    return make


def lesson_file(tmp_path: Path, text: str = RIVER_LESSON) -> Path:
    path = tmp_path / "lesson.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_lesson_works_on_its_own_copy_and_leave_brings_the_learners_document_back(learner):
    panel = learner()
    wb = panel.wb
    mine, path, depth = wb.scenario, wb.path, wb.undo_stack.index()
    assert wb.dirty
    panel.start("mixing")
    assert wb.scenario.tokens == ("the", "river", "bank")
    assert "lesson" in wb.scenario.title
    assert wb.path is None  # Save asks where: the learner's file is never written over
    click(panel.page.next)
    click(panel.page.next)
    click(panel.page.challenge.show_me)
    assert not wb.scenario.equals(mine)
    click(panel.page.leave)
    assert wb.scenario.equals(mine) and wb.path == path and wb.dirty
    assert wb.undo_stack.index() == depth  # the learner's own edit is still the one to undo
    assert wb.undo_stack.undoText() == "my own edit"
    assert panel.stack.currentIndex() == 0


def screen_point(vectors: VectorEditorPanel, x: float, y: float):
    view = vectors.plane_view
    return view.mapFromScene(view.vb.mapViewToScene(QPointF(x, y)))


def test_a_drag_passes_the_challenge_exactly_when_the_weight_crosses_the_goal(
    learner, show_panel, tmp_path
):
    panel = learner()
    wb = panel.wb
    panel.open_file(lesson_file(tmp_path))
    vectors = show_panel(VectorEditorPanel(wb), size=(760, 520))
    vectors.plane_view.vb.setRange(xRange=(-1, 1), yRange=(-0.5, 6), padding=0)
    QApplication.processEvents()
    box = panel.page.challenge
    assert box.verdict.text() == "Not yet."
    vp = vectors.plane_view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     screen_point(vectors, 0.0, 1.0))  # fmt: skip
    seen = []
    for y in np.linspace(1.0, 5.5, 24)[1:]:
        QTest.mouseMove(vp, screen_point(vectors, 0.0, float(y)))
        QApplication.processEvents()
        panel.flush()
        weight = float(wb.result.heads[0].weights[2, 1])
        seen.append(weight)
        passed = weight >= 0.45
        assert box.verdict.text() in (("Passed!",) if passed else ("Not yet.",)), (y, weight)
        assert box.checks.text().startswith("✓" if passed else "○")
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       screen_point(vectors, 0.0, 5.5))  # fmt: skip
    assert min(seen) < 0.45 < max(seen)  # the drag crossed the goal on the way
    assert panel.progress.step("river-drag", 0).passed
    assert wb.undo_stack.undoText() != "" and "Show me" not in wb.undo_stack.undoText()


def test_show_me_passes_as_one_undo_step_and_is_recorded(learner, tmp_path):
    panel = learner()
    wb = panel.wb
    panel.open_file(lesson_file(tmp_path))
    before = wb.undo_stack.index()
    click(panel.page.challenge.show_me)
    assert wb.undo_stack.index() == before + 1
    assert panel.page.challenge.verdict.text() == "Passed with Show me."
    record = panel.progress.step("river-drag", 0)
    assert record.passed and record.shown
    wb.undo_stack.undo()
    panel.flush()
    assert panel.page.challenge.verdict.text() == "Passed before; not met now."


def test_hints_come_one_at_a_time_and_are_counted(learner, tmp_path):
    panel = learner()
    panel.open_file(lesson_file(tmp_path))
    box = panel.page.challenge
    assert not box.hints.isVisible()
    click(box.hint_button)
    assert box.hints.text() == "Hint 1: Water is what bank's query asks about."
    click(box.hint_button)
    assert "Hint 2: Drag river to water 5." in box.hints.text()
    assert not box.hint_button.isEnabled()
    assert panel.progress.step("river-drag", 0).hints == 2


def test_a_number_prediction_is_compared_with_the_engine_and_kept(learner, tmp_path):
    panel = learner()
    wb = panel.wb
    panel.open_file(lesson_file(tmp_path))
    click(panel.page.next)
    truth = float(wb.result.heads[0].weights[2, 2])
    box = panel.page.predict
    assert box.isVisible() and not box.reveal.isVisible()
    QTest.keyClicks(box.number, f"{truth + 0.2:.3f}")
    click(box.answer_button)
    assert "not within" in box.feedback.text()
    assert box.reveal.isVisible() and not box.answer_button.isEnabled()
    record = panel.progress.step("river-drag", 1)
    assert record.answer is not None and record.correct is False


def test_a_choice_prediction_reveals_after_the_answer(learner):
    panel = learner()
    panel.start("mixing", 3)  # "In the money bank, which coordinate ..."
    box = panel.page.predict
    assert [label.text() for label in box.choice_labels] == ["finance", "water", "structure"]
    QTest.mouseClick(box.choice_labels[0], Qt.MouseButton.LeftButton)  # a click on the words
    assert box.group.checkedId() == 0
    click(box.answer_button)
    assert box.feedback.text() == "You said 'finance': right."
    assert "Finance" in box.reveal.toPlainText()


def test_progress_survives_a_restart_and_reset_forgets_it(learner, make_wb, home):
    panel = learner()
    panel.start("mixing")
    QTest.keyClicks(panel.page.predict.number, "0.31")
    click(panel.page.predict.answer_button)
    click(panel.page.next)
    saved, problem = load_progress(home / PROGRESS_FILE)
    assert problem is None and saved.current("mixing") == 1
    assert saved.step("mixing", 0).correct is True
    again = learner(make_wb("river-bank"))  # a new window: the record comes from the file
    row = [lesson.id for lesson in again.lessons].index("mixing")
    again.listing.table.selectRow(row)
    assert again.listing.start.text() == "Continue at step 2"
    assert again.listing.table.item(row, 1).text().startswith("1 of ")
    click(again.listing.reset)
    assert load_progress(home / PROGRESS_FILE)[0].lessons == {}
    assert again.listing.start.text() == "Start"


def test_a_bad_progress_file_is_kept_aside_and_said(learner, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / PROGRESS_FILE).write_text("{not json", encoding="utf-8")
    panel = learner()
    assert "could not be read" in panel.listing.note.text()
    assert (home / (PROGRESS_FILE + ".bad")).read_text(encoding="utf-8") == "{not json"


def test_finish_on_the_last_step_leaves_the_lesson(learner, tmp_path):
    panel = learner()
    wb = panel.wb
    mine = wb.scenario
    panel.open_file(lesson_file(tmp_path))
    click(panel.page.next)
    assert panel.page.next.text() == "Finish"
    click(panel.page.next)
    assert panel.run is None and wb.scenario.equals(mine)


@pytest.mark.parametrize("lesson_id", ["sharpness", "routing", "real-heads"])
def test_every_step_fits_a_narrow_lesson_column(learner, lesson_id):
    # The column a lesson gets on a 1024-pixel screen is about 300 pixels wide: a long choice
    # or goal must wrap, not widen the page past it (the right side was cut off).
    panel = learner()
    panel.start(lesson_id, 0)
    for i in range(len(panel.run.lesson.steps)):
        panel.run.go(i)
        panel._show_step()
        QApplication.processEvents()
        assert panel.page.minimumSizeHint().width() <= 300, (lesson_id, i + 1)


def test_the_unsaved_document_is_kept_aside_while_a_lesson_runs(learner, home):
    # The autosave keeps the lesson's copy meanwhile: a crash must not lose the work before it.
    from attnsim.engine.scenario import Scenario
    from attnsim.panels.lessons.panel import KEPT_FILE

    panel = learner()
    mine = panel.wb.scenario
    panel.start("mixing")
    assert panel.keep_job.wait(30)  # written in the background: a large document takes seconds
    panel.keep_job.deliver()
    kept = home / KEPT_FILE
    assert Scenario.loads(kept.read_text(encoding="utf-8")).equals(mine)
    panel.leave()
    assert not kept.exists()


def test_a_new_questions_choices_replace_the_old_ones_at_once(learner):
    # The old choices stayed on screen under the new ones until the event loop deleted them.
    panel = learner()
    panel.start("sharpness", 0)
    first = list(panel.page.predict.choice_labels)
    panel.go(+4)  # step 5, another question with choices
    QApplication.processEvents()  # not the deferred deletes: processEvents never runs them
    box = panel.page.predict
    shown = [w for w in box.choices.findChildren(type(first[0])) if w.isVisible()]
    assert shown == box.choice_labels and not any(w in shown for w in first)


def test_a_figure_of_the_list_leaves_the_selected_row_selected(learner, tmp_path):
    from attnsim import export

    panel = learner()
    panel.listing.table.selectRow(2)
    export.write_figure(export.figure_of(panel, "figure"), tmp_path / "lessons.png")
    assert panel.listing.table.currentRow() == 2
    assert {i.row() for i in panel.listing.table.selectedItems()} == {2}


def test_leaving_before_the_document_is_written_aside_leaves_no_file(learner, home, monkeypatch):
    import time

    from attnsim.engine.scenario import Scenario
    from attnsim.panels.lessons.panel import KEPT_FILE

    slow = Scenario.dumps
    monkeypatch.setattr(Scenario, "dumps", lambda self: time.sleep(0.3) or slow(self))
    panel = learner()
    panel.start("mixing")
    panel.leave()  # while the background write is still going
    assert panel.keep_job.wait(30)
    assert not (home / KEPT_FILE).exists()
    assert not list(home.glob(".*.tmp"))


# a lesson that trains the induction lab's model, then removes a head
TRAIN_AND_BREAK = (Path(__file__).parent.parent / "lessons" / "train_and_break.toml").read_text(
    encoding="utf-8"
)


def test_train_in_the_lab_then_remove_a_head_to_pass(learner, show_panel, qtbot, tmp_path):
    from attnsim.panels.induction_lab import InductionLabPanel
    from attnsim.viewmodels.induction_lab import InductionLabState

    panel = learner()
    wb = panel.wb
    lab = show_panel(InductionLabPanel(wb), size=(1100, 800))
    assert lab.session is wb.induction  # one model, read by the lab and the lesson
    panel.open_file(lesson_file(tmp_path, TRAIN_AND_BREAK))
    verdict = panel.page.challenge.verdict
    assert verdict.text() == "Not yet."
    assert "the best induction score in layer 1 or later: 0.0" in panel.page.challenge.checks.text()
    # the learner presses Play in the lab and waits; the challenge passes as the head forms
    click(lab.controls.play_button)
    qtbot.waitUntil(lambda: verdict.text() == "Passed!", timeout=120_000)
    click(lab.controls.play_button)  # pause
    wb.induction.wait()
    assert wb.induction.step_count >= 200  # it takes a few hundred steps to form
    assert panel.progress.step("train-and-break", 0).passed

    click(panel.page.next)
    lab.flush()
    assert verdict.text() == "Not yet."
    before = wb.undo_stack.index()
    box = lab.heads.toggles[(1, 0)]
    QTest.mouseClick(box, Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    panel.flush()
    assert wb.lab_state(InductionLabState).ablated == ((1, 0),)
    assert verdict.text() == "Passed!"
    # a second head removed breaks the "one head" part of the goal
    QTest.mouseClick(lab.heads.toggles[(0, 0)], Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    panel.flush()
    assert verdict.text() == "Passed before; not met now."
    wb.undo_stack.setIndex(before)
    panel.flush()
    assert wb.lab_state(InductionLabState).ablated == ()
    # Show me removes the head as one undo step
    click(panel.page.challenge.show_me)
    assert wb.undo_stack.index() == before + 1
    assert wb.lab_state(InductionLabState).ablated == ((1, 0),)
    assert verdict.text() == "Passed with Show me."
    wb.undo_stack.undo()
    assert wb.lab_state(InductionLabState).ablated == ()


def test_show_me_trains_the_labs_model(learner, qtbot, tmp_path):
    panel = learner()
    wb = panel.wb
    panel.open_file(lesson_file(tmp_path, TRAIN_AND_BREAK))
    assert wb.induction.step_count == 0
    index = wb.undo_stack.index()
    click(panel.page.challenge.show_me)
    # training stays outside undo, as in the lab: nothing is pushed
    assert wb.undo_stack.index() == index
    qtbot.waitUntil(lambda: wb.induction.step_count >= 500, timeout=120_000)
    panel.flush()
    assert panel.page.challenge.verdict.text() == "Passed with Show me."
    assert panel.progress.step("train-and-break", 0).shown


def test_opened_in_steps_the_list_shows_the_shipped_lessons_in_their_order(make_wb, home):
    # The window opens the panel in steps (a lesson file a turn): once every part is built,
    # the list is the one shipped_lessons() gives, in its teaching order.
    from attnsim.lessons import shipped_lessons
    from attnsim.panels.base import parts_built_later

    wb = make_wb()
    wb.home = home
    with parts_built_later():
        stepped = LessonsPanel(wb)
    assert stepped.lessons == [] and stepped.listing.table.rowCount() == 0
    parts = 0
    while stepped.build_next_part():
        parts += 1
    shipped = shipped_lessons()
    assert parts == len(shipped) + 1  # one a file, then the list
    assert [x.id for x in stepped.lessons] == [x.id for x in shipped]
    table = stepped.listing.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == [
        LessonsPanel(wb).listing.table.item(r, 0).text() for r in range(len(shipped))
    ]
    stepped.deleteLater()
