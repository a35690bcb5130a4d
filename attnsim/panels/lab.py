"""What the experiment labs share: one frozen settings dataclass held by the workbench (every
change an undoable command), pages of a row of controls over a view, and one inline line that
names a refused setting and its value."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from PySide6.QtWidgets import QLayout, QTabWidget, QVBoxLayout, QWidget

from attnsim.model.workbench import LabChange, Workbench

from .base import Panel
from .widgets import RefusalLabel, scrolling

W = TypeVar("W", bound=QWidget)


class LabPanel(Panel):
    """Base class of the labs.

    Subclasses set ``state_type`` (their settings dataclass) and implement ``set_setting(name,
    value)``. The constructor lays out the panel: with ``tabbed``, a tab widget of pages (only
    the tab on screen is recomputed and redrawn; raising another one redraws it) over the
    refusal line; without, the refusal line alone, which the subclass places in its layout.
    Controls that emit ``setting(name, value)`` and ``refused(reason)`` are connected by
    :meth:`connect_controls`.
    """

    state_type: ClassVar[type]

    def __init__(
        self, workbench: Workbench, parent: QWidget | None = None, *, tabbed: bool = True
    ) -> None:
        super().__init__(workbench, parent)
        workbench.lab_changed.connect(self._on_lab)
        self.lab_layout = QVBoxLayout(self)
        self.lab_layout.setContentsMargins(4, 4, 4, 4)
        self.lab_layout.setSpacing(3)
        self.refusal = RefusalLabel()
        if tabbed:
            self.tabs = QTabWidget()
            self.lab_layout.addWidget(self.tabs, 1)
            self.lab_layout.addWidget(self.refusal)
            self.tabs.currentChanged.connect(self.schedule_refresh)
        self.schedule_refresh()

    # ---- state --------------------------------------------------------------------------------
    def state(self) -> Any:  # an instance of the subclass's state_type
        """The lab's current settings (its defaults until first edited)."""
        return self.wb.lab_state(self.state_type)

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is self.state_type:
            self.schedule_refresh()

    def set_setting(self, name: str, value: object) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- controls -----------------------------------------------------------------------------
    def connect_controls(self, controls: W, field: str = "") -> W:
        """Route ``controls``' ``setting(name, value)`` and, if it has one, ``refused(reason)``
        signal to this lab (a refusal prefixed with ``field`` when given); returns ``controls``."""
        controls.setting.connect(self._setting)  # type: ignore[attr-defined]
        refused = getattr(controls, "refused", None)
        if refused is not None:
            if field:
                refused.connect(lambda why: self._box_refused(f"{field}: {why}"))
            else:
                refused.connect(self._box_refused)
        return controls

    def _setting(self, name: str, value: object) -> None:
        if not self.is_updating:
            self.set_setting(name, value)

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
