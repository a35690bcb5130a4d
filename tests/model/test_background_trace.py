"""Large scenarios are traced off the window's thread after an edit: the edit is in at once, its
signals wait for the trace, panels keep their picture and say they are computing."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLabel

from attnsim.engine.scenario import compute, random_scenario
from attnsim.model import tracing
from attnsim.model.workbench import OPTIONS, VECTORS, new_drag_id
from attnsim.panels.base import COMPUTING
from attnsim.panels.heatmap import HeatmapPanel


@pytest.fixture
def large(monkeypatch):
    """Scenarios of 48 tokens count as large (the real threshold is 2**20 cells)."""
    monkeypatch.setattr(tracing, "BACKGROUND_CELLS", 48 * 48)
    return random_scenario(48, 8, mask="causal", receiving=47, seed=5)


def seen(signal):
    got = []
    signal.connect(lambda *a: got.append(a))
    return got


def shown_panel(wb, qtbot, kind=HeatmapPanel):
    panel = kind(wb)
    qtbot.addWidget(panel)
    panel.resize(700, 500)
    panel.show()
    qtbot.waitExposed(panel)
    panel.flush()
    return panel


def test_an_edit_of_a_large_scenario_is_in_at_once_and_told_when_its_trace_arrives(
    make_wb, large, qtbot
):
    wb = make_wb(large)
    changed, computing = seen(wb.changed), seen(wb.computing_changed)
    after = wb.scenario.replace(temperature=2.0)
    wb.edit(after, "warmer")
    assert wb.scenario.temperature == 2.0 and wb.undo_stack.count() == 1
    assert wb.computing and computing == [(True,)] and changed == []
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    assert computing == [(True,), (False,)]
    assert changed == [(frozenset({OPTIONS}),)]
    np.testing.assert_allclose(wb.trace.weights, compute(wb.scenario).heads[0].weights, atol=1e-12)
    assert wb.trace.temperature == 2.0


def test_edits_made_while_a_trace_is_computed_are_told_once_together(make_wb, large, qtbot):
    wb = make_wb(large)
    changed = seen(wb.changed)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    X = np.array(wb.scenario.X)
    X[3] += 1.0
    wb.edit(wb.scenario.replace(X=X), "move a token")
    wb.set_receiving(10)  # the selection waits for the trace too
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    assert changed == [(frozenset({OPTIONS, VECTORS}),)]
    expected = compute(wb.scenario).heads[0]
    np.testing.assert_allclose(wb.trace.output, expected.output, atol=1e-12)
    assert wb.trace.temperature == 2.0 and wb.receiving == 10


def test_undo_while_computing_ends_on_the_state_undone_to(make_wb, large, qtbot):
    wb = make_wb(large)
    before = compute(wb.scenario).heads[0].weights
    wb.edit(wb.scenario.replace(temperature=3.0), "warmer")
    wb.undo_stack.undo()
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    np.testing.assert_allclose(wb.trace.weights, before, atol=1e-12)


def test_small_scenarios_are_traced_at_once(make_wb, qtbot):
    wb = make_wb("river-bank")
    changed, computing = seen(wb.changed), seen(wb.computing_changed)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    assert changed == [(frozenset({OPTIONS}),)] and computing == [] and not wb.computing


def test_a_panel_keeps_its_picture_and_says_it_is_computing(make_wb, large, qtbot):
    wb = make_wb(large)
    panel = shown_panel(wb, qtbot)
    refreshes = panel.refresh_count
    gate = threading.Event()  # holds the trace back: the tracer's one thread is busy first
    wb.tracer.submit(lambda _p, _c: gate.wait(10), key="hold")
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    assert wb.computing
    qtbot.wait(50)  # the event loop turns while the trace waits
    note = panel.findChild(QLabel, "computing-note")
    assert note is not None and note.isVisible() and note.text() == COMPUTING
    assert panel.refresh_count == refreshes  # the old picture stays until the new one

    # in the corner of the stale matrices, not over the caption under them
    def place(w):
        return QRect(w.mapTo(panel, QPoint(0, 0)), w.size())

    assert place(panel.canvas).contains(note.geometry())
    assert not note.geometry().intersects(place(panel.note))
    gate.set()
    qtbot.waitUntil(lambda: panel.refresh_count > refreshes, timeout=5000)
    assert panel._computing_note is None or not panel._computing_note.isVisible()
    assert panel.canvas.content is not None
    shown = panel.canvas.content.stages[-1]
    assert shown.title.startswith("Weights")
    np.testing.assert_allclose(shown.values, wb.trace.weights, atol=1e-12)


def test_an_explicit_flush_while_computing_draws_the_new_state_at_once(make_wb, large, qtbot):
    # Exports and tests call flush(): they get the state as it is, computed on the spot.
    wb = make_wb(large)
    panel = HeatmapPanel(wb)
    qtbot.addWidget(panel)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    panel.flush()
    np.testing.assert_allclose(
        panel.canvas.content.stages[-1].values, compute(wb.scenario).heads[0].weights, atol=1e-12
    )
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)


@dataclasses.dataclass(frozen=True)
class _Lab:
    k: int = 0


def held_tracer(wb) -> threading.Event:
    """Hold the tracer's one thread until the returned event is set."""
    gate = threading.Event()
    wb.tracer.submit(lambda _p, _c: gate.wait(10), key="hold")
    return gate


def two_moves_behind_a_trace(wb) -> threading.Event:
    """A drag's first move (in, its trace held by the returned gate) and a second (waiting)."""
    gate = held_tracer(wb)
    drag = new_drag_id()
    wb.edit(moved(wb.scenario, 3, 1.0), "drag", drag=drag)
    wb.edit(moved(wb.scenario, 3, 2.0), "drag", drag=drag)
    return gate


def moved(sc, row: int, x: float):
    X = np.array(sc.X)
    X[row, 0] = x
    return sc.replace(X=X)


def test_a_drag_shows_each_finished_trace_and_drops_the_moves_it_had_no_time_for(
    make_wb, large, qtbot
):
    wb = make_wb(large)
    start = wb.scenario
    shown: list[float] = []  # token 3's first coordinate each time the panels are told
    wb.changed.connect(lambda _what: shown.append(float(wb.scenario.X[3, 0])))
    gate = held_tracer(wb)
    drag = new_drag_id()
    wb.edit(moved(wb.scenario, 3, 1.0), "drag", drag=drag)  # in at once, traced behind the gate
    assert wb.scenario.X[3, 0] == 1.0 and wb.computing
    for x in (2.0, 3.0, 4.0):  # moves made while that trace is computed wait; the latest wins
        wb.edit(moved(wb.scenario, 3, x), "drag", drag=drag)
    assert wb.scenario.X[3, 0] == 1.0 and wb.traces.pending is not None
    assert wb.traces.moves_dropped == 2
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing and wb.traces.pending is None, timeout=5000)
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5000)
    assert shown == [1.0, 4.0]  # each state drawn had its trace; 2.0 and 3.0 were dropped
    assert wb.scenario.X[3, 0] == 4.0 and wb.undo_stack.count() == 1
    np.testing.assert_allclose(wb.trace.weights, compute(wb.scenario).heads[0].weights, atol=1e-12)
    wb.undo_stack.undo()  # the whole drag is one step
    assert np.array_equal(wb.scenario.X, start.X)


def test_the_panels_draw_a_finished_trace_before_the_next_move_goes_in(make_wb, large, qtbot):
    wb = make_wb(large)
    panel = shown_panel(wb, qtbot)
    drawn: list[float] = []
    panel.refreshed.connect(
        lambda: drawn.append(float(panel.canvas.content.stages[-1].values[47, 3]))
    )
    gate = held_tracer(wb)
    drag = new_drag_id()
    wb.edit(moved(wb.scenario, 3, 5.0), "drag", drag=drag)
    wb.edit(moved(wb.scenario, 3, -5.0), "drag", drag=drag)
    first = compute(wb.scenario).heads[0].weights[47, 3]
    gate.set()
    qtbot.waitUntil(lambda: len(drawn) >= 2 and not wb.computing, timeout=5000)
    last = compute(wb.scenario).heads[0].weights[47, 3]
    assert first != pytest.approx(last, abs=1e-6)  # the two moves give different weights
    assert drawn[0] == pytest.approx(first, abs=1e-12)
    assert drawn[-1] == pytest.approx(last, abs=1e-12)


def test_an_undo_while_a_move_waits_forgets_the_move(make_wb, large, qtbot):
    wb = make_wb(large)
    start = wb.scenario
    gate = two_moves_behind_a_trace(wb)
    wb.undo_stack.undo()
    assert wb.traces.pending is None
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    qtbot.wait(20)
    assert np.array_equal(wb.scenario.X, start.X) and wb.undo_stack.index() == 0


def test_another_edit_puts_the_waiting_move_in_first(make_wb, large, qtbot):
    wb = make_wb(large)
    gate = two_moves_behind_a_trace(wb)
    wb.set_lab_state(_Lab(k=1), "a lab edit")
    # the move is in, as its own step before the lab edit
    assert wb.scenario.X[3, 0] == 2.0 and wb.traces.pending is None
    assert wb.undo_stack.count() == 2
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)


def test_finish_trace_leaves_a_waiting_move_waiting(make_wb, large, qtbot):
    # an export in the middle of a drag draws the state that is in, at once
    wb = make_wb(large)
    gate = two_moves_behind_a_trace(wb)
    wb.finish_trace()
    assert not wb.computing and wb.scenario.X[3, 0] == 1.0
    np.testing.assert_allclose(wb.trace.weights, compute(wb.scenario).heads[0].weights, atol=1e-12)
    gate.set()
    qtbot.waitUntil(lambda: wb.traces.pending is None and not wb.computing, timeout=5000)
    assert wb.scenario.X[3, 0] == 2.0


def test_an_edit_typed_while_the_drags_last_move_waits_keeps_that_move(make_wb, large, qtbot):
    # The typed value was made from the scenario without the waiting move (token 3 at 1.0);
    # put in as it stands, it would put token 3 back. It is rebuilt on top of the move.
    wb = make_wb(large)
    gate = two_moves_behind_a_trace(wb)
    typed = np.array(wb.scenario.X)
    was = typed[7, 1]
    typed[7, 1] = 0.5  # another token's value, typed in the vector editor
    wb.edit(wb.scenario.replace(X=typed), "type a value")
    assert wb.scenario.X[3, 0] == 2.0 and wb.scenario.X[7, 1] == 0.5
    assert wb.undo_stack.count() == 2
    wb.undo_stack.undo()  # the typed value goes; the drag's last move stays
    assert wb.scenario.X[3, 0] == 2.0 and wb.scenario.X[7, 1] == was != 0.5
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    np.testing.assert_allclose(wb.trace.weights, compute(wb.scenario).heads[0].weights, atol=1e-12)


def test_another_drag_started_while_a_move_waits_keeps_that_move(make_wb, large, qtbot):
    wb = make_wb(large)
    gate = two_moves_behind_a_trace(wb)
    wb.edit(moved(wb.scenario, 9, 3.0), "drag another token", drag=new_drag_id())
    assert wb.scenario.X[3, 0] == 2.0 and wb.scenario.X[9, 0] == 3.0
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing and wb.traces.pending is None, timeout=5000)
    assert wb.scenario.X[3, 0] == 2.0 and wb.scenario.X[9, 0] == 3.0


def test_a_panel_with_a_state_of_its_own_does_not_say_it_is_computing(make_wb, large, qtbot):
    # The training stepper draws its own model, not the scenario: a large scenario's trace
    # does not concern it, so it neither waits for it nor says it is computing.
    from attnsim.panels.stepper import StepperPanel

    wb = make_wb(large)
    stepper = shown_panel(wb, qtbot, StepperPanel)
    heatmap = shown_panel(wb, qtbot)
    gate = held_tracer(wb)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    qtbot.wait(50)
    assert wb.computing
    note = heatmap.findChild(QLabel, "computing-note")
    assert note is not None and note.isVisible()
    assert stepper.findChild(QLabel, "computing-note") is None
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)


def test_with_a_move_waiting_every_panel_draws_the_trace_before_the_move_goes_in(
    make_wb, large, qtbot
):
    # With no move waiting, the panels on screen draw an arrived trace one a turn; a drag's
    # waiting move goes in after the trace's turn, so then every panel draws it in that turn.
    wb = make_wb(large)
    panels = [shown_panel(wb, qtbot) for _ in range(3)]
    drawn: list[list[float]] = [[] for _ in panels]
    for p, log in zip(panels, drawn, strict=True):
        p.refreshed.connect(lambda log=log: log.append(float(wb.scenario.X[3, 0])))
    arriving: list[bool] = []
    wb.changed.connect(lambda _what: arriving.append(wb.trace_arriving))
    gate = two_moves_behind_a_trace(wb)  # moves to 1.0 (in) and 2.0 (waiting)
    gate.set()
    qtbot.waitUntil(lambda: all(len(d) >= 2 for d in drawn) and not wb.computing, timeout=5000)
    assert [d[:2] for d in drawn] == [[1.0, 2.0]] * 3  # each drew the first move, then the next
    assert arriving[0] is False  # (told in the trace's turn, a move waiting)


def test_a_move_made_once_the_trace_is_in_puts_the_waiting_move_in_and_waits_in_turn(
    make_wb, large, qtbot, monkeypatch
):
    # The trace is in (here by finish_trace) and the drag's latest move still waits when the
    # mouse moves again: that move goes in and the new one waits for its trace. Both moved the
    # same vector from the same state, so nothing is merged (at n = 4,096, d = 1,024 a merge
    # of X held the window for 200 ms).
    merges: list[object] = []
    real_merge = tracing.merge_edits
    monkeypatch.setattr(tracing, "merge_edits", lambda *a: merges.append(a) or real_merge(*a))
    wb = make_wb(large)
    start = wb.scenario
    gate = two_moves_behind_a_trace(wb)  # token 3 at 1.0 (in), 2.0 waiting
    drag = wb.traces.pending.drag
    wb.finish_trace()
    assert not wb.computing and wb.traces.pending is not None
    wb.edit(moved(wb.scenario, 3, 3.0), "drag", drag=drag)
    assert wb.scenario.X[3, 0] == 2.0 and wb.computing  # the waiting move is in, traced
    assert wb.traces.pending is not None and wb.traces.pending.after.X[3, 0] == 3.0
    assert merges == []
    gate.set()
    qtbot.waitUntil(lambda: not wb.computing and wb.traces.pending is None, timeout=5000)
    assert wb.scenario.X[3, 0] == 3.0 and wb.undo_stack.count() == 1
    np.testing.assert_allclose(wb.trace.weights, compute(wb.scenario).heads[0].weights, atol=1e-12)
    wb.undo_stack.undo()  # still one step, back to where the drag began
    assert np.array_equal(wb.scenario.X, start.X)


def test_a_background_trace_reads_the_logits_range_before_it_arrives(make_wb, large, qtbot):
    # two passes over a 4,096-token head's logits (15-20 ms) are the tracer's, not the window's
    wb = make_wb(large)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    assert wb.computing
    qtbot.waitUntil(lambda: not wb.computing, timeout=5000)
    head = wb.result.heads[0]
    assert head.__dict__["_logit_range"] == (head.logits.min(), head.logits.max())
