"""Tables in figures: every row and column whole, however little of the table the dock shows.

On screen a table scrolls; a figure has no scroll bars, so a table (its cells, its headers)
is drawn at the size its cells need: :func:`growth` says by how much each table of a figure
grows, :func:`shifted` moves the pieces right of or below a grown table out of its way, and
:func:`grown` holds the tables at that size while the figure paints.

A word-wrapped text (a QLabel) in a short dock is treated the same way: it grows to the height
its lines need at its width (:func:`owner_of`), so a figure never cuts its last lines off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QWidget

__all__ = ["grown", "growth", "owner_of", "shifted", "table_of", "used_rect"]

SLACK = 2  # px: a piece that starts this close to a table's edge is beside it, not over it


def table_of(w: QWidget) -> QTableView | None:
    """The table ``w`` is (or whose cells or header it is), else None."""
    if isinstance(w, QTableView):
        return w
    parent = w.parentWidget()
    if isinstance(parent, QTableView) and w in (
        parent.viewport(),
        parent.horizontalHeader(),
        parent.verticalHeader(),
    ):
        return parent
    return None


def owner_of(w: QWidget) -> QTableView | QLabel | None:
    """What grows for piece ``w`` of a figure: its table, or ``w`` itself when it is a
    word-wrapped text; else None."""
    table = table_of(w)
    if table is not None:
        return table
    return w if isinstance(w, QLabel) and w.wordWrap() else None


def _resize(table: QTableView | QLabel, size: QSize) -> None:
    # Scroll bars, the viewport and stretched columns follow at once, not on the next turn of
    # the event loop (which would also let the panel's layout put the table back).
    table.resize(size)
    if isinstance(table, QTableView):
        table.updateGeometries()


def growth(table: QTableView | QLabel) -> QSize:
    """How much wider and taller ``table`` must be to show every cell (nothing when it is
    scrolled: then the figure shows what the reader scrolled to); a text, how much taller
    for its every line at its width.

    Measured by resizing the table (and putting it back): a scroll bar that goes away, or
    columns that stretch, change what the other direction needs.
    """
    if isinstance(table, QLabel):
        return QSize(0, max(0, table.heightForWidth(table.width()) - table.height()))
    hh, vh, vp = table.horizontalHeader(), table.verticalHeader(), table.viewport()
    if hh.offset() or vh.offset():
        return QSize(0, 0)
    start = table.size()
    grow = QSize(0, 0)
    try:
        for _ in range(3):
            dx = max(0, hh.length() - vp.width())
            dy = max(0, vh.length() - vp.height())
            if dx == 0 and dy == 0:
                break
            grow += QSize(dx, dy)
            _resize(table, start + grow)
    finally:
        _resize(table, start)
    return grow


def used_rect(w: QWidget) -> QRect:
    """The part of ``w`` with something in it: tables and their headers end at the last cell."""
    rect = w.rect()
    table = table_of(w)
    if table is None:
        return rect
    hh, vh = table.horizontalHeader(), table.verticalHeader()
    if isinstance(w, QHeaderView):
        if w.orientation() == Qt.Orientation.Horizontal:
            rect.setWidth(min(rect.width(), w.length() + 1))
        else:
            rect.setHeight(min(rect.height(), w.length() + 1))
    elif w is table.viewport():
        rect.setWidth(min(rect.width(), hh.length() + 1))
        rect.setHeight(min(rect.height(), vh.length() + 1))
    else:
        frame = 2 * w.frameWidth()
        width = hh.length() + (vh.width() if vh.isVisibleTo(w) else 0) + frame
        height = vh.length() + (hh.height() if hh.isVisibleTo(w) else 0) + frame
        rect.setWidth(min(rect.width(), width))
        rect.setHeight(min(rect.height(), height))
    return rect


def shifted(
    rects: list[QRect], tables: list[QTableView | QLabel | None], grows: dict
) -> list[QRect]:
    """``rects`` (piece positions in the panel) with every piece right of a grown table moved
    right by its growth, and every piece below it moved down."""
    out = [QRect(r) for r in rects]
    origin = {}
    for r, t in zip(rects, tables, strict=True):
        if t is not None:
            box = origin.get(id(t), QRect(r))
            origin[id(t)] = box.united(r)
    for key, box in origin.items():
        grow = grows[key]
        for i, (r, t) in enumerate(zip(rects, tables, strict=True)):
            if t is not None and id(t) == key:
                continue
            dx = grow.width() if r.left() >= box.right() - SLACK else 0
            dy = grow.height() if r.top() >= box.bottom() - SLACK else 0
            out[i].translate(dx, dy)
    return out


@contextmanager
def grown(tables: list[tuple[QTableView | QLabel, QSize]]) -> Iterator[None]:
    """``tables`` resized by their growth while inside, then put back."""
    saved = []
    for table, grow in tables:
        if grow.width() == 0 and grow.height() == 0:
            continue
        saved.append((table, table.size()))
        _resize(table, table.size() + grow)
    try:
        yield
    finally:
        for table, size in saved:
            _resize(table, size)
