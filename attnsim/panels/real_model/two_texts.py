"""The Real model panel's pages on two texts, made together: "Two texts" (:mod:`.pair_view`),
"Patching" (:mod:`.patch_view`) and "Lens and flow" (:mod:`.lens_view`), with their jobs,
their refresh and their figures, so the panel adds them in a few lines."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget

from attnsim.model.runner import Job
from attnsim.viewmodels.real_heads import PairState

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
        self.pages: list[tuple[QWidget, str]] = [
            (self.pair_view, "Two texts"),
            (self.patch_view, "Patching"),
            (self.lens_view, "Lens and flow"),
        ]

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
            return [page.note, page.table, page.flow]
        return None
