"""Lab states that stand apart from the scenario document (``IN_DOCUMENT = False``, as the Real
model panel's text and run): still undoable, but opening another scenario keeps them, editing
them does not mark the document modified, and a recovery file leaves them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from attnsim.engine import edits
from attnsim.model.commands import edits_document, in_document
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.real_model import RealModelState


@dataclass(frozen=True)
class Apart:
    IN_DOCUMENT: ClassVar[bool] = False
    text: str = "start"


@dataclass(frozen=True)
class Inside:
    n: int = 0


def a_document_edit(wb) -> None:
    wb.edit(edits.rename_token(wb.scenario, 0, "renamed"), "rename a token")


def test_the_real_model_panels_settings_are_outside_the_document():
    assert not in_document(RealModelState) and in_document(Inside)


def test_editing_a_lab_outside_the_document_leaves_it_unmodified(make_wb):
    wb = make_wb("river-bank")
    wb.set_lab_state(Apart("typed"), "text")
    assert not wb.dirty and wb.undo_stack.canUndo()
    wb.undo_stack.undo()
    assert wb.lab_state(Apart).text == "start" and not wb.dirty
    wb.undo_stack.redo()
    assert not wb.dirty
    with wb.compound("two texts"):
        wb.set_lab_state(Apart("one"), "one")
        wb.set_lab_state(Apart("two"), "two")
    assert not wb.dirty
    # a lab of the document, or the scenario itself, does mark it
    wb.set_lab_state(Inside(3), "n")
    assert wb.dirty
    wb.undo_stack.undo()
    assert not wb.dirty
    a_document_edit(wb)
    assert wb.dirty
    wb.set_lab_state(Apart("after"), "text")
    assert wb.dirty  # the edit before it still is unsaved


def test_a_mixed_step_and_undo_past_a_save_mark_the_document(make_wb, tmp_path):
    wb = make_wb("river-bank")
    with wb.compound("both"):
        wb.set_lab_state(Apart("x"), "text")
        a_document_edit(wb)
    assert wb.dirty and edits_document(wb.undo_stack.command(0))
    wb.mark_saved(tmp_path / "saved.json")
    assert not wb.dirty
    wb.set_lab_state(Apart("y"), "text")
    assert not wb.dirty
    wb.undo_stack.undo()
    wb.undo_stack.undo()  # back past the save: the document differs from the file
    assert wb.dirty


def test_opening_a_scenario_keeps_them_and_resets_the_documents_labs(make_wb):
    wb = make_wb("river-bank")
    wb.set_lab_state(Apart("typed"), "text")
    wb.set_lab_state(Inside(4), "n")
    changed = []
    wb.lab_changed.connect(lambda c: changed.append(c.kind))
    wb.load(resolve_scenario("routing-lab"))
    assert wb.lab_state(Apart).text == "typed" and wb.lab_state(Inside).n == 0
    assert changed == [Inside] and not wb.dirty


def test_a_recovery_file_keeps_only_the_documents_labs(make_wb):
    wb = make_wb("river-bank")
    wb.set_lab_state(Apart("typed"), "text")
    wb.set_lab_state(Inside(4), "n")
    assert wb.lab_states() == {Inside: Inside(4)}
