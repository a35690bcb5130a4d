"""The vector editor: the token vectors as an editable table and as arrows to drag in a plane.

In a token scenario it edits X (one row per token). In a direct scenario (queries, keys and
values given as vectors) a selector chooses which of Q, K, V is edited. Every change goes
through the workbench as one undoable command; a whole drag is one undo step.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import MATRICES, OPTIONS, SCENARIO, Workbench, new_drag_id
from attnsim.views.vectors import (
    SNAP_STEP,
    Plane,
    axis_plane,
    direction_label,
    fitted_plane,
    fraction_in_plane,
    moved_vector,
    project,
    snap,
)

from ._vector_plane import PlaneView
from .array_table import ArrayTable, cell_text
from .base import Panel, content_parts
from .style import KEY, MUTED, QUERY, TOKEN, VALUE, fmt, fmt_vec
from .widgets import FlowLayout, RefusalLabel, check_entry, group, parse_number

MAX_COLUMN_PX = 160  # a number column never takes more (a long axis name is elided)

KINDS = {"q": "Q (queries)", "k": "K (keys)", "v": "V (values)"}
AXES_MODE = "axes"
BEST_MODE = "best"
ADD_TIP = "Add a token after the selected row (a zero vector: drag it out of the origin)"


def _unique_name(existing: tuple[str, ...], base: str = "new") -> str:
    if base not in existing:
        return base
    k = 2
    while f"{base}{k}" in existing:
        k += 1
    return f"{base}{k}"


class VectorEditorPanel(Panel):
    """Token vectors (rows) by named axes (columns), editable; and a drag plane of arrows."""

    panel_id = "vectors"
    title = "Vectors"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._kind = "x"
        self._plane_mode = AXES_MODE
        self._axes = (0, 1)
        self._fitted: Plane | None = None
        self._plane_key: tuple | None = None
        self._receiving_labels: tuple[str, ...] | None = None
        self._numbers: tuple[str, ...] = ()  # the table's row numbers '1'..'n'
        self._drag: tuple[int, int, np.ndarray, Plane] | None = None
        self._plane: Plane | None = None
        self._fit_key: tuple | None = None
        self._refit_columns = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter, 1)

        # ---- left: the table and its tools ----
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(4)
        self.kind_label = QLabel("Edit")
        self.kind_combo = QComboBox()
        for k, text in KINDS.items():
            self.kind_combo.addItem(text, k)
        self.kind_combo.setToolTip(
            "This scenario gives queries, keys and values directly: choose which to edit"
        )
        self.kind_combo.currentIndexChanged.connect(self._kind_picked)
        self.receiving_combo = QComboBox()
        self.receiving_combo.setToolTip("The query token whose attention the other panels explain")
        self.receiving_combo.currentIndexChanged.connect(self._receiving_picked)
        top = FlowLayout()
        self.kind_group = group(self.kind_label, self.kind_combo)
        top.addWidget(self.kind_group)
        top.addWidget(group(QLabel("Receiving"), self.receiving_combo))
        lv.addLayout(top)

        # A model over the scenario's arrays, not an item per cell: 2,048 tokens cost only the
        # rows in view, and a selection change repaints two names.
        self.table = ArrayTable(editable=True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        model = self.table.array_model
        model.tooltip = self._cell_tip
        model.on_edit = self._cell_edited
        # Column widths are fitted once per shape, not on every text change: ResizeToContents
        # would re-measure the whole table for each cell a drag updates.
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # Wide enough for '−00.000', so a drag that adds a sign or a digit is not elided.
        number_px = self.table.fontMetrics().horizontalAdvance("−00.000") + 14
        self.table.horizontalHeader().setMinimumSectionSize(number_px)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        lv.addWidget(self.table, 1)

        buttons = QHBoxLayout()
        buttons.setSpacing(3)
        self.add_button = self._tool("+ Add", ADD_TIP, self.add_token)
        self.remove_button = self._tool("− Remove", "Remove the selected token", self.remove_token)
        self.up_button = self._tool(
            "↑", "Move the selected token one place earlier", lambda: self.move_selected(-1)
        )
        self.down_button = self._tool(
            "↓", "Move the selected token one place later", lambda: self.move_selected(+1)
        )
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lv.addLayout(buttons)
        self.message = RefusalLabel()
        lv.addWidget(self.message)
        splitter.addWidget(left)

        # ---- right: the drag plane ----
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.setSpacing(4)
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("two axes", AXES_MODE)
        self.mode_combo.addItem("best 2-D plane", BEST_MODE)
        self.mode_combo.setToolTip(
            "Show two chosen axes, or the plane through the origin that holds the most of the "
            "vectors' squared length (principal directions)"
        )
        self.mode_combo.currentIndexChanged.connect(self._mode_picked)
        self.x_combo = QComboBox()
        self.x_combo.setToolTip("Horizontal axis")
        self.y_combo = QComboBox()
        self.y_combo.setToolTip("Vertical axis")
        self.x_combo.currentIndexChanged.connect(lambda i: self._axis_picked(0, i))
        self.y_combo.currentIndexChanged.connect(lambda i: self._axis_picked(1, i))
        # Combos shrink to a few characters in a narrow dock.
        for c, chars in (
            (self.x_combo, 4),
            (self.y_combo, 4),
            (self.mode_combo, 5),
            (self.receiving_combo, 4),
            (self.kind_combo, 3),
        ):
            c.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            c.setMinimumContentsLength(chars)
        self.vs_label = QLabel("×")
        self.refit_button = QToolButton()
        self.refit_button.setText("Refit")
        self.refit_button.setToolTip(
            "The plane stays put while you edit, so arrows do not jump. Refit recomputes the "
            "best plane for the vectors as they are now."
        )
        self.refit_button.clicked.connect(self.refit)
        ptop = FlowLayout()
        ptop.addWidget(group(QLabel("Plane"), self.mode_combo, self.refit_button))
        self.axes_group = group(self.x_combo, self.vs_label, self.y_combo)
        ptop.addWidget(self.axes_group)
        rv.addLayout(ptop)
        self.plane_view = PlaneView()
        self.plane_view.tooltip_for = self._tip_text
        self.plane_view.drag_started.connect(self._drag_started)
        self.plane_view.drag_moved.connect(self._drag_moved)
        self.plane_view.drag_finished.connect(self._drag_finished)
        self.plane_view.tip_clicked.connect(self._select_row)
        rv.addWidget(self.plane_view, 1)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setStyleSheet("color: #333333;")
        rv.addWidget(self.info)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([500, 500])
        self.splitter = splitter
        self._split_fitted = False
        self.schedule_refresh()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_split()

    def _fit_split(self) -> None:
        """Once the panel has a real size and the table its columns: give the table the width
        its columns need (up to 55 %), so a four-axis sentence shows every column without
        scrolling; the plane gets the rest. After that the user's splitter position stays."""
        t = self.table
        cols = t.model().columnCount() if t.model() is not None else 0
        if self._split_fitted or self.width() < 200 or cols == 0:
            return
        self._split_fitted = True
        need = t.verticalHeader().width() + 6 + sum(t.columnWidth(c) for c in range(cols))
        need += t.verticalScrollBar().sizeHint().width()
        total = sum(self.splitter.sizes()) or self.width()
        left = min(max(need, total // 3), int(total * 0.55))
        self.splitter.setSizes([left, total - left])

    def _tool(self, text: str, tip: str, slot) -> QToolButton:
        # Tool buttons: as narrow as their text, so the panel fits a small dock.
        b = QToolButton()
        b.setText(text)
        b.setToolTip(tip)
        b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        b.clicked.connect(slot)
        return b

    # ---- what is being edited ------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """'x' in a token scenario, else the chosen 'q', 'k' or 'v'."""
        return "x" if self.wb.scenario.mode == "tokens" else self._kind_direct()

    def _kind_direct(self) -> str:
        return self._kind if self._kind in KINDS else "q"

    def _matrix(self, sc: Scenario | None = None) -> np.ndarray:
        sc = sc or self.wb.scenario
        kind = "x" if sc.mode == "tokens" else self._kind_direct()
        return np.asarray(getattr(sc, edits.vector_field(sc, kind)))  # type: ignore[arg-type]

    def _row_labels(self, sc: Scenario | None = None) -> tuple[str, ...]:
        sc = sc or self.wb.scenario
        if sc.mode == "direct" and self._kind_direct() == "q":
            return sc.query_labels
        return sc.tokens

    def _axis_names(self, sc: Scenario | None = None) -> tuple[str, ...]:
        sc = sc or self.wb.scenario
        if sc.mode == "tokens":
            return sc.axes
        return sc.v_axes if self._kind_direct() == "v" else sc.qk_axes

    def _highlight_row(self) -> int | None:
        sc = self.wb.scenario
        if sc.mode == "tokens" or self._kind_direct() == "q":
            return self.wb.receiving
        return self.wb.focused_key

    @property
    def _what(self) -> str:
        return {"x": "X", "q": "Q", "k": "K", "v": "V"}[self.kind]

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

    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.table, self.plane_view, self.info)

    def refresh(self) -> None:
        sc = self.wb.scenario
        with self.updating():
            self._refresh_controls(sc)
            self._refresh_table(sc)
            self._refresh_plane(sc)
        self._fit_split()

    def _refresh_controls(self, sc: Scenario) -> None:
        direct = sc.mode == "direct"
        self.kind_group.setVisible(direct)
        with QSignalBlocker(self.kind_combo):
            self.kind_combo.setCurrentIndex(list(KINDS).index(self._kind_direct()))
        labels = tuple(sc.query_labels)
        with QSignalBlocker(self.receiving_combo):
            # Compared with what was put in, not read back item by item (2,048 Qt calls).
            if labels != self._receiving_labels:
                self.receiving_combo.clear()
                self.receiving_combo.addItems(list(labels))
                self._receiving_labels = labels
            if self.receiving_combo.currentIndex() != self.wb.receiving:
                self.receiving_combo.setCurrentIndex(self.wb.receiving)
        queries = direct and self._kind_direct() == "q"
        no_struct = (
            "Queries are given one per row of Q: add, remove or reorder keys in the K or V view"
        )
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            b.setEnabled(not queries)
        self.add_button.setToolTip(no_struct if queries else ADD_TIP)

    def _refresh_table(self, sc: Scenario) -> None:
        M = self._matrix(sc)
        rows = tuple(self._row_labels(sc))
        axes = tuple(self._axis_names(sc))
        header = ("token" if self.kind != "q" else "query", *axes)
        if len(self._numbers) != len(rows):
            self._numbers = tuple(str(i + 1) for i in range(len(rows)))
        numbers = self._numbers
        # A new shape or new names reset the model; new values repaint only the rows that
        # changed, a new receiving token only the two names whose style changes.
        reset = self.table.show_array(
            M, numbers, header, names=rows, bold_row=self._highlight_row()
        )
        if reset or self._refit_columns:
            self._fit_columns(M, rows, header)
        self._refit_columns = False

    def _fit_columns(self, M: np.ndarray, rows: tuple[str, ...], header: tuple[str, ...]) -> None:
        """Column widths for names (in bold: the receiving one is) and numbers, measured on
        the widest texts only: a whole-column measure visits every row (seconds at n=2,048)."""
        t = self.table
        bold = QFont(t.font())
        bold.setBold(True)
        names = QFontMetrics(bold)
        head = t.horizontalHeader().fontMetrics()
        plain = t.fontMetrics()
        pad = 14
        widest = max((names.horizontalAdvance(r) for r in set(rows)), default=0)
        name_w = max(widest + pad, head.horizontalAdvance(header[0]) + pad)
        t.setColumnWidth(0, min(name_w, 2 * MAX_COLUMN_PX))
        digits = t.array_model.digits
        for j in range(M.shape[1]):
            # The widest texts: the extremes, and the tiniest non-zero (shown as 4.00e−07). Texts
            # are compact and the width capped: huge numbers never widen the window.
            col = M[:, j]
            tiny = col[col != 0]
            picks = [col.min(), col.max()] if col.size else []
            if tiny.size:
                picks.append(-np.abs(tiny).min())
            texts = {cell_text(x, digits) for x in picks}
            w = max((plain.horizontalAdvance(x) for x in texts), default=0) + pad
            w = max(w, head.horizontalAdvance(header[j + 1]) + pad)
            t.setColumnWidth(j + 1, min(w, MAX_COLUMN_PX))

    def _cell_tip(self, row: int, col: int) -> str:
        m = self.table.array_model
        names, M = m.names or (), m.values
        if col == 0:
            return f"{names[row]} = {fmt_vec(M[row], 3)}"
        return f"{names[row]} · {m.col_labels[col]} = {float(M[row, col - 1])!r}"

    def _current_plane(self, sc: Scenario, M: np.ndarray) -> Plane:
        d = M.shape[1]
        key = (sc.name, sc.mode, self.kind, self._row_labels(sc), self._axis_names(sc))
        if key != self._plane_key:
            # A new document or a new shape: the fitted plane and axis picks are stale.
            if (
                self._plane_key is None
                or self._plane_key[:3] != key[:3]
                or (len(self._plane_key[4]) != d)
            ):
                self._axes = (0, 1 if d > 1 else 0)
            self._fitted = None
            self._plane_key = key
        # With two axes or fewer the best plane is the whole space: show the axes themselves.
        if self._plane_mode == BEST_MODE and d > 2:
            if self._fitted is None:
                self._fitted, _ = fitted_plane(M)
            return self._fitted
        i, j = self._axes
        return axis_plane(d, i, j if d > 1 else None)

    def _refresh_plane(self, sc: Scenario) -> None:
        M = self._matrix(sc)
        axes = self._axis_names(sc)
        d = M.shape[1]
        # The plane stays put while a tip is dragged.
        plane = self._drag[3] if self._drag is not None else self._current_plane(sc, M)
        self._plane = plane
        best = self._plane_mode == BEST_MODE and d > 2
        with QSignalBlocker(self.mode_combo):
            self.mode_combo.setCurrentIndex(1 if best else 0)
        self.mode_combo.setVisible(d > 2)  # with two axes there is no other plane to pick
        for c, k in ((self.x_combo, 0), (self.y_combo, 1)):
            with QSignalBlocker(c):
                if [c.itemText(i) for i in range(c.count())] != list(axes):
                    c.clear()
                    c.addItems(list(axes))
                c.setCurrentIndex(self._axes[k])
        self.axes_group.setVisible(not best)
        self.y_combo.setEnabled(d > 1)
        self.refit_button.setVisible(best)

        tips = project(M, plane)
        labels = self._row_labels(sc)
        ref_tips, ref_labels = None, ()
        main_c, hi_c, ref_c = TOKEN, QUERY, MUTED
        if sc.mode == "direct":
            kind = self._kind_direct()
            if kind == "q":
                main_c, hi_c, ref_c = _lighter(QUERY), QUERY, _lighter(KEY)
                ref_tips, ref_labels = project(np.asarray(sc.K), plane), sc.tokens
            elif kind == "k":
                main_c, hi_c, ref_c = KEY, KEY.darker(140), QUERY
                r = self.wb.receiving
                ref_tips = project(np.asarray(sc.Q)[[r]], plane)
                ref_labels = (sc.query_labels[r],)
            else:
                main_c, hi_c = VALUE, VALUE.darker(140)
        view = self.plane_view
        view.set_colors(main_c, hi_c, ref_c)
        view.set_arrows(tips, labels, self._highlight_row(), ref_tips, ref_labels)
        if best:
            view.set_axis_labels(
                f"PC1 ≈ {direction_label(plane.basis[:, 0], axes)}",
                f"PC2 ≈ {direction_label(plane.basis[:, 1], axes)}",
            )
        else:
            i, j = self._axes
            view.set_axis_labels(axes[i], axes[j] if d > 1 else "")
        # Re-fit the view when what is shown changes, not on every edit (a zoom survives).
        fit_key = (sc.name, self.kind, labels, id(self._fitted) if best else self._axes)
        # Unless the user zoomed or panned, the view follows the arrows: the same vectors always
        # give the same picture (an undo restores it exactly).
        view.fit(force=fit_key != self._fit_key or view.auto_range)
        self._fit_key = fit_key
        self._set_info(M, plane, best)

    def _set_info(self, M: np.ndarray, plane: Plane, best: bool) -> None:
        name = f"‖{self._what}‖²"
        share = fraction_in_plane(M, plane)
        hint = f"Drag a tip to move it; Shift snaps to {SNAP_STEP:g}."
        if best:
            _, explained = fitted_plane(M)
            ideal = float(explained.sum())
            text = f"plane explains {share:.0%} of {name}"
            if abs(ideal - share) > 0.005:
                text += f" (refit: {ideal:.0%})"
            self.info.setText(
                f"{text}. Drags move only within the plane. {hint}{self._reference_note()}"
            )
        else:
            axes = self._axis_names()
            i, j = self._axes
            shown = axes[i] if M.shape[1] == 1 else f"{axes[i]} × {axes[j]}"
            text = f"{shown} hold {share:.0%} of {name}"
            if M.shape[1] > 2:
                text += "; other coordinates are kept"
            self.info.setText(f"{text}. {hint}{self._reference_note()}")

    def _reference_note(self) -> str:
        sc = self.wb.scenario
        if sc.mode != "direct":
            return ""
        kind = self._kind_direct()
        if kind == "q":
            return " Dashed: the keys."
        if kind == "k":
            return " Dashed: the receiving query."
        return ""

    # ---- selection and view choices (not edits) ------------------------------------------------
    def _kind_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        self._kind = str(self.kind_combo.itemData(index))
        self.schedule_refresh()
        self.flush()

    def _receiving_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.wb.set_receiving(index)

    def _mode_picked(self, index: int) -> None:
        if self.is_updating or index < 0:
            return
        self._plane_mode = str(self.mode_combo.itemData(index))
        self._fitted = None
        self.schedule_refresh()
        self.flush()

    def _axis_picked(self, which: int, index: int) -> None:
        if self.is_updating or index < 0:
            return
        axes = list(self._axes)
        other = 1 - which
        if axes[other] == index:
            axes[other] = axes[which]  # picking the other combo's axis swaps the two
        axes[which] = index
        self._axes = (axes[0], axes[1])
        self.schedule_refresh()
        self.flush()

    def set_plane(self, mode: str, axes: tuple[int, int] | None = None) -> None:
        """Show two axes (``mode='axes'``) or the best plane (``'best'``); a view choice."""
        if mode not in (AXES_MODE, BEST_MODE):
            raise ValueError(f"plane mode must be 'axes' or 'best', got {mode!r}")
        if axes is not None:
            d = self._matrix().shape[1]
            if not all(0 <= a < d for a in axes) or (d > 1 and axes[0] == axes[1]):
                raise ValueError(f"axes {axes} are not two different axes of {d}")
            self._axes = axes
        self._plane_mode = mode
        self._fitted = None
        self.schedule_refresh()
        self.flush()

    def refit(self) -> None:
        self._fitted = None
        self.schedule_refresh()
        self.flush()

    def _select_row(self, row: int) -> None:
        self.table.setCurrentCell(row, 0)

    def selected_row(self) -> int | None:
        row = self.table.currentRow()
        return row if 0 <= row < self.table.rowCount() else None

    # ---- edits ---------------------------------------------------------------------------------
    def show_refusal(self, text: str) -> None:
        self.message.show_refusal(text)

    def clear_refusal(self) -> None:
        self.message.setVisible(False)

    def _refuse_inline(self, exc: Exception) -> None:
        self.show_refusal(self.refuse(exc))

    def _cell_edited(self, row: int, col: int, typed: str) -> None:
        """The cell (row, col) was committed with ``typed`` (col 0: the name). The table reads
        the scenario, so a refused edit shows the old value again by itself."""
        if self.is_updating:
            return
        sc = self.wb.scenario
        rows = self._row_labels(sc)
        if col == 0:
            self._rename(row, typed.strip())
            return
        M = self._matrix(sc)
        old_text = cell_text(M[row, col - 1], self.table.array_model.digits)
        if typed.strip() == old_text:
            return  # the shown (rounded) value was committed unchanged: keep the exact one
        axis = self._axis_names(sc)[col - 1]
        vec = M[row].copy()

        def make() -> Scenario:
            vec[col - 1] = check_entry(parse_number(typed))
            return edits.set_vector(sc, self.kind, row, vec)  # type: ignore[arg-type]

        self.propose(
            make,
            lambda _: f"{rows[row]}.{axis} = {fmt(vec[col - 1])}",
            refused=lambda exc: _named(exc, f"{rows[row]} · {axis}"),
        )

    def _rename(self, row: int, name: str) -> None:
        sc = self.wb.scenario
        rows = self._row_labels(sc)
        old = rows[row]
        if name == old:
            return

        def make() -> Scenario:
            if not name:
                raise ValueError("a token needs a name (empty is not allowed)")
            if sc.mode == "direct" and self._kind_direct() == "q":
                names = list(sc.query_tokens)
                names[row] = name
                return sc.replace(query_tokens=tuple(names))
            return edits.rename_token(sc, row, name)

        self.propose(make, f"rename {old} → {name}")

    def rename_token(self, row: int, name: str) -> None:
        """Rename the token (or, in the Q view of a direct scenario, the query) in ``row``."""
        self._rename(row, name.strip())

    def add_token(self) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        index = sc.n_tokens if row is None else row + 1
        name = _unique_name(sc.tokens)
        if not self.propose(lambda: edits.add_token(sc, name, index=index), f"add token {name}"):
            return
        self.flush_now()
        self.table.setCurrentCell(index, 0)

    def remove_token(self) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        if row is None:
            self._refuse_inline(ValueError("select a token to remove first"))
            return
        if not self.propose(lambda: edits.remove_token(sc, row), f"remove token {sc.tokens[row]}"):
            return
        self.flush_now()
        self.table.setCurrentCell(min(row, self.wb.scenario.n_tokens - 1), 0)

    def move_selected(self, step: int) -> None:
        sc = self.wb.scenario
        row = self.selected_row()
        if row is None:
            self._refuse_inline(ValueError("select a token to move first"))
            return
        target = row + step
        if not 0 <= target < sc.n_tokens:
            return  # already first / last: nothing to do
        where = "earlier" if step < 0 else "later"
        column = max(self.table.currentColumn(), 0)
        if not self.propose(
            lambda: edits.move_token(sc, row, target), f"move {sc.tokens[row]} {where}"
        ):
            return
        self.flush_now()
        self.table.setCurrentCell(target, column)  # the selection follows the moved token

    def flush_now(self) -> None:
        self.schedule_refresh()
        self.flush()

    def _context_menu(self, pos: QPoint) -> None:
        menu = self.build_context_menu(self.table.rowAt(pos.y()))
        menu.exec(self.table.viewport().mapToGlobal(pos))

    def build_context_menu(self, row: int) -> QMenu:
        """The table's right-click menu for ``row`` (-1: below the last row)."""
        menu = QMenu(self)
        if row >= 0:
            self.table.setCurrentCell(row, max(self.table.currentColumn(), 0))
        sc = self.wb.scenario
        queries = sc.mode == "direct" and self._kind_direct() == "q"

        def act(text: str, slot, enabled: bool = True) -> QAction:
            a = menu.addAction(text)
            a.triggered.connect(slot)
            a.setEnabled(enabled)
            return a

        if row >= 0:
            if sc.mode == "tokens" or queries:
                act("Make receiving", lambda: self.wb.set_receiving(row))
            act("Rename…", lambda: self.table.editItem(self.table.item(row, 0)))
            menu.addSeparator()
        act("Add token", self.add_token, not queries)
        if row >= 0:
            act("Remove token", self.remove_token, not queries and sc.n_tokens > 1)
            act("Move earlier", lambda: self.move_selected(-1), not queries and row > 0)
            act("Move later", lambda: self.move_selected(+1), not queries and row < sc.n_tokens - 1)
        return menu

    # ---- dragging ------------------------------------------------------------------------------
    def _drag_started(self, row: int) -> None:
        if self._plane is None:
            return
        M = self._matrix()
        self._drag = (row, new_drag_id(), M[row].copy(), self._plane)
        self.table.setCurrentCell(row, max(self.table.currentColumn(), 0))

    def _drag_moved(self, row: int, x: float, y: float, shift: bool) -> None:
        if self._drag is None or self._drag[0] != row:
            return
        _, drag_id, x0, plane = self._drag
        p = np.array([x, y])
        if shift:
            p = snap(p)
        name = self._row_labels()[row]
        self.propose(
            lambda: edits.set_vector(
                self.wb.scenario,
                self.kind,  # type: ignore[arg-type]
                row,
                moved_vector(x0, plane, p),
            ),
            f"drag {name}",
            drag=drag_id,
        )

    def _drag_finished(self, row: int) -> None:
        self._drag = None
        self.schedule_refresh()

    def _tip_text(self, row: int) -> str:
        M = self._matrix()
        rows = self._row_labels()
        if not 0 <= row < len(rows):
            return ""
        axes = self._axis_names()
        lines = [f"{rows[row]}  ({self._what} row {row + 1})"]
        lines += [f"{a} = {fmt(float(v))}" for a, v in zip(axes, M[row], strict=True)]
        return "\n".join(lines)


def _lighter(c: QColor) -> QColor:
    out = QColor(c)
    out.setAlpha(150)
    return out


def _named(exc: Exception, where: str) -> Exception:
    """The refusal with the cell it concerns in front."""
    text = exc.problem if isinstance(exc, ScenarioError) else str(exc)
    return ValueError(f"{where}: {text}")
