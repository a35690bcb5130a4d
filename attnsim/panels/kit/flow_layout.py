"""``FlowLayout``: items left to right, wrapping onto more rows when a narrow dock runs out of
width; ``group`` keeps a few widgets (a label and its combo) together on one row of a flow."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QSizePolicy, QWidget

__all__ = ["FlowLayout", "group"]


class FlowLayout(QLayout):
    """Items left to right, wrapping onto more rows when the width runs out.

    - ``minimumSize()`` is the widest item's minimum (plus margins), so the layout never asks
      for more width than its largest single control. With ``keep_rows``, its height is that of
      the rows at the width last laid out: a panel too short for them then scrolls in its dock
      rather than put the last row under the widget below (the Real model panel's buttons).
    - ``sizeHint()`` is everything on one row: the width at which nothing wraps.
    - ``heightForWidth(w)`` is the height of the rows the items need at width ``w``; it grows as
      the width shrinks.
    - An item wider than a whole row is shrunk to the row (never below its own minimum), and an
      item with a height-for-width (a word-wrapped label) gets the height it needs there.
    - Items with a horizontal stretch factor (``group(..., grow=widget)``, or any widget whose
      size policy has ``horizontalStretch() > 0``) share the space left over on their row in
      proportion to it, so e.g. sliders grow in a wide dock; the others keep their hint.
    - Hidden widgets take no room. Items in a row are centred vertically.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        h_spacing: int = 6,
        v_spacing: int = 4,
        *,
        keep_rows: bool = False,
    ) -> None:
        super().__init__(parent)
        self.keep_rows = keep_rows
        self._items: list[QLayoutItem] = []
        self._h = max(0, int(h_spacing))
        self._v = max(0, int(v_spacing))
        self._rows_height = 0  # the height of the rows at the width last laid out
        self.setContentsMargins(0, 0, 0, 0)

    # ---- spacing ---------------------------------------------------------------------------
    def horizontalSpacing(self) -> int:
        """Gap between neighbouring items on a row (px)."""
        return self._h

    def verticalSpacing(self) -> int:
        """Gap between rows (px)."""
        return self._v

    def setHorizontalSpacing(self, spacing: int) -> None:
        self._h = max(0, int(spacing))
        self.invalidate()

    def setVerticalSpacing(self, spacing: int) -> None:
        self._v = max(0, int(spacing))
        self.invalidate()

    def spacing(self) -> int:  # Qt's name
        return self._h

    def setSpacing(self, spacing: int) -> None:  # Qt's name: sets both gaps
        self._h = self._v = max(0, int(spacing))
        self.invalidate()

    # ---- the item list (Qt's names) ------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        if not 0 <= index < len(self._items):
            return None
        item = self._items.pop(index)
        self.invalidate()
        return item

    # ---- sizes (Qt's names) --------------------------------------------------------------------
    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        rows_h = self._arrange(rect, apply=True)  # (the rows' height at this width)
        if not self.keep_rows:
            return
        # The rows this width takes are the least height from now on: a panel shorter than its
        # rows then scrolls (its dock's holder keeps its minimum) instead of drawing the last
        # row under the widget below it. Told once per change of the rows' height.
        if rows_h != self._rows_height:
            self._rows_height = rows_h
            self.invalidate()

    def _visible(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _margin_size(self) -> QSize:
        m: QMargins = self.contentsMargins()
        return QSize(m.left() + m.right(), m.top() + m.bottom())

    def sizeHint(self) -> QSize:
        items = self._visible()
        width = sum(i.sizeHint().width() for i in items) + self._h * max(len(items) - 1, 0)
        height = max((i.sizeHint().height() for i in items), default=0)
        return QSize(width, height) + self._margin_size()

    def minimumSize(self) -> QSize:
        size = QSize(0, 0)
        for item in self._visible():
            size = size.expandedTo(item.minimumSize())
        size += self._margin_size()
        if self._rows_height > size.height():  # the rows at the width last given
            size.setHeight(self._rows_height)
        return size

    # ---- placement -------------------------------------------------------------------------
    def rows_for_width(self, width: int) -> list[list[QLayoutItem]]:
        """The visible items grouped into the rows they take at ``width`` px (for tests)."""
        rows: list[list[QLayoutItem]] = []
        for row in self._rows(QRect(0, 0, width, 0)):
            rows.append([item for item, _ in row])
        return rows

    def _rows(self, rect: QRect) -> list[list[tuple[QLayoutItem, int]]]:
        """Break the visible items into rows that fit ``rect``; each item with its width."""
        m = self.contentsMargins()
        avail = max(1, rect.width() - m.left() - m.right())
        rows: list[list[tuple[QLayoutItem, int]]] = [[]]
        x = 0
        for item in self._visible():
            # Shrink an item that is wider than a whole row, but never below its minimum.
            w = min(item.sizeHint().width(), avail)
            w = max(w, item.minimumSize().width())
            if rows[-1] and x + w > avail:
                rows.append([])
                x = 0
            rows[-1].append((item, w))
            x += w + self._h
        rows = [row for row in rows if row]
        for r, row in enumerate(rows):
            stretch = [_stretch(item) for item, _ in row]
            spare = avail - sum(w for _, w in row) - self._h * (len(row) - 1)
            if not any(stretch) or spare <= 0:
                continue
            widths = [w for _, w in row]
            total = sum(stretch)
            for k, (item, w) in enumerate(row):
                if stretch[k]:
                    share = spare * stretch[k] // total
                    widths[k] = min(w + share, item.maximumSize().width())
            rows[r] = [(item, w) for (item, _), w in zip(row, widths, strict=True)]
        return rows

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        """Place the items in ``rect`` (when ``apply``); returns the height they take."""
        m = self.contentsMargins()
        left = rect.x() + m.left()
        y = rect.y() + m.top()
        rows = self._rows(rect)
        for row in rows:
            heights = []
            for item, w in row:
                h = item.heightForWidth(w) if item.hasHeightForWidth() else -1
                if h < 0:
                    h = item.sizeHint().height()
                heights.append(max(h, item.minimumSize().height()))
            row_h = max(heights)
            if apply:
                x = left
                for (item, w), h in zip(row, heights, strict=True):
                    item.setGeometry(QRect(QPoint(x, y + (row_h - h) // 2), QSize(w, h)))
                    x += w + self._h
            y += row_h + self._v
        if rows:
            y -= self._v
        return y - rect.y() + m.bottom()


def _stretch(item: QLayoutItem) -> int:
    widget = item.widget()
    return widget.sizePolicy().horizontalStretch() if widget is not None else 0


def group(*widgets: QWidget, spacing: int = 4, grow: QWidget | None = None) -> QWidget:
    """Widgets kept together on one row of a :class:`FlowLayout` (e.g. a label and its combo).

    ``grow``: one of ``widgets`` (a slider, a combo) that takes the spare width of the group's
    row in a flow; without it the group keeps its size hint.
    """
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(spacing)
    for w in widgets:
        lay.addWidget(w, 1 if w is grow else 0)
    if grow is not None:
        if grow not in widgets:
            raise ValueError("grow must be one of the group's widgets")
        policy = box.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Expanding)
        policy.setHorizontalStretch(1)
        box.setSizePolicy(policy)
    return box
