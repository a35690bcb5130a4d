"""The induction-head lab: train a small attention-only transformer on repeated sequences in
the background, watch the repeated half's loss fall away as an induction head forms, ablate
heads, read a head's circuits, and send a head to the rest of the workbench.

Settings and ablations are the lab state :class:`InductionLabState` (undoable); training steps
belong to the :class:`InductionSession` and stay outside undo; the selected head is a view
choice. "Send head to workbench" is one scenario edit.

While training, a frame must stay cheap (see ``induction_repaint_training``), so the heavy parts
follow the weights at a lower rate, by this rule: the scores, the losses and the step count are
redrawn together from each chunk's weights, then the pattern grid, each curve plot and the
enlarged head, each in a turn of its own (:mod:`.stages`: a chunk's redraw spread over a few
frames); the circuits (QK / OV, copying, composition) follow at most every
:data:`HEAVY_EVERY_S`, after those, and state the step of the weights they show; the ablation
table is measured only when training pauses. When training pauses, the selected head, the
preset or the settings change, everything is redrawn at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPushButton, QWidget

from attnsim.engine.induction import Array, config_of
from attnsim.model.induction_session import TRAIN_JOB, CurvePoint, InductionSession
from attnsim.model.runner import Job
from attnsim.model.workbench import LabChange, Workbench
from attnsim.viewmodels.induction_lab import (
    CircuitView,
    CompositionView,
    InductionLabState,
    LabView,
    ablation_view,
    circuit_view,
    composition_view,
    head_scenario,
    lab_view,
    preset_params,
)

from ..base import content_parts
from ..lab import LabPanel
from ..widgets import AdaptiveSplit, CaptionLabel
from .controls import ControlsView
from .heads import HeadsView
from .patterns import PatternsView, head_name
from .stages import Stages

ABLATION_JOB = "induction_lab.ablations"
COMPOSITION_JOB = "induction_lab.composition"
HEAVY_EVERY_S = 0.25  # while training, the circuits follow the weights at most this often


@dataclass(frozen=True)
class _Frame:
    """What one redraw shows, taken at one moment: the weights, the settings, the step they
    were trained to, the speed and the curves so far; ``measured()`` adds their view."""

    params: dict[str, Array]
    state: InductionLabState
    selected: tuple[int, int] | None
    step: int
    steps_per_s: float
    curve: tuple[CurvePoint, ...]
    view: LabView | None = None

    def measured(self) -> _Frame:
        return replace(self, view=lab_view(self.params, self.state))


def _measure(
    state: InductionLabState, selected: tuple[int, int] | None, params: dict[str, Array]
) -> tuple[LabView, tuple[CircuitView, CompositionView] | None]:
    """What the lab shows of one chunk's weights, measured by the chunk itself on the worker
    (:meth:`InductionSession.measure_with`): the patterns, scores and losses, and the selected
    head's circuits. The GUI thread then only draws them."""
    view = lab_view(params, state)
    circuits = None
    if selected is not None and selected[0] < view.n_layers and selected[1] < view.n_heads:
        circuits = (circuit_view(params, state, *selected), composition_view(params))
    return view, circuits


class InductionLabPanel(LabPanel):
    """Training curves, the pattern grid, per-head scores and ablations, circuits.

    Its settings come from one form as a whole state and its training steps stay outside
    undo, so it keeps its own edits and shares the rest of :class:`LabPanel`."""

    panel_id = "induction_lab"
    title = "Induction heads"
    state_type = InductionLabState

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self.selected: tuple[int, int] | None = None
        self.view: LabView | None = None
        self._view_key: tuple | None = None
        self._ablation_job: Job | None = None
        self._composition_job: Job | None = None
        self._measure_all = False  # set by a figure export: it shows the untrained table too
        self._circuits_key: tuple | None = None
        self._circuits_at = -HEAVY_EVERY_S  # time.monotonic() of their last redraw
        self._circuits_timer = QTimer(self)
        self._circuits_timer.setSingleShot(True)
        # a part of its own after those of the chunk's redraw still left (see Stages)
        self._circuits_timer.timeout.connect(self._circuits_later)
        self.stages = Stages(self)
        self._shown: tuple | None = None  # (state, selected head) of the last redraw
        # the workbench's: a lesson reads and trains the same model
        self.session: InductionSession = workbench.induction
        self.session.updated.connect(self.schedule_refresh)
        self.destroyed.connect(lambda *_, r=workbench.runner: r.cancel(TRAIN_JOB))
        self.destroyed.connect(lambda *_, s=self.session: s.measure_with(None, None))

        self.send_button = QPushButton("Send head to workbench")
        self.send_button.setToolTip(
            "The selected head on the sample sequence becomes the workbench's scenario "
            "(its queries, keys and values), so every other panel shows it"
        )
        self.send_button.clicked.connect(self.send_head)
        self.controls = ControlsView(extra=(self.send_button,))
        self.controls.edited.connect(self._settings_edited)
        self.controls.refused.connect(lambda why: self.show_refusal(self.refuse(ValueError(why))))
        self.controls.play_toggled.connect(self._play_toggled)
        self.controls.step_clicked.connect(lambda: self.session.step())
        self.controls.reset_clicked.connect(self.session.reset)
        self.session.running_changed.connect(self.controls.show_running)
        self.session.running_changed.connect(self._finish_stages)
        self.patterns = PatternsView()
        self.patterns.head_clicked.connect(self.select_head)
        self.heads = HeadsView()
        self.heads.toggled.connect(self.toggle_head)
        self.heads.mode_changed.connect(self._mode_changed)
        self.note = CaptionLabel("")
        self.note.setWordWrap(True)
        layout = self.lab_layout
        layout.addWidget(self.controls)
        layout.addWidget(self.refusal)
        layout.addWidget(self.note)
        # The plots (one, then the other), the circuits, then the layout, each in a turn of its
        # own when the window opens the lab (see Panel.build_later); their modules are imported
        # in their turns too.
        for part in (_build_curves, _build_score_plot, _build_circuits, _build_rest):
            self.build_later(partial(part, self))

    # ---- state --------------------------------------------------------------------------------
    def params(self) -> dict[str, Array]:
        """The weights the lab shows: a preset's, or the training session's latest."""
        fixed = preset_params(self.state())
        return self.session.params if fixed is None else fixed

    def _on_lab(self, change: LabChange) -> None:  # LabPanel's, which this one extends
        if change.kind is InductionLabState:
            self.schedule_refresh()  # the session follows the settings (Workbench.induction)

    def _settings_edited(self, state: InductionLabState) -> None:
        if self.is_updating:
            return
        old = self.state()
        changed = [
            f"{k} {getattr(old, k)} → {getattr(state, k)}"
            for k in ("preset", "seed", "lr", "n_layers", "n_heads", "d_model", "d_vocab",
                      "half_len")
            if getattr(old, k) != getattr(state, k)
        ]  # fmt: skip
        self.propose(lambda: state, f"Induction lab: {', '.join(changed) or 'settings'}")

    def toggle_head(self, layer: int, head: int) -> None:
        if self.is_updating:
            return
        state = self.state()
        verb = "Restore" if (layer, head) in state.ablated else "Ablate"
        self.propose(lambda: state.with_head_toggled(layer, head), f"{verb} head L{layer}H{head}")

    def _mode_changed(self, mode: str) -> None:
        if self.is_updating:
            return
        self.propose(
            lambda: replace(self.state(), ablation_mode=mode), f"Ablate by {mode} (induction lab)"
        )

    def select_head(self, layer: int, head: int) -> None:
        self.selected = (layer, head)
        self._view_key = None  # redraw the enlargement and circuits
        self.schedule_refresh()

    def send_head(self) -> None:
        if self.selected is None:
            return
        layer, head = self.selected
        params, state = self.params(), self.state()
        self.propose(
            lambda: head_scenario(params, state, layer, head),
            f"Send head {head_name(layer, head)} to the workbench",
        )

    def _play_toggled(self) -> None:
        if self.session.running:
            self.session.pause()
        else:
            self.session.play()

    # ---- drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        state = self.state()
        with self.updating():
            self.controls.show_settings(state)
            self.controls.show_running(self.session.running)
        trained = state.preset == "train"
        self.controls.speed.setVisible(trained)
        params = self.params()
        cfg = config_of(params)
        if (
            self.selected is None
            or self.selected[0] >= cfg.n_layers
            or self.selected[1] >= (cfg.n_heads)
        ):
            # the default head before the weights are measured, so that the chunks measure
            # for the head on show from the first (see _measured)
            self.selected = (cfg.n_layers - 1, 0)
        key = (self.session.version, state, self.selected)
        if key == self._view_key:
            return
        self._view_key = key
        frame = _Frame(
            params, state, self.selected, self.session.step_count,
            self.session.steps_per_s, tuple(self.session.curve) if trained else (),
        )  # fmt: skip
        # The next chunks measure their own weights on the worker; these were measured there
        # if they came from a chunk that knew these settings and this head.
        self.session.measure_with(
            (state, self.selected), partial(_measure, state, self.selected) if trained else None
        )
        got = self._measured(state)
        self._show_frame(frame.measured() if got is None else replace(frame, view=got[0]))

    def _measured(
        self, state: InductionLabState
    ) -> tuple[LabView, tuple[CircuitView, CompositionView] | None] | None:
        """What the latest chunk measured, if it measured the weights, settings and head on
        show (see :func:`_measure`)."""
        got = self.session.measured
        if state.preset != "train" or got is None:
            return None
        version, key, value = got
        if version != self.session.version or key != (state, self.selected):
            return None
        return value  # type: ignore[return-value]

    def _show_frame(self, frame: _Frame) -> None:
        state = self.state()
        if frame.state != state or frame.selected != self.selected:
            return  # an edit came in meanwhile; its own refresh draws it
        view = self.view = frame.view
        assert view is not None
        n_l, n_h = view.n_layers, view.n_heads
        if self.selected is None or self.selected[0] >= n_l or self.selected[1] >= n_h:
            self.selected = (n_l - 1, 0)
            self._view_key = (self.session.version, state, self.selected)
        # only new weights while training: the rest of the redraw in turns of its own
        staged = self._shown == (state, self.selected) and (
            self.session.busy or self.session.running
        )
        self._shown = (state, self.selected)
        self.controls.show_speed(frame.step, frame.steps_per_s)
        with self.updating():
            self.heads.refresh(view, state.ablation_mode)
        self.curves.setVisible(state.preset == "train")
        self.note.set_caption(*_note(state, view))
        _refresh_ablations(self, frame.params, state)
        self.stages.start((
            partial(self.patterns.refresh, view, self.selected, enlarged=False),
            partial(self.curves.show_losses, frame.curve),
            partial(self.curves.show_scores, frame.curve),
            partial(self.patterns.show_enlarged, view, self.selected),
            partial(self._circuits_due, state),
        ))  # fmt: skip
        if not staged:
            self.stages.finish()

    def _finish_stages(self, running: bool = False) -> None:
        """Everything drawn now (training paused, or an export)."""
        if not running:
            self.stages.finish()
            if self._circuits_timer.isActive():
                self._refresh_circuits()

    def _circuits_key_now(self, state: InductionLabState) -> tuple:
        trained = state.preset == "train"
        return (state.preset, self.session.version if trained else 0, self.selected)

    def _circuits_due(self, state: InductionLabState) -> None:
        """Redraw the circuits now, or (only new weights while training) a little later."""
        key = self._circuits_key_now(state)
        if key == self._circuits_key:
            return
        shown = self._circuits_key
        training = self.session.running or self.session.busy
        if not training or shown is None or (key[0], key[2]) != (shown[0], shown[2]):
            self._refresh_circuits()
            return
        if not self._circuits_timer.isActive():
            wait = HEAVY_EVERY_S - (time.monotonic() - self._circuits_at)
            self._circuits_timer.start(max(0, round(1000 * wait)))

    def _circuits_later(self) -> None:
        self.stages.add(partial(self._refresh_circuits, staged=True))

    def _refresh_circuits(self, staged: bool = False) -> None:
        """The circuits of the weights on show; ``staged``: the QK map now, the OV map and the
        scores in the next parts of the redraw (see Stages)."""
        self._circuits_timer.stop()
        if self.selected is None:
            return
        state, params = self.state(), self.params()
        if not _has_head(params, *self.selected):
            return  # a part left from a model of another shape: the new one's frame draws
        self._circuits_key = self._circuits_key_now(state)
        self._circuits_at = time.monotonic()
        step = self.session.step_count if state.preset == "train" else None
        got = self._measured(state)
        c, measured = self.circuits, got[1] if got is not None else None
        view = circuit_view(params, state, *self.selected) if measured is None else measured[0]
        comp = self._composition(params, state) if measured is None else measured[1]
        c.show_qk(view, step)
        for part in (partial(c.show_ov, view, step), partial(c.show_scores, view, comp, step)):
            (self.stages.add if staged else _now)(part)

    def _composition(
        self, params: dict[str, Array], state: InductionLabState
    ) -> CompositionView | None:
        """The composition scores of the weights on show, measured on the runner (the first
        measure for a model's shapes samples random weights for the baseline: tens of
        milliseconds); None while they are measured, and the circuits are drawn again when
        they come."""
        if config_of(params).n_layers < 2:
            return composition_view(params)  # nothing to compose: no measure
        trained = state.preset == "train"
        memo = (state.preset, state.training_key(), self.session.version if trained else 0)
        got = self.wb.runner.recall(COMPOSITION_JOB, memo)
        if got is not None:
            return got  # type: ignore[no-any-return]
        job = self._composition_job
        if job is None or job.memo != memo:
            job = self.wb.run(lambda progress, cancelled: composition_view(params),
                              key=COMPOSITION_JOB, memo=memo)  # fmt: skip
            job.finished.connect(self._composition_done)
            self._composition_job = job
        return None

    def _composition_done(self, *_: object) -> None:
        self._composition_job = None
        self._circuits_key = None
        if self.selected is not None:
            self._refresh_circuits()

    def _ablations_done(self, *_: object) -> None:
        self._ablation_job = None
        self._view_key = None
        self.schedule_refresh()

    def _ablations_failed(self, error: str) -> None:
        # forget the job, so the next refresh of these weights may measure again
        self._ablation_job = None
        self.heads.show_ablations(None, f": could not be measured ({error})")

    # ---- export -------------------------------------------------------------------------------
    def figure_widget(self) -> QWidget:
        if not self._measure_all:
            self._measure_all = True
            self._view_key = None
            self.schedule_refresh()
        self.flush()
        self._finish_stages()
        job = self._ablation_job
        if job is not None and not job.done and job.wait(60.0):
            job.deliver()
        self.flush()
        if self._circuits_key != self._circuits_key_now(self.state()):
            self._refresh_circuits()  # a figure shows one step's weights throughout
        job = self._composition_job
        if job is not None and not job.done and job.wait(60.0):
            job.deliver()  # the composition scores too
        return self

    def figure_widgets(self) -> list[QWidget]:
        self.figure_widget()
        c, h, p = self.circuits, self.heads, self.patterns
        return content_parts(
            self, self.note, self.curves, p.grid, p.enlarged, h.losses, h.scores,
            h.ablation_title, h.ablations, c.qk_map, c.ov_map, c.copying, c.comp_map, c.comp_note,
        )  # fmt: skip


def _refresh_ablations(
    panel: InductionLabPanel, params: dict[str, Array], state: InductionLabState
) -> None:
    """The ablation table of the weights on show: recalled, measured on the runner, or why not."""
    trained = state.preset == "train"
    memo = (state.training_key(), state.preset, panel.session.step_count if trained else 0)
    table = panel.wb.runner.recall(ABLATION_JOB, memo)
    if table is not None or state.preset == "skip_trigram":
        panel.heads.show_ablations(table)
        return
    if panel.session.running or panel.session.busy:
        panel.heads.show_ablations(None, ": measured when training pauses")
        return
    if state.preset == "train" and panel.session.step_count == 0 and not panel._measure_all:
        # An untrained model's ablations say nothing, and measuring them unasked would
        # change the picture of a panel nobody touched.
        panel.heads.show_ablations(None, ": measured once training has started")
        return
    if panel._ablation_job is not None and panel._ablation_job.memo == memo:
        return  # already measuring these weights
    panel.heads.show_ablations(None, ": measuring…")
    job = panel.wb.run(lambda progress, cancelled: ablation_view(params, state),
                       key=ABLATION_JOB, memo=memo)  # fmt: skip
    job.finished.connect(panel._ablations_done)
    job.failed.connect(panel._ablations_failed)
    panel._ablation_job = job


def _now(part: Callable[[], None]) -> None:
    part()


# The lab's parts, each built in a turn of its own when the window opens it in steps.
def _build_curves(panel: InductionLabPanel) -> None:
    from .curves import CurvesView

    panel.curves = CurvesView(score_plot=False)


def _build_score_plot(panel: InductionLabPanel) -> None:
    panel.curves.add_score_plot()


def _build_circuits(panel: InductionLabPanel) -> None:
    from .circuits import CircuitsView

    panel.circuits = CircuitsView()


def _build_rest(panel: InductionLabPanel) -> None:
    # Each pair side by side, stacked, or on tabs, whichever the dock's size allows: in a
    # small dock the lab becomes tabs within tabs rather than parts too small to read.
    panel.left = AdaptiveSplit(
        panel.curves, panel.patterns, ("Curves", "Patterns"),
        ratio=0.35, side_width=100_000, stack_height=300,
    )  # fmt: skip
    panel.right = AdaptiveSplit(
        panel.heads, panel.circuits, ("Heads", "Circuits"),
        ratio=0.5, side_width=700, stack_height=560,
    )  # fmt: skip
    panel.split = AdaptiveSplit(
        panel.left, panel.right, ("Training and patterns", "Heads and circuits"),
        ratio=0.55, side_width=900, stack_height=1200,
    )  # fmt: skip
    panel.lab_layout.addWidget(panel.split, 1)


def _note(state: InductionLabState, view: LabView) -> tuple[str, str]:
    """The caption over the lab, and how to use it (on screen only)."""
    if state.preset == "skip_trigram":
        return (
            "Skip-trigram bug: the head lets 'in' and 'at' both attend to 'keep', and what "
            "attending to 'keep' says cannot depend on the query: both raise 'mind' and 'bay'.",
            "",
        )
    if state.preset == "hand_built":
        return (
            "Hand-built circuit: layer 0 copies the previous token, layer 1 looks for the "
            "position after an earlier copy of the current token (no training).",
            "",
        )
    return (
        "Random tokens, repeated once: only the repeated half can be predicted, by a head "
        "that finds the earlier copy. p: previous-token score, i: induction score.",
        "Click a head to enlarge it.",
    )


def _has_head(params: dict[str, Array], layer: int, head: int) -> bool:
    """Whether the model of ``params`` has this head (a redraw's part left from before the
    model's shape changed may ask for one it no longer has)."""
    wv = params.get(f"blocks.{layer}.attn.W_V")
    return wv is not None and head < len(wv)
