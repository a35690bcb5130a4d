"""The induction lab's training session: background chunks, Play/Pause/Step/Reset, curves."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.model.induction_session import RECORD_EVERY, InductionSession
from attnsim.model.runner import Runner
from attnsim.viewmodels.induction_lab import InductionLabState

SMALL = InductionLabState(n_layers=1, n_heads=2, d_model=16, d_vocab=8, half_len=4, lr=1e-2)


@pytest.fixture
def session(qtbot):
    runner = Runner()
    s = InductionSession(runner.submit)
    s.configure(SMALL)
    yield s
    s.close()
    runner.shutdown()


def test_step_trains_in_the_background_and_records_curves(session, qtbot):
    start = {k: v.copy() for k, v in session.params.items()}
    assert [p.step for p in session.curve] == [0]
    session.step(2 * RECORD_EVERY)
    assert session.busy  # returned at once: the steps run on the runner
    qtbot.waitUntil(lambda: session.step_count == 2 * RECORD_EVERY and not session.busy)
    assert [p.step for p in session.curve] == [0, RECORD_EVERY, 2 * RECORD_EVERY]
    assert not np.array_equal(start["embed.W_E"], session.params["embed.W_E"])
    assert session.steps_per_s > 0
    first = session.curve[0]
    assert 0 <= first.best_induction <= 1 and 0 <= first.best_previous <= 1
    assert np.isfinite(first.first_loss) and np.isfinite(first.repeated_loss)


def test_play_pause_and_reset_is_bit_exact(session, qtbot):
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: not session.busy)
    after_10 = {k: v.copy() for k, v in session.params.items()}
    loss_10 = session.curve[-1].repeated_loss
    with qtbot.waitSignal(session.running_changed):
        session.play()
    qtbot.waitUntil(lambda: session.step_count > 3 * RECORD_EVERY, timeout=20000)
    session.pause()
    qtbot.waitUntil(lambda: not session.busy)
    stopped = session.step_count
    qtbot.wait(100)
    assert session.step_count == stopped  # paused means no more chunks
    session.reset()
    assert session.step_count == 0 and len(session.curve) == 1
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: not session.busy)
    for k, v in after_10.items():
        assert np.array_equal(v, session.params[k]), k
    assert session.curve[-1].repeated_loss == loss_10


def test_new_settings_reset_and_same_settings_do_not(session, qtbot):
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: not session.busy)
    session.configure(SMALL.with_head_toggled(0, 1))  # ablation does not touch training
    assert session.step_count == RECORD_EVERY
    from dataclasses import replace

    session.configure(replace(SMALL, seed=5))
    assert session.step_count == 0
    with pytest.raises(ValueError, match="steps"):
        session.step(0)


def test_finished_chunks_are_freed_while_playing(session, qtbot):
    # Each chunk's job used to be held by its own connection (a lambda capturing the job), so
    # every chunk (a copy of the weights and the trainer) stayed alive for good.
    import gc

    from attnsim.model.runner import Job

    def jobs_alive() -> list[Job]:
        gc.collect()
        # the type, not isinstance (which reads __class__ and warns on some objects of torch)
        return [o for o in gc.get_objects() if issubclass(type(o), Job)]

    # Jobs that earlier tests in the same process left for the collector are not this
    # session's: only the jobs made while it plays are counted.
    before = {id(o) for o in jobs_alive()}
    with qtbot.waitSignal(session.running_changed):
        session.play()
    qtbot.waitUntil(lambda: session.version > 6, timeout=30000)
    session.pause()
    qtbot.waitUntil(lambda: not session.busy, timeout=20000)
    qtbot.wait(50)  # the runner lets go of a job once its worker has returned
    alive = [o for o in jobs_alive() if id(o) not in before]
    assert len(alive) <= 3, f"{len(alive)} jobs alive after {session.version} chunks"


def test_step_after_pause_with_a_chunk_in_flight_is_not_lost(session, qtbot):
    with qtbot.waitSignal(session.running_changed):
        session.play()
    qtbot.waitUntil(lambda: session.busy)
    session.pause()  # the Play chunk in flight finishes on its own
    session.step(RECORD_EVERY)
    played = {"steps": None}

    def first_update():
        if played["steps"] is None:
            played["steps"] = session.step_count

    session.updated.connect(first_update)
    qtbot.waitUntil(lambda: played["steps"] is not None, timeout=20000)
    # the Step asked for after the pause runs once the Play chunk is in
    qtbot.waitUntil(lambda: session.step_count >= played["steps"] + RECORD_EVERY, timeout=20000)
    qtbot.waitUntil(lambda: not session.busy, timeout=20000)


def test_new_settings_under_a_preset_still_train_the_train_model(session, qtbot):
    # Undo could bring back a skip-trigram state with another seed: the session measured its
    # curves on the preset's four-token prompt and raised in the event loop.
    from dataclasses import replace

    session.configure(replace(SMALL, preset="skip_trigram", seed=5))
    assert session.step_count == 0 and len(session.curve) == 1
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: session.step_count == RECORD_EVERY and not session.busy)


def _total(params):
    return float(sum(float(np.sum(v)) for v in params.values()))


def test_each_chunk_measures_its_own_weights_on_the_worker(session, qtbot):
    # What the lab draws of a chunk is measured by the chunk, tagged with the weights' version.
    session.measure_with("key", _total)
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: not session.busy)
    version, key, value = session.measured
    assert (version, key) == (session.version, "key")
    assert value == _total(session.params)
    session.measure_with(None, None)
    session.step(RECORD_EVERY)
    qtbot.waitUntil(lambda: not session.busy)
    assert session.measured[0] == version  # no measurer: nothing newer was measured


def test_training_shortens_the_interpreters_switch_interval(session, qtbot):
    import sys

    from attnsim.model.induction_session import SWITCH_INTERVAL_S

    session.step()
    qtbot.waitUntil(lambda: not session.busy, timeout=30_000)
    # the window thread gets the interpreter lock back from a training chunk within 1 ms
    assert sys.getswitchinterval() <= SWITCH_INTERVAL_S
