"""The three-fields lab: how far a query reaches into three clusters of keys.

Runs on the live workbench when the scenario is a direct scenario whose keys are labelled by
field (the rule is in :mod:`attnsim.viewmodels.fields_lab`; the three-fields preset follows it). For
every query it shows the weight gathered from each field (sums of the head's weights over the
field's keys), the entropy of the weights, and, for the receiving query, the mixture it
returns; a small scatter shows keys and queries on their best 2-D plane. Three sliders set how
much the receiving query points into each field (one undoable edit per drag).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.panels.widgets import column, open_preset
from attnsim.viewmodels.fields_lab import (
    FieldLayout,
    FieldsLabData,
    field_layout,
    lab_data,
    mix_after_slider,
    mix_of_query,
    off_page_data,
    query_from_mix,
)

from .bars import FieldBarsView
from .mixture import MixtureView
from .off_page import OffPage
from .scatter import ScatterView
from .sliders import SLIDERS_ONE_ROW_WIDTH, FieldSliders

PRESET = "three-fields"


class FieldsLabPanel(LabPanel):
    """Three fields of keys: per-field weights, entropy, mixture, and queries built from fields.

    Every edit here is a scenario edit (a query rebuilt from fields), so the lab has no settings
    dataclass of its own (``state_type`` None) and shares the rest of :class:`LabPanel`."""

    panel_id = "fields_lab"
    title = "Three fields"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self._drag: int | None = None
        self._drag_field: int | None = None
        self._drag_mix: np.ndarray | None = None
        outer = self.lab_layout
        outer.setContentsMargins(6, 6, 6, 6)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        outer.addWidget(self.refusal)  # unused: refusals show on the note line
        self.stack.addWidget(self._build_lab())
        # The explanation scrolls in a short dock rather than being cut off.
        self.off_page = OffPage()
        self.off_page.open_button.clicked.connect(self.open_preset)
        self.off_text = self.off_page.off_text
        self.open_button = self.off_page.open_button
        self.reference = self.off_page.reference
        off = QScrollArea()
        off.setWidget(self.off_page)
        off.setWidgetResizable(True)
        off.setFrameShape(QFrame.Shape.NoFrame)
        off.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.stack.addWidget(off)

    # ---- construction -------------------------------------------------------------------------
    def _build_lab(self) -> QWidget:
        page, v = column(spacing=4)
        top = QHBoxLayout()
        top.addWidget(QLabel("Query:"))
        self.query_combo = QComboBox()
        self.query_combo.setToolTip("The receiving query: its sliders and its mixture are shown")
        self.query_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.query_combo.setMinimumContentsLength(10)
        self.query_combo.currentIndexChanged.connect(self._combo_picked)
        top.addWidget(self.query_combo, 1)
        self.info = QLabel()
        self.info.setStyleSheet("color: #555555;")
        self.info.setMinimumWidth(40)  # may be clipped in a narrow dock; the tooltip has it
        top.addWidget(self.info, 2)
        v.addLayout(top)
        self.field_sliders = FieldSliders()
        self.field_sliders.pressed.connect(self._slider_pressed)
        self.field_sliders.released.connect(self._slider_released)
        self.field_sliders.moved.connect(self._slider_moved)
        self.sliders = self.field_sliders.sliders
        self.slider_values = self.field_sliders.values
        v.addWidget(self.field_sliders)
        charts = QHBoxLayout()
        charts.setSpacing(6)
        left = QVBoxLayout()
        left.setSpacing(2)
        self.bars = FieldBarsView()
        self.bars.picked.connect(self._set_receiving)
        self.mixture = MixtureView()
        left.addWidget(self.bars, 4)
        left.addWidget(self.mixture, 5)
        charts.addLayout(left, 3)
        self.scatter = ScatterView()
        self.scatter.picked.connect(self._set_receiving)
        charts.addWidget(self.scatter, 2)
        v.addLayout(charts, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555555;")
        v.addWidget(self.note)
        return page

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.field_sliders.place(wide=self.width() >= SLIDERS_ONE_ROW_WIDTH)

    # ---- state read from the workbench --------------------------------------------------------
    def field_layout(self) -> FieldLayout | str:
        """The current scenario's field layout (memoised by the workbench)."""
        return self.wb.derived(_field_layout)

    @property
    def active(self) -> bool:
        return isinstance(self.field_layout(), FieldLayout)

    def numbers(self) -> dict[str, np.ndarray]:
        """What the lab shows, from the engine: per-field sums (n_q, 3), entropy (n_q,),
        the receiving query's mixture (d_v,) and mix (3,)."""
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            raise ValueError(f"the lab does not apply: {layout}")
        data = self.wb.derived(_lab_view)
        return {
            "per_field": data.bars.sums,
            "entropy": data.bars.entropy,
            "mixture": data.mixture.values,
            "mix": data.mix,
        }

    # ---- user actions -------------------------------------------------------------------------
    def open_preset(self) -> None:
        open_preset(self, PRESET)

    def _combo_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self._set_receiving(index)

    def _set_receiving(self, index: int) -> None:
        if 0 <= index < self.wb.scenario.n_queries:
            self.wb.set_receiving(index)

    def _slider_pressed(self, f: int) -> None:
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            return
        self._drag = new_drag_id()
        self._drag_field = f
        assert self.wb.scenario.Q is not None
        self._drag_mix = mix_of_query(self.wb.scenario.Q[self.wb.receiving], layout.directions)

    def _slider_released(self) -> None:
        self._drag = self._drag_field = self._drag_mix = None
        self.schedule_refresh()

    def _slider_moved(self, f: int, share: float) -> None:
        if self.is_updating:
            return
        if self._drag is not None and f == self._drag_field and self._drag_mix is not None:
            self.set_field_share(f, share, base=self._drag_mix, drag=self._drag)
        else:
            self.set_field_share(f, share)

    def set_field_share(
        self, f: int, share: float, *, base: np.ndarray | None = None, drag: int | None = None
    ) -> None:
        """Point the receiving query ``share`` (0..1) into field ``f``: one undoable edit.

        ``base`` is the mix the change starts from (during a drag: the mix at the press, so the
        dragged slider never fights the mouse); the query keeps its length.
        """
        layout = self.field_layout()
        sc = self.wb.scenario
        if not isinstance(layout, FieldLayout) or sc.Q is None:
            return
        i = self.wb.receiving
        q = np.asarray(sc.Q[i])
        length = float(np.linalg.norm(q)) or 1.0
        start = mix_of_query(q, layout.directions) if base is None else base

        def make() -> Scenario:
            mix = mix_after_slider(start, layout.directions, f, share)
            return edits.set_vector(sc, "q", i, query_from_mix(mix, layout.directions, length))

        label = sc.query_labels[i]
        self.propose(make, f"Point '{label}' {share:.2f} into {layout.fields[f]}", drag=drag)

    def show_refusal(self, text: str) -> None:
        self.note.setText(text)

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.bars, self.mixture, self.scatter)

    def figure_unavailable(self) -> str:
        layout = self.field_layout()
        return "" if isinstance(layout, FieldLayout) else layout

    def refresh(self) -> None:
        layout = self.field_layout()
        if not isinstance(layout, FieldLayout):
            self.stack.setCurrentIndex(1)
            self.off_page.refresh(off_page_data(layout))
            return
        self.stack.setCurrentIndex(0)
        wb = self.wb
        data = wb.derived(_lab_view)
        labels = list(data.bars.labels)
        with self.updating():
            if [self.query_combo.itemText(j) for j in range(self.query_combo.count())] != labels:
                self.query_combo.clear()
                self.query_combo.addItems(labels)
            self.query_combo.setCurrentIndex(wb.receiving)
            # The slider under the mouse stays where the user holds it.
            self.field_sliders.refresh(data.mix, self._drag_field if self._drag else None)
        self.info.setText(data.info)
        self.info.setToolTip(data.info)
        self.bars.refresh(data.bars)
        self.mixture.refresh(data.mixture)
        self.scatter.refresh(data.scatter)
        self.note.setText(data.note)


def _field_layout(wb: Workbench) -> FieldLayout | str:
    return field_layout(wb.scenario)


def _lab_view(wb: Workbench) -> FieldsLabData:
    """The lab's view-model for the receiving query (only where the lab applies)."""
    layout = wb.derived(_field_layout)
    assert isinstance(layout, FieldLayout)
    return lab_data(wb.scenario, wb.result.heads[0], wb.receiving, layout)
