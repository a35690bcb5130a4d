"""The training stepper: follow one sentence from lookup to an update, then watch training.

The workbench's :class:`~attnsim.model.training_session.TrainingSession` (``wb.training``)
owns the training run (not scenario state, not undoable); this panel observes it. Eight
stages show the engine's numbers and the two-coordinate vectors as arrows; two pyqtgraph
curves follow the loss and the reading token's attention to the clue word. "Send to
workbench" makes the trained head the current scenario through one undoable edit.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFrame,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.training import MODELS
from attnsim.model.training_session import SPEEDS, TrainingSession
from attnsim.model.workbench import Workbench
from attnsim.views.stepper import (
    N_STAGES,
    STAGES,
    DatasetError,
    dataset_text,
    nice_extent,
)

from ._stepper_views import StageContent, StageView, build_stage
from .base import Panel, content_parts
from .style import CATEGORICAL
from .widgets import AdaptiveSplit, FlowLayout, SignificantSpinBox, group

PLANE_MODES = {"first": "plane e1, e2", "pca": "plane: PCA"}


class StepperPanel(Panel):
    """Train the tiny one-head sense classifier one stage, one step or many steps at a time."""

    panel_id = "stepper"
    title = "Training stepper"

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
        self._loss_items: list[pg.PlotDataItem] = []
        self._clue_items: list[pg.PlotDataItem] = []
        self._build()
        s = self.session
        s.stage_changed.connect(self._on_session)
        s.snapshot_changed.connect(self._on_session)
        s.params_changed.connect(self._on_session)
        s.history_changed.connect(self._on_session)
        s.running_changed.connect(self._on_session)
        s.diverged_changed.connect(self._on_session)
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

        controls = FlowLayout(h_spacing=6, v_spacing=3)
        layout.addLayout(controls)

        self.model_box = QComboBox()
        for name, spec in MODELS.items():
            self.model_box.addItem(name, name)
            self.model_box.setItemData(
                self.model_box.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole
            )
        self.model_box.currentIndexChanged.connect(self._model_picked)
        controls.addWidget(group(QLabel("Model"), self.model_box))
        self.sentence_box = QComboBox()
        self.sentence_box.setMinimumContentsLength(16)
        self.sentence_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.sentence_box.currentIndexChanged.connect(self._sentence_picked)
        controls.addWidget(group(QLabel("Sentence"), self.sentence_box))
        self.lr_box = SignificantSpinBox(0.0001, 10.0)
        self.lr_box.refused.connect(lambda why: self.refuse(ValueError(f"learning rate: {why}")))
        self.lr_box.setToolTip("Learning rate of the following steps")
        self.lr_box.valueChanged.connect(self._lr_changed)
        controls.addWidget(group(QLabel("lr"), self.lr_box))
        self.send_button = QPushButton("Send to workbench")
        self.send_button.setToolTip(
            "Make the trained embeddings and projections the current scenario (undoable)"
        )
        self.send_button.clicked.connect(self.send_to_workbench)
        controls.addWidget(self.send_button)

        self.prev_button = QPushButton("◀ Previous stage")
        self.prev_button.clicked.connect(self.session_previous)
        self.stage_group = QButtonGroup(self)
        self.stage_group.setExclusive(True)
        self.stage_buttons: list[QToolButton] = []
        for k, name in enumerate(STAGES, start=1):
            b = QToolButton()
            b.setText(str(k))
            b.setCheckable(True)
            b.setToolTip(f"Stage {k}: {name}")
            b.setMinimumWidth(24)
            self.stage_group.addButton(b, k)
            self.stage_buttons.append(b)
        self.stage_group.idClicked.connect(self._stage_clicked)
        self.next_button = QPushButton("Next stage ▶")
        self.next_button.clicked.connect(self.session_next)
        controls.addWidget(
            group(self.prev_button, *self.stage_buttons, self.next_button, spacing=2)
        )
        self.apply_button = QPushButton("Apply update")
        self.apply_button.setToolTip("Take the optimizer step on this sentence (stage 8)")
        self.apply_button.clicked.connect(lambda: self.session.apply_update())
        self.next_sentence_button = QPushButton("Next sentence")
        self.next_sentence_button.setToolTip(
            "Follow the next example from stage 1, with the current parameters"
        )
        self.next_sentence_button.clicked.connect(lambda: self.session.next_sentence())
        controls.addWidget(group(self.apply_button, self.next_sentence_button))

        self.train_button = QPushButton("Train 20 steps")
        self.train_button.clicked.connect(lambda: self.session.train(20))
        self.play_button = QPushButton("▶ Play")
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Train continuously at the chosen speed")
        self.play_button.clicked.connect(lambda: self.session.toggle_play())
        self.speed_box = QComboBox()
        for v in SPEEDS:
            self.speed_box.addItem(f"{v} steps/s", v)
        self.speed_box.setToolTip("Speed of continuous training")
        self.speed_box.currentIndexChanged.connect(self._speed_picked)
        controls.addWidget(group(self.train_button, self.play_button, self.speed_box))
        self.reset_button = QPushButton("Reset training")
        self.reset_button.setToolTip("Back to the same initial parameters, bit for bit")
        self.reset_button.clicked.connect(lambda: self.session.reset())
        controls.addWidget(self.reset_button)
        self.plane_box = QComboBox()
        for key, text in PLANE_MODES.items():
            self.plane_box.addItem(text, key)
        self.plane_box.setToolTip(
            "How vectors with more than two coordinates are drawn in the plane"
        )
        self.plane_box.currentIndexChanged.connect(self._plane_picked)
        controls.addWidget(self.plane_box)
        self.status = QLabel()
        self.status.setMinimumWidth(140)
        controls.addWidget(self.status)

        # Divergence is a lesson, not an error: say where it happened and offer the way back.
        alert = QHBoxLayout()
        alert.setSpacing(6)
        self.divergence_label = QLabel()
        self.divergence_label.setWordWrap(True)
        self.divergence_label.setStyleSheet("color: #B00020; font-weight: bold;")
        self.divergence_reset = QPushButton("Reset")
        self.divergence_reset.setToolTip(
            "Back to the initial parameters; lower the learning rate before training again"
        )
        self.divergence_reset.clicked.connect(lambda: self.session.reset())
        self.lr_warning = QLabel()
        self.lr_warning.setWordWrap(True)
        self.lr_warning.setStyleSheet("color: #8A5A00;")
        alert.addWidget(self.divergence_label, 1)
        alert.addWidget(self.divergence_reset)
        alert.addWidget(self.lr_warning, 1)
        for w in (self.divergence_label, self.divergence_reset, self.lr_warning):
            w.setVisible(False)
        layout.addLayout(alert)

        self.stage_view = StageView()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.stage_view)
        self.stage_view.fit_to(self.scroll.viewport())

        self.tabs = QTabWidget()
        curves = QWidget()
        cl = QVBoxLayout(curves)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(2)
        self.loss_plot = pg.PlotWidget()
        self.loss_plot.setTitle("loss per step", size="9pt")
        self.clue_plot = pg.PlotWidget()
        self.clue_plot.setTitle("attention to the clue word", size="9pt")
        self.clue_plot.setYRange(0.0, 1.0, padding=0.02)
        self.clue_plot.getPlotItem().getViewBox().setMouseEnabled(y=False)
        for plot in (self.loss_plot, self.clue_plot):
            plot.setMinimumHeight(120)
            plot.getPlotItem().showGrid(x=False, y=True, alpha=0.25)
            plot.setMenuEnabled(False)
            # Ranges are set in nice steps by _refresh_curves: an axis that changed every
            # step would be re-laid-out on every frame of continuous training.
            plot.disableAutoRange()
            plot.getPlotItem().hideButtons()
            for name in ("left", "bottom"):
                # Axes (and the grid they draw) change only when a range does: painting them
                # from a cached pixmap saves most of a plot's repaint time.
                plot.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._x_max = 0.0
        self._loss_max = 0.0
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        cl.addWidget(self.legend)
        cl.addWidget(self.loss_plot, 1)
        cl.addWidget(self.clue_plot, 1)
        self.tabs.addTab(curves, "Curves")

        editor = QWidget()
        el = QVBoxLayout(editor)
        el.setContentsMargins(2, 2, 2, 2)
        hint = QLabel("One sentence per line: words = label")
        hint.setWordWrap(True)
        el.addWidget(hint)
        self.dataset_edit = QPlainTextEdit()
        self.dataset_edit.setPlaceholderText("the river bank = water\nthe money bank = finance")
        el.addWidget(self.dataset_edit, 1)
        buttons = QHBoxLayout()
        self.use_dataset_button = QPushButton("Train on these")
        self.use_dataset_button.setToolTip(
            "Start a fresh run of the current model on these sentences"
        )
        self.use_dataset_button.clicked.connect(self.use_dataset_text)
        buttons.addWidget(self.use_dataset_button)
        self.restore_dataset_button = QPushButton("Model's own")
        self.restore_dataset_button.setToolTip("Back to the model's own dataset")
        self.restore_dataset_button.clicked.connect(
            lambda: self.session.set_model(self.session.model_name)
        )
        buttons.addWidget(self.restore_dataset_button)
        el.addLayout(buttons)
        self.dataset_message = QLabel()
        self.dataset_message.setWordWrap(True)
        el.addWidget(self.dataset_message)
        self.tabs.addTab(editor, "Dataset")
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
        layout.addWidget(self.split, 1)

    # ---- user actions -------------------------------------------------------------------------
    def session_next(self) -> None:
        self.session.next_stage()

    def session_previous(self) -> None:
        self.session.previous_stage()

    def _stage_clicked(self, k: int) -> None:
        if not self.is_updating:
            self.session.set_stage(k)

    def _model_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        self.session.set_model(self.model_box.itemData(index))

    def _sentence_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        self.session.choose_sentence(index)

    def _lr_changed(self, value: float) -> None:
        if self.is_updating:
            return
        try:
            self.session.set_lr(float(value))
        except ValueError as exc:
            self.refuse(exc)
        self.schedule_refresh()

    def _speed_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.session.set_speed(int(self.speed_box.itemData(index)))

    def _plane_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.plane_mode = self.plane_box.itemData(index)
            self.stage_view.reset_scale()  # a new projection
            self.schedule_refresh()

    def use_dataset_text(self) -> bool:
        """Train the current model on the editor's sentences; refuse bad lines, naming them."""
        try:
            ds = self.session.set_dataset_text(self.dataset_edit.toPlainText())
        except DatasetError as exc:
            text = self.refuse(exc)
            self.dataset_message.setStyleSheet("color: #B00020")
            self.dataset_message.setText(f"Refused: {text}")
            return False
        self.dataset_message.setStyleSheet("color: #225522")
        self.dataset_message.setText(
            f"Training {self.session.model_name}'s architecture on {len(ds.sentences)} "
            f"sentences, {len(ds.vocab)} words, labels {', '.join(ds.classes)}."
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
        return content_parts(self, self.stage_view, self.legend, self.loss_plot, self.clue_plot)

    def refresh(self) -> None:
        s = self.session
        with self.updating():
            if self._structure_dirty:
                self._rebuild_structure()
            self._refresh_controls()
        self.content = build_stage(s.snapshot, s.stage, self.plane_mode)
        self.stage_view.set_content(self.content)
        self._refresh_curves()

    def _rebuild_structure(self) -> None:
        """After a model or dataset change: sentence list, editor text, one curve per sentence."""
        s = self.session
        self._structure_dirty = False
        ds = s.dataset
        with QSignalBlocker(self.model_box):
            self.model_box.setCurrentIndex(self.model_box.findData(s.model_name))
        with QSignalBlocker(self.sentence_box):
            self.sentence_box.clear()
            for i, (tokens, label) in enumerate(ds.sentences):
                self.sentence_box.addItem(f"{i + 1}: {' '.join(tokens)} = {ds.classes[label]}")
        with QSignalBlocker(self.dataset_edit):
            self.dataset_edit.setPlainText(dataset_text(ds))
        with QSignalBlocker(self.plane_box):
            self.plane_box.setEnabled(s.snapshot.d > 2)
        self.stage_view.reset_scale()  # a new model: fit the plane again
        self._x_max = self._loss_max = 0.0
        for plot, items in ((self.loss_plot, self._loss_items), (self.clue_plot, self._clue_items)):
            for item in items:
                plot.removeItem(item)
            items.clear()
        legend = []
        for i, (tokens, _) in enumerate(ds.sentences):
            colour = QColor(CATEGORICAL[i % len(CATEGORICAL)])
            legend.append(f"<span style='color:{colour.name()}'>■</span>&nbsp;{' '.join(tokens)}")
            for plot, items in (
                (self.loss_plot, self._loss_items),
                (self.clue_plot, self._clue_items),
            ):
                item = pg.PlotDataItem(pen=pg.mkPen(colour, width=1.5))
                item.setClipToView(True)
                item.setDownsampling(auto=True, method="peak")
                plot.addItem(item)
                items.append(item)
        self.legend.setText("<span style='font-size:8pt'>" + " &nbsp; ".join(legend) + "</span>")
        clues = sorted(ds.clue_words())
        reader = {t[-1] for t, _ in ds.sentences}
        self.clue_plot.setTitle(
            f"{'/'.join(sorted(reader))} → clue word, weight per step", size="9pt"
        )
        self.clue_plot.setToolTip(
            "Weight from the token the classifier reads to the first clue word of each sentence "
            f"(words used with one label only: {', '.join(clues) or 'none'})"
        )

    def _refresh_controls(self) -> None:
        s = self.session
        self.stage_buttons[s.stage - 1].setChecked(True)
        self.sentence_box.setCurrentIndex(s.example)
        if abs(self.lr_box.value() - s.lr) > 1e-12:
            self.lr_box.setValue(s.lr)
        self.speed_box.setCurrentIndex(self.speed_box.findData(s.speed))
        self.prev_button.setEnabled(s.stage > 1)
        self.next_button.setEnabled(s.stage < N_STAGES)
        self.apply_button.setEnabled(not s.applied)
        self.play_button.setChecked(s.running)
        self.play_button.setText("❚❚ Pause" if s.running else "▶ Play")
        opt = "SGD" if s.spec.optimizer == "sgd" else "Adam"
        last = s.history.loss[-1] if s.history.n else None
        self.status.setText(
            f"{s.steps} updates" + (f" · loss {last:.4g}" if last is not None else "")
        )
        self.status.setToolTip(f"{opt}, lr {s.lr:g}, {s.snapshot.d} coordinates")
        div = s.divergence
        self.divergence_label.setText("" if div is None else f"Training {div.text()}.")
        self.divergence_label.setVisible(div is not None)
        self.divergence_reset.setVisible(div is not None)
        warning = s.lr_warning()
        self.lr_warning.setText(warning)
        self.lr_warning.setVisible(bool(warning) and div is None)
        self.lr_box.setToolTip(
            "Learning rate of the following steps" + (f"\n{warning}" if warning else "")
        )

    def _refresh_curves(self) -> None:
        h = self.session.history
        step, loss, clue, sent = h.step, h.loss, h.clue, h.sentence
        for i, (li, ci) in enumerate(zip(self._loss_items, self._clue_items, strict=True)):
            sel = sent == i
            xs = step[sel]
            li.setData(xs, loss[sel])
            ys = clue[sel]
            ok = ~np.isnan(ys)
            ci.setData(xs[ok], ys[ok])
        last = float(step[-1]) if h.n else 0.0
        # x grows in steps of half a power of ten (300 -> 350 -> 400), so the axis moves rarely
        unit = 10.0 ** np.floor(np.log10(max(last, 10.0))) / 2
        x_max = float(max(10.0, np.ceil(last / unit) * unit))
        if x_max != self._x_max:
            self._x_max = x_max
            for plot in (self.loss_plot, self.clue_plot):
                plot.setXRange(0.0, x_max, padding=0.02)
        top = nice_extent(float(np.max(loss))) if h.n else 1.0
        if top != self._loss_max:
            self._loss_max = top
            self.loss_plot.setYRange(0.0, top, padding=0.02)
