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
