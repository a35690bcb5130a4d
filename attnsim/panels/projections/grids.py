"""The grids of one head: Wq, Wk, Wv beside the Q, K, V they produce, and Wo below."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from attnsim.panels.array_table import CHANGED
from attnsim.panels.style import KEY, QUERY, VALUE
from attnsim.viewmodels.projections import MATRICES, PRODUCTS, ROLE, GridsData, MatrixBlock

from .grid import Block

COLORS = {"Wq": QUERY, "Wk": KEY, "Wv": VALUE}


class ProjectionGrids(QWidget):
    """Editable matrix grids and read-only product grids. Reports ``cell_edited(which, row,
    col, text)`` and ``preset_picked(which, name)``; ``refresh(data)`` never emits them."""

    cell_edited = Signal(str, int, int, str)
    preset_picked = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, *, later: bool = False) -> None:
        """With ``later``, the rows of grids wait for :meth:`add_next_row` (a panel opened in
        steps makes each in a turn of its own: all four took 50-80 ms at n = 4,096)."""
        super().__init__(parent)
        self.setObjectName("projections-content")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(4)
        self.blocks: dict[str, Block] = {}
        self.products: dict[str, Block] = {}
        self.arrows: dict[str, QLabel] = {}
        grid.setColumnStretch(3, 1)
        grid.setRowStretch(len(MATRICES) + 1, 1)
        while not later and self.add_next_row():
            pass

    def add_next_row(self) -> bool:
        """Make the next row of grids (Wq → Q, Wk → K, Wv → V, then Wo); False when all are
        made."""
        grid = self.layout()
        assert isinstance(grid, QGridLayout)
        r = len(self.products)
        if r == len(MATRICES):
            if "Wo" in self.blocks:
                return False
            wo = self._matrix_block("Wo", wrap=True)
            grid.addWidget(wo, len(MATRICES), 0, 1, 3, Qt.AlignmentFlag.AlignLeft)
            return True
        m = MATRICES[r]
        top_left = Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft
        block = self._matrix_block(m)
        grid.addWidget(block, r, 0, top_left)
        arrow = QLabel("→")
        arrow.setAlignment(Qt.AlignmentFlag.AlignCenter)
        arrow.setStyleSheet("color: #777777; font-size: 15px;")
        self.arrows[m] = arrow
        grid.addWidget(arrow, r, 1)
        product = Block(PRODUCTS[m], editable=False)
        self.products[m] = product
        grid.addWidget(product, r, 2, top_left)
        return True

    def _matrix_block(self, m: str, *, wrap: bool = False) -> Block:
        block = Block(m, editable=True, wrap=wrap)
        block.grid.array_model.on_edit = lambda r, c, text: self.cell_edited.emit(m, r, c, text)
        block.picked.connect(lambda name: self.preset_picked.emit(m, name))
        self.blocks[m] = block
        return block

    def refresh(self, data: GridsData) -> None:
        for mat, prod in zip(data.matrices, data.products, strict=True):
            m = mat.name
            block = self.blocks[m]
            block.grid.verticalHeader().setVisible(True)
            block.grid.show_matrix(mat.W, mat.rows, mat.cols, name=m, max_rows=8)
            color = COLORS[m].name()
            block.title.setText(
                f"<b style='color:{color}'>{m}</b>{data.of_head} <span style='color:#555'>"
                f"{mat.W.shape[0]}×{mat.W.shape[1]}</span>{_tag(mat)}"
            )
            block.set_presets(m, mat.presets, mat.scenario_presets)
            self.products[m].grid.show_matrix(
                prod.P, prod.rows, prod.cols, name=prod.name, marks=prod.marks, max_rows=8
            )
            state = (
                f"<span style='background:{CHANGED.name()}'>&nbsp;{prod.n_changed} changed"
                "&nbsp;</span>"
                if prod.n_changed
                else ("<span style='color:#777'>unchanged</span>" if data.any_marks else "")
            )
            self.products[m].title.setText(
                f"<b style='color:{color}'>{prod.name}</b> = X·{m} "
                f"<span style='color:#555'>({ROLE[m]})</span> {state}"
            )
            self.arrows[m].setToolTip(f"each token's x times {m} gives its row of {prod.name}")
        self._refresh_wo(data)

    def _refresh_wo(self, data: GridsData) -> None:
        block, wo = self.blocks["Wo"], data.wo
        if wo is None:
            block.setVisible(False)
            return
        block.setVisible(True)
        block.grid.show_matrix(wo.W, wo.rows, wo.cols, name="Wo", max_rows=10)
        block.title.setText(
            f"<b>Wo</b> <span style='color:#555'>{wo.W.shape[0]}×{wo.W.shape[1]}: "
            f"concatenated head outputs ({', '.join(data.head_names)}) → model axes</span>"
            f"{_tag(wo)}"
        )
        block.set_presets("Wo", wo.presets, wo.scenario_presets)


def _tag(block: MatrixBlock) -> str:
    """' = identity' etc. when the matrix equals a preset."""
    if not block.tags:
        return ""
    return f" <i style='color:#333'>= {' = '.join(block.tags)}</i>"
