"""The stepper's stage view in its scroll area: a resize lays the stage out a few times at most."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from attnsim.panels.stepper import StepperPanel
from attnsim.panels.stepper import stage_view as _stepper_views


def test_the_vertical_scroll_bar_cannot_make_the_stage_relayout_without_end(
    make_wb, show_panel, monkeypatch
):
    # Laid out for the viewport's own width, a stage that needed the vertical bar narrowed the
    # viewport, the narrower layout did not need it, and so on: 133 layouts for one resize at
    # 780 x 240, and 2.3 s of CPU in the GUI monkey.
    layouts = [0]
    real = _stepper_views.StageView._layout

    def counting(self, width):
        layouts[0] += 1
        return real(self, width)

    monkeypatch.setattr(_stepper_views.StageView, "_layout", counting)
    panel = show_panel(StepperPanel(make_wb("river-bank")), size=(600, 500))
    worst = (0, None)
    for height in (240, 320):
        for width in range(300, 1000, 8):
            layouts[0] = 0
            panel.resize(width, height)
            QApplication.processEvents()
            QApplication.processEvents()
            worst = max(worst, (layouts[0], (width, height)))
    assert worst[0] <= 4, f"{worst[0]} layouts for one resize to {worst[1]}"


# ---- the sub-views on their own: refresh(state) in, gestures out as signals ------------------
def _state(**changes):
    from attnsim.viewmodels.stepper import controls_state

    values = dict(stage=1, example=0, lr=0.5, speed=10, applied=False, running=False,
                  steps=0, last_loss=None, optimizer="sgd", d=2, divergence=None,
                  lr_warning="")  # fmt: skip
    return controls_state(**{**values, **changes})


def test_the_controls_show_a_state_and_report_picks(qtbot):
    from attnsim.engine.training import MODELS
    from attnsim.panels.stepper.controls import StepperControls

    controls = StepperControls()
    qtbot.addWidget(controls)
    picked: list[object] = []
    for signal in (controls.model_picked, controls.sentence_picked, controls.stage_picked,
                   controls.speed_picked, controls.plane_picked):  # fmt: skip
        signal.connect(picked.append)
    names = list(MODELS)
    controls.set_structure(names[0], ["1: a b = x", "2: c d = y"], plane_enabled=False)
    assert picked == []  # the structure is not a gesture
    assert controls.sentence_box.count() == 2 and not controls.plane_box.isEnabled()
    controls.refresh(_state(stage=8, example=1, running=True, steps=3, last_loss=0.25))
    assert controls.stage_buttons[7].isChecked() and controls.sentence_box.currentIndex() == 1
    assert controls.play_button.isChecked() and controls.play_button.text() == "❚❚ Pause"
    assert not controls.next_button.isEnabled() and controls.prev_button.isEnabled()
    assert controls.status.text() == "3 updates · loss 0.25"
    picked.clear()  # the refresh moved the sentence box; the panel ignores that while updating
    controls.model_box.setCurrentIndex(1)
    controls.speed_box.setCurrentIndex(controls.speed_box.findData(120))
    controls.stage_buttons[2].click()
    assert picked == [names[1], 120, 3]


def test_the_alert_takes_no_room_until_it_has_something_to_say(qtbot):
    from attnsim.panels.stepper.controls import DivergenceAlert

    alert = DivergenceAlert()
    qtbot.addWidget(alert)
    alert.show()
    alert.refresh(_state())
    assert alert.isHidden()
    alert.refresh(_state(lr_warning="lr 10 may diverge"))
    assert not alert.isHidden() and alert.lr_warning.isVisible()
    assert not alert.divergence_label.isVisible()
    alert.refresh(_state(lr_warning="lr 10 may diverge", divergence="diverged at step 4"))
    assert alert.divergence_label.text() == "Training diverged at step 4."
    assert alert.divergence_reset.isVisible() and not alert.lr_warning.isVisible()


def test_the_dataset_editor_hands_its_text_over(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from attnsim.panels.stepper.dataset_editor import DatasetEditor

    editor = DatasetEditor()
    qtbot.addWidget(editor)
    asked: list[str] = []
    editor.use_requested.connect(asked.append)
    editor.set_text("a b = x\nc d = y")
    QTest.mouseClick(editor.use_dataset_button, Qt.MouseButton.LeftButton)
    assert asked == ["a b = x\nc d = y"]
    editor.show_message("Refused: line 1", refused=True)
    assert editor.dataset_message.text() == "Refused: line 1"
    assert "B00020" in editor.dataset_message.styleSheet()


def test_opened_in_steps_the_two_curve_plots_are_made_in_parts_of_their_own(make_wb, qtbot):
    from attnsim.panels.base import parts_built_later

    with parts_built_later():
        panel = StepperPanel(make_wb("bank-river"))
    qtbot.addWidget(panel)
    assert not hasattr(panel, "curves")
    assert panel.build_next_part()  # the tabs, the dataset and the loss plot
    assert panel.curves.loss_plot is not None and not hasattr(panel.curves, "clue_plot")
    assert panel.build_next_part()  # the clue plot
    assert panel.clue_plot is panel.curves.clue_plot and panel.loss_plot is panel.curves.loss_plot
    assert panel.curves.layout().indexOf(panel.clue_plot) == 2  # under the legend and the loss
    assert not panel.build_next_part()
