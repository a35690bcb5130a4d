"""Frames of an animation: one panel drawn offscreen at a sequence of workbench states.

The frames go through the same path as a still figure (:func:`~attnsim.export.figure.figure_of`
in content mode, then :func:`~attnsim.export.figure.render_image`), so a frame looks like the
PNG export of that state. They are drawn from a workbench of their own, a copy of the user's
scenario, selection and lab settings: the user's undo stack, panels and background work are
never touched, and nothing is grabbed from the screen. The panel is a new one of the chosen
kind, laid out at the frame size and never shown on screen.

Each frame is exactly the requested size: the figure is drawn at 1 pixel per screen pixel in
the middle of a white frame, or smaller where it would not fit. The caption (the swept value)
is the figure's title, as a still export's title.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QRadioButton, QTabWidget, QWidget

from attnsim.engine.numbers import fmt_significant
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS

from .figure import NothingToDrawError, figure_of, render_image
from .history import HistoryReplay
from .steps import STEP_NAMES, LabSteps, TrainingRun
from .sweeps import Sweep

# One frame: the scenario to show (None: unchanged), the lab state (None: unchanged), and the
# caption, or a function that brings the frame's state about (training) and returns it.
Step = tuple[Scenario | None, object | None, str | Callable[[], str]]
Plan = Sweep | LabSteps | TrainingRun | HistoryReplay
WHAT_SHOWS = {"k": "the number of distractor keys", **STEP_NAMES}

__all__ = [
    "FrameRenderer",
    "copy_view",
    "fit_into",
    "frame_plan",
    "image_pixels",
    "panel_ids",
    "sweep_frames",
]


def panel_ids() -> list[str]:
    return [s.panel_id for s in PANEL_SPECS]


def image_pixels(image: QImage) -> np.ndarray:
    """A QImage as an RGB uint8 array (height, width, 3)."""
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    return raw[:, : 3 * w].reshape(h, w, 3).copy()


def fit_into(image: QImage, size: tuple[int, int]) -> QImage:
    """``image`` in the middle of a white ``size`` (width, height), shrunk if it is larger."""
    w, h = size
    frame = QImage(w, h, QImage.Format.Format_RGB32)
    frame.fill(QColor("white"))
    src = QImage(image)
    src.setDevicePixelRatio(1.0)
    if src.width() > w or src.height() > h:
        src = src.scaled(w, h, Qt.AspectRatioMode.KeepAspectRatio,
                         Qt.TransformationMode.SmoothTransformation)  # fmt: skip
    painter = QPainter(frame)
    try:
        painter.drawImage(QPoint((w - src.width()) // 2, (h - src.height()) // 2), src)
    finally:
        painter.end()
    return frame


def copy_view(src: QWidget, dst: QWidget) -> int:
    """Show in ``dst`` (a new panel) what ``src`` (the same kind of panel, on screen) shows: the
    choice of every combo box, check box, radio button and tab page, matched in the order the
    panel builds them. They change the new panel's own workbench only. Returns how many."""
    count = 0
    for kind in (QTabWidget, QComboBox, QCheckBox, QRadioButton):
        pairs = zip(src.findChildren(kind), dst.findChildren(kind), strict=False)
        for a, b in pairs:
            if kind is QTabWidget or kind is QComboBox:
                if a.count() == b.count() and a.currentIndex() != b.currentIndex():
                    b.setCurrentIndex(a.currentIndex())
                    count += 1
            elif a.isChecked() != b.isChecked():
                b.setChecked(a.isChecked())
                count += 1
    QApplication.processEvents()
    return count


def room_for_the_figure(panel: QWidget, size: tuple[int, int]) -> None:
    """Grow ``panel`` (shown, laid out at ``size``) by what its controls take, so that its
    figure, which leaves them out, is about ``size`` rather than shrunk into it: in a 320 x 240
    frame the heatmap's controls took half the height and its cells were a pixel high."""
    fig = panel.figure_widget()  # type: ignore[attr-defined]
    if fig is panel:
        return
    for _ in range(2):  # (rows of controls wrap differently at the wider panel: once more)
        short = QSize(max(size[0] - fig.width(), 0), max(size[1] - fig.height(), 0))
        if short.isNull():
            return
        panel.resize((panel.size() + short).boundedTo(QSize(8000, 8000)))
        QApplication.processEvents()


class FrameRenderer:
    """Draws panel ``panel_id`` of a private copy of ``source`` (a workbench) at ``size``."""

    def __init__(self, source: Workbench | Scenario, panel_id: str,
                 size: tuple[int, int] = (800, 600), *,
                 like: QWidget | None = None) -> None:  # fmt: skip
        spec = next((s for s in PANEL_SPECS if s.panel_id == panel_id), None)
        if spec is None:
            raise ValueError(f"unknown panel {panel_id!r}; choose from {', '.join(panel_ids())}")
        if not all(100 <= v <= 8000 for v in size):
            raise ValueError(f"a frame is 100 to 8000 pixels a side, got {size[0]}x{size[1]}")
        self.size = (int(size[0]), int(size[1]))
        wb = source if isinstance(source, Workbench) else None
        self.wb = Workbench(wb.scenario if wb is not None else source)
        # the user's training model and rate, read without making a session on their workbench
        held = getattr(wb, "_training", None)
        self.training = None if held is None else (held.model_name, held.lr)
        self.wb.undo_stack.setUndoLimit(1)  # the edits below need no history
        if wb is not None:
            self.wb.restore_lab_states(wb.lab_states())
            self.wb.set_receiving(wb.receiving)
            self.wb.set_focused_head(wb.focused_head)
        self.panel = spec.load()(self.wb)
        self.panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.panel.resize(*self.size)
        self.panel.show()
        QApplication.processEvents()
        room_for_the_figure(self.panel, self.size)
        if like is not None:
            copy_view(like, self.panel)
        self.panel.flush()
        why = self.panel.figure_unavailable()
        if why:
            self.close()
            raise NothingToDrawError(why)

    def set_scenario(self, sc: Scenario) -> None:
        if not sc.equals(self.wb.scenario):
            self.wb.edit(sc, "Animation frame")

    def set_lab(self, state: object) -> None:
        self.wb.restore_lab_states({type(state): state})

    def render(self, caption: str = "") -> np.ndarray:
        """The panel's figure for the current state, as an RGB frame of :attr:`size`."""
        self.panel.flush()
        fig = figure_of(self.panel, "figure", caption or None)
        return image_pixels(fit_into(render_image(fig, 1.0), self.size))

    def close(self) -> None:
        self.panel.hide()
        self.panel.deleteLater()
        self.wb.close()


def frame_plan(renderer: FrameRenderer, sweep: Plan) -> list[Step]:
    """What each frame of ``sweep`` shows on ``renderer``'s panel: (scenario, lab state,
    caption), the scenario None where a lab's state changes, the lab state None where the
    scenario does."""
    base = renderer.wb.scenario
    if sweep.panel is not None and renderer.panel.panel_id != sweep.panel:
        title = next(s.title for s in PANEL_SPECS if s.panel_id == sweep.panel)
        what = WHAT_SHOWS.get(sweep.quantity, sweep.quantity)
        raise ValueError(f"{what} shows only in the {title} panel, not in {renderer.panel.title}")
    if isinstance(sweep, TrainingRun):
        if sweep.panel == "induction_lab":
            return _induction_plan(renderer, sweep)
        return _training_plan(renderer, sweep)
    if isinstance(sweep, HistoryReplay):
        return [(st.scenario, None, _with_labs(renderer, st.labs, st.caption))
                for st in sweep.states]  # fmt: skip
    if sweep.panel is None:
        return [(sweep.scenario_at(base, v), None, sweep.caption(v, base))  # type: ignore[union-attr]
                for v in sweep.values()]  # type: ignore[union-attr]  # fmt: skip
    kind = type(renderer.panel).settings.state_type  # type: ignore[attr-defined]
    state = renderer.wb.lab_state(kind)
    if isinstance(sweep, LabSteps):
        return [(None, st, text) for st, text in sweep.states(base, state)]
    return [(None, sweep.lab_at(state, v), sweep.caption(v, base)) for v in sweep.values()]


def sweep_frames(
    renderer: FrameRenderer,
    sweep: Plan,
    *,
    caption: bool = False,
    progress: Callable[[float], None] | None = None,
    plan: list[Step] | None = None,
) -> Iterator[np.ndarray]:
    """The frames of ``sweep`` (or of its ``plan``) on ``renderer``'s panel, drawn one at a time
    as they are asked for (a writer streaming them keeps none)."""
    steps = frame_plan(renderer, sweep) if plan is None else plan
    for i, (sc, lab, text) in enumerate(steps):
        if sc is not None:
            renderer.set_scenario(sc)
        if lab is not None:
            renderer.set_lab(lab)
        if callable(text):
            text = text()
        yield renderer.render(text if caption else "")
        if progress is not None:
            progress((i + 1) / len(steps))


def _training_plan(renderer: FrameRenderer, run: TrainingRun) -> list[Step]:
    """The stepper's model (the user's choice of model and learning rate) trained from its
    start on the renderer's own session: the user's training is not touched."""
    session = renderer.wb.training
    if renderer.training is not None:
        model, lr = renderer.training
        if model != session.model_name:
            session.set_model(model)
        session.set_lr(lr)
    session.reset()

    def frame(i: int) -> Callable[[], str]:
        def train() -> str:
            if i > 0:
                session.train(run.every)
            losses = session.history.loss
            loss = f": loss {fmt_significant(float(losses[-1]))}" if len(losses) else ""
            return f"after {session.steps} training step{'s' if session.steps != 1 else ''}{loss}"

        return train

    return [(None, None, frame(i)) for i in range(run.frames)]


def _with_labs(renderer: FrameRenderer, labs: tuple[tuple[type, object], ...],
               caption: str) -> Callable[[], str]:  # fmt: skip
    def apply() -> str:
        for _, state in labs:
            renderer.set_lab(state)
        return caption

    return apply


def _induction_plan(renderer: FrameRenderer, run: TrainingRun) -> list[Step]:
    """The induction lab's model (the lab's settings: shape, seed, rate) trained from its seed's
    weights by the new panel's own session, on its own workbench's runner."""
    session = renderer.panel.session  # type: ignore[attr-defined]
    session.reset()

    def frame(i: int) -> Callable[[], str]:
        def train() -> str:
            target = i * run.every
            for _ in range(10_000):  # a chunk that stops short is followed by the rest
                if session.step_count >= target:
                    break
                if not session.busy:
                    session.step(target - session.step_count)
                session.wait(600.0)
            point = session.curve[-1]
            return (f"after {session.step_count} training steps: loss on the repeated half "
                    f"{fmt_significant(point.repeated_loss)}")  # fmt: skip

        return train

    return [(None, None, frame(i)) for i in range(run.frames)]
