"""A training chunk's redraw spread over turns of the event loop (induction_lab.stages): the
parts in order, one per turn; a newer redraw replaces what an older one left; a pause or an
export draws what is left at once."""

# ruff: noqa: F811

from __future__ import annotations

import numpy as np

from attnsim.panels.induction_lab.stages import Stages

# `panel` is the induction lab tests' fixture, used here as an argument (F401, F811)
from tests.panels.test_induction_lab import WAIT_MS, panel  # noqa: F401


def test_parts_are_drawn_one_per_turn_in_order(qtbot):
    stages, done = Stages(), []
    stages.start([lambda: done.append(1), lambda: done.append(2), lambda: done.append(3)])
    assert done == [] and stages.pending == 3  # nothing in the turn that starts them
    stages._next()  # one turn (its timer's), one part: waiting for exactly one is a race
    assert done == [1] and stages.pending == 2
    qtbot.waitUntil(lambda: stages.pending == 0, timeout=WAIT_MS)  # the timer takes the rest
    assert done == [1, 2, 3]


def test_a_newer_redraw_replaces_the_parts_left_and_finish_draws_them_now(qtbot):
    stages, done = Stages(), []
    stages.start([lambda: done.append("old a"), lambda: done.append("old b")])
    stages.start([lambda: done.append("new a"), lambda: done.append("new b")])
    stages.add(lambda: done.append("added"))
    stages.finish()
    assert done == ["new a", "new b", "added"] and stages.pending == 0
    stages.start([lambda: done.append("cancelled")])
    stages.cancel()
    qtbot.wait(50)
    assert done == ["new a", "new b", "added"]


def test_a_newer_redraw_begins_where_the_older_stopped_so_every_part_comes_round(qtbot):
    # Chunks landing after every part drawn (a slow machine): each part still gets its turn,
    # with the newest chunk's numbers, rather than the first part again and again.
    # The turns are taken here, one at a time: waiting on the event loop for exactly one more
    # part drawn raced with the 8 ms timer on a loaded machine (two parts in one wait, CI).
    stages, done = Stages(), []
    stages._timer.setInterval(10**7)

    def redraw(chunk: int) -> list:
        return [lambda c=chunk, p=p: done.append((p, c)) for p in "abc"]

    stages.start(redraw(1))
    for chunk in range(2, 6):
        stages._next()  # one turn: one part
        assert len(done) == chunk - 1
        stages.start(redraw(chunk))
    assert done[:4] == [("a", 1), ("b", 2), ("c", 3), ("a", 4)]
    added = []
    stages.add(lambda: added.append("x"))
    stages.start(redraw(6))  # a part added (the circuits' next map) is not dropped
    stages.finish()
    assert added == ["x"] and done[-3:] == [("b", 6), ("c", 6), ("a", 6)]


def test_while_training_the_grid_comes_first_and_a_pause_draws_the_rest(qtbot, panel):
    s = panel.session
    panel._circuits_timer.stop()
    panel.stages._timer.setInterval(10**7)  # the parts wait: what the first turn drew shows
    enlarged_before = panel.patterns.enlarged.values.copy()
    s.play()
    qtbot.waitUntil(lambda: s.step_count > 0, timeout=WAIT_MS)
    panel.flush()
    view, (layer, head) = panel.view, panel.selected
    assert f"step {s.step_count}" in panel.controls.speed.text()  # the numbers at once
    score = panel.heads.scores.item(1, 0).value  # the induction score of L0H0
    np.testing.assert_allclose(score, view.induction[0, 0], rtol=0, atol=1e-12)
    assert panel.stages.pending > 0  # the grid, the curves, the enlargement to come
    assert panel.patterns.grid.view is not view
    np.testing.assert_array_equal(panel.patterns.enlarged.values, enlarged_before)
    s.pause()  # draws what is left, now
    qtbot.waitUntil(lambda: not s.busy, timeout=WAIT_MS)
    panel.flush()
    assert panel.stages.pending == 0
    assert panel.patterns.grid.view is panel.view
    shown = panel.view.patterns[layer, head]
    np.testing.assert_allclose(panel.patterns.enlarged.values, shown, rtol=0, atol=0)
    assert f"at step {s.step_count}:" in panel.circuits.copying.text()
    last = s.curve[-1]
    xs, ys = panel.curves.repeated_curve.getData()
    assert xs[-1] == last.step and abs(ys[-1] - last.repeated_loss) <= 1e-12


def test_edits_redraw_everything_at_once(qtbot, panel):
    panel.stages._timer.setInterval(10**7)
    panel.select_head(0, 1)
    panel.flush()
    assert panel.stages.pending == 0
    view = panel.view
    np.testing.assert_array_equal(panel.patterns.enlarged.values, view.patterns[0, 1])


def test_a_circuits_part_left_from_a_larger_model_draws_nothing(qtbot, panel):
    # The monkey found it: a part of a redraw, left waiting while the model lost a layer, asked
    # the new model for a head it no longer had (KeyError). The new model's frame draws instead.
    from dataclasses import replace

    panel.selected = (1, 1)
    panel.wb.set_lab_state(replace(panel.state(), n_layers=1, n_heads=1), "smaller model")
    assert "blocks.1.attn.W_V" not in panel.params()
    panel.selected = (1, 1)  # as the part found it
    panel._refresh_circuits(staged=True)  # raised KeyError before
    panel.flush()
    assert panel.selected == (0, 0)
