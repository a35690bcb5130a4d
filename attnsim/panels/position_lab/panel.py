"""Position and sharing: RoPE as a rotation of a query and a key pair, ALiBi and window/sink
masks on the scenario's weights, and query heads sharing key/value heads (GQA / MQA).

The three parts are tabs; every setting is the lab's :class:`PositionLabState`, changed through
the edit helper, so each is one undo step (a slider drag merges into one).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.viewmodels.position_lab import (
    SETTINGS,
    MaskData,
    PositionLabState,
    RotationData,
    SharingData,
    mask_data,
    rope_width,
    rotation_data,
    sharing_data,
)

from .mask_view import MaskControls, MaskView
from .rope_view import RopeControls, RopePlane
from .sharing_view import SharingControls, SharingView


class PositionLabPanel(LabPanel):
    """RoPE, ALiBi and window/sink masks, and shared key/value heads, on the current scenario."""

    panel_id = "position_lab"
    title = "Position and sharing"

    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.rotation: RotationData | None = None
        self.masks: MaskData | None = None
        self.sharing: SharingData | None = None

        self.rope_controls = self.connect_controls(RopeControls())
        middle = QHBoxLayout()
        self.plane = RopePlane()
        self.plane.drag_started.connect(self.begin_drag)
        self.plane.position_dragged.connect(self._plane_dragged)
        self.plane.drag_finished.connect(self.end_drag)
        middle.addWidget(self.plane, 3)
        self.rope_text = QLabel()
        self.rope_text.setWordWrap(True)
        self.rope_text.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.rope_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        middle.addWidget(self.rope_text, 2)
        self.add_page("RoPE", self.rope_controls, middle)

        self.mask_controls = self.connect_controls(MaskControls())
        self.mask_view = MaskView()
        self.add_page("ALiBi and masks", self.mask_controls, self.mask_view)

        self.sharing_controls = self.connect_controls(SharingControls())
        self.sharing_view = SharingView()
        self.add_page("GQA / MQA", self.sharing_controls, self.sharing_view)

    # ---- edits --------------------------------------------------------------------------------
    def _plane_dragged(self, name: str, value: int) -> None:
        self.set_setting(name, value, drag=self.drag_of(name))

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        page = self.tabs.currentWidget()
        parts = {0: (self.plane, self.rope_text), 1: (self.mask_view,), 2: (self.sharing_view,)}
        return content_parts(self, *parts.get(self.tabs.currentIndex(), (page,)))

    def refresh(self) -> None:
        wb, st = self.wb, self.state()
        tab = self.tabs.currentIndex()
        if tab == 0:
            self._refresh_rope(st)
        elif tab == 1:
            self.masks = wb.derived(lab_masks, lab=PositionLabState)
            with self.updating():
                self.mask_controls.refresh(st)
            self.mask_view.refresh(self.masks)
        else:
            self.sharing = wb.derived(lab_sharing, lab=PositionLabState)
            with self.updating():
                self.sharing_controls.refresh(st)
            self.sharing_view.refresh(self.sharing)

    def _refresh_rope(self, st: PositionLabState) -> None:
        wb = self.wb
        self.rotation = r = wb.derived(lab_rotation, lab=PositionLabState)
        with self.updating():
            self.rope_controls.show_rotation(st, r)
        self.plane.refresh(r)
        d_used = rope_width(r.d_k, st.width)
        source = (
            f"q = the receiving query “{r.q_label}”, k = the key “{r.k_label}”, their first "
            f"{d_used} of d_k = {r.d_k} coordinates (head {wb.focused_head + 1})."
        )
        self.rope_text.setText(
            r.message if r.message else f"{source}<br><br>{r.readout}<br><br><b>{r.shift_text}</b>"
        )


# ---- the view-models, derived by the workbench from the scenario, the receiving query, the
# focused head and the lab's settings ----------------------------------------------------------
def lab_rotation(wb: Workbench) -> RotationData:
    """RoPE on the receiving query and the lab's key."""
    sc, tr, i = wb.scenario, wb.trace, wb.receiving
    st = wb.lab_state(PositionLabState)
    return rotation_data(tr.Q, tr.K, i, sc.query_labels[i], tuple(sc.tokens), st)


def lab_masks(wb: Workbench) -> MaskData:
    """ALiBi and window / sink masks on the focused head's weights."""
    sc, st = wb.scenario, wb.lab_state(PositionLabState)
    return mask_data(wb.trace, wb.receiving, tuple(sc.query_labels), tuple(sc.tokens), st)


def lab_sharing(wb: Workbench) -> SharingData:
    """Query heads sharing key/value heads (from the settings alone)."""
    return sharing_data(wb.lab_state(PositionLabState))
