"""The docks: one per panel, each panel made the first time its dock is seen, arranged in two
columns of tab groups (``DOCK_GROUPS``), sized to the screen, saved and restored."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSize, Qt, QTimer, SignalInstance
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QMainWindow,
    QScrollArea,
    QStyle,
    QTabBar,
    QWidget,
)

from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS, Panel, PanelSpec
from attnsim.panels.base import parts_built_later

from .home import settings

# The window's size on a screen with room to spare; smaller screens get what they have.
PREFERRED_SIZE = QSize(1600, 1000)
# Room for the window frame and title bar, which are not known before the first show.
FRAME_ALLOWANCE = QSize(16, 40)

# The wait before each step of a panel opened in steps. Not 0: a zero timer is a posted event,
# and with the GLib event loop (Linux) a chain of posted events, each posting the next, lets
# the window's timers (an animation, a drag's pacing) fire only after every second step; a
# timer of 1 ms is served in turn with them, so they fire between any two steps.
STEP_MS = 1

# Where the docks go: two columns, each a top and a bottom group of tabs, first tab in front.
# By theme, so that no group holds more tabs than its width shows whole: the matrix and how it
# is computed (right top), geometry and heads (left bottom), the experiments (right bottom).
# Ids not (yet) registered are skipped.
DOCK_GROUPS: list[tuple[str, list[str]]] = [
    ("left_top", ["vectors", "projections", "lessons"]),
    ("right_top", ["heatmap", "readout", "audit", "precision_lab", "kernel_lab"]),
    ("left_bottom", ["space3d", "anatomy", "position_lab", "induction_lab", "real_model"]),
    ("right_bottom", [
        "explorer", "stepper", "routing_lab", "scaling_lab", "fields_lab", "nullspace_lab",
        "linear_lab", "context_lab",
    ]),
]  # fmt: skip

# The least free screen (logical pixels) in which the groups stand in two columns, and in two
# rows: the panels in front need about 840 x 560 side by side. A smaller screen (a 1600 x 1000
# one at QT_SCALE_FACTOR=2 is 800 x 500) gets the groups of a column, or of a row, or all of
# them, as one tab group, so that the window never needs more than its screen.
TWO_COLUMNS_WIDTH = 860
TWO_ROWS_HEIGHT = 600


def dock_groups(width: int, height: int) -> list[tuple[str, list[str]]]:
    """DOCK_GROUPS merged to fit a free screen area of width x height (logical pixels)."""
    groups = dict(DOCK_GROUPS)
    columns, rows = width >= TWO_COLUMNS_WIDTH, height >= TWO_ROWS_HEIGHT
    if columns and rows:
        return list(DOCK_GROUPS)
    if columns:  # one group per column
        return [(f"{c}_top", groups[f"{c}_top"] + groups[f"{c}_bottom"]) for c in ("left", "right")]
    if rows:  # one group per row, in one column
        return [
            (f"left_{r}", groups[f"left_{r}"] + groups[f"right_{r}"]) for r in ("top", "bottom")
        ]
    return [("left_top", [pid for _, pids in DOCK_GROUPS for pid in pids])]


# How much of its height a panel may scroll away in a short dock (a projector's 1024 x 768)
# rather than take that height from the panel beside it.
SCROLL_SHARE = 0.25


class PanelHolder(QScrollArea):
    """A panel in its dock. In a dock shorter than the panel needs, the panel scrolls (by at
    most SCROLL_SHARE of its height) instead of squeezing the docks above and below it: a
    tall panel on a tab in front would otherwise take its whole height from its neighbours."""

    def __init__(self, panel: Panel) -> None:
        super().__init__()
        self.setObjectName(f"holder-{panel.panel_id}")
        self.setFrameShape(QFrame.Shape.NoFrame)
        # Sized here, not by QScrollArea's widgetResizable: that one grows a panel whose layout
        # has a height for its width (word-wrapped labels, flow rows) to its preferred height
        # and scrolls a panel that would fit.
        self.setWidgetResizable(False)
        self.setWidget(panel)
        panel.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self._fit()  # what the panel needs may have changed
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        # The panel's own minimum only: a layout's height-for-width can depend on the panel's
        # current size (rows that wrap, pages that change), and following it loops forever.
        panel, room = self.widget(), self.size()
        need = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        width = room.width() - (bar if need.height() > room.height() else 0)
        target = QSize(max(width, need.width()), max(room.height(), need.height()))
        if panel.size() != target:
            panel.resize(target)

    def minimumSizeHint(self) -> QSize:  # Qt's name
        need = self.widget().minimumSizeHint()
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        # As wide as the panel and a vertical scroll bar: scrolling never cuts its width.
        return QSize(need.width() + bar, round(need.height() * (1.0 - SCROLL_SHARE)))

    def sizeHint(self) -> QSize:  # Qt's name
        return self.widget().sizeHint()


def import_next(module: str) -> bool:
    """Import the next module a panel's package needs (False when there is none left).

    The first call imports the package itself; a package whose ``__init__`` imports its parts
    lazily names them in ``IMPORT_STEPS`` (modules, each after those it needs), and each later
    call imports one of those not yet imported: a large panel's modules then load in turns of
    the event loop of their own, not in one long one."""
    if module not in sys.modules:
        import_module(module)
        return True
    for name in getattr(sys.modules[module], "IMPORT_STEPS", ()):
        if name not in sys.modules:
            import_module(name)
            return True
    return False


class _FirstFrame(QObject):
    """Calls ``then`` once, in a turn of its own, after ``window``'s first frame is drawn (or,
    for a window that is never drawn, LATEST_MS after it is made)."""

    LATEST_MS = 1000

    def __init__(self, window: QWidget, then: Callable[[], None]) -> None:
        super().__init__(window)
        self._then: Callable[[], None] | None = then
        window.installEventFilter(self)
        QTimer.singleShot(self.LATEST_MS, self, self._call)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self, self._call)  # after this frame, not inside it
        return False

    def _call(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            then()
            self.deleteLater()


if TYPE_CHECKING:
    # For type checkers only: a mixin's methods run on the MainWindow.
    _Base = QMainWindow
else:
    _Base = object


class _Panels(Mapping[str, Panel]):
    """The window's panels by id, each made on first use.

    A panel on a dock tab behind another costs nothing until someone looks at it (its tab is
    raised, it is exported, a test asks for it): start-up builds only what is on screen.
    """

    def __init__(self, make: Callable[[PanelSpec], Panel]) -> None:
        self._make = make
        self._specs: dict[str, PanelSpec] = {}
        self._built: dict[str, Panel] = {}

    def spec(self, pid: str) -> PanelSpec:
        return self._specs[pid]

    def is_built(self, pid: str) -> bool:
        return pid in self._built

    def adopt(self, pid: str, panel: Panel) -> None:
        """A panel made in steps by the window (see ``DocksMixin._open_in_steps``)."""
        self._built[pid] = panel

    def register(self, spec: PanelSpec) -> None:
        self._specs[spec.panel_id] = spec

    def __getitem__(self, pid: str) -> Panel:
        if pid not in self._built:
            self._built[pid] = self._make(self._specs[pid])
        return self._built[pid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def built(self) -> dict[str, Panel]:
        """The panels made so far (without making the others)."""
        return dict(self._built)

    def title(self, pid: str) -> str:
        return self._specs[pid].title


class DocksMixin(_Base):
    """The MainWindow's docks and their layout."""

    wb: Workbench
    panels: _Panels
    docks: dict[str, QDockWidget]
    _group_heads: dict[str, QDockWidget]
    _layout_groups: int
    _opening: set[str]
    _window_up: bool
    _panels_after_first_frame: bool
    _share_docks_again: bool
    _start_panels: set[str]
    panels_in: SignalInstance

    def fit_to_screen(self) -> None:
        """Size the window to its screen's free area (at most PREFERRED_SIZE) and centre it."""
        avail = self._available()
        w = max(min(PREFERRED_SIZE.width(), avail.width() - FRAME_ALLOWANCE.width()), 320)
        h = max(min(PREFERRED_SIZE.height(), avail.height() - FRAME_ALLOWANCE.height()), 240)
        self.resize(w, h)
        self.move(
            avail.x() + max((avail.width() - w - FRAME_ALLOWANCE.width()) // 2, 0),
            avail.y() + max((avail.height() - h - FRAME_ALLOWANCE.height()) // 2, 0),
        )

    def _available(self) -> QRect:
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def _keep_on_screen(self) -> None:
        # A layout saved on a larger (or a since-unplugged) screen must not open off-screen.
        avail = self._available()
        size = self.size() + FRAME_ALLOWANCE
        if size.width() > avail.width() or size.height() > avail.height():
            self.fit_to_screen()
        elif not avail.contains(QRect(self.pos(), size)):
            self.move(
                min(max(self.x(), avail.x()), avail.right() + 1 - size.width()),
                min(max(self.y(), avail.y()), avail.bottom() + 1 - size.height()),
            )

    def _build_panels(self) -> None:
        for spec in PANEL_SPECS:
            dock = QDockWidget(spec.dock_name, self)
            dock.setObjectName(f"dock-{spec.panel_id}")
            dock.setWidget(QWidget())  # the panel itself is made when the dock is first seen
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.DockWidgetMovable
                | QDockWidget.DockWidgetFeature.DockWidgetClosable
                | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            )
            # A dock raised from behind a tab gets no show event: tell its panel (make it).
            dock.visibilityChanged.connect(
                lambda seen, pid=spec.panel_id: seen and self._dock_seen(pid)
            )
            dock.dockLocationChanged.connect(self._whole_tab_names)
            self.panels.register(spec)
            self.docks[spec.panel_id] = dock
        # No real central widget: the docks share the whole window.
        spacer = QWidget()
        spacer.setMaximumSize(0, 0)
        self.setCentralWidget(spacer)
        self._arrange_docks()

    def _make_panel(self, spec: PanelSpec) -> Panel:
        panel = spec.load()(self.wb)
        self.docks[spec.panel_id].setWidget(PanelHolder(panel))
        return panel

    def _dock_seen(self, pid: str) -> None:
        if self.panels.is_built(pid) or not (self._window_up or self._panels_after_first_frame):
            # Built already, or the window's first frame: the panels on screen are made now.
            self.panels[pid].came_into_view()
        elif pid not in self._opening:
            self._open_in_steps(pid)

    def panels_opening(self) -> bool:
        """Whether a panel is still being made in steps (its dock says "Opening …")."""
        return bool(self._opening)

    def _open_in_steps(self, pid: str) -> None:
        """Make a panel first seen after start-up in turns of the event loop: import its
        module, build it (and each part it builds later, one a turn: ``Panel.build_later``),
        then put it in its dock (the layout's first pass). Between them the
        window answers clicks and keys, and the dock says what is coming; a panel asked for
        meanwhile (``self.panels[pid]``) is made at once and the steps left stop."""
        spec = self.panels.spec(pid)
        self._opening.add(pid)
        note = QLabel(f"Opening {spec.title}…")
        note.setObjectName("opening-note")
        note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        note.setEnabled(False)
        self.docks[pid].setWidget(note)
        made: list[Panel] = []

        def done() -> bool:
            if self.panels.is_built(pid):
                self._opening.discard(pid)
                self._start_panel_in(pid)
                return True
            return False

        def step(work: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                try:
                    work()
                except BaseException:
                    self._opening.discard(pid)  # the next time the dock is seen tries again
                    raise

            return run

        def load() -> None:  # a module a turn (see import_next), then the panel's class
            if not done():
                if import_next(spec.module):
                    QTimer.singleShot(STEP_MS, self, step(load))
                    return
                spec.load()
                QTimer.singleShot(STEP_MS, self, step(build))

        def build() -> None:
            if not done():
                with parts_built_later():
                    made.append(spec.load()(self.wb))
                QTimer.singleShot(STEP_MS, self, step(parts))

        def parts() -> None:  # what the panel builds later (Panel.build_later), a part a turn
            if not done() and made[0].build_next_part():
                QTimer.singleShot(STEP_MS, self, step(parts))
            else:
                place()

        def place() -> None:
            if done():
                made[0].deleteLater()  # made meanwhile by someone who could not wait
                return
            self.docks[pid].setWidget(PanelHolder(made[0]))
            self.panels.adopt(pid, made[0])
            self._opening.discard(pid)
            made[0].opening = False
            made[0].came_into_view()
            self._start_panel_in(pid)

        if self._window_up:
            QTimer.singleShot(STEP_MS, self, step(load))
        else:  # a panel on screen at the start: made once the first frame is drawn
            self._start_panels.add(pid)
            if len(self._start_panels) == 1:
                _FirstFrame(self, self._open_after_first_frame)

    def _start_panel_in(self, pid: str) -> None:
        """A panel on screen at the start is in its dock: after the last of them, the docks
        are shared out again (when the window shared them out at its first show: as if the
        panels had been there then) and ``panels_in`` is emitted."""
        if pid not in self._start_panels:
            return
        self._start_panels.discard(pid)
        if self._start_panels:
            return
        if self._share_docks_again:
            self._share_docks_again = False
            self._size_docks()
        self.panels_in.emit()

    def _open_after_first_frame(self) -> None:
        """The panels on screen at the start, all in one turn: nobody has clicked yet, and
        steps with the window laid out and painted between them took 10 % longer to the
        window with its panels (the first frame was as soon)."""
        for pid in sorted(self._start_panels, key=list(self.docks).index):
            if pid in self._opening:
                self._opening.discard(pid)
                self.panels[pid].came_into_view()
            self._start_panel_in(pid)

    def _window_is_up(self) -> None:
        """After the first frame: panels first seen from now on open in steps."""
        self._window_up = True

    def _arrange_docks(self) -> None:
        """Two columns of two tab groups each (see DOCK_GROUPS), fewer on a small screen
        (``dock_groups``); unlisted panels join the last group. The first panel of each group
        is the tab in front."""
        listed = {pid for _, pids in DOCK_GROUPS for pid in pids}
        avail = self._available()
        groups = [
            (name, [p for p in pids if p in self.docks])
            for name, pids in dock_groups(avail.width(), avail.height())
        ]
        groups[-1][1].extend(pid for pid in self.docks if pid not in listed)
        heads: dict[str, QDockWidget] = {}
        for name, pids in groups:
            if not pids:
                continue
            head = self.docks[pids[0]]
            column, row = name.split("_")
            area = Qt.DockWidgetArea.LeftDockWidgetArea if column == "left" else (
                Qt.DockWidgetArea.RightDockWidgetArea
            )  # fmt: skip
            above = heads.get(f"{column}_top")
            if row == "bottom" and above is not None:
                self.splitDockWidget(above, head, Qt.Orientation.Vertical)
            else:
                self.addDockWidget(area, head)
            heads[name] = head
        # Tabs only after every split: Qt adds a dock split off a tabbed dock as another tab.
        for name, pids in groups:
            for pid in pids[1:]:
                self.tabifyDockWidget(heads[name], self.docks[pid])
        for head in heads.values():
            head.raise_()
        self._group_heads = heads
        self._layout_groups = len(heads)
        self._hide_tab_bars()

    def _hide_tab_bars(self) -> None:
        # Before the first show only. Each tabify makes a new tab bar and the old ones stay
        # behind as children of the window, which show() would put on screen at stale places.
        # Hide them all; the layout shows the ones it uses when it is activated.
        for bar in self._tab_bars():
            bar.hide()
        self._whole_tab_names()

    def _tab_bars(self) -> list[QTabBar]:
        return self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)

    def _whole_tab_names(self) -> None:
        # A cut name ("Routin…") cannot be read or told apart; when a group's tabs do not fit
        # its width, the names stay whole and the bar scrolls. Qt makes a new bar when the user
        # docks a panel somewhere new, hence again on every move.
        for bar in self._tab_bars():
            if bar.elideMode() != Qt.TextElideMode.ElideNone:
                bar.setElideMode(Qt.TextElideMode.ElideNone)
                bar.setUsesScrollButtons(True)

    def _size_docks(self) -> None:
        # Column widths 42% / 58%, and each column split evenly between its two groups.
        heads = self._group_heads
        w, h = self.width(), self.height()
        tops = [heads[k] for k in ("left_top", "right_top") if k in heads]
        if len(tops) == 2:
            self.resizeDocks(tops, [int(w * 0.42), int(w * 0.58)], Qt.Orientation.Horizontal)
        for column in ("left", "right"):
            pair = [heads.get(f"{column}_top"), heads.get(f"{column}_bottom")]
            if all(pair):
                self.resizeDocks(pair, [h // 2, h // 2], Qt.Orientation.Vertical)  # type: ignore[arg-type]
        if len(heads) == 1:
            # Nothing to share out, so Qt does not lay the docks out again and the one group's
            # tab bar, hidden before the first show (see _hide_tab_bars), stayed hidden until
            # the window next changed size. It is the only bar with tabs.
            for bar in self._tab_bars():
                if bar.count() > 1:
                    bar.show()

    def _restore_layout(self) -> bool:
        s = settings()
        geo, state = s.value("geometry"), s.value("state")
        # A layout of four groups saved on a large screen does not fit a small one (nor the
        # other way round): there the default layout for the screen is used instead.
        if str(s.value("layout_groups", len(DOCK_GROUPS))) != str(self._layout_groups):
            return False
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        restored = isinstance(state, QByteArray) and self.restoreState(state)
        self._hide_tab_bars()
        return restored

    def save_layout(self) -> None:
        s = settings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState())
        s.setValue("layout_groups", self._layout_groups)
        s.sync()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.docks.values():
            dock.show()
        for head in self._group_heads.values():
            head.raise_()
        self._size_docks()
