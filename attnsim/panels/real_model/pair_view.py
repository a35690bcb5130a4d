"""The Real model panel's "Two texts" page: texts A and B run together in the background, the
chosen token's attention in A, B or A − B in every head, and its A/B similarity by layer.

:class:`PairView` is the widget (controls, grid, plot; signals for every gesture, no
workbench); :class:`PairPart` is the panel's side of it: it turns the view's gestures into
undoable edits of :class:`~attnsim.viewmodels.real_heads.PairState` and runs
:func:`~attnsim.viewmodels.real_heads.compare_job` on the workbench's runner, with progress and
Cancel.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.real_heads import MAPS, PAIRS, SIDES, CompareResult, PairState, compare_job
from attnsim.viewmodels.real_model import MODEL_TITLES

from ..kit.flow_layout import FlowLayout, group
from ..kit.numbers import fmt_number
from ..widgets import CaptionLabel
from .pair_grid import PairGrid, SimilarityPlot
from .run_part import RunPart

PAIR_JOB = "real_model.pair"
TYPED = "typed texts"


class PairView(QWidget):
    """Controls over the grid and the similarity plot."""

    preset_chosen = Signal(str)
    side_chosen = Signal(str)
    maps_chosen = Signal(str)
    run_clicked = Signal()
    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preset = QComboBox()
        # the long titles must not widen the tables' side of the panel
        self.preset.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.preset.setMinimumContentsLength(10)
        for key, pair in PAIRS.items():
            self.preset.addItem(pair.title, key)
        self.preset.addItem(TYPED, "")
        self.preset.currentIndexChanged.connect(
            lambda i: self.preset_chosen.emit(self.preset.itemData(i))
        )
        self.side = QComboBox()
        for key, title in SIDES.items():
            self.side.addItem(title, key)
        self.side.currentIndexChanged.connect(
            lambda i: self.side_chosen.emit(self.side.itemData(i))
        )
        self.maps = QComboBox()
        for key, title in MAPS.items():
            self.maps.addItem(title, key)
        self.maps.currentIndexChanged.connect(
            lambda i: self.maps_chosen.emit(self.maps.itemData(i))
        )
        self.text_a, self.text_b, self.token = QLineEdit(), QLineEdit(), QLineEdit()
        self.token.setMinimumWidth(80)
        self.token.setMaximumWidth(110)
        self.run_button = QPushButton("Run A and B")
        self.run_button.clicked.connect(self.run_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(120)
        self.progress.setVisible(False)
        # the choices and buttons flow onto more rows in a narrow dock; the texts take a row each
        choices = FlowLayout()
        choices.addWidget(group(QLabel("Pair"), self.preset, grow=self.preset))
        choices.addWidget(group(QLabel("token"), self.token))
        choices.addWidget(group(QLabel("show"), self.side, self.maps))
        choices.addWidget(group(self.run_button, self.cancel_button, self.progress))
        texts = QGridLayout()
        texts.setContentsMargins(0, 0, 0, 0)
        texts.addWidget(QLabel("A"), 0, 0)
        texts.addWidget(self.text_a, 0, 1)
        texts.addWidget(QLabel("B"), 1, 0)
        texts.addWidget(self.text_b, 1, 1)
        self.note = CaptionLabel()
        self.note.setWordWrap(True)
        self.grid = PairGrid()
        self.plot = SimilarityPlot()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(choices)
        layout.addLayout(texts)
        layout.addWidget(self.note)
        layout.addWidget(self.grid, 3)
        layout.addWidget(self.plot, 1)

    def typed(self) -> tuple[str, str, str]:
        return self.text_a.text(), self.text_b.text(), self.token.text()

    def show_state(self, state: PairState) -> None:
        """Write the state into the controls (the caller blocks the edits this would make)."""
        self.preset.setCurrentIndex(max(0, self.preset.findData(state.preset)))
        self.side.setCurrentIndex(max(0, self.side.findData(state.side)))
        self.maps.setCurrentIndex(max(0, self.maps.findData(state.maps)))
        for box, text in (
            (self.text_a, state.a),
            (self.text_b, state.b),
            (self.token, state.token),
        ):
            if box.text() != text:
                box.setText(text)

    def show_running(self, running: bool, fraction: float = 0.0) -> None:
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.progress.setValue(round(100 * fraction))


class PairPart(RunPart):
    """The panel's edits and runs for the "Two texts" page (owned by the panel)."""

    def __init__(self, panel: Any, view: PairView) -> None:
        super().__init__(panel, view)
        self.result: CompareResult | None = None
        self.key: tuple[str, str, str, str] | None = None  # (model, A, B, token) of the result
        self._running_key: tuple[str, str, str, str] | None = None
        view.preset_chosen.connect(self.choose_preset)
        view.side_chosen.connect(self.choose_side)
        view.maps_chosen.connect(self.choose_maps)
        view.run_clicked.connect(self.run)
        view.grid.head_clicked.connect(self.open_head)

    def state(self) -> PairState:
        return self.panel.wb.lab_state(PairState)

    def open_head(self, layer: int, head: int) -> None:
        """Select a head (an undoable edit) and show its maps in A and B on this page; texts
        A and B not run yet (a click on the Patching page's map) are run now, or the page
        would open on nothing."""
        self.panel.select_head(layer, head)
        self.panel.show_tab(self.view)
        if not self.busy and self.key != (self.panel.state().model, *self.state().run_key()):
            self.start()

    def choose_preset(self, key: str) -> None:
        if self.panel.is_updating or key == self.state().preset:
            return
        if not key:  # "typed texts": the texts stay, they are no longer the preset's
            self.panel.propose(lambda: replace(self.state(), preset=""), "Real model: typed pair")
            return
        self.panel.propose(lambda: PairState.of_preset(key, self.state().side),
                           f"Real model: pair {PAIRS[key].title}")  # fmt: skip

    def choose_side(self, side: str) -> None:
        if not self.panel.is_updating and side != self.state().side:
            self.panel.propose(lambda: replace(self.state(), side=side),
                               f"Real model: show {SIDES[side]}")  # fmt: skip

    def choose_maps(self, maps: str) -> None:
        if not self.panel.is_updating and maps != self.state().maps:
            self.panel.propose(lambda: replace(self.state(), maps=maps),
                               f"Real model: two texts by {MAPS[maps]}")  # fmt: skip

    def run(self) -> None:
        """Run on the typed texts: they become the state (one undo step) and run."""
        a, b, token = self.view.typed()
        st = self.state()
        if (a, b, token) != st.run_key():
            preset = next((k for k, p in PAIRS.items() if (p.a, p.b, p.token) == (a, b, token)), "")
            if not self.panel.propose(lambda: replace(st, preset=preset, a=a, b=b, token=token),
                                      "Real model: texts A and B"):  # fmt: skip
                return
        self.start()

    def start(self) -> None:
        model, st = self.panel.state().model, self.state()
        self._running_key = (model, *st.run_key())
        self.start_run(
            model,
            lambda progress, cancelled: compare_job(model, st.a, st.b, st.token, progress,
                                                    cancelled),
            PAIR_JOB,
            f"Running {MODEL_TITLES[model]} on A and B…",
        )  # fmt: skip

    def received(self, result: CompareResult) -> None:
        # The run under PAIR_JOB supersedes any earlier one: the result is the last started.
        self.result, self.key = result, self._running_key

    def refresh(self) -> None:
        st, model = self.state(), self.panel.state().model
        with self.panel.updating():
            self.view.show_state(st)
        r = self.result
        if r is not None and r.model != model:
            self.result = r = self.key = None
        self.view.grid.refresh(r, st.side, self.panel.state().selected if r else None, st.maps)
        self.view.plot.refresh(r, st.token)
        if self.busy:
            return
        if r is None:
            self.view.note.setText("Texts A and B: press Run A and B to compare them.")
            return
        c = r.comparison
        stale = self.key != (model, *st.run_key())
        self.view.note.set_caption(
            f"'{st.token}' in A (position {c.position_a}) and B (position {c.position_b}):"
            f" cosine {fmt_number(float(c.cosine[0]), 2)} at the embeddings,"
            f" {fmt_number(float(c.cosine[-1]), 2)} after the last layer."
            + (" These are the last texts run." if stale else ""),
            "Hover a head for the weights in A and B.",
        )
