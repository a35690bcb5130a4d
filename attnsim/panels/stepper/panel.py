"""The training stepper: follow one sentence from lookup to an update, then watch training.

The workbench's :class:`~attnsim.model.training_session.TrainingSession` (``wb.training``)
owns the training run (not scenario state, not undoable); this panel observes it. Eight
stages show the engine's numbers and the two-coordinate vectors as arrows; two pyqtgraph
curves follow the loss and the reading token's attention to the clue word. "Send to
workbench" makes the trained head the current scenario through one undoable edit.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from attnsim.model.training_session import TrainingSession
from attnsim.model.workbench import Workbench
from attnsim.panels.placed_first import RedrawsAfterPlacing
from attnsim.viewmodels.stepper import (
    DatasetError,
    StageContent,
    StepSnapshot,
    controls_state,
    dataset_text,
)
from attnsim.viewmodels.stepper import build_stage as _build_stage

from ..base import Panel, content_parts
from ..widgets import AdaptiveSplit
from .controls import DivergenceAlert, StepperControls
from .curves import Curves
from .dataset_editor import DatasetEditor
from .number_blocks import fmt_num
from .stage_view import StageView

# Widgets of the sub-views that tests and callers reach through the panel.
_CONTROL_NAMES = (
    "model_box", "sentence_box", "lr_box", "send_button", "prev_button", "stage_group",
    "stage_buttons", "next_button", "apply_button", "next_sentence_button", "train_button",
    "play_button", "speed_box", "reset_button", "plane_box", "status",
)  # fmt: skip
_ALERT_NAMES = ("divergence_label", "divergence_reset", "lr_warning")
_EDITOR_NAMES = ("dataset_edit", "use_dataset_button", "restore_dataset_button", "dataset_message")
_CURVE_NAMES = ("loss_plot", "clue_plot", "legend")


def build_stage(snap: StepSnapshot, stage: int, plane_mode: str = "first") -> StageContent:
    """:func:`attnsim.viewmodels.stepper.build_stage` with the stepper's cell format."""
    return _build_stage(snap, stage, plane_mode, fmt=fmt_num)


class StepperPanel(RedrawsAfterPlacing, Panel):
    """Train the tiny one-head sense classifier one stage, one step or many steps at a time."""

    panel_id = "stepper"
    title = "Training stepper"

    def shows_scenario(self) -> bool:
        return False  # its picture is its own state's, not the scenario's

    def __init__(
        self,
        workbench: Workbench,
        parent: QWidget | None = None,
        session: TrainingSession | None = None,
    ) -> None:
        super().__init__(workbench, parent)
        # The workbench owns the run, so it outlives a closed or rebuilt panel; with no panel
        # left to show it, continuous training has no reason to go on.
        self.session = session if session is not None else workbench.training
        self.destroyed.connect(self.session.pause)
        self.plane_mode = "first"
        self.content: StageContent | None = None
        self._structure_dirty = True
        self._build()
        self._connect()
        # The curves, the dataset and the layout in a turn of their own when the window opens
        # the stepper (see Panel.build_later).
        self.build_later(self._build_tabs)
        self.build_later(self._build_clue_plot)
        s = self.session
        for signal in (s.stage_changed, s.snapshot_changed, s.params_changed, s.history_changed,
                       s.running_changed, s.diverged_changed):  # fmt: skip
            signal.connect(self._on_session)
        s.model_changed.connect(self._on_model)
        self.schedule_refresh()

    # The stepper draws training state, not the scenario: workbench edits need no redraw.
    def _on_changed(self, what: frozenset[str]) -> None:
        pass

    def _on_selection(self) -> None:
        pass

    def _on_session(self, *_: object) -> None:
        self.schedule_refresh()

    def _on_model(self, *_: object) -> None:
        self._structure_dirty = True
        self.schedule_refresh()

    # ---- widgets ----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        self.controls = StepperControls()
        layout.addWidget(self.controls)
        self.alert = DivergenceAlert()
        layout.addWidget(self.alert)
        self.stage_view = StageView()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.stage_view)
        self.stage_view.fit_to(self.scroll.viewport())
        for names, view in ((_CONTROL_NAMES, self.controls), (_ALERT_NAMES, self.alert)):
            for name in names:
                setattr(self, name, getattr(view, name))

    def _build_tabs(self) -> None:
        self.tabs = QTabWidget()
        self.curves = Curves(later=True)  # its second plot in a part of its own
        self.tabs.addTab(self.curves, "Curves")
        self.editor = DatasetEditor()
        self.tabs.addTab(self.editor, "Dataset")
        # The stage beside the curves in a wide dock, above them in a tall narrow one, and on
        # its own tab in a small one (where both side by side would be too cramped to read).
        self.split = AdaptiveSplit(
            self.scroll,
            self.tabs,
            ("Stage", "Curves · dataset"),
            ratio=0.64,
            side_width=660,
            stack_height=640,
        )
        self.layout().addWidget(self.split, 1)
        for name in _EDITOR_NAMES:
            setattr(self, name, getattr(self.editor, name))
        s = self.session
        self.editor.use_requested.connect(self.use_dataset_text)
        self.editor.restore_requested.connect(lambda: s.set_model(s.model_name))

    def _build_clue_plot(self) -> None:
        self.curves.add_clue_plot()
        for name in _CURVE_NAMES:
            setattr(self, name, getattr(self.curves, name))

    def _connect(self) -> None:
        c, s = self.controls, self.session
        c.model_picked.connect(self._model_picked)
        c.sentence_picked.connect(self._sentence_picked)
        c.stage_picked.connect(self._stage_clicked)
        c.speed_picked.connect(self._speed_picked)
        c.plane_picked.connect(self._plane_picked)
        c.lr_box.valueChanged.connect(self._lr_changed)
        c.lr_box.refused.connect(lambda why: self.refuse(ValueError(f"learning rate: {why}")))
        c.send_button.clicked.connect(self.send_to_workbench)
        c.prev_button.clicked.connect(self.session_previous)
        c.next_button.clicked.connect(self.session_next)
        c.apply_button.clicked.connect(lambda: s.apply_update())
        c.next_sentence_button.clicked.connect(lambda: s.next_sentence())
        c.train_button.clicked.connect(lambda: s.train(20))
        c.play_button.clicked.connect(lambda: s.toggle_play())
        c.reset_button.clicked.connect(lambda: s.reset())
        self.alert.divergence_reset.clicked.connect(lambda: s.reset())

    @property
    def _loss_items(self) -> list:
        return self.curves.loss_items

    @property
    def _clue_items(self) -> list:
        return self.curves.clue_items

    # ---- user actions -------------------------------------------------------------------------
    def session_next(self) -> None:
        self.session.next_stage()

    def session_previous(self) -> None:
        self.session.previous_stage()

    def _stage_clicked(self, k: int) -> None:
        if not self.is_updating:
            self.session.set_stage(k)

    def _model_picked(self, name: str) -> None:
        if not self.is_updating:
            self.session.set_model(name)

    def _sentence_picked(self, index: int) -> None:
        if not self.is_updating:
            self.session.choose_sentence(index)

    def _lr_changed(self, value: float) -> None:
        if self.is_updating:
            return
        try:
            self.session.set_lr(float(value))
        except ValueError as exc:
            self.refuse(exc)
        self.schedule_refresh()

    def _speed_picked(self, speed: int) -> None:
        if not self.is_updating:
            self.session.set_speed(speed)

    def _plane_picked(self, mode: str) -> None:
        if not self.is_updating:
            self.plane_mode = mode
            self.stage_view.reset_scale()  # a new projection
            self.schedule_refresh()

    def use_dataset_text(self, text: str | None = None) -> bool:
        """Train the current model on the editor's sentences; refuse bad lines, naming them."""
        if text is None:
            text = self.editor.dataset_edit.toPlainText()
        try:
            ds = self.session.set_dataset_text(text)
        except DatasetError as exc:
            self.editor.show_message(f"Refused: {self.refuse(exc)}", refused=True)
            return False
        self.editor.show_message(
            f"Training {self.session.model_name}'s architecture on {len(ds.sentences)} "
            f"sentences, {len(ds.vocab)} words, labels {', '.join(ds.classes)}.",
            refused=False,
        )
        self.wb.say(f"Training stepper: new dataset with {len(ds.sentences)} sentences")
        return True

    def send_to_workbench(self) -> bool:
        """Make the trained head on the followed sentence the current scenario (undoable)."""
        # A new untitled document: File > Save must not write it over the user's file.
        text = f"Send trained head ({self.session.spec.name}, {self.session.steps} updates)"
        if not self.propose(self.session.scenario, text, new_document=True):
            return False
        sc = self.wb.scenario
        self.wb.say(
            f"The workbench now shows the trained head on “{' '.join(sc.tokens)}” "
            f"(axes {', '.join(sc.axes)})"
        )
        return True

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widget(self) -> QWidget:
        """The current stage (title, numbers and the arrow plane)."""
        return self.stage_view

    def figure_widgets(self) -> list[QWidget]:
        # The stage and, where they are on screen (not on a tab behind it), the loss curves.
        c = self.curves
        return content_parts(self, self.stage_view, c.legend, c.loss_plot, c.clue_plot)

    def refresh(self) -> None:
        s = self.session
        with self.updating():
            if self._structure_dirty:
                self._rebuild_structure()
            div = s.divergence
            state = controls_state(
                stage=s.stage, example=s.example, lr=s.lr, speed=s.speed, applied=s.applied,
                running=s.running, steps=s.steps,
                last_loss=s.history.loss[-1] if s.history.n else None,
                optimizer=s.spec.optimizer, d=s.snapshot.d,
                divergence=None if div is None else div.text(), lr_warning=s.lr_warning(),
            )  # fmt: skip
            self.controls.refresh(state)
            self.alert.refresh(state)
        self.content = build_stage(s.snapshot, s.stage, self.plane_mode)
        self.stage_view.refresh(self.content)
        self.curves.refresh(s.history)

    def _rebuild_structure(self) -> None:
        """After a model or dataset change: sentence list, editor text, one curve per sentence."""
        s = self.session
        self._structure_dirty = False
        ds = s.dataset
        sentences = [
            f"{i + 1}: {' '.join(tokens)} = {ds.classes[label]}"
            for i, (tokens, label) in enumerate(ds.sentences)
        ]
        self.controls.set_structure(s.model_name, sentences, s.snapshot.d > 2)
        self.editor.set_text(dataset_text(ds))
        self.stage_view.reset_scale()  # a new model: fit the plane again
        self.curves.rebuild(ds)
