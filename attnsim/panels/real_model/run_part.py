"""What the Real model panel's pages share: one background model run at a time, with progress
and Cancel, its result handed to the page and its error shown on the panel's refusal line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject

from attnsim.model.runner import Job
from attnsim.viewmodels.real_model import missing_files


class RunPart(QObject):
    """A page's runs (owned by the panel). ``view`` has ``cancel_clicked``, ``note`` and
    ``show_running(running, fraction=0.0)``; a subclass keeps the result in :meth:`received`
    and redraws in ``refresh``."""

    def __init__(self, panel: Any, view: Any) -> None:
        super().__init__(panel)
        self.panel, self.view = panel, view
        self.job: Job | None = None
        view.cancel_clicked.connect(self.cancel)

    def start_run(self, model: str, work: Callable[..., object], key: str, note: str) -> bool:
        """Run ``work(progress, cancelled)`` on the workbench's runner (False, and the missing
        files named, when ``model`` is not installed)."""
        missing = missing_files(model)
        if missing:
            self.panel.show_refusal(missing)
            return False
        job = self.job = self.panel.wb.run(work, key=key)
        job.progress.connect(lambda f: self.view.show_running(True, f))
        job.finished.connect(self._done)
        job.failed.connect(self._failed)
        self.view.show_running(True)
        self.view.note.setText(note)
        return True

    @property
    def busy(self) -> bool:
        return self.job is not None and not self.job.done

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
        self.job = None
        self.view.show_running(False)
        self.refresh()

    def received(self, result: Any) -> None:  # pragma: no cover - every page overrides it
        raise NotImplementedError

    def refresh(self) -> None:  # pragma: no cover - every page overrides it
        raise NotImplementedError

    def _done(self, result: object) -> None:
        self.job = None
        self.received(result)
        self.view.show_running(False)
        self.panel.clear_refusal()
        self.refresh()

    def _failed(self, error: str) -> None:
        self.job = None
        self.view.show_running(False)
        self.panel.show_refusal(error)
