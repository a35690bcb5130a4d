"""Linear memory: causal linear attention as a running memory S_i = S_{i-1} + v_i φ(k_i)ᵀ read
by q_i, its outputs beside softmax attention's on the same q, k, v, and the memory's size
against a KV cache and the score matrix as n grows.

The three parts are tabs; every setting is the lab's :class:`LinearLabState`, changed through
the edit helper, so each is one undo step (a slider drag merges into one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np
from PySide6.QtWidgets import QVBoxLayout, QWidget

from attnsim.engine.linear import LinearVsSoftmax, linear_vs_softmax
from attnsim.model.workbench import Workbench
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.viewmodels.linear_lab import (
    SETTINGS,
    ComparisonData,
    GrowthData,
    LinearLabState,
    MemoryRun,
    StepData,
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


def _axes(names: tuple[str, ...], width: int, prefix: str) -> tuple[str, ...]:
    """The scenario's axis names if there is one per coordinate, else numbered ones."""
    return names if len(names) == width else tuple(f"{prefix}{j + 1}" for j in range(width))


class LinearLabPanel(LabPanel):
    """Causal linear attention as a fixed-size memory, against softmax, on the scenario."""

    panel_id = "linear_lab"
    title = "Linear memory"

    settings = SETTINGS

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.step: StepData | None = None
        self.comparison: ComparisonData | None = None
        self.growth: GrowthData | None = None

        self.step_controls = self.connect_controls(StepControls())
        self.step_controls.step.connect(self.step_by)
        self.memory_view = MemoryView()
        self.add_page("Running memory", self.step_controls, self.memory_view)
        # The other two tabs (three pyqtgraph plots, about 60 ms) are made when first raised:
        # a tab not on screen does no work, and the lab's first show builds only this one.
        self._pages: dict[int, tuple[QVBoxLayout, Callable[[QVBoxLayout], None]]] = {}
        self._later_page("Linear vs softmax", self._build_compare)
        self._later_page("Memory as n grows", self._build_growth)
        self.tabs.currentChanged.connect(self._build_page)

    def _later_page(self, title: str, build: Callable[[QVBoxLayout], None]) -> None:
        page = QWidget()
        col = QVBoxLayout(page)
        col.setContentsMargins(2, 2, 2, 2)
        self._pages[self.tabs.addTab(page, title)] = (col, build)

    def _build_page(self, index: int) -> None:
        """Make tab ``index``'s controls and view if they are not made yet."""
        if index in self._pages:
            col, build = self._pages.pop(index)
            build(col)

    def _build_compare(self, col: QVBoxLayout) -> None:
        self.compare_controls = self.connect_controls(CompareControls())
        self.compare_view = CompareView()
        col.addWidget(self.compare_controls)
        col.addWidget(self.compare_view, 1)

    def _build_growth(self, col: QVBoxLayout) -> None:
        self.growth_controls = self.connect_controls(GrowthControls())
        self.growth_view = GrowthView()
        col.addWidget(self.growth_controls)
        col.addWidget(self.growth_view, 1)

    def _qkv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tr = self.wb.trace
        return tr.Q, tr.K, tr.V

    # ---- edits --------------------------------------------------------------------------------
    def scenario_problem(self, state: LinearLabState, name: str) -> str:
        """A position past the scenario's end, or a normaliser that would divide by a
        non-positive z_i · φ(q_i) on this scenario."""
        Q, K, V = self._qkv()
        n = int(K.shape[0])
        s = self.settings[name]
        value = getattr(state, name)
        if state.position > n:
            return f"{s.label} must lie between 1 and n = {n}, got {value}"
        if state.normalise and not self_attention_problem(int(Q.shape[0]), n):
            why = normaliser_problem(Q, K, V, tuple(self.wb.scenario.tokens), state.feature_map)
            if why:
                return f"{s.label} = {s.shown(value)}: {why}"
        return ""

    def step_by(self, delta: int) -> None:
        """Back (-1) or Step (+1) one token, within 1 .. n."""
        n = int(self.wb.trace.K.shape[0])
        target = min(max(self.state().position + delta, 1), n)
        self.set_setting("position", target)

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        self._build_page(self.tabs.currentIndex())
        views: dict[int, QWidget | None] = {
            0: self.memory_view,
            1: getattr(self, "compare_view", None),
            2: getattr(self, "growth_view", None),
        }
        with self.computing_now():
            return content_parts(
                self, views.get(self.tabs.currentIndex(), self.tabs.currentWidget())
            )

    def refresh(self) -> None:
        st = self.state()
        tab = self.tabs.currentIndex()
        self._build_page(tab)
        # At large n each view is made in the background (None until then: the previous
        # picture stays and the busy line says so).
        if tab == 0:
            step = self.derive_soon(step_view)
            if step is not None:
                self.step = step
                with self.updating():
                    self.step_controls.show_step(st, step)
                self.memory_view.refresh(step)
        elif tab == 1:
            comparison = self.derive_soon(comparison_view)
            if comparison is not None:
                self.comparison = comparison
                with self.updating():
                    self.compare_controls.show_comparison(st, comparison)
                self.compare_view.refresh(comparison)
        else:
            with self.updating():
                self.growth_controls.refresh(st)
            growth = self.derive_soon(growth_view)
            if growth is not None:
                self.growth = growth
                self.growth_view.refresh(growth)


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
