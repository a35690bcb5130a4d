"""``AdaptiveSplit``: two parts side by side, stacked, or on two tabs, whichever the space it
gets allows."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QStackedLayout, QTabWidget, QWidget

__all__ = ["AdaptiveSplit"]


class AdaptiveSplit(QWidget):
    """Two parts side by side when wide enough, one above the other when tall enough, else on
    two tabs.

    Modes: ``"side"`` (a horizontal splitter), ``"stack"`` (a vertical splitter) and ``"tabs"``.
    The mode follows the widget's own size only, never the other way round: its minimum size
    is that of the tabs (the widest part, the tallest part plus a tab bar), whatever is shown,
    so a panel built on it fits a small dock. ``side_width`` / ``stack_height`` raise the
    sizes at which side by side / stacked are chosen above the parts' bare minimums, so a
    part is not shown squeezed. Until the user drags the splitter handle, the first part
    keeps ``ratio`` of the length.
    """

    mode_changed = Signal(str)

    def __init__(
        self,
        first: QWidget,
        second: QWidget,
        titles: tuple[str, str],
        *,
        ratio: float = 0.5,
        side_width: int = 0,
        stack_height: int = 0,
        allow_stack: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.parts = (first, second)
        self.titles = titles
        self.ratio = float(ratio)
        # side by side, the first part's share of the width for a size, instead of ``ratio``
        self.ratio_for: Callable[[QSize], float] | None = None
        self.side_width = int(side_width)
        self.stack_height = int(stack_height)
        self.allow_stack = allow_stack
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.splitterMoved.connect(self._split_moved)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._pages = QStackedLayout(self)
        self._pages.addWidget(self.splitter)
        self._pages.addWidget(self.tabs)
        # The tab bar's height, measured once with both tabs in place.
        for part, title in zip(self.parts, titles, strict=True):
            self.tabs.addTab(part, title)
        self._tab_bar_h = self.tabs.tabBar().sizeHint().height()
        self._mode = "tabs"
        self._tab = 0  # the tab shown last, shown again when the tabs come back
        self._user_split = False
        self._pages.setCurrentWidget(self.tabs)
        self._apply_mode("side")

    # ---- sizes --------------------------------------------------------------------------------
    def _part_minimums(self) -> tuple[QSize, QSize]:
        a, b = (p.minimumSizeHint().expandedTo(p.minimumSize()) for p in self.parts)
        return a, b

    def minimumSizeHint(self) -> QSize:  # Qt's name
        a, b = self._part_minimums()
        return QSize(max(a.width(), b.width()), max(a.height(), b.height()) + self._tab_bar_h)

    def sizeHint(self) -> QSize:  # Qt's name
        a, b = (p.sizeHint() for p in self.parts)
        handle = self.splitter.handleWidth()
        return QSize(a.width() + b.width() + handle, max(a.height(), b.height()))

    def wanted_mode(self, size: QSize) -> str:
        """The mode for a widget of ``size``: side by side, stacked, or tabs."""
        a, b = self._part_minimums()
        handle = self.splitter.handleWidth()
        if size.width() >= max(a.width() + b.width() + handle, self.side_width):
            return "side"
        if self.allow_stack and size.height() >= max(
            a.height() + b.height() + handle, self.stack_height
        ):
            return "stack"
        return "tabs"

    def mode(self) -> str:
        return self._mode

    def set_current(self, index: int) -> None:
        """In tabs mode, show part ``index`` (0 or 1)."""
        self.tabs.setCurrentIndex(index)

    # ---- switching ----------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(event)
        self._apply_mode(self.wanted_mode(event.size()))
        self._keep_ratio()

    def _apply_mode(self, mode: str) -> None:
        if mode == self._mode:
            return
        if mode == "tabs":
            for part, title in zip(self.parts, self.titles, strict=True):
                self.tabs.addTab(part, title)  # the tab widget shows the current one only
            self.tabs.setCurrentIndex(self._tab)
            self._pages.setCurrentWidget(self.tabs)
        else:
            if self._mode == "tabs":
                self._tab = max(self.tabs.currentIndex(), 0)
                while self.tabs.count():
                    self.tabs.removeTab(0)
                for part in self.parts:
                    self.splitter.addWidget(part)
                    part.show()
            self.splitter.setOrientation(
                Qt.Orientation.Horizontal if mode == "side" else Qt.Orientation.Vertical
            )
            self._user_split = False
            self._pages.setCurrentWidget(self.splitter)
        self._mode = mode
        self._keep_ratio()
        self.mode_changed.emit(mode)

    def _split_moved(self, *_: object) -> None:
        self._user_split = True

    def relayout(self) -> None:
        """Apply the ratio again (after what ``ratio_for`` depends on changed)."""
        self._keep_ratio()

    def _keep_ratio(self) -> None:
        if self._mode == "tabs" or self._user_split:
            return
        side = self._mode == "side"
        total = max(self.width() if side else self.height(), 1)
        ratio = self.ratio_for(self.size()) if side and self.ratio_for else self.ratio
        first = round(ratio * total)
        self.splitter.setSizes([first, total - first])
