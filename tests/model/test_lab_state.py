"""Typed lab states, compound edits, the last edit and memoised view-models on the workbench."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from attnsim.model.derived import DERIVED_LIMIT
from attnsim.model.workbench import LabChange, new_drag_id
from attnsim.resources import resolve_scenario as load_named


@dataclass(frozen=True)
class DemoState:
    temperature: float = 1.0
    d_k: int = 2


@dataclass(frozen=True)
class OtherState:
    on: bool = False


def test_lab_state_defaults_edits_and_undo_with_before_and_after(make_wb, qtbot):
    wb = make_wb("river-bank")
    assert wb.lab_state(DemoState) == DemoState()
    with qtbot.waitSignal(wb.lab_changed) as blocker:
        wb.set_lab_state(DemoState(temperature=2.0), "T = 2")
    assert blocker.args[0] == LabChange(DemoState, DemoState(), DemoState(temperature=2.0))
    assert wb.lab_state(DemoState).temperature == 2.0 and wb.undo_stack.count() == 1
    with qtbot.assertNotEmitted(wb.lab_changed):
        wb.set_lab_state(DemoState(temperature=2.0), "same")  # a no-op pushes nothing
    assert wb.undo_stack.count() == 1
    with qtbot.waitSignal(wb.lab_changed) as blocker:
        wb.undo_stack.undo()
    assert blocker.args[0].before.temperature == 2.0 and blocker.args[0].after == DemoState()
    assert wb.lab_state(DemoState) == DemoState()
    with pytest.raises(TypeError):
        wb.set_lab_state(DemoState, "a class is not a state")


def test_lab_drag_merges_and_a_return_to_start_leaves_nothing(make_wb):
    wb = make_wb("river-bank")
    drag = new_drag_id()
    for t in (1.5, 2.0, 3.0):
        wb.set_lab_state(DemoState(temperature=t), f"T {t}", drag=drag)
    assert wb.undo_stack.count() == 1 and wb.undo_stack.text(0) == "T 3.0"
    wb.set_lab_state(OtherState(on=True), "other", drag=drag)  # another lab does not merge
    assert wb.undo_stack.count() == 2
    drag = new_drag_id()
    wb.set_lab_state(DemoState(temperature=5.0), "T 5", drag=drag)
    wb.set_lab_state(DemoState(temperature=3.0), "T back", drag=drag)
    assert wb.undo_stack.count() == 2


def test_states_reset_when_another_document_loads(make_wb):
    wb = make_wb("river-bank")
    wb.set_lab_state(DemoState(d_k=8), "d_k")
    seen: list[LabChange] = []
    wb.lab_changed.connect(seen.append)
    wb.load(load_named("money-bank"))
    assert seen == [LabChange(DemoState, DemoState(d_k=8), DemoState())]
    assert wb.lab_state(DemoState) == DemoState() and wb.undo_stack.count() == 0


def test_compound_edit_is_one_undo_step(make_wb):
    wb = make_wb("river-bank")
    before = wb.scenario
    with wb.compound("both"):
        wb.set_lab_state(DemoState(d_k=4), "d_k")
        with wb.compound("inner"):
            wb.edit(wb.scenario.replace(temperature=3.0), "T")
    assert wb.undo_stack.count() == 1 and wb.undo_stack.text(0) == "both"
    wb.undo_stack.undo()
    assert wb.scenario.equals(before) and wb.lab_state(DemoState) == DemoState()
    with pytest.raises(RuntimeError), wb.compound("failing"):
        wb.set_lab_state(DemoState(d_k=5), "d_k")
        raise RuntimeError("the macro still closes")
    wb.set_lab_state(DemoState(d_k=6), "after")
    assert wb.undo_stack.text(wb.undo_stack.count() - 1) == "after"


def test_last_edit_says_what_made_the_current_state(make_wb):
    wb = make_wb("river-bank")
    assert wb.last_edit() is None
    start = wb.scenario
    wb.edit(start.replace(temperature=2.0), "T")
    last = wb.last_edit()
    assert last is not None and last.text == "T" and last.scenario_before is start
    wb.set_lab_state(DemoState(d_k=3), "lab")
    assert wb.last_edit().labs_before == {DemoState: DemoState()}
    with wb.compound("many"):
        wb.set_lab_state(OtherState(on=True), "other")
    last = wb.last_edit()
    assert last.text == "many" and last.scenario_before is None and not last.labs_before
    wb.undo_stack.undo()
    assert wb.last_edit().text == "lab"


def test_derived_is_computed_once_per_scenario(make_wb):
    wb = make_wb("river-bank")
    calls = []

    def total(wb):
        calls.append(wb.scenario)
        return float(wb.scenario.temperature) * 10

    def other(wb):
        return len(wb.result.heads)

    assert wb.derived(total) == wb.derived(total) == 10.0
    assert wb.derived(other) == len(wb.scenario.heads)
    assert len(calls) == 1
    wb.edit(wb.scenario.replace(temperature=2.0), "T")
    assert wb.derived(total) == 20.0 and len(calls) == 2
    wb.undo_stack.undo()
    assert wb.derived(total) == 10.0 and len(calls) == 3
    wb.load(load_named("money-bank"))
    wb.derived(total)
    assert len(calls) == 4 and calls[-1] is wb.scenario


def test_derived_with_a_lab_is_kept_for_its_state_and_redone_after_an_edit_and_undo(make_wb):
    wb = make_wb("river-bank")
    calls: list[DemoState] = []

    def scaled(wb):
        st = wb.lab_state(DemoState)
        calls.append(st)
        return float(wb.scenario.temperature) * st.temperature

    assert wb.derived(scaled, lab=DemoState) == wb.derived(scaled, lab=DemoState) == 1.0
    assert len(calls) == 1  # a hit for the same state
    wb.set_lab_state(DemoState(temperature=3.0), "T = 3")
    assert wb.derived(scaled, lab=DemoState) == pytest.approx(3.0, abs=1e-12)
    assert len(calls) == 2 and calls[-1].temperature == 3.0
    assert wb.derived(scaled, lab=DemoState) == pytest.approx(3.0, abs=1e-12) and len(calls) == 2
    wb.undo_stack.undo()
    assert wb.derived(scaled, lab=DemoState) == 1.0 and len(calls) == 3
    wb.undo_stack.redo()
    assert wb.derived(scaled, lab=DemoState) == pytest.approx(3.0, abs=1e-12)
    assert len(calls) == 4
    wb.set_lab_state(OtherState(on=True), "another lab")  # not read: still a hit
    assert wb.derived(scaled, lab=DemoState) == pytest.approx(3.0, abs=1e-12)
    assert len(calls) == 4
    wb.edit(wb.scenario.replace(temperature=2.0), "scenario T")
    assert wb.derived(scaled, lab=DemoState) == pytest.approx(6.0, abs=1e-12)
    assert len(calls) == 5


def test_derived_on_some_fields_ignores_the_others_and_lets_go_of_old_results(make_wb):
    wb = make_wb("river-bank")
    calls: list[int] = []

    def by_dk(wb):
        calls.append(wb.lab_state(DemoState).d_k)
        return [wb.lab_state(DemoState).d_k]

    first = wb.derived(by_dk, lab=DemoState, fields=("d_k",))
    wb.set_lab_state(DemoState(temperature=5.0), "T only")
    assert wb.derived(by_dk, lab=DemoState, fields=("d_k",)) is first and calls == [2]
    wb.set_lab_state(DemoState(temperature=5.0, d_k=4), "d_k")
    # the lab edit itself dropped the result made from d_k = 2
    assert by_dk not in wb._derived
    assert wb.derived(by_dk, lab=DemoState, fields=("d_k",)) == [4] and calls == [2, 4]


def test_derived_depends_on_the_focused_head_and_never_survives_a_load(make_wb):
    wb = make_wb("two-heads")
    heads: list[int] = []

    def focused(wb):
        heads.append(wb.focused_head)
        return wb.trace

    assert wb.derived(focused) is wb.result.heads[0]
    wb.set_focused_head(1)
    assert wb.derived(focused) is wb.result.heads[1] and heads == [0, 1]
    wb.set_lab_state(DemoState(d_k=7), "lab")
    kept = wb.lab_state(DemoState)
    assert wb.derived(lambda wb: wb.lab_state(DemoState), lab=DemoState) is kept
    same = wb.scenario
    wb.load(same)  # the same scenario object opened again: the lab states are reset
    assert wb.derived(focused) is wb.result.heads[0] and heads == [0, 1, 0]
    assert wb.derived(lambda wb: wb.lab_state(DemoState), lab=DemoState) == DemoState()


def test_derived_keeps_at_most_its_limit_of_results(make_wb):
    wb = make_wb("river-bank")
    fns = [lambda wb, i=i: i for i in range(DERIVED_LIMIT + 10)]
    assert [wb.derived(fn) for fn in fns] == list(range(DERIVED_LIMIT + 10))
    assert len(wb._derived) == DERIVED_LIMIT
    assert fns[0] not in wb._derived and fns[-1] in wb._derived


def test_training_session_is_owned_by_the_workbench(make_wb):
    wb = make_wb("river-bank")
    session = wb.training
    assert session is wb.training and session.parent() is wb
    session.play()
    wb.close()
    assert not session.running


def test_derived_soon_works_in_the_background_on_the_state_it_started_from(make_wb, qtbot):
    import threading

    wb = make_wb("river-bank")
    gate = threading.Event()
    seen: list[tuple[float, float, str]] = []

    def slow(w):
        gate.wait(5.0)  # held until the test has edited the live workbench
        st = w.lab_state(DemoState)
        seen.append(
            (float(w.scenario.temperature), st.temperature, threading.current_thread().name)
        )
        return float(w.scenario.temperature) * st.temperature

    wb.set_lab_state(DemoState(temperature=3.0), "T = 3")
    arrived: list[int] = []
    assert wb.derived_soon(slow, lab=DemoState, then=lambda: arrived.append(1)) is None
    assert wb.derived_pending(slow)
    # asking again for the same state starts nothing new
    assert wb.derived_soon(slow, lab=DemoState, then=lambda: arrived.append(2)) is None
    gate.set()
    qtbot.waitUntil(lambda: arrived == [1], timeout=5000)
    assert not wb.derived_pending(slow)
    assert seen[0][:2] == (1.0, 3.0) and seen[0][2] != threading.current_thread().name
    # kept as derived() keeps its own: no second run, and derived_soon returns it at once
    assert wb.derived(slow, lab=DemoState) == pytest.approx(3.0, abs=1e-12) and len(seen) == 1
    assert wb.derived_soon(slow, lab=DemoState, then=lambda: None) == pytest.approx(3.0)


def test_a_background_result_for_a_state_changed_meanwhile_is_dropped(make_wb, qtbot):
    import threading

    wb = make_wb("river-bank")
    gate = threading.Event()

    def slow(w):
        gate.wait(5.0)
        return float(w.scenario.temperature)

    arrived: list[int] = []
    wb.derived_soon(slow, then=lambda: arrived.append(1))
    wb.edit(wb.scenario.replace(temperature=2.0), "T = 2")  # while the first run waits
    gate.set()
    qtbot.waitUntil(lambda: not wb.derived_pending(slow), timeout=5000)
    qtbot.wait(50)
    assert arrived == [] and not wb.derived_ready(slow)  # the old state's result is not kept
    wb.derived_soon(slow, then=lambda: arrived.append(2))
    qtbot.waitUntil(lambda: arrived == [2], timeout=5000)
    assert wb.derived(slow) == 2.0
