"""Linear memory: causal linear attention as a running memory S_i = S_{i-1} + v_i φ(k_i)ᵀ read
by q_i, its outputs beside softmax attention's on the same q, k, v, and the memory's size
against a KV cache and the score matrix as n grows.

The three parts are tabs; every setting is the lab's :class:`LinearLabState`, changed through
the edit helper, so each is one undo step (a slider drag merges into one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import numpy as np
from PySide6.QtWidgets import QWidget

from attnsim.engine.linear import linear_vs_softmax
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.panels.base import content_parts
from attnsim.panels.lab import LabPanel
from attnsim.views.linear_lab import (
    FEATURE_CHOICES,
    ComparisonData,
    GrowthData,
    LinearLabState,
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
# One canonical object per feature map, so the memo's identity check works for state strings
# that compare equal but were built separately (e.g. read back from a saved document).
FEATURE_KEYS = {f: f for f in FEATURE_CHOICES}
T = TypeVar("T")


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
        self._memos: dict[str, tuple[tuple, object]] = {}
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

    def _memo(self, slot: str, key: tuple, make: Callable[[], T]) -> T:
        """``make()``, kept for the next call with the same ``key`` (compared by identity): one
        entry per slot, so stepping through positions recomputes nothing and memory stays flat."""
        old = self._memos.get(slot)
        same = old is not None and len(old[0]) == len(key)
        if same and all(a is b for a, b in zip(old[0], key, strict=True)):  # type: ignore[index]
            return old[1]  # type: ignore[index]
        value = make()
        self._memos[slot] = (key, value)
        return value

    def refresh(self) -> None:
        wb, st = self.wb, self.state()
        sc, tr = wb.scenario, wb.trace
        tokens = tuple(sc.tokens)
        tab = self.tabs.currentIndex()
        if tab == 0:
            d_k, d_v = tr.Q.shape[1], tr.V.shape[1]
            # the trace object changes with every edit; the two settings are interned strings
            # and the bool singletons, so identity is equality for them
            run = self._memo(
                "memory", (tr, FEATURE_KEYS[st.feature_map], bool(st.normalise)),
                lambda: memory_run(tr.Q, tr.K, tr.V, tokens, st.feature_map, st.normalise),
            )  # fmt: skip
            self.step = step_data(
                run, tokens, _axes(tuple(sc.qk_axes), d_k, "k"),
                _axes(tuple(sc.v_axes), d_v, "v"), st.position,
            )  # fmt: skip
            held = self._drag is not None and self.step_controls.slider.isSliderDown()
            with self.updating():
                self.step_controls.refresh(self.step, st.feature_map, st.normalise, held)
            self.memory_view.refresh(self.step)
        elif tab == 1:
            compared = None
            if not self_attention_problem(tr.Q.shape[0], tr.K.shape[0]):
                # undefined on some scenarios (a normaliser of 0): the view-model says why
                with contextlib.suppress(ValueError):
                    compared = self._memo(
                        "compare", (tr,),
                        lambda: linear_vs_softmax(
                            tr.Q, tr.K, tr.V, scale=tr.scale, temperature=tr.temperature
                        ),
                    )  # fmt: skip
            self.comparison = comparison_data(
                tr.Q, tr.K, tr.V, tokens, _axes(tuple(sc.v_axes), tr.V.shape[1], "v"), st,
                scale=tr.scale, temperature=tr.temperature, compared=compared,
            )  # fmt: skip
            with self.updating():
                self.compare_controls.refresh(self.comparison)
            self.compare_view.refresh(self.comparison)
        else:
            self.growth = growth_data(int(tr.K.shape[0]), tr.Q.shape[1], tr.V.shape[1], st)
            with self.updating():
                self.growth_controls.refresh(st.plot_n)
            self.growth_view.refresh(self.growth)
