"""The Real model panel's pages on two texts, made together: "Two texts" (:mod:`.pair_view`),
"Patching" (:mod:`.patch_view`) and "Lens and flow" (:mod:`.lens_view`), with their jobs,
their refresh and their figures, so the panel adds them in a few lines."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QWidget

from attnsim.model.runner import Job
from attnsim.viewmodels.real_heads import PairState

from ..widgets import scrolling
from .lens_view import LENS_JOB, LensPart, LensView
from .pair_view import PAIR_JOB, PairPart, PairView
from .patch_view import PATCH_JOB, PatchPart, PatchView

JOBS = (PAIR_JOB, PATCH_JOB, LENS_JOB)


class TwoTexts:
    """The three pages and the parts that edit and run them."""

    def __init__(self, panel: Any) -> None:
        self.pair_view, self.patch_view, self.lens_view = PairView(), PatchView(), LensView()
        self.pair = PairPart(panel, self.pair_view)
        self.patching = PatchPart(panel, self.patch_view, self.pair.open_head)
        self.lens = LensPart(panel, self.lens_view)
        panel.wb.lab_changed.connect(
            lambda ch: panel.schedule_refresh() if ch.kind is PairState else None
        )
        # each page scrolls in a short dock instead of asking the dock for its whole height
        self.areas: dict[QWidget, QScrollArea] = {
            view: scrolling(view) for view in (self.pair_view, self.patch_view, self.lens_view)
        }
        for area in self.areas.values():  # a page wider than a narrow dock scrolls sideways too
            area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.pages: list[tuple[QWidget, str]] = [
            (self.areas[self.pair_view], "Two texts"),
            (self.areas[self.patch_view], "Patching"),
            (self.areas[self.lens_view], "Lens and flow"),
        ]

    def page_in_tabs(self, page: QWidget) -> QWidget:
        """The tab that holds ``page`` (its scroll area for these pages)."""
        return self.areas.get(page, page)

    def page_of_tab(self, tab: QWidget | None) -> QWidget | None:
        """The page a tab shows: one of these pages for its scroll area, else the tab itself."""
        for view, area in self.areas.items():
            if area is tab:
                return view
        return tab

    def jobs(self) -> list[Job | None]:
        return [self.pair.job, self.patching.job, self.lens.job]

    def refresh(self) -> None:
        for part in (self.pair, self.patching, self.lens):
            part.refresh()

    def figure_parts(self, page: QWidget) -> list[QWidget] | None:
        """What a figure of ``page`` shows (None: not one of these pages)."""
        if page is self.pair_view:
            return [page.note, page.grid, page.plot]
        if page is self.patch_view:
            return [page.note, page.heads, page.resid]
        if page is self.lens_view:
            return [page.note, page.table, page.by_layer, page.flow]
        return None
