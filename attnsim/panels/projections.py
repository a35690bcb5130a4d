"""The projection matrices Wq, Wk, Wv (and Wo) of the focused head, as editable grids.

Next to each matrix sits what it produces for the sentence (Q = X·Wq, K = X·Wk, V = X·Wv), with
the cells that the last edit changed highlighted: editing Wq visibly moves only the queries,
editing Wv only the values. Every change is one undoable command on the workbench.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import OPTIONS, Workbench
from attnsim.views.projections import head_products

from .array_table import CHANGED, ArrayTable, cell_text
from .base import Panel, content_parts
from .style import KEY, QUERY, VALUE, fmt
from .widgets import RefusalLabel, WholeNumberBox, check_entry, parse_number

ROW_PX = 19
COL_PX = 52
MAX_GRID_PX = 560
MATRICES = ("Wq", "Wk", "Wv")
PRODUCTS = {"Wq": "Q", "Wk": "K", "Wv": "V"}
COLORS = {"Wq": QUERY, "Wk": KEY, "Wv": VALUE}
ROLE = {"Wq": "queries", "Wk": "keys", "Wv": "values"}


def preset_matrix(name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A named matrix of ``shape``: 'identity' and 'swap' (the identity with its columns in
    reverse order) need a square shape; 'zero'; 'random' is seeded, N(0, 1/d) rounded to two
    decimals so that the grid shows it exactly."""
    rows, cols = shape
    if name in ("identity", "swap"):
        if rows != cols:
            raise ValueError(f"{name} needs a square matrix, this one is {rows}×{cols}")
        eye = np.eye(rows)
        return eye if name == "identity" else eye[:, ::-1].copy()
    if name == "zero":
        return np.zeros(shape)
    if name == "random":
        rng = np.random.default_rng(seed)
        return np.round(rng.normal(0.0, 1.0 / np.sqrt(rows), size=shape), 2) + 0.0
    raise ValueError(f"unknown preset {name!r}")


def changed_cells(before: np.ndarray | None, after: np.ndarray) -> np.ndarray:
    """Boolean mask (same shape as ``after``) of cells that differ; none if shapes differ."""
    if before is None or before.shape != after.shape:
        return np.zeros(after.shape, dtype=bool)
    return before != after


class MatrixGrid(ArrayTable):
    """A compact numeric grid with row and column names; cells changed by the last edit are
    tinted."""

    def __init__(self, editable: bool, parent: QWidget | None = None) -> None:
        super().__init__(editable, parent)
        m = self.array_model
        m.digits = 2
        m.white = True
        m.col_tips = True
        m.tooltip = self._tip
        self._name = ""
        h = self.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        h.setDefaultSectionSize(COL_PX)
        h.setMinimumSectionSize(30)
        v = self.verticalHeader()
        v.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        v.setDefaultSectionSize(ROW_PX)
        v.setMinimumSectionSize(ROW_PX)
        self.setFrameShape(QFrame.Shape.StyledPanel)

    def _tip(self, r: int, c: int) -> str:
        m = self.array_model
        return f"{self._name}[{m.row_labels[r]}, {m.col_labels[c]}] = {float(m.values[r, c])!r}"

    def show_matrix(
        self,
        M: np.ndarray,
        row_labels: tuple[str, ...],
        col_labels: tuple[str, ...],
        *,
        name: str,
        marks: np.ndarray | None = None,
        max_rows: int = 6,
    ) -> None:
        """Show ``M`` (r, c); ``marks`` (r, c) bool highlights cells. Never emits an edit."""
        self._name = name
        mk = None if marks is None or not np.asarray(marks).any() else marks
        if self.show_array(M, tuple(row_labels), tuple(col_labels), marks=mk):
            self._fit_size(max_rows)

    def _fit_size(self, max_rows: int) -> None:
        # A grid as small as its content (up to max_rows rows, then it scrolls); a column is
        # as wide as its name or a number, whichever is wider.
        m = self.array_model
        metrics = self.horizontalHeader().fontMetrics()
        width = 2 * self.frameWidth()
        for c, text in enumerate(m.col_labels):
            w = max(COL_PX, min(metrics.horizontalAdvance(text) + 12, 130))
            self.setColumnWidth(c, w)
            width += w
        vh = self.verticalHeader()
        if not vh.isHidden():  # isVisible() is False until the grid is shown
            # Names repeat (tokens) and many are alike: measure each distinct one once.
            names = set(m.row_labels)
            width += max((metrics.horizontalAdvance(t) for t in names), default=0) + 16
        rows = min(self.rowCount(), max_rows)
        height = self.horizontalHeader().sizeHint().height() + ROW_PX * rows + 2 * self.frameWidth()
        scrolls = self.rowCount() > max_rows
        if scrolls:
            width += self.verticalScrollBar().sizeHint().width()
        # A grid that fits shows no scroll bars: a stray one would eat a row or a column.
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if scrolls
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        too_wide = width > MAX_GRID_PX
        self.setHorizontalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if too_wide
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        if too_wide:
            height += self.horizontalScrollBar().sizeHint().height()
        self.setFixedSize(min(width, MAX_GRID_PX) + 2, height + 2)


class _Block(QWidget):
    """A title line (with a presets button for a matrix) above a grid."""

    def __init__(self, title: str, editable: bool, *, wrap: bool = False) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        top = QHBoxLayout()
        top.setSpacing(4)
        self.title = QLabel(title)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        # A long title (Wo's) wraps rather than making the panel scroll sideways.
        self.title.setWordWrap(wrap)
        top.addWidget(self.title, 1)
        self.presets: QToolButton | None = None
        if editable:
            self.presets = QToolButton()
            self.presets.setText("Preset")
            self.presets.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            self.presets.setMenu(QMenu(self.presets))
            top.addWidget(self.presets)
        lay.addLayout(top)
        self.grid = MatrixGrid(editable)
        lay.addWidget(self.grid)
        lay.addStretch(1)


class ProjectionsPanel(Panel):
    """Wq, Wk, Wv (and Wo) of the focused head, editable, beside the Q, K, V they produce."""

    panel_id = "projections"
    title = "Projections Wq · Wk · Wv"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._random_tags: dict[tuple[int, str], tuple[int, np.ndarray]] = {}
        self._last_products: tuple | None = None  # (head, Q, K, V) at the last redraw
        self._marks: dict[str, np.ndarray] = {}
        self._last_summary = ""

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        top = QHBoxLayout()
        self.head_label = QLabel("Head")
        top.addWidget(self.head_label)
        self.head_combo = QComboBox()
        self.head_combo.setToolTip("Which head's projections are shown and edited")
        self.head_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.head_combo.currentIndexChanged.connect(self._head_picked)
        top.addWidget(self.head_combo)
        self.seed_label = QLabel("random seed")
        top.addWidget(self.seed_label)
        self.seed = WholeNumberBox(0, 999_999)
        self.seed.refused.connect(
            lambda why: self._refuse_inline(ValueError(f"random seed: {why}"))
        )
        self.seed.setToolTip("The seed of the 'random' preset: the same seed, the same matrix")
        self.seed.valueChanged.connect(self._seed_changed)
        top.addWidget(self.seed)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        top.addWidget(self.summary, 1)

        self.stack = QStackedWidget()
        layout.addWidget(self.stack, 1)
        # Page 0: the grids, in a scroll area for many tokens or a wide Wo.
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.content = QWidget()
        self.content.setObjectName("projections-content")
        grid = QGridLayout(self.content)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(6)
        self.blocks: dict[str, _Block] = {}
        self.products: dict[str, _Block] = {}
        self.arrows: dict[str, QLabel] = {}
        for r, m in enumerate(MATRICES):
            block = _Block(m, editable=True)
            block.grid.array_model.on_edit = lambda r, c, text, m=m: self._cell_edited(
                m, r, c, text
            )
            self.blocks[m] = block
            grid.addWidget(block, r, 0, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
            arrow = QLabel("→")
            arrow.setAlignment(Qt.AlignmentFlag.AlignCenter)
            arrow.setStyleSheet("color: #777777; font-size: 15px;")
            self.arrows[m] = arrow
            grid.addWidget(arrow, r, 1)
            product = _Block(PRODUCTS[m], editable=False)
            self.products[m] = product
            grid.addWidget(product, r, 2, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        wo = _Block("Wo", editable=True, wrap=True)
        wo.grid.array_model.on_edit = lambda r, c, text: self._cell_edited("Wo", r, c, text)
        self.blocks["Wo"] = wo
        grid.addWidget(wo, len(MATRICES), 0, 1, 3, Qt.AlignmentFlag.AlignLeft)
        grid.setColumnStretch(3, 1)
        grid.setRowStretch(len(MATRICES) + 1, 1)
        self.scroll.setWidget(self.content)
        self.stack.addWidget(self.scroll)
        # Page 1: direct scenarios have no projections.
        self.direct_note = QLabel()
        self.direct_note.setWordWrap(True)
        self.direct_note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.direct_note.setTextFormat(Qt.TextFormat.RichText)
        self.direct_note.setMargin(8)
        self.stack.addWidget(self.direct_note)

        layout.addLayout(top)
        self.message = RefusalLabel()
        layout.addWidget(self.message)
        self.schedule_refresh()

    # ---- redraw --------------------------------------------------------------------------------
    def _on_changed(self, what: frozenset[str]) -> None:
        # Mask, temperature and scaling change no matrix and no Q, K, V: nothing to redraw.
        if what and what <= {OPTIONS}:
            return
        super()._on_changed(what)

    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.content)

    def refresh(self) -> None:
        sc = self.wb.scenario
        with self.updating():
            if sc.mode != "tokens":
                self._show_direct(sc)
                return
            self.stack.setCurrentIndex(0)
            self._refresh_heads(sc)
            self._refresh_grids(sc)

    def _show_direct(self, sc: Scenario) -> None:
        self.stack.setCurrentIndex(1)
        for w in (self.head_label, self.head_combo, self.seed_label, self.seed):
            w.setVisible(False)
        self.direct_note.setText(
            f"<b>No projections here.</b> “{sc.title or sc.name}” gives the queries, keys and "
            "values directly as vectors (Q, K, V), not as a sentence X times matrices "
            "Wq, Wk, Wv. Edit them in the <i>Vectors</i> panel (choose Q, K or V there)."
        )
        self.summary.setText("")
        self._last_products = None

    def _refresh_heads(self, sc: Scenario) -> None:
        names = [h.name or f"head {i + 1}" for i, h in enumerate(sc.heads)]
        several = len(names) > 1
        self.seed_label.setVisible(True)
        self.seed.setVisible(True)
        self.head_label.setVisible(several)
        self.head_combo.setVisible(several)
        with QSignalBlocker(self.head_combo):
            if [self.head_combo.itemText(i) for i in range(self.head_combo.count())] != names:
                self.head_combo.clear()
                self.head_combo.addItems(names)
            self.head_combo.setCurrentIndex(self.wb.focused_head)

    def _refresh_grids(self, sc: Scenario) -> None:
        h = self.wb.focused_head
        head = sc.heads[h]
        # Only X·W is shown: the whole trace (n × n scores) would cost far more at large n.
        products = head_products(sc.X, head.Wq, head.Wk, head.Wv)
        # What changed since the last redraw of this head; a pure selection keeps the marks.
        # Another head, other tokens, other shapes or another document: nothing to compare.
        key = (h, sc.name, sc.tokens, tuple(products[m].shape for m in MATRICES))
        last = self._last_products
        if last is not None and last[0] == key:
            marks = {m: changed_cells(last[1][m], products[m]) for m in MATRICES}
            if any(mk.any() for mk in marks.values()):
                self._marks = marks
                self._last_summary = self._describe(marks)
        else:
            self._marks = {}
            self._last_summary = ""
        self._last_products = (key, {m: products[m].copy() for m in MATRICES})

        for m in MATRICES:
            W = getattr(head, m)
            cols = sc.qk_axes if m != "Wv" else sc.v_axes
            block = self.blocks[m]
            block.grid.verticalHeader().setVisible(True)
            block.grid.show_matrix(W, sc.axes, cols, name=m, max_rows=8)
            tag = self._tag(sc, h, m, W)
            color = COLORS[m].name()
            of_head = f" of {head.name or f'head {h + 1}'}" if len(sc.heads) > 1 else ""
            block.title.setText(
                f"<b style='color:{color}'>{m}</b>{of_head} <span style='color:#555'>"
                f"{W.shape[0]}×{W.shape[1]}</span>{tag}"
            )
            self._fill_presets(block, sc, m, W.shape)
            prod = self.products[m]
            P = products[m]
            prod.grid.show_matrix(
                P, sc.tokens, cols, name=PRODUCTS[m], marks=self._marks.get(m), max_rows=8
            )
            n_changed = int(self._marks[m].sum()) if m in self._marks else 0
            state = (
                f"<span style='background:{CHANGED.name()}'>&nbsp;{n_changed} changed&nbsp;</span>"
                if n_changed
                else ("<span style='color:#777'>unchanged</span>" if self._marks else "")
            )
            prod.title.setText(
                f"<b style='color:{color}'>{PRODUCTS[m]}</b> = X·{m} "
                f"<span style='color:#555'>({ROLE[m]})</span> {state}"
            )
            self.arrows[m].setToolTip(f"each token's x times {m} gives its row of {PRODUCTS[m]}")
        self._refresh_wo(sc)
        hint = "Double-click a cell to type a number; Preset fills a whole matrix."
        self.summary.setText(
            (f"Last edit: {self._last_summary}. " if self._last_summary else "") + hint
        )

    def _refresh_wo(self, sc: Scenario) -> None:
        block = self.blocks["Wo"]
        if sc.Wo is None:
            block.setVisible(False)
            return
        block.setVisible(True)
        names = [h.name or f"head {i + 1}" for i, h in enumerate(sc.heads)]
        rows = tuple(f"h{i + 1}·{a}" for i in range(len(sc.heads)) for a in sc.v_axes)
        block.grid.show_matrix(sc.Wo, rows, sc.axes, name="Wo", max_rows=10)
        block.title.setText(
            f"<b>Wo</b> <span style='color:#555'>{sc.Wo.shape[0]}×{sc.Wo.shape[1]}: "
            f"concatenated head outputs ({', '.join(names)}) → model axes</span>"
            f"{self._tag(sc, -1, 'Wo', sc.Wo)}"
        )
        self._fill_presets(block, sc, "Wo", sc.Wo.shape)

    def _describe(self, marks: dict[str, np.ndarray]) -> str:
        changed = [PRODUCTS[m] for m in MATRICES if marks[m].any()]
        same = [PRODUCTS[m] for m in MATRICES if not marks[m].any()]
        text = ", ".join(changed) + " changed"
        if same:
            text += f"; {', '.join(same)} unchanged"
        return text

    def _tag(self, sc: Scenario, head: int, which: str, W: np.ndarray) -> str:
        """' = identity' etc. when the matrix equals a preset."""
        names = []
        r, c = W.shape
        if r == c:
            if np.array_equal(W, np.eye(r)):
                names.append("identity")
            elif r > 1 and np.array_equal(W, np.eye(r)[:, ::-1]):
                names.append("swap")
        if not W.any():
            names.append("zero")
        if which == "Wq":
            names += [n for n, P in sc.wq_presets.items() if np.array_equal(P, W)]
        seeded = self._random_tags.get((head, which))
        if seeded is not None and np.array_equal(seeded[1], W):
            names.append(f"random, seed {seeded[0]}")
        if not names:
            return ""
        return f" <i style='color:#333'>= {' = '.join(dict.fromkeys(names))}</i>"

    def _fill_presets(self, block: _Block, sc: Scenario, which: str, shape) -> None:
        assert block.presets is not None
        menu = block.presets.menu()
        seed = self.seed.value()
        entries: list[str] = []
        if shape[0] == shape[1]:
            entries += ["identity", "swap"]
        entries += ["zero", f"random (seed {seed})"]
        scenario_presets = list(sc.wq_presets) if which == "Wq" else []
        key = (tuple(entries), tuple(scenario_presets))
        if getattr(menu, "_attnsim_key", None) == key:
            return
        menu.clear()
        for e in entries:
            name = "random" if e.startswith("random") else e
            act = menu.addAction(e)
            act.setData(name)
            act.triggered.connect(lambda _=False, w=which, n=name: self.apply_preset(w, n))
        if scenario_presets:
            menu.addSeparator()
            for name in scenario_presets:
                act = menu.addAction(f"“{name}”")
                act.setData(name)
                act.triggered.connect(lambda _=False, n=name: self.apply_preset("Wq", n))
        menu._attnsim_key = key  # type: ignore[attr-defined]
        block.presets.setToolTip(
            f"Fill {which} with a preset: "
            + ", ".join(entries + [f"“{n}”" for n in scenario_presets])
        )

    # ---- edits ---------------------------------------------------------------------------------
    def show_refusal(self, text: str) -> None:
        self.message.show_refusal(text)

    def clear_refusal(self) -> None:
        self.message.setVisible(False)

    def _refuse_inline(self, exc: Exception) -> None:
        self.show_refusal(self.refuse(exc))

    def _matrix(self, which: str) -> np.ndarray:
        sc = self.wb.scenario
        if which == "Wo":
            assert sc.Wo is not None
            return np.asarray(sc.Wo)
        return np.asarray(getattr(sc.heads[self.wb.focused_head], which))

    def _with(self, which: str, W: np.ndarray) -> Scenario:
        sc = self.wb.scenario
        if which == "Wo":
            return edits.set_matrix(sc, "Wo", W)
        return edits.set_head_matrix(sc, self.wb.focused_head, which, W)  # type: ignore[arg-type]

    def _where(self, which: str) -> str:
        sc = self.wb.scenario
        if which == "Wo" or len(sc.heads) == 1:
            return which
        return f"{which} of head {self.wb.focused_head + 1}"

    def _cell_edited(self, which: str, r: int, c: int, typed: str) -> None:
        """A cell of ``which`` was committed with ``typed``; the grid shows the matrix again
        by itself (refused: the old value)."""
        if self.is_updating:
            return
        W = self._matrix(which)
        old_text = cell_text(W[r, c], 2)
        if typed.strip() == old_text:
            return  # the rounded text committed unchanged: keep the exact value
        label = f"{self._where(which)}[{r + 1}, {c + 1}]"
        W2 = W.copy()

        def make() -> Scenario:
            W2[r, c] = check_entry(parse_number(typed))
            return self._with(which, W2)

        def named(exc: Exception) -> Exception:
            text = exc.problem if isinstance(exc, ScenarioError) else str(exc)
            return ValueError(f"{label}: {text}")

        self.propose(make, lambda _: f"{label} = {fmt(W2[r, c], 3)}", refused=named)

    def apply_preset(self, which: str, name: str) -> None:
        """Fill ``which`` ('Wq', 'Wk', 'Wv' or 'Wo') with a preset or a scenario's Wq preset."""
        sc = self.wb.scenario
        if sc.mode != "tokens":
            self._refuse_inline(ValueError("direct scenarios have no projection matrices"))
            return
        made: list[tuple[np.ndarray, str]] = []

        def make() -> Scenario:
            W = self._matrix(which)
            if which == "Wq" and name in sc.wq_presets:
                W2 = np.asarray(sc.wq_presets[name])
                text = f"{self._where(which)} = “{name}”"
            else:
                seed = self.seed.value()
                W2 = preset_matrix(name, W.shape, seed)
                text = f"{self._where(which)} = {name}" + (
                    f" (seed {seed})" if name == "random" else ""
                )
            new = self._with(which, W2)
            made.append((W2, text))
            if name == "random":
                # Tagged before the edit lands, so the redraw it causes names the seed.
                head = -1 if which == "Wo" else self.wb.focused_head
                self._random_tags[(head, which)] = (self.seed.value(), W2.copy())
            return new

        if not self.propose(make, lambda _: made[0][1]):
            return
        self.wb.say(made[0][1])
        self.schedule_refresh()

    # ---- selection -------------------------------------------------------------------------------
    def _head_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.wb.set_focused_head(index)

    def _seed_changed(self, _: int) -> None:
        if not self.is_updating:
            self.schedule_refresh()  # the menus name the seed
