"""The routing lab: one query, a few key-value pairs, and interventions that show which of the
route (the address: query-key geometry) and the payload (the values) each edit changes.

The panel builds the layout, turns the sub-views' gestures into edits and hands each sub-view
its part of one :class:`~attnsim.viewmodels.routing_lab.LabView` per redraw.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.routing import Route
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.panels.widgets import column, open_preset
from attnsim.viewmodels.routing_lab import (
    MAX_SYNTHETIC_D,
    Cause,
    LabView,
    RouteChange,
    RoutingLabState,
    add_distractor,
    distractor_names,
    lab_unfit_reason,
    lab_view,
    replace_key,
    rotate_query_to,
    swap_values,
    without_distractors,
)

from .causes import CausesTable
from .change_line import ChangeLine
from .controls import NO_DRAG, Controls
from .distractors import DistractorTab
from .parts import rich_label, scrolling
from .plots import PlotRow

PRESET = "routing-lab"
# The lab page's parts, built when first wanted: a scenario the lab cannot take (more than one
# query, a large n) shows only the page that says so, and opens at once.
LAB_PARTS = frozenset({
    "change_label", "plots", "plane", "route_plot", "payload", "controls", "t_spin", "d_spin",
    "message_label", "causes_view", "distractors", "tabs", "splitter",
})  # fmt: skip
UNFIT = (
    "<b>The routing lab needs one query and its keys.</b><br>{reason}<br><br>"
    "The lab's preset has a query q = [1, 0], keys A = [1, 0], B = [0.8, 0.6], C = [0, 1] and "
    "values [10, 0], [0, 10], [−5, 5]. Opening it replaces the scenario (undo brings this one "
    "back)."
)


def _drag(drag: int) -> int | None:
    return None if drag == NO_DRAG else drag


class RoutingLabPanel(LabPanel):
    """Rotate the query, swap values, replace a key, change temperature, the synthetic key
    dimension, scaling and the mask; see what moved: the route, the payload, or both. Most of
    its edits are scenario edits; its one setting is the synthetic d."""

    panel_id = "routing_lab"
    title = "Routing lab"
    state_type = RoutingLabState

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent, tabbed=False)
        self.view: LabView | None = None
        self.route: Route | None = None
        self.before: Route | None = None
        self.change: RouteChange | None = None
        self.change_text = ""
        self.causes: list[Cause] = []
        self.inline_message = ""

        root = self.lab_layout
        self.stack = QStackedWidget()
        root.addWidget(self.stack)
        root.addWidget(self.refusal)  # unused: refusals show on the controls' message line
        self._lab_built = False
        self._build_unfit_page()
        if not lab_unfit_reason(workbench.scenario):
            self._build_lab_page()

    def __getattr__(self, name: str) -> object:
        # A part of the lab page asked for before the page was built (a scenario the lab could
        # not take until now, a test): build the page.
        if name in LAB_PARTS and not self.__dict__.get("_lab_built", True):
            self._build_lab_page()
            return getattr(self, name)
        raise AttributeError(name)

    # ---- construction -------------------------------------------------------------------------
    def _build_unfit_page(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.unfit_label = rich_label()
        lay.addWidget(self.unfit_label)
        self.open_button = QPushButton("Open the routing-lab preset")
        self.open_button.setToolTip(
            "Replace the scenario by the routing-lab preset (one query, three key-value pairs); "
            "Undo brings the current one back"
        )
        self.open_button.clicked.connect(self.open_preset)
        lay.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addStretch(1)
        self.stack.addWidget(page)

    def _build_lab_page(self) -> None:
        self._lab_built = True
        page, lay = column(spacing=3)
        self.change_label = ChangeLine()
        lay.addWidget(self.change_label)

        p = self.plots = PlotRow()
        self.plane, self.route_plot, self.payload = p.plane, p.route_plot, p.payload
        self.plane.tip_dragged.connect(
            lambda kind, row, x, y, drag: self.drag_tip(kind, row, (x, y), drag)
        )
        self.plane.drag_finished.connect(self.schedule_refresh)

        c = self.controls = Controls()
        c.angle_moved.connect(self._angle_moved)
        c.temperature_set.connect(self._temperature_set)
        c.d_set.connect(self._d_set)
        c.scale_toggled.connect(self._scale_toggled)
        c.mask_toggled.connect(self._mask_toggled)
        c.swap_requested.connect(self.swap_values)
        c.replace_requested.connect(self.replace_key)
        c.refused.connect(self._box_refused)
        # Number-box tests (and the inline refusal) reach these directly.
        self.t_spin, self.d_spin, self.message_label = c.t_spin, c.d_spin, c.message_label
        self.causes_view = CausesTable()
        self.distractors = DistractorTab()
        self.distractors.add_requested.connect(self.add_distractor)
        self.distractors.remove_requested.connect(self.remove_distractors)

        self.tabs = QTabWidget()
        self.tabs.addTab(scrolling(self.controls), "Interventions")
        self.tabs.addTab(self.causes_view, "Four causes of a sharp route")
        self.tabs.addTab(scrolling(self.distractors), "Distractor")
        # A splitter so the user can trade plot height for controls; plots get more at first.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.plots)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([600, 400])
        lay.addWidget(self.splitter, 1)
        self.stack.addWidget(page)

    # ---- state helpers ------------------------------------------------------------------------
    def _on_lab(self, _change: object) -> None:
        # Any lab's edit becomes the last edit, which the change line describes.
        self.schedule_refresh()

    def lab_d(self) -> float:
        """The synthetic dimension (sandbox state; defaults to the scenario's d_k)."""
        d = self.state().d
        return float(self.wb.scenario.d_k if d is None else d)

    def _edit(self, make, text: str, drag: int | None = None) -> bool:
        """Propose the scenario ``make(sc)`` makes from the current one (see Panel.propose)."""
        return self.propose(lambda: make(self.wb.scenario), text, drag=drag)

    def show_refusal(self, text: str) -> None:
        self.inline_message = text
        self.controls.show_message(text)
        self.schedule_refresh()

    def clear_refusal(self) -> None:
        self.inline_message = ""
        if self._lab_built:
            self.controls.show_message("")

    def _box_refused(self, text: str) -> None:
        self.inline_message = self.refuse(ValueError(text))
        self.controls.show_message(self.inline_message)

    # ---- user actions -------------------------------------------------------------------------
    def open_preset(self) -> None:
        open_preset(self, PRESET)

    def _angle_moved(self, value: int, drag: int) -> None:
        if not self.is_updating:
            self._edit(
                lambda sc: rotate_query_to(sc, float(value)),
                f"Rotate the query to {value}°",
                _drag(drag),
            )

    def _temperature_set(self, t: float, drag: int) -> None:
        if not self.is_updating:
            self._edit(lambda sc: sc.replace(temperature=t), f"Temperature {t:.3g}", _drag(drag))

    def set_d(self, d: float, drag: int | None = None) -> None:
        """Set the synthetic key dimension (an undoable lab setting)."""

        def make() -> RoutingLabState:
            if not (math.isfinite(d) and 1 <= d <= MAX_SYNTHETIC_D):
                raise ValueError(f"synthetic d must be between 1 and {MAX_SYNTHETIC_D}, got {d}")
            return RoutingLabState(d=int(d) if float(d).is_integer() else float(d))

        self.propose(make, lambda st: f"Synthetic key dimension d = {st.d}", drag=drag)

    def _d_set(self, d: float, drag: int) -> None:
        if not self.is_updating:
            self.set_d(d, _drag(drag))

    def _scale_toggled(self, on: bool) -> None:
        if not self.is_updating:
            self._edit(
                lambda sc: sc.replace(scale=bool(on)), "Scaling ÷√d " + ("on" if on else "off")
            )

    def _mask_toggled(self, j: int, on: bool) -> None:
        if not self.is_updating:
            self.set_mask(j, on)

    def set_mask(self, j: int, allowed: bool) -> bool:
        """Allow or forbid key ``j`` (what a mask check box does); False if refused."""
        name = self.wb.scenario.tokens[j]
        return self._edit(
            lambda sc: edits.set_mask_cell(sc, 0, j, bool(allowed)),
            f"{'Allow' if allowed else 'Mask'} key {name}",
        )

    def swap_values(self, i: int, j: int, a: str, b: str) -> None:
        self._edit(lambda sc: swap_values(sc, i, j), f"Swap values {a} ↔ {b}")

    def replace_key(self, j: int, name: str, text: str) -> None:
        def make(sc: Scenario) -> Scenario:
            try:
                vec = [float(p) for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
            except ValueError:
                raise ScenarioError(
                    "K", f"could not read {text!r} as numbers; write e.g. 0.5, -1"
                ) from None
            if not 0 <= j < sc.n_tokens:
                raise ScenarioError("K", "pick a key to replace")
            return replace_key(sc, j, vec)

        self._edit(make, f"Replace key {name} with [{text}]")

    def add_distractor(self, kind: str) -> None:
        d = self.lab_d()
        label = "long off-target key" if kind == "large-norm" else "near-duplicate key"
        self._edit(lambda sc: add_distractor(sc, kind, d)[0], f"Add a distractor ({label})")  # type: ignore[arg-type]

    def remove_distractors(self) -> None:
        def make(sc: Scenario) -> Scenario:
            if not distractor_names(sc):
                raise ScenarioError("tokens", "there is no distractor to remove")
            return without_distractors(sc)

        self._edit(make, "Remove the distractors")

    def drag_tip(self, kind: str, row: int, xy: tuple[float, float], drag: int) -> None:
        """Move the query ("q": turned to point at ``xy``) or key ``row`` ("k") to ``xy``."""
        x, y = xy
        sc = self.wb.scenario
        if kind == "q":
            if sc.d_k < 2:
                return
            deg = math.degrees(math.atan2(y, x))
            self._edit(lambda s: rotate_query_to(s, deg), "Rotate the query (drag)", drag)
        else:
            assert sc.K is not None
            vec = np.array(sc.K[row], dtype=float)
            vec[0] = x
            if vec.size > 1:
                vec[1] = y
            self._edit(lambda s: replace_key(s, row, vec), f"Drag key {sc.tokens[row]}", drag)

    # ---- redraw -------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        # The change line is a caption once an edit has been made, an instruction before.
        caption = self.change_label if self.change is not None else None
        return content_parts(self, caption, self.plane, self.route_plot, self.payload)

    def figure_unavailable(self) -> str:
        return lab_unfit_reason(self.wb.scenario) or ""

    def refresh(self) -> None:
        sc = self.wb.scenario
        reason = lab_unfit_reason(sc)
        if reason:
            self.route = self.view = None
            if self._lab_built:
                self.plane.forget()
            self.stack.setCurrentIndex(0)
            self.unfit_label.setText(UNFIT.format(reason=reason))
            return
        if not self._lab_built:
            self._build_lab_page()
        self.stack.setCurrentIndex(1)
        v = self.view = lab_view(sc, self.lab_d(), self.wb.last_edit(), self.inline_message)
        self.route, self.before, self.change = v.route, v.before, v.change
        self.change_text, self.causes = v.change_text, v.causes
        with self.updating():
            self.controls.refresh(v.controls)
        self.change_label.refresh(v)
        self.plots.refresh(v)
        self.causes_view.refresh(v.causes_view)
        self.distractors.refresh(v.distractor)
