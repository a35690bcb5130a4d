"""Linear memory: causal linear attention as a running memory S_i = S_{i-1} + v_i φ(k_i)ᵀ read
by q_i, its outputs beside softmax attention's on the same q, k, v, and the memory's size
against a KV cache and the score matrix as n grows.

The three parts are tabs; every setting is the lab's :class:`LinearLabState`, changed through
the edit helper, so each is one undo step (a slider drag merges into one).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np
from PySide6.QtWidgets import QWidget

from attnsim.engine.linear import LinearVsSoftmax, linear_vs_softmax
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.views.linear_lab import (
    FEATURE_CHOICES,
    ComparisonData,
    GrowthData,
    LinearLabState,
    MemoryRun,
    StepData,
    checked,
    comparison_data,
    growth_data,
    memory_run,
    normaliser_problem,
    self_attention_problem,
    step_data,
)

from .compare_view import CompareControls, CompareView
from .growth_view import GrowthControls, GrowthView
from .memory_view import MemoryView, StepControls

SETTING_NAMES = {
    "position": "position i", "feature_map": "feature map", "normalise": "normaliser",
    "coord": "output coordinate", "plot_n": "plot up to n",
}  # fmt: skip


def shown_value(value: object) -> str:
    """A setting's value as the undo history and refusals name it (on/off for the check box)."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _axes(names: tuple[str, ...], width: int, prefix: str) -> tuple[str, ...]:
    """The scenario's axis names if there is one per coordinate, else numbered ones."""
    return names if len(names) == width else tuple(f"{prefix}{j + 1}" for j in range(width))


class LinearLabPanel(LabPanel):
    """Causal linear attention as a fixed-size memory, against softmax, on the scenario."""

    panel_id = "linear_lab"
    title = "Linear memory"

    state_type = LinearLabState

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._drag: int | None = None
        self.step: StepData | None = None
        self.comparison: ComparisonData | None = None
        self.growth: GrowthData | None = None

        self.step_controls = self.connect_controls(StepControls(), "position i")
        self.step_controls.step.connect(self.step_by)
        self.step_controls.slider_pressed.connect(self._slider_pressed)
        self.step_controls.slider_moved.connect(self._slider_moved)
        self.step_controls.slider_released.connect(self._slider_released)
        self.memory_view = MemoryView()
        self.add_page("Running memory", self.step_controls, self.memory_view)

        self.compare_controls = self.connect_controls(CompareControls())
        self.compare_view = CompareView()
        self.add_page("Linear vs softmax", self.compare_controls, self.compare_view)

        self.growth_controls = self.connect_controls(GrowthControls(), "plot up to n")
        self.growth_view = GrowthView()
        self.add_page("Memory as n grows", self.growth_controls, self.growth_view)

    def _qkv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tr = self.wb.trace
        return tr.Q, tr.K, tr.V

    # ---- edits --------------------------------------------------------------------------------
    def set_setting(self, name: str, value: object, *, drag: int | None = None) -> bool:
        """Set one of the lab's settings as one undoable edit; a bad value is refused inline."""
        st = self.state()
        if name == "feature_map" and not isinstance(value, str):
            value = FEATURE_CHOICES[int(value)]  # type: ignore[call-overload]
        if name == "normalise":
            value = bool(value)
        if getattr(st, name) == value:
            return True
        what = SETTING_NAMES.get(name, name)

        def make() -> LinearLabState:
            new = checked(replace(st, **{name: value}))
            self._check_against_scenario(new, what, value)
            return new

        return self.propose(make, f"Linear memory: {what} = {shown_value(value)}", drag=drag)

    def _check_against_scenario(self, new: LinearLabState, what: str, value: object) -> None:
        """Refuse a position past the scenario's end, and a normaliser that would divide by a
        non-positive z_i · φ(q_i) on this scenario (the state then stays as it was)."""
        Q, K, V = self._qkv()
        n = int(K.shape[0])
        if new.position > n:
            raise ValueError(f"{what} must lie between 1 and n = {n}, got {value}")
        if new.normalise and not self_attention_problem(int(Q.shape[0]), n):
            why = normaliser_problem(Q, K, V, tuple(self.wb.scenario.tokens), new.feature_map)
            if why:
                raise ValueError(f"{what} = {shown_value(value)}: {why}")

    def step_by(self, delta: int) -> None:
        """Back (-1) or Step (+1) one token, within 1 .. n."""
        n = int(self.wb.trace.K.shape[0])
        target = min(max(self.state().position + delta, 1), n)
        self.set_setting("position", target)

    def _slider_pressed(self) -> None:
        self._drag = new_drag_id()

    def _slider_moved(self, value: int) -> None:
        if not self.is_updating:
            self.set_setting("position", value, drag=self._drag)

    def _slider_released(self) -> None:
        self._drag = None

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        views: dict[int, QWidget] = {0: self.memory_view, 1: self.compare_view, 2: self.growth_view}
        return content_parts(self, views.get(self.tabs.currentIndex(), self.tabs.currentWidget()))

    def refresh(self) -> None:
        wb = self.wb
        tab = self.tabs.currentIndex()
        if tab == 0:
            self.step = wb.derived(step_view, lab=LinearLabState)
            held = self._drag is not None and self.step_controls.slider.isSliderDown()
            st = self.state()
            with self.updating():
                self.step_controls.refresh(self.step, st.feature_map, st.normalise, held)
            self.memory_view.refresh(self.step)
        elif tab == 1:
            self.comparison = wb.derived(comparison_view, lab=LinearLabState)
            with self.updating():
                self.compare_controls.refresh(self.comparison)
            self.compare_view.refresh(self.comparison)
        else:
            self.growth = wb.derived(growth_view, lab=LinearLabState)
            with self.updating():
                self.growth_controls.refresh(self.state().plot_n)
            self.growth_view.refresh(self.growth)


# ---- the view-models, derived by the workbench from the scenario, the focused head and the
# lab's settings (so the panel and a figure export share one computation) ---------------------
RUN_FIELDS = ("feature_map", "normalise")


def lab_run(wb: Workbench) -> MemoryRun:
    """The running memory over the focused head's q, k, v (a change of position keeps it)."""
    tr, st = wb.trace, wb.lab_state(LinearLabState)
    return memory_run(tr.Q, tr.K, tr.V, tuple(wb.scenario.tokens), st.feature_map, st.normalise)


def step_view(wb: Workbench) -> StepData:
    """The running memory at the lab's position."""
    sc, tr, st = wb.scenario, wb.trace, wb.lab_state(LinearLabState)
    d_k, d_v = tr.Q.shape[1], tr.V.shape[1]
    run = wb.derived(lab_run, lab=LinearLabState, fields=RUN_FIELDS)
    return step_data(
        run, tuple(sc.tokens), _axes(tuple(sc.qk_axes), d_k, "k"),
        _axes(tuple(sc.v_axes), d_v, "v"), st.position,
    )  # fmt: skip


def lab_compared(wb: Workbench) -> LinearVsSoftmax | None:
    """Linear attention against softmax on the focused head (None where it is undefined)."""
    tr = wb.trace
    if self_attention_problem(tr.Q.shape[0], tr.K.shape[0]):
        return None
    # undefined on some scenarios (a normaliser of 0): the view-model says why
    with contextlib.suppress(ValueError):
        return linear_vs_softmax(tr.Q, tr.K, tr.V, scale=tr.scale, temperature=tr.temperature)
    return None


def comparison_view(wb: Workbench) -> ComparisonData:
    """Linear against softmax attention, at the lab's output coordinate."""
    sc, tr, st = wb.scenario, wb.trace, wb.lab_state(LinearLabState)
    return comparison_data(
        tr.Q, tr.K, tr.V, tuple(sc.tokens), _axes(tuple(sc.v_axes), tr.V.shape[1], "v"), st,
        scale=tr.scale, temperature=tr.temperature, compared=wb.derived(lab_compared),
    )  # fmt: skip


def growth_view(wb: Workbench) -> GrowthData:
    """The memory's size against a KV cache as n grows."""
    tr, st = wb.trace, wb.lab_state(LinearLabState)
    return growth_data(int(tr.K.shape[0]), tr.Q.shape[1], tr.V.shape[1], st)
