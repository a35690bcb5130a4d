"""The induction-head lab's training: an InductionTrainer stepped in chunks on the workbench's
background runner, with Play / Pause / Step / Reset and the curves the lab draws.

Training state is not scenario state: not undoable, not saved. The trainer is touched only by
the one chunk in flight; between chunks the GUI thread reads :attr:`params`, a copy the chunk
handed back, so drawing never races the optimiser. QtCore only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import QObject, Signal

from attnsim.engine.induction import Array, InductionTrainer, forward, one_blas_thread
from attnsim.engine.induction_circuits import half_losses, head_scores
from attnsim.viewmodels.induction_lab import BOS, InductionLabState, best_induction, eval_tokens

from .runner import Job

RunFn = Callable[..., Job]

TRAIN_JOB = "induction_lab.train"
RECORD_EVERY = 10  # steps between two points of the curves
CHUNK_S = 0.4  # a chunk returns after about this long, so Pause answers quickly


@dataclass(frozen=True)
class CurvePoint:
    """The model after ``step`` updates, measured on the fixed evaluation batch (no ablation)."""

    step: int
    first_loss: float
    repeated_loss: float
    best_induction: float
    best_previous: float


@dataclass(frozen=True)
class _Chunk:
    trainer: InductionTrainer
    params: dict[str, Array]
    points: tuple[CurvePoint, ...]
    steps: int
    seconds: float
    generation: int  # which submit made it: a chunk from before a reset is not shown
    budgeted: bool  # Step's chunk (counts against the steps asked for) or Play's
    measured: tuple[object, object] | None = None  # (key, what the measurer made of params)


# One BLAS thread for the whole process once the lab trains: small products run faster on one,
# and changing OpenBLAS's (process-wide) thread count around each chunk, from the worker, while
# the GUI thread may be inside a BLAS call, is not safe. Set on the GUI thread, never undone.
_PROCESS_BLAS_LIMIT: list[object] = []


# While a chunk trains, the window thread takes the interpreter lock back from the training
# thread several times a frame (every call into Qt lets go of it), and waits up to the switch
# interval each time: 5 ms by default, most of a 60-a-second frame. Measured with the lab
# training at 1,400 x 950 (induction_repaint_training, three pairs on a loaded machine): the
# frame's p95 14, 14 and 49 ms with 1 ms against 84, 42 and 42 with 5 ms, and no fewer steps
# trained. Set once the lab trains, process-wide, never undone (as the BLAS limit).
SWITCH_INTERVAL_S = 0.001


def _pin_one_blas_thread() -> None:
    if not _PROCESS_BLAS_LIMIT:
        _PROCESS_BLAS_LIMIT.append(one_blas_thread())
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)


def measure(trainer: InductionTrainer, tokens: np.ndarray) -> CurvePoint:
    tr = forward(trainer.params, tokens)
    first, rep = half_losses(tr, trainer.half_len)
    scores = head_scores(tr, trainer.half_len)
    return CurvePoint(
        trainer.step_count, first, rep, best_induction(scores.induction),
        float(scores.previous_token.max()),
    )  # fmt: skip


def _chunk_job(
    trainer: InductionTrainer,
    tokens: np.ndarray,
    max_steps: int,
    generation: int,
    budgeted: bool,
    measurer: tuple[object, Callable[[dict[str, Array]], object]] | None = None,
):
    def work(progress, cancelled) -> _Chunk:
        started = time.perf_counter()
        points, done = [], 0
        while done < max_steps and not cancelled():
            trainer.step()
            done += 1
            if trainer.step_count % RECORD_EVERY == 0:
                points.append(measure(trainer, tokens))
            if time.perf_counter() - started > CHUNK_S:
                break
        params = {k: v.copy() for k, v in trainer.params.items()}
        seconds = time.perf_counter() - started
        measured = None
        if measurer is not None and not cancelled():
            key, fn = measurer
            measured = (key, fn(params))
        return _Chunk(trainer, params, tuple(points), done, seconds, generation, budgeted, measured)

    return work


class InductionSession(QObject):
    """Continuous or step-wise training of the lab's model, off the GUI thread.

    Signals
    -------
    updated()
        New weights and curve points arrived (after each chunk) or the model was reset.
    running_changed(bool)
        Play / Pause.
    failed(str)
        A chunk raised; training paused.
    """

    updated = Signal()
    running_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, run: RunFn, parent: QObject | None = None) -> None:
        """``run(fn, key=...)`` starts a job: the workbench's ``wb.run``, or a runner's submit."""
        super().__init__(parent)
        self._run = run
        self._playing = False
        self._job: Job | None = None
        self._pending_steps = 0
        self._generation = 0
        self.steps_per_s = 0.0
        self.version = 0  # grows with every change of the weights (a reset too)
        self._measurer: tuple[object, Callable[[dict[str, Array]], object]] | None = None
        # (version, key, value): the measurer's result on the weights of that version
        self.measured: tuple[int, object, object] | None = None
        self.configure(InductionLabState(), force=True)

    # ---- state ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._playing

    @property
    def busy(self) -> bool:
        """A chunk is in flight."""
        return self._job is not None

    @property
    def step_count(self) -> int:
        return self._steps

    def configure(self, state: InductionLabState, *, force: bool = False) -> None:
        """Train the model ``state`` describes; a new shape, seed or rate resets training."""
        key = state.training_key()
        if not force and key == self._key:
            return
        # the session trains the "train" model whatever preset is on show
        self._key, self._state = key, replace(state, preset="train")
        self.reset()

    def reset(self) -> None:
        """Back to the seed's initial weights (bit for bit) and empty curves; keeps playing."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        s = self._state
        self._trainer = InductionTrainer(
            s.config(), seed=s.seed, lr=s.lr, half_len=s.half_len, bos=BOS
        )
        self._tokens = eval_tokens(s)
        self.params = {k: v.copy() for k, v in self._trainer.params.items()}
        self.curve: list[CurvePoint] = [measure(self._trainer, self._tokens)]
        self.version += 1
        self._steps = 0
        self._pending_steps = 0
        self.steps_per_s = 0.0
        self.updated.emit()
        if self._playing:
            self._submit()

    def measure_with(self, key: object, fn: Callable[[dict[str, Array]], object] | None) -> None:
        """Have each chunk end by measuring its weights with ``fn`` (a module-level function
        of the weights alone) on the worker, so that the GUI thread only draws: the result,
        tagged ``key``, is :attr:`measured` with the weights' version. None stops it."""
        self._measurer = None if fn is None else (key, fn)

    # ---- controls ---------------------------------------------------------------------------
    def play(self) -> None:
        if self._playing:
            return
        self._playing = True
        self.running_changed.emit(True)
        if self._job is None:
            self._submit()

    def pause(self) -> None:
        """Stop after the chunk in flight (its steps are kept)."""
        if not self._playing:
            return
        self._playing = False
        self._pending_steps = 0
        self.running_changed.emit(False)

    def step(self, n: int = RECORD_EVERY) -> None:
        """Train ``n`` more steps in the background (queued behind a chunk in flight)."""
        if n < 1:
            raise ValueError(f"steps must be at least 1, got {n}")
        if self._playing:
            return
        self._pending_steps += n
        if self._job is None and not self._playing:
            self._submit()

    def _submit(self) -> None:
        _pin_one_blas_thread()
        budgeted = not self._playing
        budget = self._pending_steps if budgeted else 10**9
        self._generation += 1
        work = _chunk_job(
            self._trainer, self._tokens, budget, self._generation, budgeted, self._measurer
        )
        job = self._run(work, key=TRAIN_JOB)
        self._job = job
        # bound methods, not lambdas holding the job: PySide cannot collect a job whose own
        # connection refers back to it, and every chunk (weights, trainer) would stay alive
        job.finished.connect(self._chunk_done)
        job.failed.connect(self._chunk_failed)

    def _chunk_done(self, chunk: _Chunk) -> None:
        if self._job is None or chunk.generation != self._generation:
            return  # a reset or a newer chunk replaced it meanwhile
        if chunk.trainer is not self._trainer:
            return
        # dropping it mid-emit is safe: the runner keeps every job until after its delivery
        self._job = None
        self.params = chunk.params
        self.version += 1
        if chunk.measured is not None:
            self.measured = (self.version, *chunk.measured)
        self._steps = chunk.trainer.step_count
        self.curve.extend(chunk.points)
        if chunk.seconds > 0:
            self.steps_per_s = chunk.steps / chunk.seconds
        if chunk.budgeted:
            self._pending_steps = max(0, self._pending_steps - chunk.steps)
        self.updated.emit()
        if self._playing or self._pending_steps:
            self._submit()

    def _chunk_failed(self, error: str) -> None:
        # cancelled and superseded jobs never report: a failure is the chunk in flight's
        if self._job is None:
            return
        self._job = None
        self._pending_steps = 0
        self.pause()
        self.failed.emit(error)

    def wait(self, timeout_s: float = 60.0) -> None:
        """Block until the chunk in flight is delivered (tests and export; never the GUI)."""
        job = self._job
        if job is not None and job.wait(timeout_s):
            job.deliver()

    def close(self) -> None:
        self.pause()
        if self._job is not None:
            self._job.cancel()
            self._job = None
