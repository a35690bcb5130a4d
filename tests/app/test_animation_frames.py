"""Animation frames: a panel drawn offscreen at each step of a sweep, through the still figure's
path. The first and last frames decode back close to the still PNG export of those states, and
the user's workbench (scenario, labs, undo stack) is untouched."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from PySide6.QtGui import QImage

from attnsim import export
from attnsim.export.animation import animation_exporter
from attnsim.export.frames import (
    FrameRenderer,
    fit_into,
    image_pixels,
    room_for_the_figure,
    sweep_frames,
)
from attnsim.export.sweeps import Sweep, parse_sweep
from attnsim.panels import PANEL_SPECS
from attnsim.viewmodels.context_lab import ContextLabState

from .test_animation_writers import GIF_TOL, LOSSLESS_TOL, MP4_TOL, decode_mp4, decode_pillow, diff

SIZE = (480, 360)


def still(make_wb, qtbot, sc, pid, caption, tmp_path, lab=None) -> np.ndarray:
    """The still PNG export (scale 1, the caption as its title) of panel ``pid`` on ``sc``,
    laid out for a figure of the frame's size and placed in a frame as the animation places
    it."""
    wb = make_wb(sc)
    if lab is not None:
        wb.set_lab_state(lab, "lab")
    spec = next(s for s in PANEL_SPECS if s.panel_id == pid)
    panel = spec.load()(wb)
    qtbot.addWidget(panel)
    panel.resize(*SIZE)
    panel.show()
    qtbot.waitExposed(panel)
    room_for_the_figure(panel, SIZE)
    panel.flush()
    path = export.export_panel(panel, tmp_path / f"still-{caption}.png", scale=1.0,
                               title=caption)  # fmt: skip
    return image_pixels(fit_into(QImage(str(path)), SIZE))


@pytest.mark.parametrize(("fmt", "tol"), [("gif", GIF_TOL), ("mp4", MP4_TOL),
                                          ("apng", LOSSLESS_TOL)])  # fmt: skip
def test_a_temperature_sweep_matches_the_still_exports(make_wb, qtbot, tmp_path, fmt, tol):
    user = make_wb("river-bank")
    sc = user.scenario
    sweep = parse_sweep("temperature:0.25:4:5", sc)
    renderer = FrameRenderer(user, "heatmap", SIZE)
    try:
        exp = animation_exporter(fmt)
        path = tmp_path / f"t{exp.suffix}"
        assert exp.write(sweep_frames(renderer, sweep, caption=True), path, fps=5, hold=0) == 5
    finally:
        renderer.close()
    got = decode_mp4(path)[1] if fmt == "mp4" else decode_pillow(path)[0]
    assert len(got) == 5
    assert all(f.shape == (SIZE[1], SIZE[0], 3) for f in got)
    first = still(make_wb, qtbot, sc.replace(temperature=0.25), "heatmap", "T = 0.25", tmp_path)
    last = still(make_wb, qtbot, sc.replace(temperature=4.0), "heatmap", "T = 4", tmp_path)
    assert diff(got[0], first) < tol
    assert diff(got[-1], last) < tol
    # the states really differ on screen, far beyond the tolerance
    assert diff(first, last) > 2.0
    assert diff(got[0], last) > diff(got[0], first) + 1.0


def test_rendering_frames_never_touches_the_users_workbench(make_wb):
    user = make_wb("river-bank")
    user.edit(user.scenario.replace(temperature=0.5), "Temperature 0.5")
    user.set_lab_state(ContextLabState(k=3), "k = 3")
    before = (user.scenario, user.undo_stack.count(), user.undo_stack.index(),
              user.lab_state(ContextLabState))  # fmt: skip
    seen: list[str] = []
    user.changed.connect(lambda what: seen.append("changed"))
    user.lab_changed.connect(lambda change: seen.append("lab"))
    for pid, spec in (("heatmap", "temperature:0.1:10:3"), ("context_lab", "k:0:8:3"),
                      ("vectors", "vector:bank:water:-1:1:3")):  # fmt: skip
        renderer = FrameRenderer(user, pid, SIZE)
        try:
            frames = list(sweep_frames(renderer, parse_sweep(spec, user.scenario)))
        finally:
            renderer.close()
        assert len(frames) == 3
        assert diff(frames[0], frames[-1]) > 0.05, pid  # the sweep moved something
    after = (user.scenario, user.undo_stack.count(), user.undo_stack.index(),
             user.lab_state(ContextLabState))  # fmt: skip
    assert after == before
    assert seen == []


def test_the_context_lab_sweeps_its_distractor_keys(make_wb, qtbot, tmp_path):
    user = make_wb("river-bank")
    user.set_lab_state(ContextLabState(k=2, k_max=8), "K = 8")
    sweep = parse_sweep("k:0:12:4", user.scenario)
    assert sweep.values().tolist() == [0, 4, 8, 12]
    renderer = FrameRenderer(user, "context_lab", SIZE)
    states = []
    try:
        for _ in sweep_frames(renderer, sweep, caption=True):
            states.append(renderer.wb.lab_state(ContextLabState))
        last = renderer.render("k = 12 distractor keys")
    finally:
        renderer.close()
    assert [(s.k, s.k_max) for s in states] == [(0, 12), (4, 12), (8, 12), (12, 12)]
    expected = still(make_wb, qtbot, user.scenario, "context_lab", "k = 12 distractor keys",
                     tmp_path, lab=ContextLabState(k=12, k_max=12))  # fmt: skip
    assert diff(last, expected) < LOSSLESS_TOL + 0.5
    with pytest.raises(
        ValueError,
        match="distractor keys shows only in the Long-context stability panel, not in Scores",
    ):
        r = FrameRenderer(user, "heatmap", SIZE)
        try:
            next(sweep_frames(r, sweep))
        finally:
            r.close()


def test_a_frame_is_the_asked_size_whatever_the_figure(make_wb):
    user = make_wb("river-bank")
    renderer = FrameRenderer(user, "heatmap", (200, 150))  # the figure is larger: it shrinks
    try:
        frame = renderer.render("T = 1")
    finally:
        renderer.close()
    assert frame.shape == (150, 200, 3)
    inked = (frame.min(axis=2) < 200).mean()  # pixels clearly darker than the white ground
    assert inked > 0.01  # something is drawn (about 3 % here), not an empty white frame
    with pytest.raises(ValueError, match="unknown panel 'nope'"):
        FrameRenderer(user, "nope", SIZE)
    with pytest.raises(export.NothingToDrawError):
        FrameRenderer(user, "routing_lab", SIZE)  # a token scenario: the routing lab has none


def test_sweeps_step_evenly_and_refuse_in_sentences(make_wb):
    sc = make_wb("river-bank").scenario
    t = parse_sweep("temperature:0.1:10:60", sc).values()
    assert len(t) == 60 and t[0] == pytest.approx(0.1, rel=1e-12)
    assert t[-1] == pytest.approx(10, rel=1e-12)
    np.testing.assert_allclose(t[1:] / t[:-1], (100 ** (1 / 59)) * np.ones(59), rtol=1e-12)
    v = parse_sweep("vector:3:2:-1:2:4", sc)
    assert v.where == (2, 1) and v.values().tolist() == [-1, 0, 1, 2]
    assert v.caption(0.5, sc) == "bank: water = 0.5"
    assert v.scenario_at(sc, 1.5).X[2, 1] == 1.5 and sc.X[2, 1] != 1.5
    w = parse_sweep("wq:1:water:finance:-1:1:3", sc)
    assert w.where == (0, 1, 0)
    assert w.scenario_at(sc, 0.75).heads[0].Wq[1, 0] == 0.75
    assert parse_sweep("temperature:0.1:10:3", sc).caption(0.25, sc) == "T = 0.25"
    assert Sweep("k", 0, 3, 2).caption(1, sc) == "k = 1 distractor key"
    for text, message in [
        ("speed:1:2:3", "cannot sweep 'speed'; sweep one of temperature, scale, vector, wq, k"),
        ("temperature:1:2", "a temperature sweep is written temperature:START:END:FRAMES"),
        ("temperature:0:10:5", "the temperature runs from 0.001 to 1000, got 0"),
        ("temperature:1:1:5", "two different ends"),
        ("temperature:1:2:1", "a sweep has 2 to 2000 frames, got 1"),
        ("temperature:a:2:5", "START and END are numbers"),
        ("vector:dog:1:0:1:5", "'dog' is not a token of the scenario (the, river, bank)"),
        ("vector:bank:9:0:1:5", "axis 9 is out of range: there are 4"),
        ("wq:2:1:1:0:1:5", "head 2 is out of range"),
        ("k:0:3:10", "0 to 3 has at most 4 frames, not 10"),
        ("k:0.5:3:2", "whole number"),
    ]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_sweep(text, sc)


def test_the_sweep_benchmark_is_registered():
    from attnsim.benchmarks import registry
    from attnsim.benchmarks.animation import FRAMES, SIZE, SWEEP

    assert "animation_heatmap_sweep60" in registry()
    assert (FRAMES, SIZE, SWEEP) == (60, (800, 600), "temperature:0.1:10:60")


def test_the_kernel_stepper_and_the_linear_memory_are_walked_step_by_step(make_wb):
    from attnsim.export.frames import frame_plan
    from attnsim.export.steps import LabSteps
    from attnsim.viewmodels.kernel_lab import KernelLabState
    from attnsim.viewmodels.linear_lab import LinearLabState

    user = make_wb("river-bank")  # 3 queries, 3 keys: 2 query blocks, 2 key blocks of 2
    renderer = FrameRenderer(user, "kernel_lab", SIZE)
    try:
        plan = frame_plan(renderer, LabSteps("kernel"))
        states = [(lab.q_block, lab.step) for _, lab, _ in plan]
        assert states == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
        assert plan[1][2] == "query block 1 of 2: 1 of 2 key blocks folded in"
        frames = list(sweep_frames(renderer, LabSteps("kernel"), caption=True))
        assert renderer.wb.lab_state(KernelLabState).step == 2
    finally:
        renderer.close()
    assert len(frames) == 6
    assert all(diff(a, b) > 0.05 for a, b in itertools.pairwise(frames))
    renderer = FrameRenderer(user, "linear_lab", SIZE)
    try:
        plan = frame_plan(renderer, LabSteps("memory"))
        assert [lab.position for _, lab, _ in plan] == [1, 2, 3]
        assert plan[2][2] == "memory S_3 after “bank” (3 of 3)"
        frames = list(sweep_frames(renderer, LabSteps("memory")))
        assert renderer.wb.lab_state(LinearLabState).position == 3
        with pytest.raises(ValueError, match="kernel stepper's steps shows only in the Kernel"):
            frame_plan(renderer, LabSteps("kernel"))
    finally:
        renderer.close()
    assert len(frames) == 3 and diff(frames[0], frames[-1]) > 0.05
    assert user.lab_state(KernelLabState) == KernelLabState()  # the user's labs are as they were
    assert user.undo_stack.count() == 0
    with pytest.raises(ValueError, match="cannot step 'training'; step one of kernel, memory"):
        LabSteps("training")


def test_a_training_run_is_trained_on_the_frames_own_session(make_wb):
    from attnsim.export.frames import frame_plan
    from attnsim.export.steps import TrainingRun, parse_training

    user = make_wb("river-bank")
    renderer = FrameRenderer(user, "stepper", SIZE)
    try:
        run = parse_training("5:4")
        assert run == TrainingRun(5, 4)
        captions = []
        plan = frame_plan(renderer, run)
        frames = []
        for i, frame in enumerate(sweep_frames(renderer, run, plan=plan)):
            frames.append(frame)
            captions.append(renderer.wb.training.steps)
            assert renderer.wb.training.steps == 5 * i
        first = plan[0][2]
        assert callable(first) and first().startswith("after 15 training steps: loss ")
    finally:
        renderer.close()
    assert captions == [0, 5, 10, 15]
    assert diff(frames[0], frames[-1]) > 0.05  # the loss curve and the weights moved
    assert getattr(user, "_training", None) is None  # no session was made on the user's side
    for text, message in [("5", "EVERY:FRAMES"), ("0:4", "a frame every 1 to 100000 steps"),
                          ("5000:100", "at most 100000 steps")]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            parse_training(text)


def test_the_undo_history_replays_as_a_movie_without_undoing_anything(make_wb):
    from attnsim.export.history import HistoryReplay

    user = make_wb("river-bank")
    with pytest.raises(ValueError, match="no undo history to replay yet"):
        HistoryReplay.of(user)
    t0 = user.scenario.temperature
    user.edit(user.scenario.replace(temperature=0.5), "Temperature 0.5")
    with user.compound("Causal mask at temperature 2"):
        user.edit(user.scenario.replace(mask="causal"), "Causal mask")
        user.edit(user.scenario.replace(temperature=2.0), "Temperature 2")
    user.set_lab_state(ContextLabState(k=3), "k = 3")
    user.edit(user.scenario.replace(temperature=4.0), "Temperature 4")
    user.undo_stack.undo()  # the undone step is not part of what is on screen: not replayed
    before = (user.scenario, user.undo_stack.count(), user.undo_stack.index())
    replay = HistoryReplay.of(user)
    assert [s.caption for s in replay.states] == [
        "before the first step", "after “Temperature 0.5”", "after “Causal mask at temperature 2”",
        "after “k = 3”",
    ]  # fmt: skip
    assert [(s.scenario.temperature, s.scenario.mask_kind) for s in replay.states] == [
        (t0, "none"), (0.5, "none"), (2.0, "causal"), (2.0, "causal")]  # fmt: skip
    assert [dict(s.labs)[ContextLabState].k for s in replay.states] == [4, 4, 4, 3]
    renderer = FrameRenderer(user, "heatmap", SIZE)
    try:
        frames = list(sweep_frames(renderer, replay, caption=True))
    finally:
        renderer.close()
    assert len(frames) == 4
    assert diff(frames[0], frames[1]) > 0.05 and diff(frames[1], frames[2]) > 0.05
    assert (user.scenario, user.undo_stack.count(), user.undo_stack.index()) == before


def test_the_frames_show_the_view_the_panel_on_screen_shows(make_wb, qtbot, tmp_path):
    from attnsim.panels.heatmap import HeatmapPanel

    user = make_wb("river-bank")
    on_screen = HeatmapPanel(user)
    qtbot.addWidget(on_screen)
    on_screen.view_box.setCurrentIndex(on_screen.view_box.findData("weights"))
    assert on_screen.view == "weights"
    plain = FrameRenderer(user, "heatmap", SIZE)
    like = FrameRenderer(user, "heatmap", SIZE, like=on_screen)
    try:
        assert like.panel.view == "weights" and plain.panel.view == "stages"
        shown, default = like.render("T = 1"), plain.render("T = 1")
    finally:
        like.close()
        plain.close()
    # the still export of a panel showing the weights only, as the user's does
    wb = make_wb("river-bank")
    panel = HeatmapPanel(wb)
    qtbot.addWidget(panel)
    panel.view_box.setCurrentIndex(panel.view_box.findData("weights"))
    panel.resize(*SIZE)
    panel.show()
    qtbot.waitExposed(panel)
    room_for_the_figure(panel, SIZE)
    panel.flush()
    path = export.export_panel(panel, tmp_path / "weights.png", scale=1.0, title="T = 1")
    expected = image_pixels(fit_into(QImage(str(path)), SIZE))
    assert diff(shown, expected) < LOSSLESS_TOL + 0.5
    assert diff(default, expected) > 2.0
    assert user.undo_stack.count() == 0


def test_the_induction_lab_is_trained_a_frame_every_k_steps(make_wb):
    from attnsim.export.frames import frame_plan
    from attnsim.export.steps import TrainingRun, parse_training

    user = make_wb("river-bank")
    run = parse_training("30:3", "induction_lab")
    assert run == TrainingRun(30, 3, "induction_lab")
    renderer = FrameRenderer(user, "induction_lab", SIZE)
    try:
        plan = frame_plan(renderer, run)
        steps, frames = [], []
        for frame in sweep_frames(renderer, run, plan=plan):
            frames.append(frame)
            steps.append(renderer.panel.session.step_count)
        assert plan[-1][2]().startswith("after 60 training steps: loss on the repeated half ")
    finally:
        renderer.close()
    assert steps == [0, 30, 60]  # exactly every 30 steps, from the seed's weights
    assert diff(frames[0], frames[-1]) > 0.05
    with pytest.raises(ValueError, match="a training run shows in the stepper or induction_lab"):
        TrainingRun(5, 3, "heatmap")


def test_a_small_frame_gets_the_figure_at_its_size_not_the_panel(make_wb):
    # The panel was laid out at the frame's size, controls included: in a 320 x 240 frame the
    # heatmap's figure was 308 x 129 and its cells a pixel high. The panel now grows by what
    # its controls take, so the figure itself is the frame's size.
    renderer = FrameRenderer(make_wb("river-bank"), "heatmap", (320, 240))
    try:
        fig = renderer.panel.figure_widget()
        assert fig.width() >= 320 and fig.height() >= 240
        assert renderer.panel.height() > 240  # the controls are above it, outside the frame
    finally:
        renderer.close()
