"""What the experiment labs share: one frozen settings dataclass held by the workbench (every
change an undoable command), declared once (:mod:`attnsim.engine.settings`) and set through one
:meth:`LabPanel.set_setting`; pages of a row of controls over a view; and one inline line that
names a refused setting and its value."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar

from PySide6.QtWidgets import QLabel, QLayout, QVBoxLayout, QWidget

from attnsim.engine.settings import LabSettings
from attnsim.model.workbench import LabChange, Workbench, new_drag_id
from attnsim.panels.placed_first import RedrawsAfterPlacing

from .base import Panel
from .kit.tab_frame import FramedTabs
from .widgets import RefusalLabel, scrolling

W = TypeVar("W", bound=QWidget)
T = TypeVar("T")

# From this many attention weights on (256 x 256), a lab's slow views are made in the background
# (:meth:`LabPanel.derive_soon`): below it they take milliseconds and are drawn at once.
BACKGROUND_CELLS = 256 * 256
BUSY_TEXT = "Computing for the new settings… (what is shown is for the previous ones)"


class LabPanel(RedrawsAfterPlacing, Panel):
    """Base class of the labs.

    Subclasses set ``settings`` (their :class:`~attnsim.engine.settings.LabSettings`, which
    gives ``state_type``) or, for a lab whose edits are not scalar settings, ``state_type``
    alone. The constructor lays out the panel: with ``tabbed``, a tab widget of pages (only the
    tab on screen is recomputed and redrawn; raising another one redraws it) over the refusal
    line; without, the refusal line alone, which the subclass places in ``lab_layout``.
    Controls that emit ``setting(name, value)``, ``pressed(name)`` / ``released(name)`` around
    a drag and ``refused(reason)`` (a :class:`~attnsim.panels.kit.control_row.ControlRow`) are
    connected by :meth:`connect_controls`.
    """

    state_type: ClassVar[type | None] = None  # None: a lab whose every edit is a scenario edit
    settings: ClassVar[LabSettings]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("settings")
        if isinstance(declared, LabSettings) and "state_type" not in cls.__dict__:
            cls.state_type = declared.state_type

    def __init__(
        self, workbench: Workbench, parent: QWidget | None = None, *, tabbed: bool = True
    ) -> None:
        super().__init__(workbench, parent)
        self._drags: dict[str, int] = {}
        workbench.lab_changed.connect(self._on_lab)
        self.lab_layout = QVBoxLayout(self)
        self.lab_layout.setContentsMargins(4, 4, 4, 4)
        self.lab_layout.setSpacing(3)
        self.refusal = RefusalLabel()
        # Says that a view is being made in the background and what is on screen meanwhile.
        self.busy_line = QLabel(BUSY_TEXT)
        self.busy_line.setObjectName("busy")
        self.busy_line.setWordWrap(True)
        self.busy_line.setStyleSheet("color: #555; font-style: italic;")
        self.busy_line.hide()
        self._now = False
        if tabbed:
            self.tabs = FramedTabs()  # its frame copied, not redrawn, on each repaint
            self.lab_layout.addWidget(self.tabs, 1)
            self.lab_layout.addWidget(self.busy_line)
            self.lab_layout.addWidget(self.refusal)
            self.tabs.currentChanged.connect(self.schedule_refresh)
        self.schedule_refresh()

    # ---- slow views ---------------------------------------------------------------------------
    def is_large(self) -> bool:
        """Whether the focused head has at least :data:`BACKGROUND_CELLS` weights."""
        return int(self.wb.trace.weights.size) >= BACKGROUND_CELLS

    def derive_soon(self, fn: Callable[[Workbench], T], fields: tuple[str, ...] = ()) -> T | None:
        """``fn``'s result for the current state (see ``wb.derived``, with this lab's state).

        For a large head (:meth:`is_large`) it is made on the workbench's runner: None until
        it is ready, the busy line shown meanwhile, and the panel redrawn when it arrives. A
        figure (:meth:`computing_now`) and a small head get it at once.
        """
        lab = self.state_type
        if self._now or not self.is_large():
            self.busy_line.hide()
            return self.wb.derived(fn, lab=lab, fields=fields)
        value = self.wb.derived_soon(fn, lab=lab, fields=fields, then=self.schedule_refresh)
        self.busy_line.setVisible(value is None)
        return value

    @contextlib.contextmanager
    def computing_now(self) -> Iterator[None]:
        """Inside, :meth:`derive_soon` computes at once (a figure never shows an old picture)."""
        self._now = True
        try:
            if not self.busy_line.isHidden():
                self.schedule_refresh()
            self.flush()
            yield
        finally:
            self._now = False

    # ---- state --------------------------------------------------------------------------------
    def state(self) -> Any:  # an instance of the subclass's state_type
        """The lab's current settings (its defaults until first edited)."""
        if self.state_type is None:
            raise TypeError(f"{type(self).__name__} has no settings of its own")
        return self.wb.lab_state(self.state_type)

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is self.state_type:
            self.schedule_refresh()

    def set_setting(self, name: str, value: object, *, drag: int | None = None) -> bool:
        """Set one declared setting as one undoable edit (edits with the same ``drag`` merge
        into one); a bad value is refused inline in the one wording and changes nothing."""
        st = self.state()
        old = getattr(st, name)
        if old == value and type(old) is type(value):
            return True
        decl = self.settings

        def make() -> Any:
            new = decl.with_setting(st, name, value)
            why = self.scenario_problem(new, name)
            if why:
                raise ValueError(why)
            return new

        return self.propose(make, decl.edit_text(name, value), drag=drag)

    def scenario_problem(self, state: Any, name: str) -> str:
        """Why ``state`` cannot be used on the current scenario ("" when it can), after
        ``name`` changed; the declaration checks everything that does not depend on it."""
        return ""

    # ---- drags --------------------------------------------------------------------------------
    def begin_drag(self, name: str) -> None:
        """A drag of ``name`` starts: its edits until :meth:`end_drag` are one undo step."""
        self._drags[name] = new_drag_id()

    def end_drag(self, name: str) -> None:
        self._drags.pop(name, None)

    def drag_of(self, name: str) -> int | None:
        """The drag id of ``name`` while it is dragged, else None."""
        return self._drags.get(name)

    # ---- controls -----------------------------------------------------------------------------
    def connect_controls(self, controls: W) -> W:
        """Route ``controls``' ``setting(name, value)`` to :meth:`set_setting`, and, if it has
        them, ``pressed(name)`` / ``released(name)`` to the drag ids and ``refused(reason)`` to
        the refusal line; returns ``controls``."""
        controls.setting.connect(self._setting)  # type: ignore[attr-defined]
        for signal, slot in (
            ("pressed", self.begin_drag),
            ("released", self.end_drag),
            ("refused", self._box_refused),
        ):
            if hasattr(controls, signal):
                getattr(controls, signal).connect(slot)
        return controls

    def _setting(self, name: str, value: object) -> None:
        if not self.is_updating:
            self.set_setting(name, value, drag=self.drag_of(name))

    def _box_refused(self, reason: str) -> None:
        # A box refuses what it cannot hold before any edit is proposed; report it the same way.
        self.show_refusal(self.refuse(ValueError(reason)))

    def add_page(
        self, title: str, *parts: QWidget | QLayout, grow: int = -1, min_height: int = 0
    ) -> QVBoxLayout:
        """A tab of ``parts`` stacked top to bottom, ``parts[grow]`` taking the spare height;
        with ``min_height`` the page keeps that height and scrolls in a short dock."""
        page = QWidget()
        col = QVBoxLayout(page)
        col.setContentsMargins(2, 2, 2, 2)
        grow %= len(parts)
        for i, part in enumerate(parts):
            stretch = 1 if i == grow else 0
            if isinstance(part, QLayout):
                col.addLayout(part, stretch)
            else:
                col.addWidget(part, stretch)
        self.tabs.addTab(scrolling(page, min_height) if min_height else page, title)
        return col
