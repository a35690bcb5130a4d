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
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import OPTIONS, Workbench
from attnsim.panels.array_table import cell_text
from attnsim.panels.base import Panel, content_parts
from attnsim.panels.kit.numbers import fmt_fixed
from attnsim.panels.placed_first import RedrawsAfterPlacing
from attnsim.panels.widgets import RefusalLabel, WholeNumberBox, check_entry, parse_number
from attnsim.viewmodels.projections import (
    MATRICES,
    grids_data,
    head_products,
    preset_matrix,
    update_marks,
)

from .grids import ProjectionGrids


class ProjectionsPanel(RedrawsAfterPlacing, Panel):
    """Wq, Wk, Wv (and Wo) of the focused head, editable, beside the Q, K, V they produce."""

    panel_id = "projections"
    title = "Projections Wq · Wk · Wv"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._random_tags: dict[tuple[int, str], tuple[int, np.ndarray]] = {}
        self._last_products: tuple | None = None  # (key, products) at the last redraw
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
        self.stack.addWidget(self.scroll)
        # The grids (seven tables) in turns of their own when the window opens the panel in
        # steps, a row of them (Wq → Q, Wk → K, Wv → V, Wo) a turn, then put in the panel (all
        # in one turn they held the window 50-80 ms at n = 4,096).
        self.build_later(self._build_grids)
        for _ in range(len(MATRICES) + 1):
            self.build_later(self._add_grid_row)
        self.build_later(self._place_grids)
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

    def _build_grids(self) -> None:
        self.grids = ProjectionGrids(later=True)

    def _add_grid_row(self) -> None:
        self.grids.add_next_row()

    def _place_grids(self) -> None:
        self.grids.cell_edited.connect(self._cell_edited)
        self.grids.preset_picked.connect(self.apply_preset)
        self.content = self.grids
        self.blocks, self.products = self.grids.blocks, self.grids.products
        self.arrows = self.grids.arrows
        self.scroll.setWidget(self.content)

    # ---- redraw --------------------------------------------------------------------------------
    def _on_changed(self, what: frozenset[str]) -> None:
        # Mask, temperature and scaling change no matrix and no Q, K, V: nothing to redraw.
        if what and what <= {OPTIONS}:
            return
        super()._on_changed(what)

    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.content)

    def figure_unavailable(self) -> str:
        sc = self.wb.scenario
        if sc.mode == "tokens":
            return ""
        return (
            f"“{sc.title or sc.name}” gives its queries, keys and values directly, "
            "so there are no projection matrices Wq, Wk, Wv to show"
        )

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
        products = self._products(sc, h)
        # What changed since the last redraw of this head; a pure selection keeps the marks.
        key = (h, sc.name, sc.tokens, tuple(products[m].shape for m in MATRICES))
        self._last_products, self._marks, self._last_summary = update_marks(
            self._last_products, self._marks, self._last_summary, key, products
        )
        data = grids_data(
            sc, h, products, self._marks, self._last_summary, self._random_tags, self.seed.value()
        )
        self.grids.refresh(data)
        self.summary.setText(data.summary)

    def _products(self, sc: Scenario, h: int) -> dict[str, np.ndarray]:
        """X·Wq, X·Wk, X·Wv of head ``h``: the trace's own Q, K, V once it is made (the same
        products, made once: at 4,096 tokens of 1,024 numbers making them again took 0.3 s of
        the window's thread), else made here (only X·W: not the whole n × n trace for them)."""
        result = self.wb.result_if_made  # (always the current scenario's)
        if result is not None:
            tr = result.heads[h]
            return {"Wq": tr.Q, "Wk": tr.K, "Wv": tr.V}
        head = sc.heads[h]
        return head_products(sc.X, head.Wq, head.Wk, head.Wv)

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

        self.propose(make, lambda _: f"{label} = {fmt_fixed(W2[r, c], 3)}", refused=named)

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
