"""File ▸ Record for an animation / Stop recording: the workbench's states while the user drags
and types (one after every change: each mouse move of a drag is a frame), kept for File ▸ Export
animation…, which renders the chosen panel at each of them.

The recorder only listens to the workbench's signals and keeps the (frozen) states it reports;
it pushes nothing and reads no panel.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from attnsim.export.history import MAX_HISTORY_FRAMES, HistoryReplay, State
from attnsim.model.workbench import LabChange, Workbench

__all__ = ["Recorder"]


class Recorder(QObject):
    """Records ``wb``'s states between :meth:`start` and :meth:`stop`.

    ``full`` is emitted once when :data:`MAX_HISTORY_FRAMES` states are kept (recording stops).
    """

    full = Signal()

    def __init__(self, wb: Workbench, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.wb = wb
        self.recording = False
        self._frames: list[tuple[object, dict[type, object], str]] = []

    @property
    def frames(self) -> int:
        return len(self._frames)

    def start(self) -> None:
        """Forget any earlier recording and keep the state now as the first frame."""
        self._frames = [(self.wb.scenario, {}, "start of the recording")]
        if not self.recording:
            self.wb.changed.connect(self._changed)
            self.wb.lab_changed.connect(self._lab_changed)
        self.recording = True

    def stop(self) -> None:
        if self.recording:
            self.wb.changed.disconnect(self._changed)
            self.wb.lab_changed.disconnect(self._lab_changed)
        self.recording = False

    def replay(self) -> HistoryReplay | None:
        """The recorded frames as a replay (None with fewer than two)."""
        if len(self._frames) < 2:
            return None
        kinds = {k for _, labs, _ in self._frames for k in labs}
        states = [
            State(sc, tuple((k, labs[k]) for k in kinds), caption)  # type: ignore[arg-type]
            for sc, labs, caption in self._frames
        ]
        return HistoryReplay(tuple(states))

    # ---- the workbench's signals --------------------------------------------------------------
    def _caption(self) -> str:
        last = self.wb.last_edit()
        return f"“{last.text}”" if last is not None else ""

    def _keep(self, labs: dict[type, object]) -> None:
        if len(self._frames) >= MAX_HISTORY_FRAMES:
            self.stop()
            self.full.emit()
            return
        # The change is signalled while its step is being pushed: the stack names it just after.
        self._frames.append((self.wb.scenario, labs, ""))
        QTimer.singleShot(0, self, self._name_frames)

    def _name_frames(self) -> None:
        caption = self._caption()
        self._frames = [(sc, labs, text or caption) for sc, labs, text in self._frames]

    def _changed(self, _what: object) -> None:
        self._keep(dict(self._frames[-1][1]))

    def _lab_changed(self, change: LabChange) -> None:
        if all(change.kind not in labs for _, labs, _ in self._frames):
            for _, labs, _ in self._frames:  # the frames before knew it as it was
                labs[change.kind] = change.before
        labs = dict(self._frames[-1][1])
        labs[change.kind] = change.after
        self._keep(labs)
