"""The workbench: signals once per change, none for a no-op; undo/redo restore exact arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from attnsim.engine import edits
from attnsim.engine.scenario import ScenarioError
from attnsim.model.commands import EditCommand
from attnsim.model.workbench import MATRICES, OPTIONS, VECTORS, new_drag_id


def count(signal):
    seen = []
    signal.connect(lambda *a: seen.append(a))
    return seen


def test_one_signal_per_edit_and_none_for_a_no_op(make_wb):
    wb = make_wb("river-bank")
    seen = count(wb.changed)
    wb.edit(edits.set_vector(wb.scenario, "x", 1, [0.0, 0.9, 0.0, 0.2]), "move river")
    assert len(seen) == 1 and seen[0][0] == frozenset({VECTORS})
    wb.edit(wb.scenario.replace(), "nothing")  # an equal scenario: no command, no signal
    wb.edit(edits.set_vector(wb.scenario, "x", 1, [0.0, 0.9, 0.0, 0.2]), "same again")
    assert len(seen) == 1
    assert wb.undo_stack.count() == 1


def test_aspects_of_changes(make_wb):
    wb = make_wb("river-bank")
    seen = count(wb.changed)
    wb.edit(wb.scenario.replace(temperature=2.0), "T")
    wb.edit(edits.set_head_matrix(wb.scenario, 0, "Wq", np.zeros((4, 4))), "Wq")
    assert [s[0] for s in seen] == [frozenset({OPTIONS}), frozenset({MATRICES})]


def test_results_follow_edits_and_are_computed_once(make_wb, monkeypatch):
    wb = make_wb("river-bank")
    import attnsim.model.workbench as mod

    calls = []
    real = mod.compute
    monkeypatch.setattr(mod, "compute", lambda sc: calls.append(1) or real(sc))
    _ = wb.result, wb.trace, wb.result
    assert len(calls) == 1
    wb.edit(wb.scenario.replace(temperature=0.5), "T")
    w = wb.trace.weights
    assert len(calls) == 2
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_drag_merges_into_one_undo_step(make_wb):
    wb = make_wb("river-bank")
    start = wb.scenario
    drag = new_drag_id()
    for t in np.linspace(0, 1, 25):
        wb.edit(edits.set_vector(wb.scenario, "x", 2, [0.5 + t, 0.5, 0.8, 0.2]), "drag", drag=drag)
    assert wb.undo_stack.count() == 1
    end = wb.scenario
    wb.undo_stack.undo()
    assert wb.scenario is start
    wb.undo_stack.redo()
    assert wb.scenario.equals(end)
    # a second drag is a second step
    wb.edit(edits.set_vector(wb.scenario, "x", 2, [0.0, 0.5, 0.8, 0.2]), "drag", drag=new_drag_id())
    assert wb.undo_stack.count() == 2


def test_drag_back_to_the_start_leaves_nothing_to_undo(make_wb):
    wb = make_wb("river-bank")
    drag = new_drag_id()
    orig = wb.scenario.X[2].copy()
    wb.edit(edits.set_vector(wb.scenario, "x", 2, orig + 0.3), "drag", drag=drag)
    wb.edit(edits.set_vector(wb.scenario, "x", 2, orig), "drag", drag=drag)
    assert wb.undo_stack.count() == 0
    assert not wb.dirty


def test_hundred_random_edits_round_trip_exactly(make_wb):
    rng = np.random.default_rng(5)
    wb = make_wb("two-heads")
    history = [wb.scenario]
    for step in range(100):
        sc = wb.scenario
        kind = rng.integers(0, 6)
        if kind == 0:
            sc2 = edits.set_vector(sc, "x", int(rng.integers(sc.n_tokens)), rng.normal(size=sc.d))
        elif kind == 1:
            h = int(rng.integers(len(sc.heads)))
            which = ["Wq", "Wk", "Wv"][int(rng.integers(3))]
            sc2 = edits.set_head_matrix(
                sc, h, which, rng.normal(size=getattr(sc.heads[h], which).shape)
            )
        elif kind == 2:
            sc2 = sc.replace(temperature=float(rng.uniform(0.1, 5)))
        elif kind == 3:
            sc2 = sc.replace(
                mask=["none", "causal"][int(rng.integers(2))], scale=bool(rng.integers(2))
            )
        elif kind == 4:
            sc2 = (
                edits.add_token(sc, f"t{step}", rng.normal(size=sc.d))
                if sc.n_tokens < 8
                else edits.remove_token(sc, 0)
            )
        else:
            sc2 = edits.set_matrix(sc, "Wo", rng.normal(size=sc.Wo.shape))
        before = wb.undo_stack.count()
        wb.edit(sc2, f"edit {step}")
        if wb.undo_stack.count() > before:  # an edit to equal values is dropped, as it should be
            history.append(wb.scenario)
        else:
            assert sc2.equals(history[-1])
    assert wb.undo_stack.count() == len(history) - 1 >= 90
    for expected in reversed(history[:-1]):
        wb.undo_stack.undo()
        assert wb.scenario.equals(expected)
        assert wb.scenario is expected
    for expected in history[1:]:
        wb.undo_stack.redo()
        assert wb.scenario is expected


def test_refused_edit_changes_nothing(make_wb):
    wb = make_wb("river-bank")
    seen = count(wb.changed)
    before = wb.scenario
    with pytest.raises(ScenarioError, match="finite"):
        wb.edit(edits.set_vector(wb.scenario, "x", 0, [np.nan, 0, 0, 1]), "bad")
    with pytest.raises(ScenarioError, match="no key left"):
        sc = wb.scenario.replace(mask="causal")
        edits.set_mask_cell(sc, 0, 0, False)
    assert wb.scenario is before and seen == [] and wb.undo_stack.count() == 0


def test_selection_is_part_of_the_workbench(make_wb):
    wb = make_wb("river-bank")
    sel = count(wb.selection_changed)
    assert wb.receiving == 2
    wb.set_receiving(0)
    wb.set_receiving(0)
    assert wb.receiving == 0 and len(sel) == 1
    wb.set_focused_key(1)
    assert wb.focused_key == 1
    with pytest.raises(IndexError):
        wb.set_receiving(3)
    assert wb.snapshot().receiving == 0
    # removing tokens clamps the selection
    wb.set_receiving(2)
    wb.edit(edits.remove_token(wb.scenario, 2), "remove bank")
    assert wb.receiving == 1


def test_focused_head_picks_the_trace(make_wb):
    wb = make_wb("two-heads")
    w0 = wb.trace.weights.copy()
    wb.set_focused_head(1)
    assert not np.allclose(wb.trace.weights, w0)
    assert wb.trace is wb.result.heads[1]


def test_load_starts_a_new_history(make_wb):
    from attnsim.resources import resolve_scenario

    wb = make_wb("river-bank")
    wb.edit(wb.scenario.replace(temperature=3.0), "T")
    assert wb.dirty
    seen = count(wb.changed)
    wb.load(resolve_scenario("eiffel-raw"))
    assert not wb.dirty and wb.undo_stack.count() == 0 and len(seen) == 1
    assert wb.scenario.name == "eiffel-raw" and wb.receiving == 2


def test_edit_command_signals_via_qtbot(make_wb, qtbot):
    wb = make_wb("river-bank")
    with qtbot.waitSignal(wb.changed, timeout=1000) as blocker:
        wb.push(EditCommand(wb, wb.scenario.replace(scale=False), "scale off"))
    assert blocker.args == [frozenset({OPTIONS})]
    with qtbot.waitSignal(wb.changed, timeout=1000):
        wb.undo_stack.undo()
    assert wb.scenario.scale is True


def test_model_imports_no_widgets(modules_loaded_by):
    loaded = modules_loaded_by("attnsim.model.workbench, attnsim.model.commands")
    bad = [m for m in loaded if m.startswith(("PySide6.QtWidgets", "pyqtgraph"))]
    assert not bad, bad


@dataclass(frozen=True)
class Sandbox:
    a: np.ndarray | None = None
    d: int | None = None


def test_lab_states_are_undoable_and_drags_merge(make_wb):
    wb = make_wb("river-bank")
    seen = count(wb.lab_changed)
    wb.set_lab_state(Sandbox(a=np.array([1.0, 0.0])), "set a")
    wb.set_lab_state(Sandbox(a=np.array([1.0, 0.0])), "same a")  # no-op
    drag = new_drag_id()
    for x in (2.0, 3.0, 4.0):
        wb.set_lab_state(Sandbox(a=np.array([x, 0.0])), "drag a", drag=drag)
    assert wb.undo_stack.count() == 2 and len(seen) == 4
    assert wb.lab_state(Sandbox).a.tolist() == [4.0, 0.0]
    with pytest.raises(ValueError):
        wb.lab_state(Sandbox).a[0] = 9.0  # stored read-only
    wb.undo_stack.undo()
    assert wb.lab_state(Sandbox).a.tolist() == [1.0, 0.0]
    wb.undo_stack.undo()
    assert wb.lab_state(Sandbox).a is None
    assert wb.scenario.name == "river-bank"


def test_receiving_token_follows_token_edits_and_undo(make_wb):
    wb = make_wb("tired-cat")
    wb.set_receiving(2)  # "cat"
    wb.edit(edits.remove_token(wb.scenario, 0), "remove the")
    assert wb.scenario.query_labels[wb.receiving] == "cat"
    wb.edit(edits.move_token(wb.scenario, 1, 3), "move cat to the end")
    assert wb.scenario.query_labels[wb.receiving] == "cat" and wb.receiving == 3
    wb.undo_stack.undo()
    wb.undo_stack.undo()
    assert wb.scenario.tokens[0] == "the" and wb.scenario.query_labels[wb.receiving] == "cat"
    assert wb.snapshot().receiving == wb.receiving


def test_selection_survives_undo_of_a_value_edit(make_wb):
    wb = make_wb("river-bank")
    wb.edit(wb.scenario.replace(temperature=2.0), "T")
    wb.set_receiving(0)
    wb.undo_stack.undo()
    assert wb.receiving == 0 and wb.scenario.receiving == 0 and wb.scenario.temperature == 1.0


def test_label_only_edits_are_announced(make_wb):
    wb = make_wb("river-bank")
    seen = count(wb.changed)
    wb.edit(wb.scenario.replace(axes=("money", "water", "structure", "generic")), "rename axis")
    assert seen and "structure" in seen[-1][0]


def test_lab_states_are_cleared_when_a_document_is_loaded(make_wb):
    from attnsim.resources import resolve_scenario

    wb = make_wb("routing-lab")
    wb.set_lab_state(Sandbox(d=1024), "d")
    seen = count(wb.lab_changed)
    wb.load(resolve_scenario("routing-lab"))
    assert wb.lab_state(Sandbox).d is None and [c[0].kind for c in seen] == [Sandbox]


def test_replacing_the_document_untitles_it_and_undo_gives_the_path_back(make_wb, tmp_path):
    from attnsim.resources import resolve_scenario

    wb = make_wb("river-bank")
    wb.path = tmp_path / "mine.json"
    wb.replace_document(resolve_scenario("routing-lab"), "Open the routing-lab preset")
    assert wb.path is None and wb.scenario.name == "routing-lab"
    wb.undo_stack.undo()
    assert wb.path == tmp_path / "mine.json" and wb.scenario.name == "river-bank"


def test_a_lab_drag_back_to_the_start_leaves_no_step(make_wb):
    wb = make_wb("river-bank")
    wb.set_lab_state(Sandbox(a=np.array([1.0, 0.0])), "set a")
    drag = new_drag_id()
    wb.set_lab_state(Sandbox(a=np.array([2.0, 0.0])), "drag", drag=drag)
    wb.set_lab_state(Sandbox(a=np.array([1.0, 0.0])), "drag", drag=drag)
    assert wb.undo_stack.count() == 1


# ---- merged commands let go of their scenarios --------------------------------------------------
def _live_commands():
    import gc

    from attnsim.model.commands import EditCommand

    gc.collect()
    # commands released earlier in the session (another test's window) have no "after" left
    return [
        o
        for o in gc.get_objects()
        # issubclass of the type, not isinstance: isinstance reads __class__, which on some
        # objects of other libraries (torch's deprecated module aliases) raises a warning
        if issubclass(type(o), EditCommand) and getattr(o, "after", None) is not None
    ]


def test_merged_drag_moves_do_not_keep_their_scenarios_alive(qapp):
    import weakref

    from attnsim.model.workbench import Workbench, new_drag_id
    from attnsim.resources import resolve_scenario

    wb = Workbench(resolve_scenario("river-bank"))
    before = len(_live_commands())
    drag = new_drag_id()
    refs = []
    for i in range(50):
        X = np.array(wb.scenario.X)
        X[0, 1] = 0.01 * (i + 1)
        after = wb.scenario.replace(X=X)
        refs.append(weakref.ref(after))
        wb.edit(after, "drag", drag=drag)
        del after
    assert wb.undo_stack.count() == 1  # one step for the whole drag
    assert len(_live_commands()) - before == 1  # not 50
    # only the drag's last position is still held (by the scenario and its one command)
    assert sum(r() is not None for r in refs) == 1
    # a drag that comes back to its start leaves no step and holds nothing
    drag = new_drag_id()
    start = wb.scenario
    X = np.array(start.X)
    X[1, 1] += 0.5
    wb.edit(start.replace(X=X), "away", drag=drag)
    wb.edit(start.replace(X=np.array(start.X)), "back", drag=drag)
    assert wb.undo_stack.count() == 1
    assert len(_live_commands()) - before == 1
    wb.undo_stack.undo()
    wb.undo_stack.redo()  # the surviving step still works
    assert wb.scenario.X[0, 1] == pytest.approx(0.5)
