"""The vector editor: the token vectors as an editable table and as arrows to drag in a plane.

In a token scenario it edits X (one row per token). In a direct scenario (queries, keys and
values given as vectors) a selector chooses which of Q, K, V is edited. Every change goes
through the workbench as one undoable command; a whole drag is one undo step.

The panel keeps the view choices (which kind, which plane) and turns the sub-views' gestures
into edits; the table side (:mod:`.editor`), the plane's choices (:mod:`.plane_controls`) and
the plane (:mod:`.plane_view`) only show what :mod:`attnsim.viewmodels.vectors` computes.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import cast

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMenu, QSplitter, QVBoxLayout, QWidget

from attnsim.engine import edits
from attnsim.engine.edits import VectorKind
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import MATRICES, OPTIONS, SCENARIO, Workbench, new_drag_id
from attnsim.viewmodels.vectors import (
    AXES_MODE,
    BEST_MODE,
    Plane,
    PlaneChoice,
    ShownVectors,
    Target,
    checked_axes,
    choose_plane,
    editor_data,
    moved_vector,
    named_refusal,
    picked_axis,
    plane_controls,
    plane_picture,
    renamed,
    snap,
    target,
    tip_text,
    unique_name,
)

from ..base import Panel, content_parts, in_turn_after_trace, next_turn_after_trace
from ..kit.hints import hints_shown
from ..kit.numbers import fmt_fixed
from ..widgets import check_entry, parse_number
from .best_share import BestShares
from .editor import VectorTable
from .plane_controls import PlaneControls
from .plane_view import PlaneView

# From this many tokens, the plane is drawn in a turn of its own after a trace arrives.
PLANE_LATER_TOKENS = 1024


class VectorEditorPanel(Panel):
    """Token vectors (rows) by named axes (columns), editable; and a drag plane of arrows."""

    panel_id = "vectors"
    title = "Vectors"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._kind = "x"  # the direct scenario's choice; a token scenario always edits X
        self._choice = PlaneChoice()
        self._drag: tuple[int, int, np.ndarray, Plane] | None = None
        self._plane: Plane | None = None
        self._fit_key: tuple | None = None
        self._refit_columns = False
        self._shown = ShownVectors()  # only the rows an edit changed are shown anew
        self._best = BestShares(workbench, self.schedule_refresh)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter, 1)

        self.editor = VectorTable()
        self.editor.kind_picked.connect(self._kind_picked)
        self.editor.receiving_picked.connect(self._receiving_picked)
        self.editor.cell_edited.connect(self._cell_edited)
        self.editor.add_clicked.connect(self.add_token)
        self.editor.remove_clicked.connect(self.remove_token)
        self.editor.move_clicked.connect(self.move_selected)
        splitter.addWidget(self.editor)

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.setSpacing(4)
        self.controls = PlaneControls()
        self.controls.mode_picked.connect(self._mode_picked)
        self.controls.axis_picked.connect(self._axis_picked)
        self.controls.refit_clicked.connect(self.refit)
        rv.addWidget(self.controls)
        self.plane_view = PlaneView()
        self.plane_view.tooltip_for = self._tip_text
        self.plane_view.drag_started.connect(self._drag_started)
        self.plane_view.drag_moved.connect(self._drag_moved)
        self.plane_view.drag_finished.connect(self._drag_finished)
        self.plane_view.tip_clicked.connect(lambda row: self.editor.select(row, 0))
        rv.addWidget(self.plane_view, 1)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setStyleSheet("color: #333333;")
        rv.addWidget(self.info)
        # How to drag: on screen only (a figure shows the caption above, not this).
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #666666;")
        rv.addWidget(self.hint)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([500, 500])
        # The sub-views' widgets that the export, the main window and the tests reach.
        e, c = self.editor, self.controls
        self.table, self.message, self.kind_combo = e.table, e.message, e.kind_combo
        self.kind_group, self.receiving_combo = e.kind_group, e.receiving_combo
        self.add_button, self.remove_button = e.add_button, e.remove_button
        self.up_button, self.down_button = e.up_button, e.down_button
        self.mode_combo, self.refit_button = c.mode_combo, c.refit_button
        self.x_combo, self.y_combo, self.axes_group = c.x_combo, c.y_combo, c.axes_group
        self._split_fitted = False
        self._plane_later = False
        self.schedule_refresh()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_split()

    def _fit_split(self) -> None:
        if not self._split_fitted and self.width() >= 200:
            self._split_fitted = fit_split(self.splitter, self.editor.needed_width(), self.width())

    # ---- what is being edited ------------------------------------------------------------------
    def _target(self, sc: Scenario | None = None) -> Target:
        wb = self.wb
        return target(sc or wb.scenario, self._kind, wb.receiving, wb.focused_key)

    @property
    def kind(self) -> str:
        """'x' in a token scenario, else the chosen 'q', 'k' or 'v'."""
        return self._target().kind

    # ---- redraw --------------------------------------------------------------------------------
    def _on_changed(self, what: frozenset[str]) -> None:
        # The vectors do not depend on the projections or on mask / temperature: skip those
        # (another panel's Wq drag then costs this panel nothing).
        if what and what <= {MATRICES, OPTIONS}:
            return
        if SCENARIO in what:
            # Another document, maybe of the same shape and names (a preset opened after a
            # file of it): its numbers need their own column widths. Kept from the previous
            # document, columns 1,500 px wide showed their right-aligned numbers off screen.
            self._refit_columns = True
        super()._on_changed(what)

    _axes = property(lambda self: self._choice.axes)  # the two axes picked (x, y)

    def figure_widgets(self) -> list[QWidget]:
        self.flush_now()
        return content_parts(self, self.table, self.plane_view, self.info)

    def refresh(self) -> None:
        sc = self.wb.scenario
        t = self._target(sc)
        rows = self._shown.changed(t.matrix)
        data = editor_data(sc, t, self._kind, self.wb.receiving, self._refit_columns, rows)
        # a large trace arriving: the table in this turn, the plane in the next (both: 130 ms)
        later = in_turn_after_trace() and sc.n_tokens >= PLANE_LATER_TOKENS
        with self.plane_view.redraws_held():  # drawn once, at its size after the splitter's fit
            with self.updating():
                self.editor.refresh(data)
                self._refit_columns = False
                self._plane_later = later
                if not later:
                    self._refresh_plane(sc, t)
            self._fit_split()
        if later:
            next_turn_after_trace(self, self._plane_turn)

    def _plane_turn(self) -> None:
        if self._plane_later:  # (not drawn meanwhile by a flush or another refresh)
            self._plane_later, sc = False, self.wb.scenario
            with self.plane_view.redraws_held(), self.updating():
                self._refresh_plane(sc, self._target(sc))

    def _refresh_plane(self, sc: Scenario, t: Target) -> None:
        if self._drag is not None:
            plane = self._drag[3]  # the plane stays put while a tip is dragged
        else:
            self._choice, plane = choose_plane(self._choice, sc, t)
        self._plane = plane
        controls = plane_controls(t.axes, self._axes, self._choice.mode)
        self.controls.refresh(controls)
        projection = self._shown.project(t.matrix, plane)
        ideal = self._best.get(t, controls.best, wait=self._drag is not None)
        picture = plane_picture(sc, t, plane, controls, self.wb.receiving, projection, ideal)
        view = self.plane_view
        view.refresh(picture)
        # Re-fit the view when what is shown changes, not on every edit (a zoom survives).
        fitted = id(self._choice.fitted) if controls.best else self._axes
        fit_key = (sc.name, t.kind, t.rows, fitted)
        # Unless the user zoomed or panned, the view follows the arrows: the same vectors always
        # give the same picture (an undo restores it exactly).
        view.fit(force=fit_key != self._fit_key or view.auto_range)
        self._fit_key = fit_key
        self.info.setText(picture.info)
        self.hint.setText(picture.hint)
        self.hint.setVisible(bool(picture.hint) and hints_shown())  # none in presentation mode

    # ---- selection and view choices (not edits) ------------------------------------------------
    def flush_now(self) -> None:
        self._best.now = True  # a figure shows no caption still being computed
        try:
            self.schedule_refresh()
            self.flush()
        finally:
            self._best.now = False

    def _kind_picked(self, kind: str) -> None:
        if not self.is_updating:
            self._kind = kind
            self.flush_now()

    def _receiving_picked(self, index: int) -> None:
        if not self.is_updating:
            self.wb.set_receiving(index)

    def _mode_picked(self, mode: str) -> None:
        if not self.is_updating:
            self.set_plane(mode)

    def _axis_picked(self, which: int, index: int) -> None:
        if not self.is_updating:
            self._choice = replace(self._choice, axes=picked_axis(self._axes, which, index))
            self.flush_now()

    def set_plane(self, mode: str, axes: tuple[int, int] | None = None) -> None:
        """Show two axes (``mode='axes'``) or the best plane (``'best'``); a view choice."""
        if mode not in (AXES_MODE, BEST_MODE):
            raise ValueError(f"plane mode must be 'axes' or 'best', got {mode!r}")
        if axes is not None:
            axes = checked_axes(axes, self._target().matrix.shape[1])
        self._choice = replace(self._choice, mode=mode, axes=axes or self._axes)
        self.refit()

    def refit(self) -> None:
        self._choice = replace(self._choice, fitted=None)
        self.flush_now()

    def selected_row(self) -> int | None:
        return self.editor.selected_row()

    # ---- edits ---------------------------------------------------------------------------------
    def show_refusal(self, text: str) -> None:
        self.message.show_refusal(text)

    def clear_refusal(self) -> None:
        self.message.setVisible(False)

    def _cell_edited(self, row: int, col: int, typed: str) -> None:
        """The cell (row, col) was committed with ``typed`` (col 0: the name). The table reads
        the scenario, so a refused edit shows the old value again by itself."""
        if self.is_updating:
            return
        if col == 0:
            self._rename(row, typed.strip())
            return
        sc = self.wb.scenario
        t = self._target(sc)
        axis, name = t.axes[col - 1], t.rows[row]
        vec = t.matrix[row].copy()

        def make() -> Scenario:
            vec[col - 1] = check_entry(parse_number(typed))
            return edits.set_vector(sc, t.kind, row, vec)  # type: ignore[arg-type]

        self.propose(
            make,
            lambda _: f"{name}.{axis} = {fmt_fixed(vec[col - 1])}",
            refused=lambda exc: named_refusal(exc, f"{name} · {axis}"),
        )

    def _rename(self, row: int, name: str) -> None:
        sc = self.wb.scenario
        t = self._target(sc)
        old = t.rows[row]
        if name == old:
            return

        self.propose(lambda: renamed(sc, t, row, name), f"rename {old} → {name}")

    def rename_token(self, row: int, name: str) -> None:
        """Rename the token (or, in the Q view of a direct scenario, the query) in ``row``."""
        self._rename(row, name.strip())

    def add_token(self) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        index = sc.n_tokens if row is None else row + 1
        name = unique_name(sc.tokens)
        if self.propose(lambda: edits.add_token(sc, name, index=index), f"add token {name}"):
            self.flush_now()
            self.editor.select(index, 0)

    def remove_token(self) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        if row is None:
            self.show_refusal(self.refuse(ValueError("select a token to remove first")))
            return
        if self.propose(lambda: edits.remove_token(sc, row), f"remove token {sc.tokens[row]}"):
            self.flush_now()
            self.editor.select(min(row, self.wb.scenario.n_tokens - 1), 0)

    def move_selected(self, step: int) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        if row is None:
            self.show_refusal(self.refuse(ValueError("select a token to move first")))
            return
        to = row + step
        if not 0 <= to < sc.n_tokens:
            return  # already first / last: nothing to do
        where = "earlier" if step < 0 else "later"
        column = max(self.table.currentColumn(), 0)
        if self.propose(lambda: edits.move_token(sc, row, to), f"move {sc.tokens[row]} {where}"):
            self.flush_now()
            self.editor.select(to, column)  # the selection follows the moved token

    def build_context_menu(self, row: int) -> QMenu:
        """The table's right-click menu for ``row`` (-1: below the last row)."""
        return self.editor.build_context_menu(row)

    # ---- dragging ------------------------------------------------------------------------------
    def _drag_started(self, row: int) -> None:
        if self._plane is None:
            return
        self._drag = (row, new_drag_id(), self._target().matrix[row].copy(), self._plane)
        self.editor.select(row)

    def _drag_moved(self, row: int, x: float, y: float, shift: bool) -> None:
        if self._drag is None or self._drag[0] != row:
            return
        _, drag_id, x0, plane = self._drag
        p = snap(np.array([x, y])) if shift else np.array([x, y])
        t, vector = self._target(), moved_vector(x0, plane, p)
        kind = cast(VectorKind, t.kind)
        make = partial(edits.set_vector, self.wb.scenario, kind, row, vector)
        self.propose(make, f"drag {t.rows[row]}", drag=drag_id)

    def _drag_finished(self, row: int) -> None:
        self._drag = None
        self.schedule_refresh()

    def _tip_text(self, row: int) -> str:
        return tip_text(self._target(), row, fmt_fixed)


def fit_split(splitter: QSplitter, need: int, width: int) -> bool:
    """Once the panel has a real size and the table its columns: give the table the width they
    need (up to 55 %: a four-axis sentence unscrolled), then leave the splitter to the user.
    True once done."""
    if need == 0:
        return False
    total = sum(splitter.sizes()) or width
    left = min(max(need, total // 3), int(total * 0.55))
    splitter.setSizes([left, total - left])
    return True
