"""A compact matrix grid with a title line and, for an editable matrix, a presets button."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.panels.array_table import ArrayTable

# Compact enough that Wq, Wk and Wv of a five-token sentence (with their products beside them)
# fit one above the other in the dock's default height at 1600x1000 (about 380 px).
ROW_PX = 16
HEAD_PX = 17
TITLE_PX = 18
COL_PX = 52
MAX_GRID_PX = 560
# Qt sizes a header from its first and last hundred sections' names, not from all of them.
HEADER_SAMPLE = 100


def sampled_names(labels: tuple[str, ...]) -> list[str]:
    """The distinct row names a header's width is made from (its first and last hundred)."""
    if len(labels) <= 2 * HEADER_SAMPLE:
        return list(dict.fromkeys(labels))
    return list(dict.fromkeys(labels[:HEADER_SAMPLE] + labels[-HEADER_SAMPLE:]))


class _RowNames(QHeaderView):
    """The grid's row names. Qt measures a header's width on up to 200 names, at every model
    reset and again at each later change of the view's geometry (about 5 ms a time for 2,048
    rows); this one measures once per set of names, on the section of the widest name."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setSectionsClickable(True)  # as QTableView's own vertical header
        self.setHighlightSections(True)
        self._hint: QSize | None = None

    def forget(self) -> None:
        self._hint = None

    def sizeHint(self) -> QSize:  # Qt's name
        if self._hint is None:
            model = self.model()
            labels = getattr(model, "row_labels", ())
            if not labels or self.count() != len(labels):
                return super().sizeHint()
            metrics = self.fontMetrics()
            widest = max(sampled_names(labels), key=metrics.horizontalAdvance)
            self._hint = self.sectionSizeFromContents(labels.index(widest))
        return self._hint


class _ColNames(QHeaderView):
    """The grid's column names, a row of fixed height (HEAD_PX). Qt sizes a header from the
    names of its sections at each change of the view's geometry (four questions to the model
    a column: at n = 2,048 most of the time a refresh of the grids took); this one's size is
    its length by HEAD_PX, which is what the fixed height makes of Qt's."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)  # as QTableView's own horizontal header
        self.setHighlightSections(True)

    def sizeHint(self) -> QSize:  # Qt's name
        return QSize(self.length(), HEAD_PX)


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
        h = _ColNames(self)
        self.setHorizontalHeader(h)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        h.setDefaultSectionSize(COL_PX)
        h.setMinimumSectionSize(30)
        h.setFixedHeight(HEAD_PX)
        v = _RowNames(self)
        self.setVerticalHeader(v)
        m.modelReset.connect(v.forget)
        v.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        v.setMinimumSectionSize(ROW_PX)  # first: a default below the minimum is raised to it
        v.setDefaultSectionSize(ROW_PX)
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
            # Names repeat (tokens) and many are alike: measure each distinct one once, and
            # only those that Qt sizes the header from.
            names = sampled_names(m.row_labels)
            width += max((metrics.horizontalAdvance(t) for t in names), default=0) + 16
        rows = min(self.rowCount(), max_rows)
        height = HEAD_PX + ROW_PX * rows + 2 * self.frameWidth()
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


class Block(QWidget):
    """A title line (with a presets button for a matrix) above a grid; ``picked(name)`` says
    which preset the menu chose."""

    picked = Signal(str)

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
            self.presets.setFixedHeight(TITLE_PX)
            self.presets.setMenu(QMenu(self.presets))
            top.addWidget(self.presets)
        lay.addLayout(top)
        self.grid = MatrixGrid(editable)
        lay.addWidget(self.grid)
        lay.addStretch(1)

    def set_presets(self, which: str, entries: tuple[str, ...], scenario: tuple[str, ...]) -> None:
        """The presets menu: ``entries`` (identity, ..., "random (seed N)"), then the
        scenario's own presets; rebuilt only when they change."""
        assert self.presets is not None
        menu = self.presets.menu()
        key = (entries, scenario)
        if getattr(menu, "_attnsim_key", None) == key:
            return
        menu.clear()
        for e in entries:
            name = "random" if e.startswith("random") else e
            act = menu.addAction(e)
            act.setData(name)
            act.triggered.connect(lambda _=False, n=name: self.picked.emit(n))
        if scenario:
            menu.addSeparator()
            for name in scenario:
                act = menu.addAction(f"“{name}”")
                act.setData(name)
                act.triggered.connect(lambda _=False, n=name: self.picked.emit(n))
        menu._attnsim_key = key  # type: ignore[attr-defined]
        self.presets.setToolTip(
            f"Fill {which} with a preset: " + ", ".join([*entries, *(f"“{n}”" for n in scenario)])
        )
