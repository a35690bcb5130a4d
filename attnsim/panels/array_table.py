"""A fast table over NumPy arrays: a model that reads the arrays directly and a view with the
small part of QTableWidget's item interface that the panels and their tests use.

Thousands of QTableWidgetItems (a 2,048-token scenario) cost seconds to build and to restyle;
this model costs nothing until a cell is painted, and edits repaint only the rows they change.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from .kit.numbers import fmt_fixed
from .style import QUERY

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
CHANGED = QColor("#F6EB8C")  # a light tint of Okabe-Ito yellow: "changed by the last edit"
# Item roles as plain ints: a table model's data() runs for every role of every visible cell.
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_EDIT = int(Qt.ItemDataRole.EditRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_READ_ONLY = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_EDITABLE = _READ_ONLY | Qt.ItemFlag.ItemIsEditable
COMPACT_ABOVE = 1e5  # from here on a cell shows 1.00e+05, not 100000.000


def cell_text(x: float, digits: int = 3) -> str:
    """A number for a table cell, at most about ``digits + 6`` characters wide: ``digits``
    decimals for ordinary magnitudes; scientific notation (``1.00e+06``, ``4.00e−07``) where the
    decimals would be long (|x| ≥ 1e5) or would read as zero (0 < |x| < 0.5·10^−digits).
    A cell's text is also what its editor starts from, and parses back (typographic minus)."""
    x = float(x)
    a = abs(x)
    if not math.isfinite(x) or a == 0.0 or 0.5 * 10.0**-digits <= a < COMPACT_ABOVE:
        return fmt_fixed(x, digits)
    return f"{x:.{max(digits - 1, 1)}e}".replace("-", "−")


class _Cell:
    """One cell of an :class:`ArrayTable`, with the little of QTableWidgetItem's interface that
    code and tests use (text, setText as a user's edit, font, brushes, tooltip)."""

    __slots__ = ("_col", "_row", "_table")

    def __init__(self, table: ArrayTable, row: int, col: int) -> None:
        self._table, self._row, self._col = table, row, col

    def _index(self) -> QModelIndex:
        return self._table.model().index(self._row, self._col)

    def _data(self, role: Qt.ItemDataRole) -> object:
        return self._table.model().data(self._index(), role)

    def row(self) -> int:
        return self._row

    def column(self) -> int:
        return self._col

    def text(self) -> str:
        return str(self._data(Qt.ItemDataRole.DisplayRole) or "")

    def setText(self, text: str) -> None:  # Qt's name
        """Commit ``text`` as if typed into the cell."""
        self._table.model().setData(self._index(), text, Qt.ItemDataRole.EditRole)

    def toolTip(self) -> str:  # Qt's name
        return str(self._data(Qt.ItemDataRole.ToolTipRole) or "")

    def font(self) -> QFont:
        f = self._data(Qt.ItemDataRole.FontRole)
        return QFont(f) if isinstance(f, QFont) else QFont(self._table.font())

    def background(self) -> QBrush:
        b = self._data(Qt.ItemDataRole.BackgroundRole)
        return QBrush(b) if isinstance(b, QBrush | QColor) else QBrush()

    def foreground(self) -> QBrush:
        b = self._data(Qt.ItemDataRole.ForegroundRole)
        return QBrush(b) if isinstance(b, QBrush | QColor) else QBrush()


class _HeaderCell:
    """A header section's text and tooltip (QTableWidgetItem-like, read only)."""

    __slots__ = ("_text", "_tip")

    def __init__(self, text: str, tip: str) -> None:
        self._text, self._tip = text, tip

    def text(self) -> str:
        return self._text

    def toolTip(self) -> str:  # Qt's name
        return self._tip


class ArrayModel(QAbstractTableModel):
    """Cells read straight from an (r, c) array and a few label tuples: no object per cell, so
    a table of 2,048 rows costs only the rows in view. An optional first column holds the row
    names (editable, bold for one highlighted row). Edits go to ``on_edit(row, col, text)``
    (col counts the name column); the model never changes its own arrays."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.values = np.zeros((0, 0))
        self.names: tuple[str, ...] | None = None
        self.row_labels: tuple[str, ...] = ()
        self.col_labels: tuple[str, ...] = ()
        self.col_tips = False
        self.digits = 3
        self.marks: np.ndarray | None = None
        self.white = False  # unmarked cells get an explicit white background (the grids)
        self.bold_row: int | None = None  # its name is bold, in the query colour
        self.editable = True
        self.tooltip: Callable[[int, int], str] = lambda row, col: ""
        self.on_edit: Callable[[int, int, str], None] | None = None
        self._bold = QFont()
        self._bold.setBold(True)
        self._tint = QBrush(CHANGED)
        self._white = QBrush(Qt.GlobalColor.white)
        self._bold_brush = QBrush(QUERY)

    @property
    def first(self) -> int:
        """How many name columns come before the numbers (0 or 1)."""
        return 0 if self.names is None else 1

    def rowCount(self, parent: QModelIndex | None = None) -> int:  # Qt's name
        return 0 if parent is not None and parent.isValid() else self.values.shape[0]

    def columnCount(self, parent: QModelIndex | None = None) -> int:  # Qt's name
        if parent is not None and parent.isValid():
            return 0
        return self.values.shape[1] + self.first

    def data(self, index: QModelIndex, role: int = _DISPLAY) -> object:
        # Called for every role of every cell in view on each paint: cheapest checks first.
        r, c = index.row(), index.column()
        first = self.first
        if role in (_DISPLAY, _EDIT):
            if c < first:
                return self.names[r]  # type: ignore[index]
            return cell_text(self.values[r, c - first], self.digits)
        if role == _ALIGN:
            return RIGHT if c >= first else None
        if role == _BACKGROUND:
            if c < first:
                return None
            if self.marks is not None and self.marks[r, c - first]:
                return self._tint
            return self._white if self.white else None
        if role == _FONT:
            return self._bold if c < first and r == self.bold_row else None
        if role == _FOREGROUND:
            return self._bold_brush if c < first and r == self.bold_row else None
        if role == _TOOLTIP:
            return self.tooltip(r, c)
        return None

    def headerData(  # Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY
    ) -> object:
        labels = self.col_labels if orientation == Qt.Orientation.Horizontal else self.row_labels
        if not 0 <= section < len(labels):
            return None
        if role == _DISPLAY:
            return labels[section]
        if role == _TOOLTIP and self.col_tips and orientation == Qt.Orientation.Horizontal:
            return labels[section]
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        return _EDITABLE if self.editable else _READ_ONLY

    def setData(  # Qt's name
        self, index: QModelIndex, value: object, role: int = _EDIT
    ) -> bool:
        if role != _EDIT or not self.editable or self.on_edit is None:
            return False
        if not index.isValid():
            return False
        self.on_edit(index.row(), index.column(), "" if value is None else str(value))
        # Accepted or refused, the cell shows the arrays again (refused: the old value).
        self.dataChanged.emit(index, index)
        return True

    def set_bold_row(self, row: int | None) -> None:
        old, self.bold_row = self.bold_row, row
        if old != row and self.first:
            for r in (old, row):
                if r is not None and 0 <= r < self.rowCount():
                    i = self.index(r, 0)
                    self.dataChanged.emit(i, i)

    def rows_changed(self, rows: np.ndarray) -> None:
        """Tell the views that ``rows`` (ascending ints) show something new."""
        if rows.size == 0:
            return
        cols = self.columnCount()
        if rows.size * cols > 64:  # one repaint of the view, not thousands of signals
            top, bottom = self.index(int(rows[0]), 0), self.index(int(rows[-1]), cols - 1)
            self.dataChanged.emit(top, bottom)
            return
        # Cell by cell: a view repaints exactly that cell, while a range's repaint spills
        # over into the next row (twice the cells during a drag).
        for r in rows:
            for c in range(cols):
                i = self.index(int(r), c)
                self.dataChanged.emit(i, i)


class _ArrayDelegate(QStyledItemDelegate):
    """Styles a cell from the model's arrays in one Python call instead of one ``data()`` call
    per role (seven per painted cell); Qt then paints it exactly as the stock delegate would
    from ``data()``. Editors are the stock ones."""

    def __init__(self, model: ArrayModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.array_model = model
        # features -> features | HasDisplay: Python's flag arithmetic is slow, cells are many
        self._features: dict[object, object] = {}

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex) -> None:  # Qt
        # Must agree with ArrayModel.data (a test compares the two renderings pixel by pixel).
        m = self.array_model
        r, c = index.row(), index.column()
        first = m.first
        option.index = index
        if c < first:
            option.text = m.names[r]  # type: ignore[index]
            if r == m.bold_row:
                font = m._bold.resolve(option.font)
                option.font = font
                option.fontMetrics = QFontMetrics(font)
                palette = QPalette(option.palette)
                palette.setBrush(QPalette.ColorRole.Text, m._bold_brush)
                option.palette = palette
        else:
            option.text = cell_text(m.values[r, c - first], m.digits)
            option.displayAlignment = RIGHT
            if m.marks is not None and m.marks[r, c - first]:
                option.backgroundBrush = m._tint
            elif m.white:
                option.backgroundBrush = m._white
        features = option.features
        with_display = self._features.get(features)
        if with_display is None:
            with_display = self._features[features] = features | _HAS_DISPLAY
        option.features = with_display
        option.styleObject = None


class ArrayTable(QTableView):
    """A table of numbers (and optionally row names) over an :class:`ArrayModel`.

    :meth:`show_array` installs new arrays: a new shape or new labels reset the model, new
    values or marks repaint only the rows that differ. It offers the bits of QTableWidget's
    interface that the panels and their tests use (``item(r, c)``, ``setCurrentCell``, ...)."""

    def __init__(self, editable: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editable = editable
        self.array_model = ArrayModel(self)
        self.array_model.editable = editable
        self.setModel(self.array_model)
        self.setItemDelegate(_ArrayDelegate(self.array_model, self))
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            if editable
            else QAbstractItemView.EditTrigger.NoEditTriggers
        )
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self._key: tuple | None = None

    def show_array(
        self,
        values: np.ndarray,
        row_labels: tuple[str, ...],
        col_labels: tuple[str, ...],
        *,
        names: tuple[str, ...] | None = None,
        marks: np.ndarray | None = None,
        bold_row: int | None = None,
    ) -> bool:
        """Show ``values`` (r, c) with headers; ``names`` (r,) fills a first column; ``marks``
        (r, c) tints cells; ``bold_row`` names one row in bold. True if the model was reset
        (new shape or labels), so the owner re-fits column widths."""
        m = self.array_model
        values = np.asarray(values)
        if values.flags.writeable:
            values = values.copy()  # the model keeps it: nobody may change it behind its back
        key = (names, row_labels, col_labels, values.shape)
        reset = key != self._key
        if reset:
            m.beginResetModel()
            m.values, m.names, m.row_labels, m.col_labels = values, names, row_labels, col_labels
            m.marks = None if marks is None else np.array(marks, dtype=bool)
            m.bold_row = bold_row
            m.endResetModel()
            self._key = key
            return True
        old = m.values
        mk = None if marks is None else np.array(marks, dtype=bool)
        if mk is None and m.marks is None and (old is values or np.array_equal(old, values)):
            m.set_bold_row(bold_row)  # the usual case of a grid another edit did not touch
            return False
        changed = np.any(old != values, axis=1) if values.size else np.zeros(0, bool)
        m.values = values
        if mk is not None or m.marks is not None:
            before = np.zeros(values.shape, bool) if m.marks is None else m.marks
            after = np.zeros(values.shape, bool) if mk is None else mk
            changed |= np.any(before != after, axis=1)
        m.marks = mk
        m.rows_changed(np.flatnonzero(changed))
        m.set_bold_row(bold_row)
        return False

    # ---- the QTableWidget-like interface ---------------------------------------------------
    def rowCount(self) -> int:  # Qt's name
        return self.array_model.rowCount()

    def columnCount(self) -> int:  # Qt's name
        return self.array_model.columnCount()

    def item(self, row: int, col: int) -> _Cell | None:
        if 0 <= row < self.rowCount() and 0 <= col < self.columnCount():
            return _Cell(self, row, col)
        return None

    def horizontalHeaderItem(self, col: int) -> _HeaderCell | None:  # Qt's name
        m = self.array_model
        if not 0 <= col < len(m.col_labels):
            return None
        tip = m.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        return _HeaderCell(m.col_labels[col], str(tip or ""))

    def verticalHeaderItem(self, row: int) -> _HeaderCell | None:  # Qt's name
        labels = self.array_model.row_labels
        return _HeaderCell(labels[row], "") if 0 <= row < len(labels) else None

    def setCurrentCell(self, row: int, col: int) -> None:  # Qt's name
        self.setCurrentIndex(self.array_model.index(row, col))

    def setCurrentItem(self, cell: _Cell) -> None:  # Qt's name
        self.setCurrentCell(cell.row(), cell.column())

    def currentRow(self) -> int:  # Qt's name
        return self.currentIndex().row()

    def currentColumn(self) -> int:  # Qt's name
        return self.currentIndex().column()

    def editItem(self, cell: _Cell) -> None:  # Qt's name
        self.edit(self.array_model.index(cell.row(), cell.column()))
