"""The "Real model" panel: a pretrained model (all-MiniLM-L6-v2 or SmolLM2-135M) run in NumPy on
the user's text, every layer's and head's attention map, heads ranked by a metric, ablations
with their effect on the next-token predictions, the induction probe, and "Open head in
workbench".

The settings (model, text, selected head, ablations, metric) are the lab state
:class:`RealModelState`, every change undoable. Runs go to the workbench's runner (progress,
Cancel); the panel keeps the last run only, and the unablated run of the same text beside it
so that an ablation toggle costs one forward pass. An ablation change (or its undo) reruns by
itself once the text has been run; a new text or model waits for Run.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTabWidget, QWidget

from attnsim.model.runner import Job
from attnsim.model.workbench import Workbench
from attnsim.viewmodels.real_model import (
    ABLATION_TITLES,
    MODEL_TITLES,
    ProbeResult,
    RealModelState,
    RunResult,
    head_name,
    head_scenario,
    is_loaded,
    missing_files,
    probe,
    run,
    tokenize,
    unablated,
)

from ..base import content_parts
from ..kit.adaptive_split import AdaptiveSplit
from ..kit.numbers import fmt_number
from ..lab import LabPanel
from .controls import ControlsView
from .grid import HeadGrid
from .tables import HeadsTable, PredictionsView, ProbeView
from .token_map import CachedTokenMap
from .two_texts import JOBS, TwoTexts

RUN_JOB = "real_model.run"
PROBE_JOB = "real_model.probe"


class RealModelPanel(LabPanel):
    """Run a pretrained model on a text and look at every head.

    Its edits (a text, a head clicked, ablations) are not one declared setting each, so it
    keeps its own edit methods and shares the rest of :class:`LabPanel`."""

    panel_id = "real_model"
    title = "Real model"
    state_type = RealModelState

    def shows_scenario(self) -> bool:
        return False  # its picture is its own state's, not the scenario's

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self.result: RunResult | None = None
        self.base: RunResult | None = None  # the unablated run of the result's text
        self.probe_result: ProbeResult | None = None
        self.job: Job | None = None
        self.job_model = ""  # the model the run in flight runs
        self.probe_job: Job | None = None
        self.controls = ControlsView()
        c = self.controls
        c.model_chosen.connect(self._model_chosen)
        c.metric_chosen.connect(lambda m: self._choose(metric=m, name=f"by {m}"))
        c.ablation_chosen.connect(lambda a: self._choose(ablation=a, name=ABLATION_TITLES[a]))
        c.maps_chosen.connect(lambda m: self._choose(maps=m, name=f"maps of {m}"))
        c.run_clicked.connect(self.run_text)
        c.cancel_clicked.connect(self.cancel)
        c.ablate_clicked.connect(lambda: self.toggle_head(*self.state().selected))
        c.probe_clicked.connect(self.run_probe)
        c.open_clicked.connect(self.open_head)
        c.token_picked.connect(self.pick_token)
        self.token: int | None = None  # a highlight, like a selected token elsewhere: no undo
        self._pieces_timer = QTimer(self)
        self._pieces_timer.setSingleShot(True)
        self._pieces_timer.setInterval(150)
        self._pieces_timer.timeout.connect(self._show_pieces)
        c.text_edited.connect(self._pieces_timer.start)
        self.note = c.note
        self.grid = HeadGrid()
        self.grid.head_clicked.connect(self._grid_clicked)
        self.enlarged = CachedTokenMap(font_pt=7.0, max_cell=28.0, min_cell=2.0)
        self.enlarged.setMinimumSize(150, 150)
        self.heads = HeadsTable()
        self.heads.head_clicked.connect(self.select_head)
        self.heads.toggled.connect(self.toggle_head)
        self.predictions = PredictionsView()
        self.probe_view = ProbeView()
        self.probe_view.head_clicked.connect(self.select_head)
        self.tabs = QTabWidget()
        for w, name in (
            (self.enlarged, "Head"),
            (self.heads, "Heads"),
            (self.predictions, "Prediction"),
            (self.probe_view, "Probe"),
        ):
            self.tabs.addTab(w, name)  # fmt: skip
        layout = self.lab_layout
        layout.addWidget(self.controls)
        layout.addWidget(self.refusal)
        # The pages on two texts and the split, each in a turn of its own when the window
        # opens the panel in steps (together they held the window about 70 ms).
        for part in (_build_two_texts, _build_split):
            self.build_later(partial(part, self))
        self.destroyed.connect(
            lambda *_, r=workbench.runner: [r.cancel(k) for k in (RUN_JOB, PROBE_JOB, *JOBS)]
        )

    # ---- state and edits ------------------------------------------------------------------------
    def _model_chosen(self, model: str) -> None:
        if not self.is_updating:
            # another model's ablations mean other heads: they are not carried over
            self.propose(lambda: replace(self.state(), model=model, ablated=()),
                         f"Real model: {MODEL_TITLES[model]}")  # fmt: skip

    def _choose(self, name: str, **choice: str) -> None:
        """One setting chosen in a box (the metric, the ablation mode, the maps): one undo step."""
        if not self.is_updating:
            self.propose(lambda: replace(self.state(), **choice), f"Real model: {name}")

    def select_head(self, layer: int, head: int) -> None:
        if (layer, head) != self.state().selected:
            self.propose(lambda: replace(self.state(), selected=(layer, head)),
                         f"Real model: select head {head_name(layer, head)}")  # fmt: skip

    def _grid_clicked(self, layer: int, head: int) -> None:
        # "click to enlarge": in a small dock the enlarged map is behind the grid's tab
        self.select_head(layer, head)
        self.show_tab(self.enlarged)

    def pick_token(self, position: int) -> None:
        """Highlight one token's row and column in every head (-1: none)."""
        self.token = position if position >= 0 else None
        self.schedule_refresh()

    def toggle_head(self, layer: int, head: int) -> None:
        if self.is_updating:
            return
        state = self.state()
        verb = "restore" if (layer, head) in state.ablated else "ablate"
        self.propose(lambda: state.with_head_toggled(layer, head),
                     f"Real model: {verb} head {head_name(layer, head)}")  # fmt: skip

    def run_text(self) -> None:
        """Run on the typed text: the text becomes the lab state (one undo step) and runs."""
        text = self.controls.text()
        state = self.state()
        if text != state.text and not self.propose(
            lambda: _checked(replace(state, text=text)), "Real model: text"
        ):
            return
        self.start(self.state())

    def open_head(self) -> None:
        result, (layer, head) = self.result, self.state().selected
        if result is None:
            self.show_refusal("Run the model first: the head's queries and keys come from a run")
            return
        name = f"Open head {head_name(layer, head)} of {result.model} in the workbench"
        self.propose(lambda: head_scenario(result, layer, head), name)

    def show_refusal(self, text: str) -> None:
        self.refusal.show_refusal(text)

    # ---- background runs ------------------------------------------------------------------------
    def start(self, state: RealModelState) -> None:
        missing = missing_files(state.model)
        if missing:
            self.show_refusal(missing)
            return
        base = (
            self.base
            if self.base is not None and self.base.key[:2] == state.run_key()[:2]
            else None
        )
        self.job_model = state.model
        job = self.job = self.wb.run(
            lambda progress, cancelled: run(state, progress, cancelled, base), key=RUN_JOB
        )
        job.progress.connect(lambda f: self.controls.show_running(True, f))
        job.finished.connect(self._done)
        job.failed.connect(self._failed)
        self.controls.show_running(True)
        self.note.setText(f"Running {MODEL_TITLES[state.model]}…")

    def cancel(self) -> None:
        for job in (self.job, self.probe_job):
            if job is not None:
                job.cancel()
        self.job = self.probe_job = None
        self.controls.show_running(False)
        self.schedule_refresh()

    @property
    def busy(self) -> bool:
        jobs = (self.job, self.probe_job, *self.two.jobs())
        return any(j is not None and not j.done for j in jobs)

    def _done(self, result: RunResult) -> None:
        self.job = None
        self.result = result
        self.base = unablated(result) or self.base
        self.grid.result = result  # the split's share for the grid depends on the model
        self.split.relayout()
        self.controls.show_running(False)
        self.clear_refusal()
        self.schedule_refresh()

    def _failed(self, error: str) -> None:
        self.job = self.probe_job = None
        self.controls.show_running(False)
        self.show_refusal(error)

    def run_probe(self) -> None:
        missing = missing_files("smollm2")
        if missing:
            self.show_refusal(missing)
            return
        job = self.probe_job = self.wb.run(probe, key=PROBE_JOB)
        job.progress.connect(lambda f: self.controls.show_running(True, f))
        job.finished.connect(self._probe_done)
        job.failed.connect(self._failed)
        self.controls.show_running(True)

    def _probe_done(self, result: ProbeResult) -> None:
        self.probe_job = None
        self.probe_result = result
        self.controls.show_running(False)
        self.probe_view.refresh(result)
        self.show_tab(self.probe_view)

    def show_tab(self, page: QWidget) -> None:
        """Bring a page of the tables to the front, and, when the dock is too small for the
        grid and the tables side by side, the tables in front of the grid."""
        self.tabs.setCurrentWidget(self.two.page_in_tabs(page))
        self.split.set_current(1)

    def shown_page(self) -> QWidget | None:
        """The page of the tables in front."""
        return self.two.page_of_tab(self.tabs.currentWidget())

    # ---- drawing --------------------------------------------------------------------------------
    def _show_pieces(self) -> None:
        """The typed text's token pieces, once the model is in memory (loading it for a
        keystroke would stall the GUI for seconds)."""
        state = self.state()
        if not is_loaded(state.model):
            self.controls.pieces.set_full_text("Token pieces show after the first Run.")
            return
        try:
            _, pieces = tokenize(state.model, self.controls.text())
        except ValueError as exc:
            self.controls.pieces.set_full_text(str(exc), error=True)
            return
        shown = (piece.replace(" ", "·").replace("\n", "↵") for piece in pieces)
        self.controls.pieces.set_full_text(f"{len(pieces)} tokens: " + " | ".join(shown))

    def refresh(self) -> None:
        state = self.state()
        with self.updating():
            self.controls.show_state(state.model, state.metric, state.text,
                                     state.selected in state.ablated, state.ablation,
                                     state.maps)  # fmt: skip
        missing = missing_files(state.model)
        if self.result is not None and self.result.model != state.model:
            # Another model's maps cannot be shown, and SmolLM2's run holds megabytes of
            # logits: let them go (undoing the model change asks for a Run again).
            self.result = self.base = None
        if self.job is not None and self.job_model != state.model:
            self.job.cancel()
            self.job = None
            self.controls.show_running(self.busy)
        r = self.result
        same_text = r is not None and r.key[:2] == state.run_key()[:2]
        if same_text and r.key != state.run_key() and self.job is None and not missing:
            self.start(state)  # an ablation changed (or was undone): run again at once
        title = MODEL_TITLES[state.model]
        if missing:
            self.note.setText(f"{title}: {missing}")
        elif self.job is not None:
            self.note.setText(f"Running {title}…")
        elif same_text:
            assert r is not None
            # one line in a laptop's dock, and the figure's caption with the pieces above it
            ablated = ", ".join(head_name(*h) for h in r.ablated)
            self.note.set_caption(
                f"{title.split(' (')[0]}, {len(r.ids)} tokens, {fmt_number(r.seconds, 2)} s"
                + (f", {r.ablation} ablation of {ablated}" if ablated else "")
                + ".",
                "Click a head to enlarge it; hover for weights"
                + (" and contributions." if state.maps == "contributions" else "."),
            )
        elif r is not None and r.model == state.model:
            self.note.setText(f"{title}: press Run for this text (the maps are the last text's).")
        else:
            self.note.setText(f"{title}: type a text and press Run.")
        pieces = r.pieces if r is not None else ()
        if pieces != self.controls.token_picker.pieces:
            self.token = None  # the picked token belongs to a text no longer shown
        self.controls.token_picker.show_tokens(pieces, self.token)
        if r is None:
            self.grid.refresh(None, state.metric, None, ())
            self.heads.clear()
            self.predictions.clear()
            self.enlarged.set_matrix(np.zeros((0, 0)))
            self._show_pieces()
            self.two.refresh()
            return
        self._show_pieces()
        self.two.refresh()
        self.grid.refresh(r, state.metric, state.selected, r.ablated, self.token, state.maps)
        self.heads.refresh(r, state.metric, r.ablated)
        self.predictions.refresh(r)
        self.enlarged.show_head(r, *state.selected, self.token, state.maps, self.grid.map_scale())

    # ---- export ---------------------------------------------------------------------------------
    def figure_widget(self) -> QWidget:
        self.flush()
        state = self.state()
        shown = self.result is not None and self.result.key == state.run_key()
        if not shown and self.job is None and not missing_files(state.model):
            # a figure of the settings, not of an empty grid: run them first (export waits;
            # the window never does)
            self.start(state)
        for job in (self.job, self.probe_job, *self.two.jobs()):
            if job is not None and not job.done and job.wait(120.0):
                job.deliver()
        self.flush()
        return self

    def figure_widgets(self) -> list[QWidget]:
        self.figure_widget()
        page = self.shown_page()
        shown = self.two.figure_parts(page)  # a page on two texts: its own figure
        if shown is not None:
            return content_parts(self, *shown)
        return content_parts(self, self.controls.pieces, self.note, self.grid, page)


# The panel's parts, each built in a turn of its own when the window opens it in steps.
def _build_two_texts(panel: RealModelPanel) -> None:
    panel.two = two = TwoTexts(panel)
    panel.pair_view, panel.patch_view, panel.lens_view = (
        two.pair_view,
        two.patch_view,
        two.lens_view,
    )
    panel.pair, panel.patching, panel.lens = two.pair, two.patching, two.lens
    for w, name in two.pages:
        panel.tabs.addTab(w, name)


def _build_split(panel: RealModelPanel) -> None:
    panel.split = AdaptiveSplit(
        panel.grid, panel.tabs, ("All heads", "Head and tables"),
        ratio=0.5, side_width=560, stack_height=520,
    )  # fmt: skip
    panel.split.ratio_for = panel.grid.share_of
    panel.lab_layout.addWidget(panel.split, 1)


def _checked(state: RealModelState) -> RealModelState:
    """The state, refused (ValueError naming the count) when its text is over MAX_TOKENS for
    a loaded model; a model not yet loaded checks it when the run tokenises (in the
    background, so a first Run never stalls the window for the load)."""
    if is_loaded(state.model):
        tokenize(state.model, state.text)
    return state
