"""What every panel shares: a workbench, coalesced redraws, export, and small helpers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import ClassVar

import shiboken6
from PySide6.QtCore import QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QTabBar,
    QWidget,
)

from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import Workbench
from attnsim.resources.panel_help import has_help, panel_help

from .parking import Missed, hear, park, unpark

# What a panel says while the attention of a large scenario's last edit is being computed.
COMPUTING = "Computing the attention…"

# True while the window makes a panel in steps (app/docks.py): the parts the panel's
# constructor hands to build_later() then wait for turns of the event loop of their own.
_parts_wait: list[bool] = [False]


@contextlib.contextmanager
def parts_built_later() -> Iterator[None]:
    """Inside, a panel's constructor only queues the parts it hands to ``build_later``."""
    _parts_wait[0] = True
    try:
        yield
    finally:
        _parts_wait[0] = False


# The panels waiting for a trace that came: each refreshes 1 ms after the one before it ended, so
# that the window's timers run between them (all in one turn held the window 200 ms at n = 4,096).
# A part of a redraw left to a turn of its own is (the widget it draws, the call).
_after_trace: list[Panel | tuple[QWidget, Callable[[], None]]] = []


def _queue_after_trace(panel: Panel) -> None:
    if not _after_trace:
        QTimer.singleShot(0, _refresh_next)
    if panel not in _after_trace:
        _after_trace.append(panel)


_IN_TURN_AFTER_TRACE = [False]


def in_turn_after_trace() -> bool:
    """Whether the panel refreshing now does so in its own turn after a large trace arrived
    (it may then leave a part of its redraw to :func:`next_turn_after_trace`)."""
    return _IN_TURN_AFTER_TRACE[0]


def next_turn_after_trace(widget: QWidget, call: Callable[[], None]) -> None:
    """Make ``call()`` in the turn after the one refreshing now, before the next panel (each
    turn 1 ms after the one before it ends, so the window's timers run between them; a timer
    of its own would be due with the next panel's, and run in the same turn). It is not made
    when ``widget``, what it draws on, was deleted meanwhile."""
    _after_trace.insert(0, (widget, call))


def _refresh_next() -> None:
    if not _after_trace:
        return
    item = _after_trace.pop(0)
    _IN_TURN_AFTER_TRACE[0] = True
    try:
        if isinstance(item, tuple):  # a part of a panel's redraw left to this turn
            widget, call = item
            if shiboken6.isValid(widget):
                call()
        elif shiboken6.isValid(item):
            item._refresh_if_seen()
    finally:  # (a redraw that raised does not leave the panels after it waiting for ever)
        _IN_TURN_AFTER_TRACE[0] = False
        if _after_trace:
            QTimer.singleShot(1, _refresh_next)


# What a figure never shows: things to click, drag, type into or wait for.
CONTROL_TYPES = (
    QAbstractButton,
    QAbstractSlider,  # sliders and scroll bars
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QProgressBar,
    QTabBar,
)


def content_parts(panel: QWidget, *roots: QWidget | None) -> list[QWidget]:
    """The largest pieces of ``roots`` that hold no control (see CONTROL_TYPES).

    A table comes back as its cells and headers without its corner button and scroll bars;
    a block with a button in it as its other children. Pieces hidden in ``panel`` are left out.
    """
    out: list[QWidget] = []

    def visit(w: QWidget) -> None:
        if isinstance(w, CONTROL_TYPES) or not w.isVisibleTo(panel) or w.size().isEmpty():
            return
        inner = [c for c in w.findChildren(QWidget) if c.isVisibleTo(panel)]
        if not any(isinstance(c, CONTROL_TYPES) for c in inner):
            out.append(w)
            return
        for child in w.children():
            if isinstance(child, QWidget) and not child.isWindow():
                visit(child)

    for root in roots:
        if root is not None:
            visit(root)
    return out


@cache
def help_html(panel_id: str) -> str:
    """A panel's help text (the one the Help window shows) as rich text for its What's This;
    "" for a panel without one."""
    if not has_help(panel_id):
        return ""
    doc = QTextDocument()
    doc.setMarkdown(panel_help(panel_id).markdown(level=2))
    return doc.toHtml()


class Panel(QWidget):
    """Base class of the dockable panels.

    Subclasses set ``panel_id`` (a file-name-safe id) and ``title``, build their widgets in
    ``__init__`` and draw everything from ``self.wb`` in :meth:`refresh`. A redraw never pushes
    a command. Redraws are coalesced: many changes in one event-loop turn cause one refresh.
    """

    panel_id: ClassVar[str] = "panel"
    title: ClassVar[str] = "Panel"
    refreshed = Signal()

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.wb = workbench
        self.setObjectName(f"panel-{self.panel_id}")
        # A click anywhere in the panel (on a canvas or label that takes no focus) moves the
        # keyboard focus to the panel, so the window knows which panel the user means (Ctrl+E,
        # copy image) from focus changes alone, without watching every event of the app.
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        # Help ▸ What's This? then a click anywhere in the panel shows its help.
        self.setWhatsThis(help_html(self.panel_id))
        self._pending = False
        self.refresh_count = 0
        self.last_refusal = ""
        self._updating_depth = 0
        # One slot per signal while the panel is in sight; out of sight with a redraw
        # pending, it leaves them (see parking.py): a drag's moves then cost it nothing.
        # A refusal stays in view until the next edit that goes through, from any panel, or
        # a new document: then it no longer describes the state on screen.
        self._missed: Missed | None = None
        hear(self, True)
        self._computing_note: QLabel | None = None
        self._parts_left: list[Callable[[], None]] = []
        # True while the window opens the panel in steps: a refresh waits until it is placed.
        self.opening = _parts_wait[0]

    # ---- building in steps ------------------------------------------------------------------
    def build_later(self, build: Callable[[], None]) -> None:
        """Build a part of the panel: now, or, while the window opens the panel in steps, in a
        turn of the event loop of its own (so that no turn holds the window long). Parts are
        built in the order given, all of them before the panel's first refresh."""
        if _parts_wait[0]:
            self._parts_left.append(build)
        else:
            build()

    def build_next_part(self) -> bool:
        """Build the next part left to build (False when there was none)."""
        if not self._parts_left:
            return False
        self._parts_left.pop(0)()
        return True

    # ---- redraw scheduling ------------------------------------------------------------------
    def _changed(self, what: frozenset[str]) -> None:
        self._on_changed(what)
        self.clear_refusal()  # the edit went through (see __init__)

    def _on_changed(self, what: frozenset[str]) -> None:
        if self.shows_scenario():
            self.schedule_refresh()

    def _edit_went_through(self, *_: object) -> None:
        self.clear_refusal()

    def _on_selection(self) -> None:
        if self.shows_scenario():
            self.schedule_refresh()

    def schedule_refresh(self) -> None:
        if not self._pending:
            self._pending = True
            if self._hidden_in_shown_window():
                # out of sight: came_into_view() runs it when the panel is shown, and until
                # then the edits are only noted (by the workbench's lot, not by the panel)
                park(self)
                return
            if self.wb.trace_arriving:  # an edit's large trace came: one panel a turn
                _queue_after_trace(self)
                return
            # with the panel as the timer's context: a panel deleted before the next turn of
            # the event loop (its window closed) is not called ("C++ object already deleted")
            QTimer.singleShot(0, self, self._refresh_if_seen)

    def _hidden_in_shown_window(self) -> bool:
        # A panel on a dock tab behind another (still "visible" to Qt, but with nothing of it
        # on screen), or in a closed dock, while its window is up.
        return self.window().isVisible() and (
            not self.isVisible() or self.visibleRegion().isEmpty()
        )

    def shows_scenario(self) -> bool:
        """Whether the panel's picture follows the scenario (and so waits, saying so, while a
        large scenario's attention is computed). Panels with a model or state of their own
        (the real model, the training stepper) say False: they are not "computing"."""
        return True

    def _refresh_if_seen(self) -> None:
        # Panels nobody can see keep their refresh pending until they are shown, so a drag
        # pays only for what is on screen. Standalone panels (tests) refresh as usual.
        if self.opening or self in _after_trace:
            return  # (queued after a trace: it redraws in its turn)
        if self._hidden_in_shown_window():
            park(self)  # until came_into_view()
            return
        if self.wb.computing and self.shows_scenario():  # a large trace is on its way: keep
            # the picture and say so
            self._show_computing(True)
            return
        self.flush_in_turn()

    def flush_in_turn(self) -> None:
        """The event loop's redraw: :meth:`flush`, unless a panel may finish drawing in later
        turns (the heatmap's large stages) where an explicit flush draws everything now."""
        self.flush()

    def _on_computing(self, computing: bool) -> None:
        if computing:
            if self.shows_scenario() and self.isVisible() and not self.visibleRegion().isEmpty():
                self._show_computing(True)
        elif self._pending:  # one panel a turn (see _refresh_next), not all in the trace's
            _queue_after_trace(self)
        else:
            self._show_computing(False)

    def _show_computing(self, shown: bool) -> None:
        """A word in the panel's bottom right corner while the picture is the state before the
        last edit (or none yet), whose attention is still being computed."""
        note = self._computing_note
        if not shown:
            if note is not None:
                note.hide()
            return
        if note is None:
            note = self._computing_note = QLabel(COMPUTING, self)
            note.setObjectName("computing-note")
            note.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            note.setStyleSheet(
                "QLabel { background: rgba(255, 248, 220, 235); color: #5a4a00;"
                " border: 1px solid #d8c67a; border-radius: 3px; padding: 1px 4px; }"
            )
        note.adjustSize()
        picture = self.computing_anchor()
        if picture is not None and picture.isVisible():
            # the bottom right corner of the stale picture it speaks of
            where = QRect(picture.mapTo(self, QPoint(0, 0)), picture.size()) & self.rect()
        else:
            where = self.rect()
        x, y = where.right() - note.width() - 3, where.bottom() - note.height() - 3
        note.move(max(min(x, self.width() - note.width()), 0), max(min(y, self.height()), 0))
        note.raise_()
        note.show()

    def computing_anchor(self) -> QWidget | None:
        """The widget whose bottom right corner holds the "computing" note (None: the panel's
        own). Panels with a caption under their picture name the picture, so
        that the note does not cover the caption."""
        return None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.came_into_view()

    # How long after coming into view a waiting redraw runs: 0 serves it in the event loop's
    # pass that placed the panel (see panels/placed_first.py for the panels that wait 1 ms).
    came_into_view_ms = 0

    def came_into_view(self) -> None:
        """Run a refresh that waited while the panel was out of sight (its dock tab raised)."""
        unpark(self)
        if self._pending:
            QTimer.singleShot(self.came_into_view_ms, self, self._refresh_if_seen)

    def flush(self) -> None:
        """Refresh now if a refresh is pending (tests, export and benchmarks call this), with
        a large scenario's trace computed first if it is still on its way."""
        while self.build_next_part():
            pass
        unpark(self)  # (what it missed may matter to the refresh: a new document, say)
        if self.shows_scenario():
            self.wb.finish_trace()
        self._show_computing(False)
        if self._pending:
            self._pending = False
            self.refresh()
            self.refresh_count += 1
            self.refreshed.emit()

    def refresh(self) -> None:  # pragma: no cover - every panel overrides it
        raise NotImplementedError

    # ---- export -------------------------------------------------------------------------------
    def figure_widget(self) -> QWidget:
        """The widget that a full-panel grab and the clipboard show (by default the panel)."""
        return self

    def figure_widgets(self) -> list[QWidget]:
        """The content a figure export draws, in the panel's own arrangement.

        Matrices, plots and views with their labels and colour bars; no buttons, combo boxes,
        sliders, scroll bars, progress bars or instructions. Every panel names its own.
        """
        return [self.figure_widget()]

    def figure_unavailable(self) -> str:
        """Why this panel has no figure for the current scenario ("" when it has one)."""
        return ""

    # ---- edits --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def updating(self) -> Iterator[None]:
        """Inside, the panel writes the model's values into its own controls: control signals
        that fire meanwhile must not become edits (they check :attr:`is_updating`).

        Nests (a redraw calling a helper that also syncs controls) and survives exceptions.
        """
        self._updating_depth += 1
        try:
            yield
        finally:
            self._updating_depth -= 1

    @property
    def is_updating(self) -> bool:
        return self._updating_depth > 0

    def propose(
        self,
        make: Callable[[], object],
        text: str | Callable[[object], str],
        *,
        drag: int | None = None,
        refused: Callable[[Exception], Exception] | None = None,
        new_document: bool = False,
    ) -> bool:
        """Build a new state with ``make()`` and push it as one undoable edit.

        ``make`` returns a new Scenario, or a lab's new state (a dataclass instance); None means
        "nothing to do". A ScenarioError or ValueError it raises is a refusal: shown inline (see
        :meth:`show_refusal`) and in the status bar, and nothing changes. ``text`` names the undo
        step (or makes the name from the new state); edits sharing a ``drag`` id merge into one
        step. ``refused`` may reword the error first (e.g. name the cell that was typed in).
        ``new_document`` makes the new scenario an untitled document (Save asks where).
        Returns True when an edit was pushed (or proposed a no-op), False when refused.
        """
        try:
            after = make()
        except (ScenarioError, ValueError) as exc:
            self.show_refusal(self.refuse(refused(exc) if refused is not None else exc))
            return False
        if after is None:
            return False
        self.clear_refusal()
        name = text(after) if callable(text) else text
        if isinstance(after, Scenario) and new_document:
            self.wb.replace_document(after, name)
        elif isinstance(after, Scenario):
            self.wb.edit(after, name, drag=drag)
        else:
            self.wb.set_lab_state(after, name, drag=drag)
        return True

    def show_refusal(self, text: str) -> None:
        """Show a refusal next to the panel's controls (the status bar already has it).

        A panel with an inline refusal line (``self.refusal``, a ``widgets.RefusalLabel``)
        shows it there and redraws, so that a control that was typed or dragged into goes back
        to the unchanged state; panels that show refusals otherwise override this.
        """
        line = getattr(self, "refusal", None)
        if hasattr(line, "show_refusal"):
            line.show_refusal(text)
            self.schedule_refresh()

    def clear_refusal(self) -> None:
        """An edit went through: hide an inline refusal shown earlier."""
        line = getattr(self, "refusal", None)
        if hasattr(line, "show_refusal"):  # a RefusalLabel; a panel's own label is its own
            line.setVisible(False)

    # ---- helpers ------------------------------------------------------------------------------
    def refuse(self, error: Exception) -> str:
        """Tell the user (status bar) why an edit was refused; the state stays as it was.

        Returns the text so the panel can also show it next to the control that caused it.
        """
        text = error.problem if isinstance(error, ScenarioError) else str(error)
        self.last_refusal = text
        self.wb.say(f"Refused: {text}")
        return text
