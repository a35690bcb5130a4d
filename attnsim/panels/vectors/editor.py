"""The table side of the vector editor: what is edited, the receiving token, the table of
vectors (rows by named axes) and the buttons that add, remove and reorder tokens.

It shows an :class:`~attnsim.viewmodels.vectors.EditorData` and reports gestures as signals; the
panel turns them into edits.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.vectors import KINDS, EditorData

from ..array_table import ArrayTable, cell_text
from ..kit.numbers import fmt_fixed, fmt_vector
from ..widgets import FlowLayout, RefusalLabel, group

MAX_COLUMN_PX = 160  # a number column never takes more (a long axis name is elided)
MEASURED_TEXTS = 256  # up to this many names are each measured for a width (see widest_text)
RECEIVING_CHARS = 4  # the receiving token's combo is never narrower (a small dock)
ADD_TIP = "Add a token after the selected row (a zero vector: drag it out of the origin)"
NO_STRUCTURE_TIP = (
    "Queries are given one per row of Q: add, remove or reorder keys in the K or V view"
)


def tool_button(text: str, tip: str) -> QToolButton:
    # Tool buttons: as narrow as their text, so the panel fits a small dock.
    b = QToolButton()
    b.setText(text)
    b.setToolTip(tip)
    b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return b


def widest_text(fm: QFontMetrics, texts: tuple[str, ...]) -> int:
    """The width of the widest of ``texts`` in ``fm``. Many texts: their widths added up from
    their letters, the widest :data:`MEASURED_TEXTS` of them measured whole (kerning); at
    n = 4,096 measuring every name took 20 ms of a redraw."""
    unique = set(texts)
    if len(unique) <= MEASURED_TEXTS:
        return max((fm.horizontalAdvance(t) for t in unique), default=0)
    letter = {c: fm.horizontalAdvance(c) for c in set().union(*unique)}
    sums = sorted((sum(map(letter.__getitem__, t)), t) for t in unique)[-MEASURED_TEXTS:]
    return max(fm.horizontalAdvance(t) for _, t in sums)


# rows of a table read at a time by column_extremes: 64 rows of 1,024 numbers are 512 KiB
EXTREMES_ROWS = 64


def column_extremes(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column of ``M``: the least and the largest value, the smallest non-zero magnitude
    (inf where there is none) and whether there is a non-zero value. Read a few rows at a
    time into one small buffer: a temporary the size of the table (32 MiB at 4,096 x 1,024)
    cost the window 100 ms of page faults while a trace was being computed beside it."""
    n, d = M.shape
    lo, hi, tiny = np.full(d, np.inf), np.full(d, -np.inf), np.full(d, np.inf)
    if not n:
        return lo, hi, tiny, np.zeros(d, dtype=bool)
    buf = np.empty((min(EXTREMES_ROWS, n), d))
    with np.errstate(invalid="ignore"):
        for s in range(0, n, EXTREMES_ROWS):
            block = M[s : s + EXTREMES_ROWS]
            np.minimum(lo, block.min(axis=0), out=lo)
            np.maximum(hi, block.max(axis=0), out=hi)
            mags = np.abs(block, out=buf[: len(block)])
            mags[mags == 0] = np.inf  # a zero is not the smallest non-zero magnitude
            np.minimum(tiny, mags.min(axis=0), out=tiny)
    return lo, hi, tiny, tiny != np.inf


def _fit_to_items(combo: QComboBox, items: tuple[str, ...]) -> None:
    # As wide as its widest item, measured by Qt (every item) up to MEASURED_TEXTS items;
    # beyond, as wide as the longest item's letters allow (measuring 4,096 took 20 ms).
    Policy = QComboBox.SizeAdjustPolicy
    if len(items) <= MEASURED_TEXTS:
        combo.setSizeAdjustPolicy(Policy.AdjustToContents)
        combo.setMinimumContentsLength(RECEIVING_CHARS)
    else:
        combo.setSizeAdjustPolicy(Policy.AdjustToMinimumContentsLengthWithIcon)
        longest = max(map(len, items))
        combo.setMinimumContentsLength(min(max(longest, RECEIVING_CHARS), 2 * RECEIVING_CHARS))


class VectorTable(QWidget):
    """The selector, the receiving token, the editable table and its row buttons.

    Signals
    -------
    kind_picked(str)              'q', 'k' or 'v' chosen in a direct scenario
    receiving_picked(int)
    cell_edited(int, int, str)    row, column (0: the name), the text typed
    add_clicked(), remove_clicked(), move_clicked(int)   -1 earlier, +1 later
    receiving_picked also comes from the right-click menu's "Make receiving".
    """

    kind_picked = Signal(str)
    receiving_picked = Signal(int)
    cell_edited = Signal(int, int, str)
    add_clicked = Signal()
    remove_clicked = Signal()
    move_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._receiving_labels: tuple[str, ...] | None = None
        self._numbers: tuple[str, ...] = ()  # the row numbers '1'..'n'
        self._data: EditorData | None = None
        self._key: tuple | None = None  # the names, header and shape the table shows
        lv = QVBoxLayout(self)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(4)
        self.kind_label = QLabel("Edit")
        self.kind_combo = QComboBox()
        for k, text in KINDS.items():
            self.kind_combo.addItem(text, k)
        self.kind_combo.setToolTip(
            "This scenario gives queries, keys and values directly: choose which to edit"
        )
        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        self.receiving_combo = QComboBox()
        self.receiving_combo.setToolTip("The query token whose attention the other panels explain")
        self.receiving_combo.currentIndexChanged.connect(
            lambda i: self.receiving_picked.emit(i) if i >= 0 else None
        )
        # Combos shrink to a few characters in a narrow dock.
        for c, chars in ((self.receiving_combo, RECEIVING_CHARS), (self.kind_combo, 3)):
            c.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            c.setMinimumContentsLength(chars)
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
        model.on_edit = self._committed
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
        self.add_button = tool_button("+ Add", ADD_TIP)
        self.remove_button = tool_button("− Remove", "Remove the selected token")
        self.up_button = tool_button("↑", "Move the selected token one place earlier")
        self.down_button = tool_button("↓", "Move the selected token one place later")
        self.add_button.clicked.connect(self.add_clicked)
        self.remove_button.clicked.connect(self.remove_clicked)
        self.up_button.clicked.connect(lambda: self.move_clicked.emit(-1))
        self.down_button.clicked.connect(lambda: self.move_clicked.emit(+1))
        for b in self.row_buttons:
            buttons.addWidget(b)
        buttons.addStretch(1)
        lv.addLayout(buttons)
        self.message = RefusalLabel()
        lv.addWidget(self.message)

    @property
    def row_buttons(self) -> tuple[QToolButton, ...]:
        return (self.add_button, self.remove_button, self.up_button, self.down_button)

    def _kind_changed(self, index: int) -> None:
        if index >= 0:
            self.kind_picked.emit(str(self.kind_combo.itemData(index)))

    def _committed(self, row: int, col: int, typed: str) -> None:
        m = self.table.array_model
        if col > 0:
            shown = cell_text(m.values[row, col - 1], m.digits)
            if typed.strip() == shown:
                return  # the shown (rounded) value was committed unchanged: keep the exact one
        self.cell_edited.emit(row, col, typed)

    def _context_menu(self, pos: QPoint) -> None:
        menu = self.build_context_menu(self.table.rowAt(pos.y()))
        menu.exec(self.table.viewport().mapToGlobal(pos))
        menu.deleteLater()  # a new menu each time, a child of the editor: not kept

    def build_context_menu(self, row: int) -> QMenu:
        """The table's right-click menu for ``row`` (-1: below the last row)."""
        menu = QMenu(self)
        data = self._data
        if data is None:
            return menu
        if row >= 0:
            self.select(row)
        structural, n = data.structural, len(data.names)

        def act(text: str, slot, enabled: bool = True) -> QAction:
            a = menu.addAction(text)
            a.triggered.connect(slot)
            a.setEnabled(enabled)
            return a

        if row >= 0:
            if not data.direct or data.kind == "q":  # rows that can receive: tokens, queries
                act("Make receiving", lambda: self.receiving_picked.emit(row))
            act("Rename…", lambda: self.table.editItem(self.table.item(row, 0)))
            menu.addSeparator()
        act("Add token", self.add_clicked, structural)
        if row >= 0:
            act("Remove token", self.remove_clicked, structural and n > 1)
            act("Move earlier", lambda: self.move_clicked.emit(-1), structural and row > 0)
            act("Move later", lambda: self.move_clicked.emit(+1), structural and row < n - 1)
        return menu

    # ---- showing -------------------------------------------------------------------------------
    def refresh(self, data: EditorData) -> None:
        self._data = data
        self.kind_group.setVisible(data.direct)
        with QSignalBlocker(self.kind_combo):
            self.kind_combo.setCurrentIndex(list(KINDS).index(data.kind))
        with QSignalBlocker(self.receiving_combo):
            # Compared with what was put in, not read back item by item (2,048 Qt calls).
            if data.receiving_labels != self._receiving_labels:
                self.receiving_combo.clear()
                self.receiving_combo.addItems(list(data.receiving_labels))
                self._receiving_labels = data.receiving_labels
                _fit_to_items(self.receiving_combo, data.receiving_labels)
            if self.receiving_combo.currentIndex() != data.receiving:
                self.receiving_combo.setCurrentIndex(data.receiving)
        for b in self.row_buttons:
            b.setEnabled(data.structural)
        self.add_button.setToolTip(ADD_TIP if data.structural else NO_STRUCTURE_TIP)

        if len(self._numbers) != len(data.names):
            self._numbers = tuple(str(i + 1) for i in range(len(data.names)))
        # A new shape or new names reset the model; new values repaint only the rows that
        # changed, a new receiving token only the two names whose style changes.
        key = (data.names, data.header, data.values.shape)
        values = data.values
        if key == self._key and data.changed is not None and not values.flags.writeable:
            # The same rows and columns, and the rows that changed are known: repaint them
            # without comparing the whole table again (4 million numbers at d = 1,024).
            model = self.table.array_model
            model.values = values
            model.rows_changed(data.changed)
            model.set_bold_row(data.bold_row)
            reset = False
        else:
            reset = self.table.show_array(
                values, self._numbers, data.header, names=data.names, bold_row=data.bold_row
            )
            self._key = key
        if reset or data.refit_columns:
            self._fit_columns(data.values, data.names, data.header)

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
        widest = widest_text(names, rows)
        name_w = max(widest + pad, head.horizontalAdvance(header[0]) + pad)
        t.setColumnWidth(0, min(name_w, 2 * MAX_COLUMN_PX))
        digits = t.array_model.digits
        # The widest texts: the extremes, and the tiniest non-zero (shown as 4.00e−07), of
        # every column at once. Texts are compact and the width capped: huge numbers never
        # widen the window.
        lo, hi, tiny, some = column_extremes(M)
        letter: dict[str, int] = {}
        for j in range(M.shape[1]):
            texts = {cell_text(lo[j], digits), cell_text(hi[j], digits)} if len(M) else set()
            if some[j]:
                texts.add(cell_text(-tiny[j], digits))
            # measured whole: only the text whose letters are widest (a column of 4,096 rows
            # has three candidates; at d = 1,024 measuring all of them took 20 ms a refresh)
            for c in set().union(*texts) - letter.keys():
                letter[c] = plain.horizontalAdvance(c)
            widest = max(texts, key=lambda x: sum(map(letter.__getitem__, x)), default="")
            w = plain.horizontalAdvance(widest) + pad if widest else pad
            w = max(w, head.horizontalAdvance(header[j + 1]) + pad)
            t.setColumnWidth(j + 1, min(w, MAX_COLUMN_PX))

    def needed_width(self) -> int:
        """The width that shows every column without scrolling (0 before there are columns)."""
        t = self.table
        cols = t.model().columnCount() if t.model() is not None else 0
        if cols == 0:
            return 0
        need = t.verticalHeader().width() + 6 + sum(t.columnWidth(c) for c in range(cols))
        return need + t.verticalScrollBar().sizeHint().width()

    def _cell_tip(self, row: int, col: int) -> str:
        m = self.table.array_model
        names, M = m.names or (), m.values
        if col == 0:
            return f"{names[row]} = {fmt_vector(M[row], 3, item=fmt_fixed)}"
        return f"{names[row]} · {m.col_labels[col]} = {float(M[row, col - 1])!r}"

    # ---- selection -----------------------------------------------------------------------------
    def selected_row(self) -> int | None:
        row = self.table.currentRow()
        return row if 0 <= row < self.table.rowCount() else None

    def select(self, row: int, column: int | None = None) -> None:
        """Make ``row`` current, in ``column`` (default: the current column, or the name)."""
        col = max(self.table.currentColumn(), 0) if column is None else column
        self.table.setCurrentCell(row, col)
