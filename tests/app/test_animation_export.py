"""File ▸ Export animation…: the dialog builds a sweep (or refuses one in a sentence), the export
runs in the background with progress and can be cancelled (no file left), and the user's
workbench and undo history are untouched."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnsim.app import MainWindow
from attnsim.app.animation_dialog import AnimationChoice, AnimationDialog
from attnsim.app.animation_export import start_export
from attnsim.export.steps import LabSteps, TrainingRun
from attnsim.export.sweeps import Sweep
from attnsim.model.workbench import Workbench
from attnsim.resources import resolve_scenario

from .test_animation_writers import decode_mp4, decode_pillow, diff

SIZE = (320, 240)


@pytest.fixture
def win(qtbot, home):
    w = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: False,
                   restore_layout=False)  # fmt: skip
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


def choice(fmt="gif", sweep=None, panel="heatmap") -> AnimationChoice:
    return AnimationChoice(panel, sweep or Sweep("temperature", 0.1, 10, 6), fmt, fps=6,
                           size=SIZE, hold=0.5, caption=True)  # fmt: skip


def test_the_file_menu_offers_export_animation(win):
    file_menu = win.menuBar().actions()[0].menu()
    texts = [a.text().replace("&", "") for a in file_menu.actions()]
    assert "Export animation…" in texts


@pytest.mark.parametrize("fmt", ["gif", "mp4"])
def test_an_export_runs_in_the_background_and_leaves_the_history_alone(win, qtbot, tmp_path, fmt):
    win.wb.edit(win.wb.scenario.replace(temperature=0.7), "Temperature 0.7")
    before = (win.wb.scenario, win.wb.undo_stack.count(), win.wb.undo_stack.index(), win.wb.dirty)
    path = tmp_path / f"t.{fmt}"
    seen: list[float] = []
    export = start_export(win, choice(fmt), path)
    assert export is not None
    export.progress.connect(seen.append)
    with qtbot.waitSignal(export.done, timeout=120_000) as done:
        pass
    ok, sentence = done.args
    assert ok, sentence
    assert sentence.startswith("Wrote an animation of 6 frames") and str(path) in sentence
    assert seen == pytest.approx([i / 6 for i in range(1, 7)], abs=1e-9)
    QApplication.processEvents()
    assert win.statusBar().currentMessage() == sentence
    frames = decode_mp4(path)[1] if fmt == "mp4" else decode_pillow(path)[0]
    assert len(frames) == (6 + 3 if fmt == "mp4" else 6)
    assert frames[0].shape == (SIZE[1], SIZE[0], 3)
    assert diff(frames[0], frames[5]) > 1.0
    after = (win.wb.scenario, win.wb.undo_stack.count(), win.wb.undo_stack.index(), win.wb.dirty)
    assert after == before


def test_cancel_stops_the_export_and_leaves_no_file(win, qtbot, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    path = out / "t.mp4"
    export = start_export(win, choice("mp4", Sweep("temperature", 0.1, 10, 200)), path)
    assert export is not None
    with qtbot.waitSignal(export.progress, timeout=60_000):
        pass
    with qtbot.waitSignal(export.done, timeout=10_000) as done:
        export.cancel()
    assert done.args == [False, "The animation export was cancelled; no file was written."]
    assert export.drawn < 200
    assert export.job.wait(30.0)  # the encoder stopped too
    QApplication.processEvents()
    assert list(out.iterdir()) == []


def test_a_panel_with_nothing_to_draw_is_said_so(win, tmp_path, monkeypatch):
    told: list[tuple[str, str]] = []
    monkeypatch.setattr(win, "_tell", lambda title, text: told.append((title, text)))
    assert start_export(win, choice(panel="routing_lab"), tmp_path / "r.gif") is None
    assert told and told[0][1].startswith("The animation was not written: ")
    assert not (tmp_path / "r.gif").exists()


def test_the_dialog_builds_the_sweep_or_refuses_it(qtbot):
    sc = resolve_scenario("river-bank")
    panels = {"heatmap": "Scores and weights", "context_lab": "Long-context stability"}
    dialog = AnimationDialog(panels, "heatmap", sc)
    qtbot.addWidget(dialog)
    got = dialog.choice()
    assert got.panel_id == "heatmap" and got.fmt == "gif" and got.size == (800, 600)
    assert got.sweep == Sweep("temperature", 0.1, 10.0, 60)
    dialog.quantity_box.setCurrentIndex(dialog.quantity_box.findData("vector"))
    dialog.token_box.setCurrentText("bank")
    dialog.axis_box.setCurrentText("water")
    assert dialog.choice().sweep == Sweep("vector", -1.0, 1.0, 60, (2, 1))
    dialog.quantity_box.setCurrentIndex(dialog.quantity_box.findData("k"))
    assert dialog.panel_box.currentData() == "context_lab"  # the one panel that shows k
    assert dialog.choice().sweep == Sweep("k", 0, 32, 33)
    panels["kernel_lab"] = "Kernel stepper"
    steps = AnimationDialog(panels, "heatmap", sc)
    qtbot.addWidget(steps)
    steps.quantity_box.setCurrentIndex(steps.quantity_box.findData("kernel"))
    assert steps.panel_box.currentData() == "kernel_lab" and not steps.frames_box.isEnabled()
    assert steps.choice().sweep == LabSteps("kernel")
    panels["stepper"] = "Training stepper"
    train = AnimationDialog(panels, "heatmap", sc)
    qtbot.addWidget(train)
    train.quantity_box.setCurrentIndex(train.quantity_box.findData("training"))
    train.every_box.setValue(20)
    assert train.panel_box.currentData() == "stepper"
    assert train.choice().sweep == TrainingRun(20, 31)
    train.panel_box.setCurrentIndex(train.panel_box.findData("heatmap"))
    with pytest.raises(ValueError, match="training stepper or the induction heads panel"):
        train.choice()
    dialog.quantity_box.setCurrentIndex(dialog.quantity_box.findData("temperature"))
    dialog.start_box.setValue(0.0)
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted
    assert dialog.refusal.text() == "The temperature runs from 0.001 to 1000, got 0"


def test_the_dialog_offers_the_undo_history_once_there_is_one(win, qtbot, tmp_path):
    from attnsim.export.history import HistoryReplay

    sc = win.wb.scenario
    bare = AnimationDialog({"heatmap": "Scores and weights"}, "heatmap", sc)
    qtbot.addWidget(bare)
    assert bare.quantity_box.findData("history") == -1  # nothing to replay yet
    win.wb.edit(sc.replace(temperature=0.5), "Temperature 0.5")
    win.wb.edit(win.wb.scenario.replace(temperature=3.0), "Temperature 3")
    replay = HistoryReplay.of(win.wb)
    dialog = AnimationDialog({"heatmap": "Scores and weights"}, "heatmap", sc, history=replay)
    qtbot.addWidget(dialog)
    dialog.quantity_box.setCurrentIndex(dialog.quantity_box.findData("history"))
    assert dialog.frames_box.value() == 3 and not dialog.frames_box.isEnabled()
    picked = dialog.choice()
    assert picked.sweep is replay
    export = start_export(win, AnimationChoice("heatmap", replay, "apng", 2, SIZE, 0, True),
                          tmp_path / "h.apng")  # fmt: skip
    assert export is not None
    with qtbot.waitSignal(export.done, timeout=60_000) as done:
        pass
    assert done.args[0], done.args[1]
    frames, durations = decode_pillow(tmp_path / "h.apng")
    assert len(frames) == 3 and durations == [500, 500, 500]
    assert win.wb.undo_stack.index() == 2 and win.wb.scenario.temperature == 3.0


def test_record_and_stop_keep_a_frame_per_change_for_the_export(win, qtbot, tmp_path):
    from attnsim.app.animation_export import toggle_recording
    from attnsim.viewmodels.context_lab import ContextLabState

    wb = win.wb
    t0 = wb.scenario.temperature
    wb.edit(wb.scenario.replace(temperature=0.3), "before the recording")
    toggle_recording(win)
    assert win.record_action.text() == "Stop recor&ding"
    drag = 41
    for t in (0.5, 0.8, 1.3):  # a drag: three moves, one undo step, three frames
        wb.edit(wb.scenario.replace(temperature=t), "Temperature", drag=drag)
    QApplication.processEvents()
    wb.set_lab_state(ContextLabState(k=6), "k = 6")
    QApplication.processEvents()
    toggle_recording(win)
    wb.edit(wb.scenario.replace(temperature=9.0), "after the recording")
    assert win.record_action.text() == "Recor&d for an animation"
    assert win.statusBar().currentMessage().startswith("Recorded 5 frames")
    replay = win._recorder.replay()
    assert [s.scenario.temperature for s in replay.states] == [0.3, 0.5, 0.8, 1.3, 1.3]
    assert [dict(s.labs)[ContextLabState].k for s in replay.states] == [4, 4, 4, 4, 6]
    assert [s.caption for s in replay.states] == ["start of the recording", *["“Temperature”"] * 3,
                                                  "“k = 6”"]  # fmt: skip
    export = start_export(win, AnimationChoice("heatmap", replay, "gif", 4, SIZE, 0, False),
                          tmp_path / "r.gif")  # fmt: skip
    assert export is not None
    with qtbot.waitSignal(export.done, timeout=60_000) as done:
        pass
    assert done.args[0], done.args[1]
    frames, _ = decode_pillow(tmp_path / "r.gif")
    assert len(frames) == 4  # the last two frames look the same in the heatmap: merged
    assert t0 != 0.3 and wb.scenario.temperature == 9.0


def test_a_window_deleted_mid_export_stops_the_encoder_and_leaves_no_file(qtbot, home, tmp_path):
    import shiboken6

    other = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: False,
                       restore_layout=False)  # fmt: skip
    other.show()
    qtbot.waitExposed(other)
    out = tmp_path / "out"
    out.mkdir()
    export = start_export(other, choice("mp4", Sweep("temperature", 0.1, 10, 500)), out / "t.mp4")
    assert export is not None
    with qtbot.waitSignal(export.progress, timeout=60_000):
        pass
    job = export.job
    other.wb.close()
    shiboken6.delete(other)  # the window and its children (the export) go at once
    assert job.wait(30.0)  # the encoder returned: nothing waits for frames that never come
    QApplication.processEvents()
    assert list(out.iterdir()) == []
