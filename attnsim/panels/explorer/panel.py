"""The dot-product explorer: two vectors in a plane, their shadow, and how softmax reads scores.

Free mode: two sandbox vectors a and b (the lab state, so edits are undoable) whose tips are
dragged with the mouse, optionally holding their lengths (tips move on circles) or their angle
(tips move along rays). Linked mode: a query and a key of the current scenario, drawn in the
plane they span, with the numbers that make that pair's heatmap cell. Below, a softmax strip
shows how dividing a row of scores by sqrt(d_k) and a temperature changes how sharply it chooses.

This module lays the sub-views out, turns their gestures into edits and hands each one what
:mod:`attnsim.viewmodels.explorer` computed for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnsim.engine import edits
from attnsim.model.workbench import LabChange, Workbench, new_drag_id
from attnsim.viewmodels import explorer as em
from attnsim.viewmodels.explorer import A_DEFAULT, B_DEFAULT, ExplorerState

from ..base import Panel, content_parts
from .choice import ChoiceRow
from .plane import ProductPlane
from .readouts import ReadoutsView
from .sliders import VectorSliders
from .softmax import SoftmaxBars, StripControls

NOTES_MIN_WIDTH = 640  # narrower than this, the readouts' notes move into their tool tips


class ExplorerPanel(Panel):
    """Dot product, shadow, cosine and scaled dot of two vectors; softmax of a score row."""

    panel_id = "explorer"
    title = "Dot-product explorer"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._tip: em.TipDrag | None = None
        self._slider_drag: int | None = None
        self._basis: np.ndarray | None = None
        self._basis_key: tuple | None = None
        self._frozen = False  # keep the plane's basis while a drag or a slider runs
        self._bounds: np.ndarray | None = None
        self._last_dir = {"a": A_DEFAULT / 10.0, "b": B_DEFAULT.copy()}
        self._length_reach = em.FREE_REACH
        self._shown_mode = ""

        self.choice = ChoiceRow()
        self.readouts = ReadoutsView()
        root = self._root = QVBoxLayout(self)
        root.setContentsMargins(6, 6, 6, 6)
        root.setSpacing(4)
        root.addWidget(self.choice)
        middle = self._middle = QHBoxLayout()
        middle.setSpacing(8)
        middle.addWidget(self.readouts)  # gets its preferred width, the plot the rest
        root.addLayout(middle, 1)

        # What tests, the window-fit probe and figure export reach for by its old name.
        self.mode_combo, self.key_combo = self.choice.mode_combo, self.choice.key_combo
        self.set_mode, self.set_hold = self.choice.set_mode, self.choice.set_hold
        self.readout_title, self._rows = self.readouts.title, self.readouts.rows
        self.values = self.readouts.values

        self.choice.mode_picked.connect(self._mode_picked)
        self.choice.hold_picked.connect(lambda _hold: self.schedule_refresh())
        self.choice.query_picked.connect(lambda i: self._select(self.wb.set_receiving, i))
        self.choice.key_picked.connect(lambda j: self._select(self.wb.set_focused_key, j))
        # The plane (a plot), its lines and arrows, then the sliders and the softmax strip,
        # each in a turn of its own when the window opens the panel in steps (the whole panel
        # in one turn held the window about 50 ms).
        for part in (_build_plane, _build_plane_items, _build_below):
            self.build_later(partial(part, self))
        workbench.lab_changed.connect(self._on_lab)
        self.schedule_refresh()

    # ---- state read from the workbench --------------------------------------------------------
    def state(self) -> ExplorerState:
        return self.wb.lab_state(ExplorerState)

    @property
    def mode(self) -> str:
        return self.choice.mode

    @property
    def hold(self) -> str:
        return self.choice.hold

    def pair(self) -> tuple[int, int]:
        """The (query, key) indices linked mode shows: the receiving query and the focused key,
        or the key the query weights most."""
        wb = self.wb
        return em.default_pair(wb.trace.weights, wb.receiving, wb.focused_key)

    def _linked_editable(self) -> bool:
        return self.wb.scenario.mode == "direct"

    def _names(self) -> tuple[str, str]:
        return ("a", "b") if self.mode == "free" else ("q", "k")

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The two vectors as drawn, in plane coordinates: shape (2,) each."""
        if self.mode == "free":
            st = self.state()
            return np.asarray(st.a, float), np.asarray(st.b, float)
        q, k = self._qk()
        basis = self._plane()
        return em.to_plane(q, basis), em.to_plane(k, basis)

    def _qk(self) -> tuple[np.ndarray, np.ndarray]:
        i, j = self.pair()
        tr = self.wb.trace
        return np.asarray(tr.Q[i], float), np.asarray(tr.K[j], float)

    def _plane(self) -> np.ndarray:
        """The linked pair's plane basis (d_k, 2); kept as is while a drag runs."""
        q, k = self._qk()
        key = (self.pair(), self.wb.focused_head, q.shape[0])
        self._basis = em.follow_basis(q, k, self._basis, self._basis_key == key, self._frozen)
        self._basis_key = key
        return self._basis

    # ---- edits --------------------------------------------------------------------------------
    def _write(self, name: str, vec2: np.ndarray, text: str, drag: int | None) -> None:
        """Store a moved vector (plane coordinates): the lab state, or the scenario's q / k row."""
        vec2 = np.asarray(vec2, dtype=float)
        if not np.isfinite(vec2).all():
            self.refuse(ValueError("the vector would not be finite"))
            return
        if np.any(vec2):
            self._last_dir[name] = em.unit(vec2)
        if self.mode == "free":
            new = replace(self.state(), **{name: tuple(float(x) for x in vec2)})
            self.wb.set_lab_state(new, text, drag=drag)
            return
        if not self._linked_editable():
            return
        i, j = self.pair()
        q, k = self._qk()
        kind, row, old = ("query", i, q) if name == "a" else ("key", j, k)
        target = em.from_plane(vec2, self._plane(), old)
        self.propose(
            lambda: edits.place_vector(self.wb.scenario, kind, row, target, self.wb.focused_head),
            text,
            drag=drag,
        )

    def _pin_pair(self) -> None:
        # The default key is the top-weighted one; a drag may change which that is, so the
        # pair being edited becomes the focused key for the rest of the session.
        if self.mode == "linked" and self.wb.focused_key is None:
            self.wb.set_focused_key(self.pair()[1])

    def begin_drag(self, name: str, at: np.ndarray) -> None:
        self._pin_pair()
        a, b = self.vectors()
        self._tip = em.TipDrag.grab(name, a if name == "a" else b, at, new_drag_id())
        self._frozen = True

    def drag_to(self, at: np.ndarray) -> None:
        tip = self._tip
        if tip is None:
            return
        vec = tip.to(at, self.hold, self._last_dir[tip.name])
        label = self._names()[0 if tip.name == "a" else 1]
        self._write(tip.name, vec, f"Drag {label} in the explorer", tip.drag)
        self.flush()

    def end_drag(self) -> None:
        self._tip = None
        self._frozen = False
        self.schedule_refresh()

    def _slider_pressed(self) -> None:
        self._pin_pair()
        self._slider_drag = new_drag_id()
        self._frozen = True

    def _slider_released(self) -> None:
        self._slider_drag = None
        self._frozen = False
        self.schedule_refresh()

    def _slider_moved(self, key: str, tick: int) -> None:
        if self.is_updating:
            return
        self._pin_pair()  # keyboard steps too: the pair must not switch under the slider
        a, b = self.vectors()
        dirs = (self._last_dir["a"], self._last_dir["b"])
        name, new, text = em.slider_edit(
            key, tick, a, b, reach=self._length_reach, directions=dirs, names=self._names()
        )
        self._write(name, new, text, self._slider_drag)

    def _set_state(self, text: str, drag: int | None = None, **changes) -> None:
        if not self.is_updating:
            self.wb.set_lab_state(replace(self.state(), **changes), text, drag=drag)

    def _scores_entered(self, text: str) -> None:
        if self.is_updating:
            return
        try:
            scores = em.parse_scores(text)
        except ValueError as exc:
            self.strip_error.setText(self.refuse(exc))
            return
        self.strip_error.setText("")
        self._set_state("Edit softmax scores", scores=tuple(float(x) for x in scores))

    def set_scores_text(self, text: str) -> None:
        """Type ``text`` into the score box and commit it (as pressing Enter does)."""
        self.strip.scores_edit.setText(text)
        self._scores_entered(text)

    def _mode_picked(self, _mode: str) -> None:
        self._bounds = None
        self.schedule_refresh()

    def _select(self, setter: Callable[[int], None], index: int) -> None:
        if not self.is_updating and index >= 0:
            setter(index)

    def shows_scenario(self) -> bool:
        return self.mode == "linked"  # the sandbox's vectors are its own

    def _on_changed(self, what: frozenset[str]) -> None:
        self._on_selection()

    def _on_selection(self) -> None:
        # The free vectors and the softmax strip are sandbox state: only linked mode shows the
        # scenario, so only then does a scenario edit (e.g. every move of a drag elsewhere) cost
        # a redraw here. Switching to linked mode redraws from the current scenario.
        if self.mode == "linked":
            self.schedule_refresh()

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is ExplorerState:
            self.schedule_refresh()

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        rows = [w for row in self._rows.values() for w in row]
        return content_parts(self, self.plot, self.readout_title, *rows, self.bars)

    def refresh(self) -> None:
        wb, linked = self.wb, self.mode == "linked"
        names, hold, editable = self._names(), self.hold, not linked or self._linked_editable()
        with self.updating():
            self.choice.refresh(em.pair_choice(wb.scenario, *self.pair()) if linked else None)
            a, b = self.vectors()
            for name, v in (("a", a), ("b", b)):
                if np.any(v):
                    self._last_dir[name] = em.unit(v)
            picture = em.plane_picture(
                a,
                b,
                names=names,
                directions=(self._last_dir["a"], self._last_dir["b"]),
                hold=hold,
                shown=self._bounds,
                may_refit=self._tip is None,
                draggable=editable,
                linked=linked,
            )
            if picture.refit:
                self._bounds = picture.box
            self.plane.refresh(picture)
            self.hint.setText(em.hint_text(self.mode, hold, editable))
            if linked:
                readouts = em.linked_readouts(wb.scenario, wb.trace, wb.focused_head, *self.pair())
            else:
                readouts = em.free_readouts(a, b, int(self.state().d_k))
            self.readouts.refresh(readouts)
            if self._slider_drag is None:
                self._length_reach = em.length_reach(a, b, linked)
            reach = self._length_reach
            rows = em.slider_view(a, b, names=names, hold=hold, editable=editable, reach=reach)
            self.vector_sliders.refresh(rows)
            strip = wb.derived(_strip, lab=ExplorerState)
            self.strip.refresh(strip)
            self.bars.refresh(strip)
        if self._shown_mode != self.mode:  # rows come and go with the mode
            self._shown_mode = self.mode
            QTimer.singleShot(0, self, self._ask_for_height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.readouts.show_notes(self.width() >= NOTES_MIN_WIDTH)
        self.readouts.fit_title()
        self._ask_for_height()

    def _ask_for_height(self) -> None:
        # Wrapping rows (flow layouts, the hint) need more height when the panel is narrow than
        # its minimum size says; a dock honours only the minimum, so ask for what this width
        # needs, or the rows would be squeezed onto each other. Depends on the width only.
        layout = self.layout()
        if layout is None or self.width() < 50:
            return
        need = layout.totalMinimumHeightForWidth(self.width())
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)


# The panel's parts, each built in a turn of its own when the window opens it in steps.
def _build_plane(panel: ExplorerPanel) -> None:
    """The plane of the two vectors, left of the readouts."""
    panel.plane = ProductPlane(items=False)  # its lines and arrows: the next part
    panel._middle.insertWidget(0, panel.plane, 1)
    panel.plot, panel.view_box, panel.pick = panel.plane, panel.plane.view_box, panel.plane.pick
    panel.plane.drag_started.connect(lambda name, x, y: panel.begin_drag(name, np.array([x, y])))
    panel.plane.drag_moved.connect(lambda x, y: panel.drag_to(np.array([x, y])))
    panel.plane.drag_finished.connect(panel.end_drag)


def _build_plane_items(panel: ExplorerPanel) -> None:
    panel.plane.add_items()
    panel.angle_text, panel.shadow_text = panel.plane.angle_text, panel.plane.shadow_text


def _build_below(panel: ExplorerPanel) -> None:
    """The length and angle sliders, the hint and the softmax strip under the plane."""
    panel.vector_sliders = VectorSliders()
    panel.hint = QLabel()
    panel.hint.setWordWrap(True)
    panel.hint.setStyleSheet("color: #555555;")
    panel.strip = StripControls()
    panel.bars = SoftmaxBars()
    root = panel._root
    root.addWidget(panel.vector_sliders)
    root.addWidget(panel.hint)
    root.addWidget(panel.strip)
    root.addWidget(panel.bars)
    panel.sliders, panel.slider_values = panel.vector_sliders.sliders, panel.vector_sliders.values
    panel.scale_check, panel.temp_slider = panel.strip.scale_check, panel.strip.temp_slider
    panel.strip_error = panel.strip.error
    for source in (panel.vector_sliders, panel.strip):
        source.pressed.connect(panel._slider_pressed)
        source.released.connect(panel._slider_released)
    panel.vector_sliders.moved.connect(panel._slider_moved)
    panel.strip.scores_entered.connect(panel._scores_entered)
    panel.strip.temperature_moved.connect(
        lambda t: panel._set_state(f"Temperature {t:.2f}", panel._slider_drag, temperature=t)
    )
    panel.strip.scale_toggled.connect(
        lambda on: panel._set_state("Divide by √d_k" if on else "No √d_k", scale=bool(on))
    )
    panel.strip.d_k_changed.connect(lambda v: panel._set_state(f"d_k = {v}", d_k=int(v)))
    panel.strip.refused.connect(lambda why: panel.refuse(ValueError(f"d_k: {why}")))


def _strip(wb: Workbench) -> em.StripPicture:
    """The score strip and its softmax bars: from the lab's settings alone."""
    return em.strip_picture(wb.lab_state(ExplorerState))
