"""Multi-head anatomy: every matrix of the block with its shape, learned or computed, and counts.

The diagram follows data through one self-attention sublayer: X, the focused head's Wq, Wk,
Wv (learned, amber) and Q, K, V, S, A, H (computed, blue), then Concat, Wo, Δ = Concat Wo and
Y = X + Δ. The receiving token's rows are highlighted; the head chips pick the focused head. A
caption counts the block's learned matrices, computed vectors and parameters; the calculator
page counts them for any n, h, d, d_k, d_v and number of blocks N.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.model.workbench import Workbench
from attnsim.panels.placed_first import RedrawsAfterPlacing
from attnsim.viewmodels.anatomy import (
    BlockMatrix,
    DiagramData,
    block_caption,
    block_matrices,
    chip_labels,
    counts_of,
    sublayer_shape,
)

from ..base import Panel, content_parts
from ..widgets import FlowLayout
from ..widgets import group as control_group
from .calculator import CountsCalculator
from .diagram import BlockDiagram, DiagramScroll


def _head_combo(tip: str, length: int) -> QComboBox:
    box = QComboBox()
    box.setToolTip(tip)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(length)
    return box


def _set_items(box: QComboBox, items: list[str]) -> None:
    # Refilling a combo box resets its popup: only when the list really changed. The list
    # last set is kept on the box: reading 64 items back on every refresh cost 0.15 ms.
    last = getattr(box, "_items_set", None)
    if last is not None and last == items and box.count() == len(items):
        return
    if [box.itemText(i) for i in range(box.count())] != items:
        box.clear()
        box.addItems(items)
    box._items_set = list(items)  # type: ignore[attr-defined]


class AnatomyPanel(RedrawsAfterPlacing, Panel):
    """Every matrix of the multi-head block, learned or computed, with the counts."""

    panel_id = "anatomy"
    title = "Multi-head anatomy"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(6, 6, 6, 6)
        v.setSpacing(4)
        # A flow: in a narrow dock the controls wrap instead of widening the panel.
        top = FlowLayout(h_spacing=12, v_spacing=3)
        self.head_combo = _head_combo("The focused head: its matrices are drawn below", 8)
        self.head_combo.currentIndexChanged.connect(self._combo_head)
        top.addWidget(control_group(QLabel("Head:"), self.head_combo, grow=self.head_combo))
        self.token_combo = _head_combo("The receiving token: its rows are highlighted", 6)
        self.token_combo.currentIndexChanged.connect(self._combo_token)
        top.addWidget(control_group(QLabel("Receiving:"), self.token_combo, grow=self.token_combo))
        self.views = QButtonGroup(self)
        buttons = []
        for i, text in enumerate(("Diagram", "Counts")):
            b = QPushButton(text)
            b.setCheckable(True)
            b.setChecked(i == 0)
            self.views.addButton(b, i)
            buttons.append(b)
        top.addWidget(control_group(*buttons))
        self.views.idClicked.connect(self.show_view)
        v.addLayout(top)
        self.stack = QStackedWidget()
        self.diagram = BlockDiagram()
        self.diagram.head_picked.connect(self.pick_head)
        self.diagram.token_picked.connect(self.pick_receiving)
        self.scroll = DiagramScroll(self.diagram)
        self.stack.addWidget(self.scroll)
        self.calculator = CountsCalculator()
        self.calculator.scenario_requested.connect(self.load_scenario)
        self.stack.addWidget(self.calculator)
        v.addWidget(self.stack, 1)
        if workbench.scenario.mode == "tokens":
            self.load_scenario()
        self.schedule_refresh()

    # ---- data -------------------------------------------------------------------------------
    def matrices(self) -> list[BlockMatrix]:
        """Every matrix of the current scenario's block (memoised by the workbench)."""
        return self.wb.derived(_block_matrices)

    def counts(self) -> dict[str, int]:
        return counts_of(self.matrices())

    def receiving_label(self) -> str:
        labels = self.wb.scenario.query_labels
        return labels[min(self.wb.receiving, len(labels) - 1)]

    def caption(self) -> tuple[list[str], str]:
        """Count sentences for the current scenario, and a note on what is missing."""
        sc = self.wb.scenario
        counts = self.counts() if sc.mode == "tokens" else {}
        return block_caption(sc, self.wb.result, counts)

    def chip_labels(self) -> list[str]:
        return chip_labels(self.wb.scenario)

    # ---- actions ----------------------------------------------------------------------------
    def pick_head(self, h: int) -> None:
        if 0 <= h < len(self.wb.result.heads):
            self.wb.set_focused_head(h)

    def pick_receiving(self, i: int) -> None:
        if 0 <= i < self.wb.scenario.n_queries:
            self.wb.set_receiving(i)

    def load_scenario(self) -> None:
        """Fill the calculator with the current token scenario's n, h, d, d_k, d_v."""
        sc = self.wb.scenario
        if sc.mode != "tokens":
            self.refuse(ValueError("a direct scenario has no projections to count"))
            return
        blocks = self.calculator.spins["blocks"].value()
        self.calculator.set_values({**sublayer_shape(sc), "blocks": blocks})

    def _combo_head(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.pick_head(index)

    def _combo_token(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.pick_receiving(index)

    def show_view(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        button = self.views.button(index)
        if button is not None and not button.isChecked():
            button.setChecked(True)

    # ---- drawing ----------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        page = self.diagram if self.stack.currentIndex() == 0 else self.calculator
        return content_parts(self, page)

    def refresh(self) -> None:
        wb = self.wb
        focused = min(wb.focused_head, len(wb.result.heads) - 1)
        chips = self.chip_labels()
        with self.updating():
            _set_items(self.head_combo, chips or ["direct: no heads"])
            self.head_combo.setCurrentIndex(focused if chips else 0)
            self.head_combo.setEnabled(len(chips) > 1)
            _set_items(self.token_combo, list(wb.scenario.query_labels))
            self.token_combo.setCurrentIndex(wb.receiving)
        caption, note = self.caption()
        self.diagram.refresh(
            DiagramData(
                mats=tuple(self.matrices()),
                focused=focused,
                receiving=wb.receiving,
                chip_labels=tuple(chips),
                caption=tuple(caption),
                note=note,
                receiving_label=self.receiving_label(),
            )
        )


def _block_matrices(wb: Workbench) -> list[BlockMatrix]:
    return block_matrices(wb.scenario, wb.result)
