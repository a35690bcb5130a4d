"""What the query map cannot see: its null space, drawn in the input space.

A linear map ``q = M x`` from a 3-D input space to a 2-D query space (default: M reads
x1 + x3 and x2 + x3). The 3-D view shows its row space (a plane: what the query sees) and its
null space (a line: what it cannot see), the input e and the moved input
``x = e + t n + s r`` (n along the null space, r along the row space). Moving along n leaves the
query, the scores and the weights against fixed keys exactly as they were; moving along r
changes them. M, e, t and s are sandbox state: one lab state, edited through the undo stack.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.panels.style import QUERY
from attnsim.viewmodels.nullspace_lab import (
    SLIDER_RANGE,
    NullSpaceLabState,
    NullSpaceLabView,
    QueryProbe,
    input_scene,
    lab_view,
    matrix_entry,
    view_extent,
)

from .controls import KeyTable, MapEditor, ParamSliders
from .input_view import InputSpaceView
from .query_view import QuerySpaceView


class NullSpaceLabPanel(LabPanel):
    """Query-map null space: moving the input along it changes nothing the query can see.

    Its edits are matrix and vector entries and points dragged in 3-D, not one declared
    setting each, so it keeps its own edit methods and shares the rest of :class:`LabPanel`."""

    panel_id = "nullspace_lab"
    title = "Query-map null space"
    state_type = NullSpaceLabState

    def shows_scenario(self) -> bool:
        return False  # its picture is its own state's, not the scenario's

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self.probe: QueryProbe | None = None
        self._frozen_extent: float | None = None
        layout = self.lab_layout
        self.editor = MapEditor()
        self.editor.cell_edited.connect(self._m_cell_edited)
        self.editor.e_edited.connect(self._e_edited)
        self.editor.refused.connect(self._box_refused)
        self.editor.reset_button.clicked.connect(self.reset_example)
        self.m_table, self.e_spins = self.editor.m_table, self.editor.e_spins
        self.reset_button = self.editor.reset_button
        layout.addWidget(self.editor)
        layout.addWidget(self.refusal)

        middle = QHBoxLayout()
        middle.setSpacing(4)
        self.view3d = InputSpaceView()
        self.view3d.dragged.connect(self._view_dragged)
        self.view3d.drag_finished.connect(self.schedule_refresh)
        middle.addWidget(self.view3d, 5)
        right = QVBoxLayout()
        right.setSpacing(2)
        self.qview = QuerySpaceView()
        right.addWidget(self.qview, 1)
        # The readout spans both views below them: its lines wrap less than in a side column.
        self.readout = QLabel()
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_table = KeyTable()
        right.addWidget(self.key_table)
        middle.addLayout(right, 4)
        layout.addLayout(middle, 1)
        layout.addWidget(self.readout)

        self.params = ParamSliders()
        self.params.moved.connect(self._slider_moved)
        self.params.pressed.connect(self.begin_drag)
        self.params.released.connect(self._slider_released)
        self.t_slider, self.t_label = self.params.sliders["t"], self.params.values["t"]
        self.s_slider, self.s_label = self.params.sliders["s"], self.params.values["s"]
        layout.addWidget(self.params)

    # ---- state --------------------------------------------------------------------------------
    def matrix(self) -> np.ndarray:
        return np.array(self.state().M, dtype=float)

    def input_e(self) -> np.ndarray:
        return np.array(self.state().e, dtype=float)

    def t(self) -> float:
        return float(self.state().t)

    def s(self) -> float:
        return float(self.state().s)

    # The lab draws only its own sandbox (M, e, t, s), never the workbench's scenario or
    # selection: a drag in another panel must not redraw it.
    def _on_changed(self, what: frozenset[str]) -> None:
        pass

    def _on_selection(self) -> None:
        pass

    # ---- edits --------------------------------------------------------------------------------
    def set_matrix_entry(self, row: int, col: int, text: str) -> bool:
        """Parse and set M[row, col]; a bad entry is refused (message, state unchanged)."""
        name = f"M[{row + 1},{col + 1}]"
        st = self.state()
        old = st.M[row][col]

        def make() -> NullSpaceLabState:
            value = matrix_entry(name, text)
            M = [list(r) for r in st.M]
            M[row][col] = value
            return replace(st, M=tuple(tuple(r) for r in M))

        return self.propose(make, lambda new: f"Query map {name}: {old:g} → {new.M[row][col]:g}")

    def _box_refused(self, reason: str) -> None:
        self.show_refusal(self.refuse(ValueError(f"input e: {reason}")))

    def _m_cell_edited(self, row: int, col: int, text: str) -> None:
        if self.is_updating:
            return
        self.set_matrix_entry(row, col, text)

    def _e_edited(self, k: int, value: float) -> None:
        if self.is_updating:
            return
        st = self.state()
        e = list(st.e)
        old, e[k] = e[k], float(value)
        self.wb.set_lab_state(replace(st, e=tuple(e)), f"Input e, x{k + 1}: {old:g} → {value:g}")

    def _extent(self, e: np.ndarray, x: np.ndarray) -> float:
        # While x is being dragged (slider or view) the scale stays put, so the point moves
        # under the cursor instead of the scene zooming around it; it refits on release.
        dragging = self.view3d.dragging or self.params.any_down()
        if dragging and self._frozen_extent is not None:
            return self._frozen_extent
        self._frozen_extent = view_extent(e, x)
        return self._frozen_extent

    def set_param(self, kind: str, value: float, *, drag: int | None = None) -> None:
        """Set t (along the null space) or s (along the row space), clamped to the slider."""
        v = round(max(-SLIDER_RANGE, min(SLIDER_RANGE, float(value))), 2)
        what = "along the null space" if kind == "t" else "along the row space"
        new = replace(self.state(), **{kind: v})
        self.wb.set_lab_state(new, f"Move input {what}: {kind} = {v:g}", drag=drag)

    def _slider_released(self, kind: str) -> None:
        self.end_drag(kind)
        self.schedule_refresh()  # refit the view

    def _slider_moved(self, kind: str, value: float) -> None:
        if self.is_updating:
            return
        self.set_param(kind, value, drag=self.drag_of(kind))

    def _view_dragged(self, kind: str, value: float, drag_id: int) -> None:
        self.set_param(kind, value, drag=drag_id)

    def reset_example(self) -> None:
        """M, e, t and s back to the reference example, as one undo step."""
        self.wb.set_lab_state(NullSpaceLabState(), "Null-space lab: back to the example")

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        # The matrix with its "M = Wqᵀ" caption, the two views, the key table and the readout.
        return content_parts(
            self, self.m_table.parentWidget(), self.view3d, self.qview, self.key_table,
            self.readout,
        )  # fmt: skip

    def refresh(self) -> None:
        view = self.wb.derived(lab_view_of, lab=NullSpaceLabState)
        self.probe = view.probe
        extent = self._extent(view.e, np.asarray(view.probe.x))
        held = frozenset(
            k for k, s in self.params.sliders.items()
            if self.drag_of(k) is not None and s.isSliderDown()
        )  # fmt: skip
        with self.updating():
            self.editor.refresh(view.M, view.e)
            self.params.refresh(view.params, held)
        self.view3d.refresh(input_scene(view, extent))
        self.qview.refresh(view.query_plane)
        self.readout.setText(
            f"x = e + t·n + s·r = <b>{view.x_text}</b><br>"
            f"<span style='color:{QUERY.name()}'>query q = M x = <b>{view.query_text}</b></span>"
            f"<br>{view.compare_text}"
        )
        self.key_table.refresh(view)


def lab_view_of(wb: Workbench) -> NullSpaceLabView:
    """The lab's view-model: from its settings alone (see ``wb.derived``)."""
    return lab_view(wb.lab_state(NullSpaceLabState))
