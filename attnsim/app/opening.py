"""Opening a large scenario file while the window keeps answering: the file is read in a child
process (:mod:`attnsim.engine.scenario.read_apart`), and the scenario arrives when it is read.

Files under :data:`LARGE_FILE_BYTES` are read at once, in the window's process, as before: a
child process costs a quarter of a second to start.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QProcess, QProcessEnvironment, Signal
from PySide6.QtGui import QGuiApplication

from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.engine.scenario.read_apart import take

if TYPE_CHECKING:
    from attnsim.model.runner import Job

__all__ = [
    "LARGE_FILE_BYTES",
    "LARGE_PASTE_CHARS",
    "LARGE_SAVE_NUMBERS",
    "ApartReader",
    "LargeFiles",
    "is_large_file",
    "scenario_numbers",
]

# 8 MiB of JSON is about 330,000 numbers (say 1,024 tokens of 320): read in a tenth of a second
LARGE_FILE_BYTES = 8 * 2**20
# A scenario of this many numbers is saved in the background (written in about a tenth of a
# second; 4,096 tokens of 1,024 numbers took 4 s of the window's thread)
LARGE_SAVE_NUMBERS = 300_000
# A pasted text this long is read in a child process, as a large file is
LARGE_PASTE_CHARS = LARGE_FILE_BYTES


def scenario_numbers(sc: Scenario) -> int:
    """How many numbers the scenario's file holds (its matrices' and vectors' entries)."""
    arrays = [sc.X, sc.Q, sc.K, sc.V, sc.Wo, *sc.wq_presets.values(), *sc.absent.values()]
    arrays += [W for h in sc.heads for W in (h.Wq, h.Wk, h.Wv)]
    if not isinstance(sc.mask, str):
        arrays.append(sc.mask)
    return sum(int(np.asarray(a).size) for a in arrays if a is not None)


def is_large_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file large enough to be read in a child process."""
    try:
        p = Path(path)
        return p.is_file() and p.stat().st_size >= LARGE_FILE_BYTES
    except OSError:
        return False


class ApartReader(QObject):
    """Reads one scenario file at a time in a child process; a new file supersedes the one
    being read. ``read(scenario, path)`` or ``refused(words, path)`` when it is done."""

    read = Signal(object, object)
    refused = Signal(str, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._folder: Path | None = None  # the running read's, removed when it is done
        self._proc: QProcess | None = None
        self._path: Path | None = None

    @property
    def reading(self) -> Path | None:
        """The file being read, or None."""
        return self._path if self._proc is not None else None

    def start(self, path: str | Path) -> None:
        self.cancel()
        path = Path(path)
        self._folder = Path(tempfile.mkdtemp(prefix="attnsim-open-"))
        out = self._folder / "scenario.pickle"
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        # the child imports this same attnsim, however this process found it
        env.insert("PYTHONPATH", os.pathsep.join(p for p in sys.path if p and Path(p).is_dir()))
        proc.setProcessEnvironment(env)
        proc.setProgram(sys.executable)
        proc.setArguments(["-m", "attnsim.engine.scenario.read_apart", str(path), str(out)])
        proc.finished.connect(lambda code, status: self._finished(proc, path, out, code, status))
        proc.errorOccurred.connect(lambda error: self._failed_to_start(proc, path, error))
        self._proc, self._path = proc, path
        proc.start()

    def cancel(self) -> None:
        """Stop reading (a newer file, or the window closing): nothing will arrive."""
        proc, self._proc, self._path = self._proc, None, None
        if proc is not None:
            proc.kill()
            proc.waitForFinished(1000)
            proc.deleteLater()
        self._remove_folder()

    def _remove_folder(self) -> None:
        folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def _failed_to_start(self, proc: QProcess, path: Path, error: QProcess.ProcessError) -> None:
        if proc is self._proc and error == QProcess.ProcessError.FailedToStart:
            self._proc = None
            proc.deleteLater()
            self._remove_folder()
            self._read_here(path)

    def _finished(self, proc: QProcess, path: Path, out: Path, code: int, status) -> None:
        if proc is not self._proc:
            return  # superseded or cancelled
        self._proc = None
        lines = bytes(proc.readAllStandardOutput().data()).decode("utf-8", "replace").splitlines()
        proc.deleteLater()
        answer = _last_json(lines)
        try:  # the scenario taken and the child's folder gone before anyone hears of it
            sc = take(out, str(path)) if answer.get("ok") and out.exists() else None
        except ScenarioError as exc:
            answer, sc = {"refused": str(exc)}, None
        finally:
            self._remove_folder()
        if "refused" in answer:
            self.refused.emit(str(answer["refused"]), path)
        elif sc is not None:
            self.read.emit(sc, path)
        else:  # the child stopped (killed, out of memory): read it here after all
            self._read_here(path)

    def _read_here(self, path: Path) -> None:
        try:
            sc = Scenario.load(path)
        except ScenarioError as exc:
            self.refused.emit(str(exc), path)
            return
        self.read.emit(sc, path)


def _last_json(lines: list[str]) -> dict:
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return {}


class LargeFiles:
    """A window's large scenario files, opened and saved without stopping it: the file is read
    in a child process (:class:`ApartReader`), a scenario written on the workbench's runner. A
    long pasted text is read in a child process too, and a large scenario's JSON for the
    clipboard is made on the runner."""

    def __init__(self, win: Any) -> None:
        self.win = win  # the MainWindow (its documents' methods: open_scenario, _saved, ...)
        self.reader: ApartReader | None = None
        self.paster: ApartReader | None = None  # a long pasted text's reader
        self._paste_file: Path | None = None  # the text kept for it, removed once read
        self._paste_opened = 0  # wb.documents_opened when the paste began

    def _new_reader(self, read: Any, refused: Any) -> ApartReader:
        """A reader of the window's, cancelled when the application quits."""
        reader = ApartReader(self.win)
        reader.read.connect(read)
        reader.refused.connect(refused)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(reader.cancel)
        return reader

    def open(self, path: Path) -> None:
        if self.reader is None:
            self.reader = self._new_reader(self._read, self._refused)
        self.reader.start(path)
        mb = path.stat().st_size / 1e6
        self.win.statusBar().showMessage(
            f"Opening {path.name} ({mb:,.0f} MB) … you can keep working on what is on screen."
        )

    def _read(self, sc: Scenario, path: Path) -> None:
        win = self.win
        win.statusBar().clearMessage()
        if not win.maybe_discard():
            return
        win.open_scenario(sc, path)
        win.statusBar().showMessage(f"Opened {path}", 5000)

    def _refused(self, words: str, _path: Path) -> None:
        self.win.statusBar().clearMessage()
        self.win._tell("Cannot open scenario", words)

    def save(self, sc: Scenario, path: Path) -> None:
        """Write ``sc`` to ``path`` on the runner. The scenario is immutable: it is written as
        it was when Save was chosen, and an edit made meanwhile keeps the document changed."""
        win, wb = self.win, self.win.wb
        index, opened = wb.undo_stack.index(), wb.documents_opened

        def done(_result: object) -> None:
            if wb.undo_stack.index() == index and wb.documents_opened == opened:
                win._saved(path)
            else:
                win._add_recent(path)
                win.statusBar().showMessage(
                    f"Saved {path} as it was when you chose Save; the edits since are not "
                    "saved yet.", 10000
                )  # fmt: skip

        self._in_background("save", f"Saving {path.name}", lambda: sc.save(path), done,
                            "Cannot save", f"{path}: ")  # fmt: skip

    def copy(self, sc: Scenario) -> None:
        """Put ``sc`` on the clipboard as JSON, its text made on the runner (4,096 tokens of
        1,024 numbers took the window 4 s); the clipboard gets it when it is ready."""
        win = self.win

        def done(text: str) -> None:
            QGuiApplication.clipboard().setText(text)
            win.statusBar().showMessage(
                f"Scenario copied as JSON ({len(text) / 1e6:,.0f} MB of text)", 5000
            )

        self._in_background("copy", "Copying the scenario as JSON", sc.dumps, done,
                            "Cannot copy scenario")  # fmt: skip

    def paste(self, text: str) -> None:
        """Read the scenario in ``text`` (the clipboard's) in a child process, as a large file
        is read: 100 MB of JSON took the window 3 s, and parsed on a thread it would still
        hold Python's lock for about a second. It replaces the scenario, as one undoable edit,
        once it is read; if another document was opened meanwhile, it is not pasted into it."""
        win = self.win
        if self.paster is None:
            self.paster = self._new_reader(self._pasted, self._paste_refused)
        self.paster.cancel()
        self._drop_paste_file()
        path = Path(tempfile.mkdtemp(prefix="attnsim-paste-")) / "clipboard.json"
        self._paste_file, self._paste_opened = path, win.wb.documents_opened

        def kept(_result: object) -> None:  # the text is in its file: the child reads it
            if self._paste_file == path:  # not superseded by a newer paste meanwhile
                self.paster.start(path)  # type: ignore[union-attr]

        # written on the runner: 100 MB took the window's thread half a second
        doing = f"Reading the scenario on the clipboard ({len(text) / 1e6:,.0f} MB)"
        job = self._in_background("paste", doing, lambda: path.write_text(text, encoding="utf-8"),
                                  kept, "Cannot paste scenario",
                                  "The clipboard's text could not be kept: ")  # fmt: skip
        job.failed.connect(lambda _error: self._drop_paste_file())

    def _pasted(self, sc: Scenario, _path: Path) -> None:
        win = self.win
        self._drop_paste_file()
        if win.wb.documents_opened != self._paste_opened:
            win.statusBar().showMessage(
                "The scenario on the clipboard was read after another document was opened: "
                "it was not pasted.", 10000
            )  # fmt: skip
            return
        win.statusBar().clearMessage()
        win.wb.edit(sc, f"Paste scenario {sc.name}")

    def _paste_refused(self, words: str, path: Path) -> None:
        self._drop_paste_file()
        self.win.statusBar().clearMessage()
        # the reason names the text as the clipboard, not the file it was kept in meanwhile
        self.win._tell("Cannot paste scenario", words.replace(str(path), "clipboard"))

    def _drop_paste_file(self) -> None:
        path, self._paste_file = self._paste_file, None
        if path is not None:
            shutil.rmtree(path.parent, ignore_errors=True)

    def _in_background(self, key: str, doing: str, work: Any, done: Any, refusal: str,
                       about: str = "") -> Job:  # fmt: skip
        """Run ``work()`` on the workbench's runner, saying ``doing`` meanwhile; ``done`` gets
        its result on the window's thread, and a failure is told under the title ``refusal``
        (``about`` before its reason)."""
        win = self.win
        win.statusBar().showMessage(f"{doing} … you can keep working.")
        job = win.wb.runner.submit(lambda _progress, _cancelled: work(), key=(key,))

        def failed(error: str) -> None:
            win.statusBar().clearMessage()
            win._tell(refusal, f"{about}{error}")

        job.finished.connect(done)
        job.failed.connect(failed)
        return job
