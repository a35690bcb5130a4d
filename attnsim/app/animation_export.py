"""File ▸ Export animation…: the chosen panel drawn at every step of a sweep, written in the
background, with progress and a Cancel button.

Widgets paint only on the GUI thread, so the frames are drawn there, one per turn of the event
loop (the window stays responsive between them), from a private copy of the workbench (see
:mod:`attnsim.export.frames`: the user's undo stack is never touched). The encoder runs as a
job on a runner of its own (:class:`~attnsim.model.runner.Runner`, the machinery of
``wb.run``): the workbench's runner has one thread, and a minute-long export there would hold
up the labs' work (the induction lab's training, the scaling lab's experiment) until it ended.
The encoder takes the frames from a short queue as they come; a cancel stops both and the
half-written file is removed.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget

from attnsim.export.animation import animation_exporter
from attnsim.model.runner import Runner

if TYPE_CHECKING:
    from attnsim.model.workbench import Workbench

    from .animation_dialog import AnimationChoice
    from .window import MainWindow

__all__ = ["AnimationExport", "export_animation_dialog", "start_export", "toggle_recording"]

JOB_KEY = "animation export"
QUEUED = 4  # frames drawn ahead of the encoder at most


class AnimationExport(QObject):
    """One animation export under way. ``progress(fraction)`` as frames are drawn;
    ``done(ok, sentence)`` once the file is written, failed or cancelled."""

    progress = Signal(float)
    done = Signal(bool, str)

    def __init__(self, wb: Workbench, choice: AnimationChoice, path: Path,
                 parent: QObject | None = None, *,
                 like: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        from attnsim.export.frames import FrameRenderer, frame_plan, sweep_frames

        self.path = Path(path)
        self.choice = choice
        self.exp = animation_exporter(choice.fmt)
        self.drawn = 0
        self.finished = False
        self.renderer = FrameRenderer(wb, choice.panel_id, choice.size, like=like)
        try:
            plan = frame_plan(self.renderer, choice.sweep)
        except ValueError:
            self.renderer.close()
            raise
        self.total = len(plan)
        self._frames = sweep_frames(self.renderer, choice.sweep, caption=choice.caption,
                                    plan=plan)  # fmt: skip
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=QUEUED)
        # Not a child: a window deleted mid-export must not wait in the pool's destructor for
        # an encoder that waits for frames; the timer going (with the window) stops the encoder.
        self.runner = Runner(None)
        self._gone = threading.Event()
        self.job = self.runner.submit(self._encode, key=JOB_KEY)
        self.job.finished.connect(self._written)
        self.job.failed.connect(self._failed)
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._draw_one)
        gone = self._gone
        self._timer.destroyed.connect(lambda *_: gone.set())  # sets an event, touches nothing
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.cancel)
        self._timer.start()

    # ---- the encoder, on the workbench's thread pool -------------------------------------------
    def _encode(self, progress, cancelled) -> int:
        def stopped() -> bool:
            return cancelled() or self._gone.is_set()

        def frames() -> Iterator[np.ndarray]:
            while not stopped():
                try:
                    frame = self._queue.get(timeout=0.1)
                except queue.Empty:
                    continue
                if frame is None:
                    return
                yield frame

        c = self.choice
        return self.exp.write(frames(), self.path, fps=c.fps, hold=c.hold, cancelled=stopped)

    # ---- the frames, on the GUI thread -------------------------------------------------------
    def _draw_one(self) -> None:
        if self._queue.full():
            return  # the encoder is behind: try again on the next turn
        try:
            frame = next(self._frames, None)
        except (ValueError, OSError) as exc:
            self.cancel()
            self._end(False, f"The animation was not written: {exc}")
            return
        if frame is None:
            self._timer.stop()
            self._queue.put(None)
            self._release()
            return
        self._queue.put(frame)
        self.drawn += 1
        self.progress.emit(self.drawn / self.total)

    def cancel(self) -> None:
        """Stop drawing and encoding; the partial file is removed."""
        if self.finished:
            return
        self._timer.stop()
        self.job.cancel()
        self._release()
        self._end(False, "The animation export was cancelled; no file was written.")

    def _release(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None  # type: ignore[assignment]

    def _failed(self, why: str) -> None:
        self._end(False, f"The animation was not written: {why}")

    def _written(self, count: int) -> None:
        seconds = count / self.choice.fps + self.choice.hold
        self._end(True, f"Wrote an animation of {count} frames ({seconds:.1f} s) to {self.path}")

    def _end(self, ok: bool, sentence: str) -> None:
        if self.finished:
            return
        self.finished = True
        self._timer.stop()
        self._release()
        self.runner.shutdown()  # the encoder has returned, or stops at its next frame
        self.done.emit(ok, sentence)


def export_animation_dialog(win: MainWindow) -> AnimationExport | None:
    """Ask what to animate and where, then export it with a progress dialog."""
    from attnsim.export.history import HistoryReplay

    from .animation_dialog import AnimationDialog

    try:
        history = HistoryReplay.of(win.wb)
    except ValueError:  # no step to replay yet
        history = None
    recorder = getattr(win, "_recorder", None)
    recording = recorder.replay() if recorder is not None else None
    dialog = AnimationDialog(win.export_candidates(), win.default_export_panel(), win.wb.scenario,
                             win, history=history, recording=recording)  # fmt: skip
    try:
        accepted = dialog.exec() == dialog.DialogCode.Accepted
        choice = dialog.choice() if accepted else None
    finally:
        dialog.deleteLater()
    if choice is None:
        return None
    exp = animation_exporter(choice.fmt)
    path, _ = QFileDialog.getSaveFileName(
        win, "Export animation", f"{choice.panel_id}-{choice.sweep.quantity}{exp.suffix}",
        f"{exp.label} (*{' *'.join(exp.suffixes)})",
    )  # fmt: skip
    if not path:
        return None
    if Path(path).suffix.lower() not in exp.suffixes:
        path += exp.suffix
    return start_export(win, choice, Path(path))


def start_export(win: MainWindow, choice: AnimationChoice, path: Path) -> AnimationExport | None:
    """Start exporting ``choice`` to ``path`` with a progress dialog that can cancel it."""
    try:
        # the panel on screen, when built: the frames show what it shows (its view, its tab)
        like = win.panels.built().get(choice.panel_id)
        export = AnimationExport(win.wb, choice, path, win, like=like)
    except ValueError as exc:  # the panel has nothing to draw for this scenario
        win._tell("Export failed", f"The animation was not written: {exc}")
        return None
    bar = QProgressDialog("Drawing the frames of the animation…", "Cancel", 0, 1000, win)
    bar.setWindowTitle("Export animation")
    bar.setWindowModality(Qt.WindowModality.WindowModal)
    bar.setMinimumDuration(0)
    bar.setAutoClose(False)  # it stays up, saying so, while the file is written
    bar.setAutoReset(False)
    bar.canceled.connect(export.cancel)

    def advanced(fraction: float) -> None:
        bar.setValue(round(1000 * fraction))
        if fraction >= 1.0:
            bar.setLabelText("Writing the animation file…")

    def ended(ok: bool, sentence: str) -> None:
        bar.canceled.disconnect(export.cancel)
        bar.close()
        bar.deleteLater()
        win.statusBar().showMessage(sentence, 8000)
        if not ok and "cancelled" not in sentence:
            win._tell("Export failed", sentence)
        export.deleteLater()

    export.progress.connect(advanced)
    export.done.connect(ended)
    win._animation_export = export  # kept (and reachable by tests) while it runs
    return export


def toggle_recording(win: MainWindow) -> None:
    """Start recording the workbench's states, or stop and say how many frames were kept."""
    from .recording import Recorder

    recorder = getattr(win, "_recorder", None)
    if recorder is None:
        recorder = Recorder(win.wb, win)
        recorder.full.connect(lambda: _recording_stopped(win, recorder, full=True))
        win._recorder = recorder
    if recorder.recording:
        recorder.stop()
        _recording_stopped(win, recorder)
        return
    recorder.start()
    _record_text(win, "Stop recor&ding")
    win.statusBar().showMessage(
        "Recording: every change is a frame. Stop it from the File menu, then export it "
        "with File ▸ Export animation…", 8000)  # fmt: skip


def _recording_stopped(win: MainWindow, recorder, *, full: bool = False) -> None:
    _record_text(win, "Recor&d for an animation")
    why = "The recording is full. " if full else ""
    win.statusBar().showMessage(
        f"{why}Recorded {recorder.frames} frames: File ▸ Export animation… renders them.", 8000
    )


def _record_text(win: MainWindow, text: str) -> None:
    action = getattr(win, "record_action", None)
    if action is not None:
        action.setText(text)
