"""The "Kernel stepper" lab: the tiled online-softmax kernel walked one key block at a time on
the current scenario, its result beside the reference ``attention()``, the memory each holds,
and (second part) measured forward time and analytic memory of plain, tiled and linear attention
as n grows.

Every number comes from the engine: :func:`~attnsim.engine.kernels.tiled_attention` with its
trace (m, l, the rescale factor and the accumulator per row after each tile),
:func:`~attnsim.engine.attention.attention` as the reference,
:func:`~attnsim.engine.kernels.peak_memory`, and :mod:`attnsim.engine.kernel_scaling`. This
module picks the step to show, clamps the lab's settings to the scenario and writes the words.

The settings are one frozen dataclass, :class:`KernelLabState`, held by the workbench
(undoable); :data:`SETTINGS` declares them, and its check refuses a bad one naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.attention import HeadTrace, attention
from attnsim.engine.kernel_scaling import (
    D_MAX,
    METHODS,
    N_MAX,
    N_MIN,
    REPEATS_MAX,
    ScalingResult,
    scaling_sizes,
)
from attnsim.engine.kernels import PeakMemory, TiledTrace, peak_memory, tiled_block_trace
from attnsim.engine.numbers import fmt_number, fmt_significant
from attnsim.engine.settings import LabSettings, Setting

Array = NDArray[np.float64]

__all__ = [
    "BLOCK_MAX",
    "METHOD_NAMES",
    "N_CHOICES",
    "ROWS_SHOWN",
    "SETTINGS",
    "KernelLabState",
    "KernelRun",
    "RowStep",
    "ScalingShown",
    "StepperData",
    "fmt_floats",
    "kernel_run",
    "log_ticks",
    "moved",
    "scaling_shown",
    "skipped_runs",
    "stepper_data",
    "table_rows",
]

BLOCK_MAX = 256  # a block this tall already covers any scenario the app draws
ROWS_SHOWN = 12  # rows of the m / l / accumulator table; a taller block says how many more
N_CHOICES = tuple(scaling_sizes(N_MAX, 2 * N_MIN))  # the largest n of the scaling run
METHOD_NAMES = {"plain": "plain (n × n scores)", "tiled": "tiled (online softmax)",
                "linear": "linear (running memory)"}  # fmt: skip


@dataclass(frozen=True)
class KernelLabState:
    """The lab's settings.

    Stepper: tiles of ``block_q`` query rows by ``block_k`` keys; the query block ``q_block``
    (0-based) has had ``step`` of its key blocks folded in (0: none yet; the number of key
    blocks: done). ``q_block`` and ``step`` are clamped to the scenario when drawn, since the
    scenario can shrink under them. Scaling: n runs from 64 doubling to ``n_max``, each forward
    pass timed ``repeats`` times on random inputs of width ``d``.
    """

    block_q: int = 2
    block_k: int = 2
    q_block: int = 0
    step: int = 0
    n_max: int = 2048
    repeats: int = 3
    d: int = 64


def _from_the_start(st: KernelLabState) -> KernelLabState:
    return replace(st, step=0)  # a new query block starts with nothing seen


# q_block and step are clamped to the scenario when drawn; here they only have to lie in their
# outer bounds.
SETTINGS = LabSettings("Kernel stepper", KernelLabState, (
    Setting("block_q", "block_q", lo=1, hi=BLOCK_MAX,
            tip="Query rows per tile (need not divide n)"),
    Setting("block_k", "block_k", lo=1, hi=BLOCK_MAX, tip="Keys per tile (need not divide n)"),
    Setting("q_block", "query block", offset=1, then=_from_the_start,
            tip="Which block of query rows the kernel walks"),
    Setting("step", "step"),
    Setting("n_max", "largest n", "choice", choices=N_CHOICES,
            tip="n runs from 64, doubling, up to this"),
    Setting("repeats", "repeats", lo=1, hi=REPEATS_MAX,
            tip="Runs per size and method; the plot shows their median"),
    Setting("d", "d", lo=1, hi=D_MAX, tip="Width of q, k and v"),
))  # fmt: skip


# ---- the stepper --------------------------------------------------------------------------------
def _no_runs() -> NDArray[np.intp]:
    return np.zeros((0, 3), dtype=np.intp)


@dataclass(frozen=True, eq=False)
class KernelRun:
    """The kernel on one head: its ``trace`` and output beside the reference ``attention()``
    output; ``message`` is non-empty (and the arrays empty) when the engine refused."""

    message: str
    trace: TiledTrace | None
    reference: Array
    max_diff: float
    # (tile row, first, one past the last) of each run of tiles the mask skips, (k, 3): the
    # tiles' overlay, found once per tiling (on the runner for a large head), not at the paint
    skipped_runs: NDArray[np.intp] = field(default_factory=_no_runs)


def kernel_run(head: HeadTrace, block_q: int, block_k: int, q_block: int = 0) -> KernelRun:
    """``tiled_block_trace`` of query block ``q_block`` (clamped to the blocks there are) and
    ``attention`` on the head's Q, K, V and mask. Only the block the stepper shows is traced:
    tracing all of them cost 40 ms a repaint at n = 64 in 2 x 2 tiles."""
    args = (head.Q, head.K, head.V)
    opts = {"mask": head.mask, "scale": head.scale, "temperature": head.temperature}
    n_q = int(np.shape(head.Q)[-2])
    q = min(max(int(q_block), 0), max(-(-n_q // block_q) - 1, 0))
    try:
        tr = tiled_block_trace(*args, q_block=q, block_q=block_q, block_k=block_k, **opts)
        ref = _reference(head)
    except ValueError as exc:
        return KernelRun(f"The kernel cannot run on this head: {exc}.", None, np.zeros((0, 0)), 0.0)
    diff = float(np.max(np.abs(tr.output - ref), initial=0.0))
    return KernelRun("", tr, ref, diff, skipped_runs(tr.skipped))


def skipped_runs(skipped: NDArray[np.bool_]) -> NDArray[np.intp]:
    """(tile row, first, one past the last) of each run of consecutive True in each row of
    ``skipped``, shape (k, 3), in row-major order."""
    s = np.asarray(skipped, dtype=bool)
    if s.ndim != 2 or not s.size:
        return np.zeros((0, 3), dtype=np.intp)
    padded = np.zeros((s.shape[0], s.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = s
    edges = np.diff(padded, axis=1)
    rows, starts = np.nonzero(edges == 1)
    _, stops = np.nonzero(edges == -1)  # row-major order pairs each start with its stop
    return np.stack([rows, starts, stops], axis=1).astype(np.intp, copy=False)


REFERENCE_ROWS = 256  # query rows of the reference computed at a time


def _reference(head: HeadTrace) -> Array:
    """``attention()``'s output on the head, :data:`REFERENCE_ROWS` query rows at a time (each
    row is its own softmax), so no (n_q, n_k) table of the whole head is made again."""
    Q, mask = np.asarray(head.Q), np.asarray(head.mask, dtype=bool)
    opts = {"scale": head.scale, "temperature": head.temperature}
    n_q = Q.shape[0]
    if n_q <= REFERENCE_ROWS:
        return attention(Q, head.K, head.V, mask=mask, **opts)[0]
    out = np.empty((n_q, np.shape(head.V)[-1]))
    for a in range(0, n_q, REFERENCE_ROWS):
        rows = slice(a, min(a + REFERENCE_ROWS, n_q))
        out[rows] = attention(Q[rows], head.K, head.V, mask=mask[rows], **opts)[0]
    return out


@dataclass(frozen=True, eq=False)
class RowStep:
    """One query row of the active block after the current step: ``m_old`` → ``m`` (running
    max), ``alpha`` = exp(m_old − m) the old sum and accumulator were multiplied by, ``l`` the
    running sum, ``acc`` (d_v,) the accumulator and ``estimate`` = acc / l (NaN while l = 0)."""

    row: int
    label: str
    tile_max: float
    m_old: float
    m: float
    alpha: float
    l: float  # noqa: E741 - the online-softmax name
    acc: Array
    estimate: Array


@dataclass(frozen=True, eq=False)
class StepperData:
    """What the stepper draws for one state (see the module docstring)."""

    message: str
    logits: Array
    forbidden: NDArray[np.bool_]
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    block_q: int
    block_k: int
    n_query_blocks: int
    n_key_blocks: int
    q_block: int
    step: int
    skipped: NDArray[np.bool_]
    rows: tuple[int, int]
    cols: tuple[int, int] | None
    tile_skipped: bool
    row_steps: tuple[RowStep, ...]
    estimate: Array
    output: Array
    reference: Array
    block_diff: float
    max_diff: float
    memory: PeakMemory | None
    status: str
    caption: str
    memory_text: str
    # the largest |logit| over the allowed finite cells (1 when there is none): the tiles'
    # colour scale, found here (on the runner for a large head) rather than by the canvas
    logit_top: float = 1.0
    # the runs of skipped tiles, (tile row, first, one past the last) each (KernelRun's)
    skipped_runs: NDArray[np.intp] = field(default_factory=_no_runs)

    @property
    def done(self) -> bool:
        """Every key block of the active query block has been folded in."""
        return self.step >= self.n_key_blocks

    @property
    def at_start(self) -> bool:
        return self.q_block == 0 and self.step == 0

    @property
    def at_end(self) -> bool:
        return self.q_block == self.n_query_blocks - 1 and self.done


def fmt_floats(count: int) -> str:
    """A count of numbers, grouped by thousands with thin spaces: 16 777 216."""
    return format(int(count), ",").replace(",", "\u2009")


def _memory_text(pm: PeakMemory) -> str:
    per = pm.itemsize
    plain, tiled = pm.plain_bytes // per, pm.tiled_bytes // per
    return (
        f"Peak intermediate floats: plain {fmt_floats(plain)} (the {pm.n_q} × {pm.n_k} scores "
        f"and weights) vs tiled {fmt_floats(tiled)} (one {pm.block_q} × {pm.block_k} tile, m, ℓ "
        f"and a {pm.block_q} × {pm.d} accumulator): ×{fmt_number(pm.ratio, 3)}."
    )


def moved(state: KernelLabState, n_query_blocks: int, n_key_blocks: int, how: str) -> tuple:
    """(q_block, step) after the button ``how`` (``step``, ``back``, ``reset``, ``end``).

    Step past the last key block opens the next query block at its start; Back from a block's
    start goes to the previous block's end; Reset goes to the start of the current block.
    """
    q = min(max(state.q_block, 0), n_query_blocks - 1)
    s = min(max(state.step, 0), n_key_blocks)
    if how == "step":
        if s < n_key_blocks:
            return q, s + 1
        return (q + 1, 0) if q + 1 < n_query_blocks else (q, s)
    if how == "back":
        if s > 0:
            return q, s - 1
        return (q - 1, n_key_blocks) if q > 0 else (q, s)
    if how == "reset":
        return q, 0
    if how == "end":
        return q, n_key_blocks
    raise ValueError(f"no such move: {how!r}")


def _empty(message: str, head: HeadTrace, rows: tuple[str, ...], cols: tuple[str, ...],
           state: KernelLabState) -> StepperData:  # fmt: skip
    z = np.zeros((0, 0))
    logits, forbidden = np.asarray(head.logits, dtype=float), ~np.asarray(head.mask, dtype=bool)
    return StepperData(
        message, logits, forbidden, rows, cols, state.block_q, state.block_k, 0, 0, 0, 0,
        np.zeros((0, 0), dtype=bool), (0, 0), None, False, (), z, z, z, 0.0, 0.0, None, message,
        "", "", logit_top(logits, forbidden),
    )  # fmt: skip


def stepper_data(
    head: HeadTrace,
    run: KernelRun,
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    state: KernelLabState,
) -> StepperData:
    """The kernel ``run`` of ``head`` at the state's query block and step (both clamped)."""
    tr = run.trace
    if tr is None:
        return _empty(run.message, head, row_labels, col_labels, state)
    nqb, nkb = tr.n_query_blocks, tr.n_key_blocks
    if nqb == 0 or nkb == 0:
        return _empty("There are no queries or keys to tile.", head, row_labels, col_labels, state)
    q = min(max(state.q_block, 0), nqb - 1)
    s = min(max(state.step, 0), nkb)
    steps = tr.steps_for(q)
    if len(steps) != nkb:
        raise ValueError(f"the run traced another query block than {q + 1}: pass the state's "
                         "q_block to kernel_run")  # fmt: skip
    rows = (q * tr.block_q, min(tr.n_q, (q + 1) * tr.block_q))
    n_rows, d_v = rows[1] - rows[0], tr.output.shape[-1]
    if s == 0:
        m = np.full(n_rows, -np.inf)
        m_old, alpha, l_sum = m, np.zeros(n_rows), np.zeros(n_rows)
        acc, tile_max, cols, tile_skipped = np.zeros((n_rows, d_v)), m, None, False
    else:
        cur = steps[s - 1]
        m_old = steps[s - 2].m if s > 1 else np.full(n_rows, -np.inf)
        m, alpha, l_sum, acc, tile_max = cur.m, cur.alpha, cur.l, cur.acc, cur.tile_max
        cols, tile_skipped = cur.cols, cur.skipped
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(l_sum[:, None] > 0, acc / np.where(l_sum > 0, l_sum, 1.0)[:, None],
                            np.nan)  # fmt: skip
    row_steps = tuple(
        RowStep(r, row_labels[r], float(tile_max[i]), float(m_old[i]), float(m[i]),
                float(alpha[i]), float(l_sum[i]), acc[i].copy(), estimate[i].copy())
        for i, r in enumerate(range(*rows))
    )  # fmt: skip
    ref_rows = run.reference[rows[0] : rows[1]]
    finite = np.isfinite(estimate)
    block_diff = float(np.max(np.abs(estimate - ref_rows)[finite], initial=0.0))
    pm = peak_memory(tr.n_q, tr.n_k, d_v, tr.block_q, tr.block_k, tr.output.dtype)
    status = _status(q, s, nqb, nkb, cols, tile_skipped)
    caption = _caption(s, nkb, tr, run.max_diff, block_diff)
    logits, forbidden = np.asarray(head.logits, dtype=float), ~np.asarray(head.mask, dtype=bool)
    return StepperData(
        "", logits, forbidden,
        row_labels, col_labels, tr.block_q, tr.block_k, nqb, nkb, q, s, tr.skipped, rows, cols,
        tile_skipped, row_steps, estimate, tr.output, run.reference, block_diff, run.max_diff,
        pm, status, caption, _memory_text(pm), logit_top(logits, forbidden), run.skipped_runs,
    )  # fmt: skip


def logit_top(logits: Array, forbidden: NDArray[np.bool_]) -> float:
    """The largest |logit| over the allowed finite cells, or 1.0 when there is none."""
    finite = logits[np.isfinite(logits) & ~forbidden]
    return float(np.max(np.abs(finite), initial=0.0)) or 1.0


def _status(q: int, s: int, nqb: int, nkb: int, cols, tile_skipped: bool) -> str:
    where = f"Query block {q + 1} of {nqb}, key block {s} of {nkb} folded in"
    if cols is None:
        return f"{where}: nothing seen yet (m = −∞, ℓ = 0, accumulator 0)."
    keys = f"keys {cols[0] + 1}–{cols[1]}" if cols[1] - cols[0] > 1 else f"key {cols[0] + 1}"
    if tile_skipped:
        return f"{where}: {keys} are all masked, so the tile was skipped (nothing computed)."
    return f"{where}: {keys} folded in."


def _caption(s: int, nkb: int, tr: TiledTrace, max_diff: float, block_diff: float) -> str:
    skipped = int(tr.skipped.sum())
    tiles = tr.n_query_blocks * tr.n_key_blocks
    skip = f" {skipped} of {tiles} tiles are skipped by the mask." if skipped else ""
    if s == 0:
        return (
            f"No key block folded in yet: ℓ = 0, so acc / ℓ is 0 / 0 and has no value until the "
            f"first of the {nkb} key blocks.{skip}"
        )
    if s < nkb:
        return (
            f"acc / ℓ after {s} of {nkb} key blocks is not yet the output: it differs from the "
            f"reference by up to {fmt_significant(block_diff)} on these rows.{skip}"
        )
    return (
        f"Done: acc / ℓ is the output. Max |tiled − attention()| = "
        f"{fmt_significant(block_diff)} on these rows, {fmt_significant(max_diff)} over the "
        f"whole output (rounding only: a different order of additions).{skip}"
    )


def table_rows(data: StepperData, d_shown: int = 2) -> tuple[tuple[str, ...], ...]:
    """The m / ℓ / accumulator table of the active block: a header, then one row per query
    (at most :data:`ROWS_SHOWN`)."""
    head = ("query", "tile max", "m: old → new", "α = exp(Δm)", "ℓ", "acc", "acc / ℓ")
    out = [head]
    for r in data.row_steps[:ROWS_SHOWN]:
        vec = _vector(r.acc, d_shown)
        est = "—" if not np.all(np.isfinite(r.estimate)) else _vector(r.estimate, d_shown)
        out.append((
            r.label, fmt_number(r.tile_max, 3), f"{fmt_number(r.m_old, 3)} → {fmt_number(r.m, 3)}",
            fmt_number(r.alpha, 3), fmt_number(r.l, 4), vec, est,
        ))  # fmt: skip
    return tuple(out)


def _vector(v: Array, shown: int) -> str:
    body = ", ".join(fmt_number(float(x), 2) for x in v[:shown])
    return f"[{body}{', …' if v.size > shown else ''}]"


# ---- the scaling plot ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ScalingShown:
    """The scaling plot's curves: ``n`` (m,), ``ms`` and ``mib`` (3, m) in METHODS order (empty
    before a run), ``slopes`` the fitted log-log slope of each time curve, and the caption."""

    n: Array
    ms: Array
    mib: Array
    slopes: tuple[float, ...]
    caption: str
    x_ticks: tuple[tuple[float, str], ...] = ()
    ms_ticks: tuple[tuple[float, str], ...] = ()
    mib_ticks: tuple[tuple[float, str], ...] = ()


def log_ticks(values: Array) -> tuple[tuple[float, str], ...]:
    """Ticks of a log10 axis (positions in log10 units) at every power of ten spanning the
    positive ``values``, labelled 0.01, 0.1, 1, 10, ...; with fewer than two powers inside, at
    1, 2 and 5 times them as well."""
    v = np.asarray(values, dtype=float)
    v = v[(v > 0) & np.isfinite(v)]
    if not v.size:
        return ()
    lo, hi = math.floor(math.log10(v.min())), math.ceil(math.log10(v.max()))
    steps = (1,) if hi - lo >= 2 else (1, 2, 5)
    out = []
    for e in range(lo, hi + 1):
        for m in steps:
            x = m * 10.0**e
            if v.min() / 1.5 <= x <= v.max() * 1.5:
                out.append((math.log10(x), f"{x:g}"))
    return tuple(out)


def _slope(n: Array, y: Array) -> float:
    """The least-squares slope of log y against log n over the largest three sizes (the small
    ones are dominated by fixed Python costs)."""
    keep = (y > 0) & np.isfinite(y)
    x, t = np.log(n[keep][-3:]), np.log(y[keep][-3:])
    if x.size < 2 or np.ptp(x) == 0:
        return math.nan
    return float(np.polyfit(x, t, 1)[0])


def scaling_shown(result: ScalingResult | None, state: KernelLabState) -> ScalingShown:
    """The plot of ``result`` (None: nothing measured yet for the state's settings)."""
    if result is None:
        empty = np.zeros((len(METHODS), 0))
        return ScalingShown(
            np.zeros(0), empty, empty, (), f"Press Run to time n = {N_MIN} … {state.n_max} "
            f"(d = {state.d}, median of {state.repeats}) in the background.",
        )  # fmt: skip
    n = result.n.astype(float)
    ms = result.seconds * 1e3
    mib = result.memory_bytes / 2.0**20
    slopes = tuple(_slope(n, row) for row in ms)
    fits = ", ".join(
        f"{name} ~ n^{fmt_number(s, 2)}" for name, s in zip(METHODS, slopes, strict=True)
    )
    caption = (
        f"Measured forward time (median of {result.repeats}, causal, d = {result.d}, float64) "
        f"fits {fits} over the largest sizes. Memory is the analytic peak of the intermediates: "
        "plain grows as n², tiled stops growing once n exceeds a tile, linear holds d × d + d "
        "numbers at any n."
    )
    x_ticks = tuple((math.log10(v), str(int(v))) for v in n)
    return ScalingShown(n, ms, mib, slopes, caption, x_ticks, log_ticks(ms), log_ticks(mib))
