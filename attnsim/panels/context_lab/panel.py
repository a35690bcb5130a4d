"""Long-context stability: insert k distractors of one kind into the receiving query's context
and watch the weight on its best key and the change of its output as k grows, with the route at
the chosen k and a verdict for each kind.

Every setting is the lab's :class:`ContextLabState`, changed through the edit helper, so each is
one undo step (a drag of the k slider or of the k line on a plot merges into one).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import BUSY_TEXT, LabPanel
from attnsim.panels.widgets import column, scrolling
from attnsim.viewmodels.context_lab import (
    SETTINGS,
    ContextData,
    ContextLabState,
    SweepSet,
    context_data,
    sweep_set,
)

from .controls import ContextControls
from .plots import KIND_COLOURS, RouteBars, SweepPlot


def verdict_html(data: ContextData) -> str:
    """The four verdicts, each after a swatch in its kind's colour; the chosen kind in bold.
    Plain lines, not a table: a table's layout doubles the cost of changing the text."""
    if data.message:
        return data.message
    lines = []
    for c in data.curves:
        name = f"<b>{c.name}</b>" if c.kind == data.kind else c.name
        swatch = f"<span style='color:{KIND_COLOURS[c.kind].name()}'>■</span>"
        lines.append(f"{swatch} {name}: {c.verdict}")
    return "<br>".join(lines)


# What the sweeps read of the lab's settings: a drag of k or a change of kind reuses them.
SWEEP_FIELDS = ("k_max", "noise", "seed")
# The busy line while a long context's first sweeps are made (nothing drawn yet).
FIRST_BUSY_TEXT = "Computing… the plots appear when the four sweeps are ready."


def lab_sweeps(wb: Workbench) -> SweepSet:
    """Every kind's sweep for the receiving query of the focused head (see ``wb.derived``)."""
    return sweep_set(wb.trace, wb.receiving, wb.lab_state(ContextLabState))


def lab_view(wb: Workbench) -> ContextData:
    """The lab's view-model for the workbench's scenario, selection and settings."""
    sc, i, st = wb.scenario, wb.receiving, wb.lab_state(ContextLabState)
    sweeps = wb.derived(lab_sweeps, lab=ContextLabState, fields=SWEEP_FIELDS)
    return context_data(wb.trace, i, sc.query_labels[i], tuple(sc.tokens), st, sweeps)


class _PlotRow(QWidget):
    """The three plots: 170 pixels tall at least (below that the axes leave no room for the
    curves), and asking for no more, so that in a short dock the text under them is whole
    first and the plots take what room is left."""

    HEIGHT = 170

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumHeight(self.HEIGHT)

    def sizeHint(self) -> QSize:  # Qt's name
        return QSize(super().sizeHint().width(), self.HEIGHT)


class ContextLabPanel(LabPanel):
    """Distractors, duplicated and superseded facts, and long keys, inserted k at a time."""

    panel_id = "context_lab"
    title = "Long-context stability"
    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self.data: ContextData | None = None

        self.controls = self.connect_controls(ContextControls())
        self.lab_layout.addWidget(self.controls)
        self.lab_layout.addWidget(self.busy_line)  # while a long context's sweeps are made
        self.lab_layout.addWidget(self.refusal)

        self.plots = _PlotRow()
        self._row = QHBoxLayout(self.plots)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(2)
        # Each plot (a pyqtgraph view, about 30 ms to make) in a turn of its own when the
        # window opens the lab in steps.
        self.build_later(lambda: self._build_sweep_plot("weight"))
        self.build_later(lambda: self._build_sweep_plot("shift"))
        self.build_later(self._build_bars)
        body, body_lay = column(spacing=3)
        body_lay.addWidget(self.plots, 1)

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body_lay.addWidget(self.summary)
        self.verdicts = QLabel()
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        self.verdicts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body_lay.addWidget(self.verdicts)
        self.lab_layout.addWidget(scrolling(body), 1)

    def _build_sweep_plot(self, which: str) -> None:
        plot = SweepPlot(which)
        plot.k_drag_started.connect(lambda: self.begin_drag("k"))
        plot.k_moved.connect(self._k_dragged)
        plot.k_drag_finished.connect(lambda: self.end_drag("k"))
        self._row.addWidget(plot, 1)
        if which == "weight":
            self.weight_plot = plot
        else:
            self.shift_plot = plot

    def _build_bars(self) -> None:
        self.bars = RouteBars()
        self._row.addWidget(self.bars, 1)

    # ---- edits --------------------------------------------------------------------------------
    def _k_dragged(self, k: int) -> None:
        self.set_setting("k", max(0, min(k, self.state().k_max)), drag=self.drag_of("k"))

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        with self.computing_now():  # a figure shows the finished sweeps, never "computing…"
            return content_parts(self, self.plots, self.summary, self.verdicts)

    def refresh(self) -> None:
        wb, st = self.wb, self.state()
        # The four sweeps of a long context are made on the runner (the plots keep what they
        # show until they are ready); a short one's at once.
        if self.derive_soon(lab_sweeps, fields=SWEEP_FIELDS) is None:
            self.busy_line.setText(BUSY_TEXT if self.data is not None else FIRST_BUSY_TEXT)
            with self.updating():
                self.controls.show_state(st, min(max(st.k, 0), st.k_max))
            if self.data is None:
                self.summary.setText("Computing the weights of the receiving query as "
                                     "distractors join its context…")  # fmt: skip
            return
        data = wb.derived(lab_view, lab=ContextLabState)
        self.data = data
        with self.updating():
            self.controls.show_state(st, data.k)
        self.weight_plot.refresh(data)
        self.shift_plot.refresh(data)
        self.bars.refresh(data)
        query = f"Receiving query “{data.query_label}” (head {wb.focused_head + 1}). "
        self.summary.setText(query + (data.summary or data.message))
        html = verdict_html(data)
        if html != self.verdicts.text():  # a new paragraph re-lays out the panel
            self.verdicts.setText(html)
