"""The "Linear memory" lab: causal linear attention as a running memory ``S_i`` read by each
query, beside softmax attention on the same q, k, v, and the size of that memory against a KV
cache and the softmax score matrix as the sequence grows.

Every number comes from :mod:`attnsim.engine.linear` (the memory trace, the explicit sum, the
comparison with softmax, the memory sizes); this module picks the position, clamps the lab's
settings to the scenario and writes the sentences. The only arithmetic of its own is for
display: the term just added (``v_i phi(k_i)^T``), ``n^2`` and the plot's log axes.

The lab's settings are one frozen dataclass, :class:`LinearLabState`, held by the workbench
(undoable like every edit). :data:`SETTINGS` declares them; its check raises ValueError
naming the setting, which the panel shows inline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.linear import (
    SUM_ROWS,
    LinearMemoryTrace,
    LinearVsSoftmax,
    MemoryStates,
    elu_plus_one,
    linear_memory,
    linear_vs_softmax,
    memory_sizes,
    memory_states,
)
from attnsim.engine.numbers import fmt_number, fmt_vector
from attnsim.engine.settings import LabSettings, Setting

Array = NDArray[np.float64]

__all__ = [
    "FEATURE_CHOICES",
    "FEATURE_NAMES",
    "PLOT_N_MAX",
    "PLOT_N_MIN",
    "POSITION_MAX",
    "SETTINGS",
    "ComparisonData",
    "GrowthData",
    "LinearLabState",
    "MemoryRun",
    "StepData",
    "colour_limit",
    "comparison_data",
    "fmt_tiny",
    "growth_data",
    "memory_run",
    "normaliser_problem",
    "self_attention_problem",
    "step_data",
    "why_softmax_cannot",
]

FEATURE_CHOICES = ("none", "elu+1")
FEATURE_NAMES = {"none": "none (φ(x) = x)", "elu+1": "elu(x) + 1"}
POSITION_MAX = 10**6  # the position box's upper bound; the scenario's n clamps it further
PLOT_N_MIN = 16  # the growth plot spans at least 1 .. 16 tokens
PLOT_N_MAX = 10**9  # beyond this n² overflows nothing, but nobody reads the plot
GROWTH_POINTS = 97  # points on each curve (log-spaced, so a straight line on log-log axes)


@dataclass(frozen=True)
class LinearLabState:
    """The lab's settings.

    ``position`` is the token i (1-based) whose memory S_i is shown, clamped to the scenario's
    n when drawn; ``feature_map`` is one of :data:`FEATURE_CHOICES` and ``normalise`` divides by
    ``z_i · phi(q_i)``; ``coord`` is the output coordinate whose values the comparison draws;
    ``plot_n`` is the right end of the growth plot.
    """

    position: int = 1
    feature_map: str = "none"
    normalise: bool = False
    coord: int = 0
    plot_n: int = 4096


# The position and the coordinate depend on the scenario and are clamped when drawn (the
# scenario can change under them); here they only have to lie in their outer bounds.
SETTINGS = LabSettings("Linear memory", LinearLabState, (
    Setting("position", "position i", lo=1, hi=POSITION_MAX,
            tip="The token i whose memory S_i is shown"),
    Setting("feature_map", "feature map φ", "choice", choices=FEATURE_CHOICES,
            names=tuple(FEATURE_NAMES[f] for f in FEATURE_CHOICES),
            tip="φ applied to every q and k before they meet"),
    Setting("normalise", "normalise by z_i · φ(q_i)", "flag",
            tip="Divide the read-out by z_i · φ(q_i), z_i = Σ φ(k_j): the weights of a row then "
                "sum to one (needs a positive φ, e.g. elu + 1)"),
    Setting("coord", "output coordinate", tip="The coordinate of the output vectors drawn as bars"),
    Setting("plot_n", "plot up to n", lo=PLOT_N_MIN, hi=PLOT_N_MAX,
            tip=f"The right end of the plot ({PLOT_N_MIN} … {PLOT_N_MAX:.0e})"),
))  # fmt: skip


def self_attention_problem(n_q: int, n_k: int) -> str:
    """Why the lab cannot run on a scenario ("" when it can): causal linear attention reads
    keys 1..i with query i, so it needs one query per key."""
    if n_q == n_k:
        return ""
    return (
        f"This scenario has {n_q} quer{'y' if n_q == 1 else 'ies'} and {n_k} keys: a running "
        "memory read token by token needs self-attention, one query per key. Open a preset "
        "built from tokens (e.g. tired-cat) to step through it."
    )


def normaliser_problem(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, tokens: tuple[str, ...], feature_map: str
) -> str:
    """Why the normaliser cannot divide on these q, k, v ("" when it can): the engine's
    ``z_i · phi(q_i)`` is not positive at some position (raw vectors can score below zero)."""
    fmap = None if feature_map == "none" else feature_map
    den = linear_memory(Q, K, V, feature_map=fmap, normalise=False, keep_states=False).denominators
    bad = np.flatnonzero(~(den > 0))
    if not bad.size:
        return ""
    i = int(bad[0])
    token = f" (“{tokens[i]}”)" if i < len(tokens) else ""
    phi = "φ(q_i)" if fmap else "q_i"
    return (
        f"z_i · {phi} is {fmt_number(den[i], 3)} at i = {i + 1}{token}, not positive, so the "
        "weights would not be a weighted average: normalising needs a positive feature map "
        "such as elu + 1"
    )


def fmt_tiny(x: float) -> str:
    """A difference that is usually rounding: ``0`` or ``2.2e-16``, large ones as numbers."""
    v = abs(float(x))
    if v == 0 or not math.isfinite(v):
        return fmt_number(v, 2)
    return fmt_number(v, 3) if v >= 1e-2 else f"{v:.1e}"


# Mantissas of the colour limit: steps of at most a third, so the scale loses little contrast.
LIMIT_STEPS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def colour_limit(x: float) -> float:
    """The smallest of 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten that is at
    least ``x`` (> 0): an edit that moves the largest entry a little keeps the colour scale,
    so the matrices it did not change keep their picture."""
    power = 10.0 ** math.floor(math.log10(x))
    if not 0.0 < power < math.inf:
        return x  # a subnormal: no power of ten to round to
    limit = next(m * power for m in LIMIT_STEPS if m * power >= x * (1 - 1e-12))
    return limit if math.isfinite(limit) else x  # near the float maximum, rounding overflows


def _phi(x: Array, feature_map: str) -> Array:
    return elu_plus_one(x) if feature_map == "elu+1" else np.asarray(x, dtype=float)


# ---- the memory, step by step -----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StepData:
    """The memory after token ``i`` (0-based; ``position`` = i + 1) of ``n``.

    ``S`` (d_v, d_k) the memory, ``term`` (d_v, d_k) what token i added (``v_i phi(k_i)^T``),
    ``q`` (d_k,) ``phi(q_i)``, ``z`` (d_k,) the normaliser's running sum, ``numerator`` (d_v,)
    ``S_i phi(q_i)``, ``denominator`` ``z_i · phi(q_i)``, ``output`` (d_v,) what the memory
    returns, ``explicit`` (d_v,) the explicit sum's row i, ``row_difference`` their max |diff|
    at i and ``max_difference`` over every position. ``limit`` is the largest |entry| of every
    S_j and term rounded up by :func:`colour_limit`, so the colours keep their meaning while
    stepping. ``message`` non-empty: there
    is nothing to draw, and it says why.
    """

    message: str
    n: int
    i: int
    token: str
    feature_map: str
    normalised: bool
    S: Array
    term: Array
    q: Array
    z: Array
    numerator: Array
    denominator: float
    output: Array
    explicit: Array
    row_difference: float
    max_difference: float
    limit: float
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    memory_numbers: int

    @property
    def position(self) -> int:
        return self.i + 1

    @property
    def readout(self) -> str:
        """What q_i reads from the memory, in words, with the explicit sum beside it."""
        if self.message:
            return self.message
        i = self.position
        phi = "φ(q_{i})" if self.feature_map == "elu+1" else "q_{i}"
        phi = phi.format(i=i)
        lines = [f"{phi} = {fmt_vector(self.q, 3, 12)}"]
        lines.append(f"S_{i} {phi} = {fmt_vector(self.numerator, 3, 12)}")
        if self.normalised:
            lines.append(f"z_{i} = Σ φ(k_j) = {fmt_vector(self.z, 3, 12)}")
            lines.append(f"z_{i} · {phi} = {fmt_number(self.denominator, 4)}")
        lines.append(f"y_{i} = {fmt_vector(self.output, 3, 12)}")
        k = "φ(k_j)" if self.feature_map == "elu+1" else "k_j"
        lines.append(f"explicit sum Σ_(j≤{i}) ({phi} · {k}) v_j"
                     + (" / Σ (…)" if self.normalised else "")
                     + f" = {fmt_vector(self.explicit, 3, 12)}")  # fmt: skip
        lines.append(
            f"max |difference| at i = {i}: {fmt_tiny(self.row_difference)}; over all "
            f"{self.n} positions: {fmt_tiny(self.max_difference)}"
        )
        return "\n".join(lines)

    @property
    def caption(self) -> str:
        if self.message:
            return ""
        k = "φ(k_{i})" if self.feature_map == "elu+1" else "k_{i}"
        k = k.format(i=self.position)
        return (
            f"S_{self.position} = S_{self.i} + v_{self.position} {k}ᵀ after “{self.token}”: "
            f"{self.memory_numbers} numbers carried from token to token, whatever n."
        )


def _empty_step(message: str, n: int, rows: tuple[str, ...], cols: tuple[str, ...]) -> StepData:
    z0 = np.zeros((0, 0))
    e = np.zeros(0)
    return StepData(message, n, 0, "", "none", False, z0, z0, e, e, e, 0.0, e, e, 0.0, 0.0, 1.0,
                    rows, cols, 0)  # fmt: skip


@dataclass(frozen=True, eq=False)
class MemoryRun:
    """The engine's memory over the whole sequence, for one feature map and normaliser: what
    stepping through positions reads from (so a step recomputes nothing).

    ``trace`` the engine's :class:`~attnsim.engine.linear.LinearMemoryTrace` without its
    states (None with a ``message``), ``states`` its
    :class:`~attnsim.engine.linear.MemoryStates` (every S_i on demand, in a bounded memory
    whatever n and d), ``differences`` (n,) the max |memory − explicit sum| per position,
    ``Q`` (n, d_k) the queries and ``fk`` (n, d_k) the mapped keys, ``V`` (n, d_v), ``limit``
    the largest |entry| of every S_j and term, rounded up by :func:`colour_limit`. A step reads
    one mapped query and one row of the explicit sum (:meth:`fq_row`, :meth:`explicit_row`):
    the whole of either is 34 MB at 4,096 tokens of width 1,024.
    """

    message: str
    n: int
    feature_map: str
    normalised: bool
    trace: LinearMemoryTrace | None
    states: MemoryStates | None
    differences: Array
    Q: Array
    fk: Array
    V: Array
    limit: float

    def fq_row(self, i: int) -> Array:
        """phi(q_i), shape (d_k,)."""
        return _phi(self.Q[i : i + 1], self.feature_map)[0]

    def explicit_row(self, i: int) -> Array:
        """The explicit sum at position i: sum over j <= i of (phi(q_i) · phi(k_j)) v_j,
        divided by the sum of the weights when normalised; shape (d_v,)."""
        w = self.fk[: i + 1] @ self.fq_row(i)
        out = w @ self.V[: i + 1]
        return out / w.sum() if self.normalised else out


def _differences(output: Array, Q: Array, fk: Array, V: Array, fmap: str, normalise: bool):
    """max |output - explicit sum| per position, the explicit sum made as
    :func:`~attnsim.engine.linear.linear_attention_sum` makes it (SUM_ROWS queries at a time,
    the same numbers) but never kept whole, and with the memory's own mapped keys."""
    n = Q.shape[0]
    diff = np.empty(n)
    for a in range(0, n, SUM_ROWS):
        b = min(a + SUM_ROWS, n)
        scores = np.tril(_phi(Q[a:b], fmap) @ fk[:b].T, k=a)  # keep j <= i
        out = scores @ V[:b]
        if normalise:
            out /= scores.sum(axis=1)[:, None]
        with np.errstate(invalid="ignore"):
            diff[a:b] = np.abs(output[a:b] - out).max(axis=1, initial=0.0)
    return diff


def memory_run(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    tokens: tuple[str, ...],
    feature_map: str,
    normalise: bool,
) -> MemoryRun:
    """The engine's memory trace of Q (n, d_k), K (n, d_k), V (n, d_v) with ``feature_map``
    (one of :data:`FEATURE_CHOICES`) and ``normalise``, against the explicit sum."""
    Qa, Ka, Va = (np.asarray(x, dtype=np.float64) for x in (Q, K, V))
    n = int(Ka.shape[0])
    fmap = feature_map if feature_map in FEATURE_CHOICES else "none"
    empty = np.zeros((0, 0))

    def refused(message: str) -> MemoryRun:
        return MemoryRun(message, n, fmap, bool(normalise), None, None, np.zeros(0), empty,
                         empty, empty, 1.0)  # fmt: skip

    problem = self_attention_problem(int(Qa.shape[0]), n)
    if problem or n == 0:
        return refused(problem or "The scenario has no tokens.")
    engine_map = None if fmap == "none" else fmap
    if normalise:
        why = normaliser_problem(Qa, Ka, Va, tokens, fmap)
        if why:
            return refused(f"The normaliser cannot divide here: {why}.")
    trace = linear_memory(Qa, Ka, Va, feature_map=engine_map, normalise=normalise,
                          keep_states=False)  # fmt: skip
    states = memory_states(Ka, Va, feature_map=engine_map)
    fk = states.fk  # phi(K), the states' own (the same numbers as _phi(Ka, fmap))
    diff = _differences(trace.output, Qa, fk, Va, fmap, normalise)
    # the largest |entry| of each term v_j phi(k_j)^T is max|v_j| max|phi(k_j)|
    biggest = np.abs(Va).max(axis=1, initial=0.0) * np.abs(fk).max(axis=1, initial=0.0)
    biggest = biggest[np.isfinite(biggest)]
    top = max(states.abs_max, float(biggest.max(initial=0.0)))
    limit = colour_limit(top) if top > 0 else 1.0
    return MemoryRun("", n, fmap, bool(normalise), trace, states, diff, Qa, fk, Va,
                     limit)  # fmt: skip


def step_data(
    run: MemoryRun,
    tokens: tuple[str, ...],
    qk_axes: tuple[str, ...],
    v_axes: tuple[str, ...],
    position: int,
) -> StepData:
    """The memory of ``run`` after token ``position`` (1-based, clamped to n)."""
    trace, n = run.trace, run.n
    if run.message or trace is None or run.states is None:
        return _empty_step(run.message, n, v_axes, qk_axes)
    i = min(max(position, 1), n) - 1
    return StepData(
        "", n, i, tokens[i] if i < len(tokens) else str(i + 1), run.feature_map, run.normalised,
        run.states.state(i), np.outer(run.V[i], run.fk[i]), run.fq_row(i), trace.z[i],
        trace.numerators[i],
        float(trace.denominators[i]), trace.output[i], run.explicit_row(i),
        float(run.differences[i]), float(run.differences.max(initial=0.0)), run.limit,
        v_axes, qk_axes, trace.memory_numbers,
    )  # fmt: skip


# ---- linear vs softmax ------------------------------------------------------------------------
def why_softmax_cannot() -> str:
    """Why softmax attention has no such memory, in one sentence."""
    return (
        "Softmax cannot be folded this way: each weight is exp(q·k) over a row sum, and exp(q·k) "
        "is not a fixed-size function of q times a fixed-size function of k, so no matrix of a "
        "fixed size can stand in for all the keys seen so far — the keys and values themselves "
        "must be kept."
    )


@dataclass(frozen=True, eq=False)
class ComparisonData:
    """Normalised elu + 1 linear attention and causal softmax attention at every position.

    ``linear``/``softmax`` (n,) the chosen output coordinate ``coord`` of each; ``all_linear``/
    ``all_softmax`` (n, d_v); ``max_abs_difference`` (n,) the largest |linear - softmax| over
    every coordinate at each position (the engine's).
    """

    message: str
    tokens: tuple[str, ...]
    coord: int
    coord_label: str
    v_axes: tuple[str, ...]
    linear: Array
    softmax: Array
    all_linear: Array
    all_softmax: Array
    max_abs_difference: Array
    position: int
    caption: str


def comparison_data(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    tokens: tuple[str, ...],
    v_axes: tuple[str, ...],
    state: LinearLabState,
    *,
    scale: bool = True,
    temperature: float = 1.0,
    compared: LinearVsSoftmax | None = None,
) -> ComparisonData:
    """Both attentions from :func:`attnsim.engine.linear.linear_vs_softmax` on the scenario's
    q, k, v; the softmax side with the scenario's scaling and temperature. ``compared``: that
    function's result for these inputs, when the caller already has it."""
    Qa, Ka, Va = (np.asarray(x, dtype=np.float64) for x in (Q, K, V))
    n = int(Ka.shape[0])
    empty = np.zeros(0)
    problem = self_attention_problem(int(Qa.shape[0]), n)
    if problem:
        return ComparisonData(problem, tokens, 0, "", v_axes, empty, empty, empty[:, None],
                              empty[:, None], empty, 0, "")  # fmt: skip
    try:
        cmp = compared or linear_vs_softmax(
            Qa, Ka, Va, feature_map="elu+1", scale=scale, temperature=temperature
        )
    except ValueError as exc:
        # elu + 1 is positive, but exp underflows to 0 far below zero: a query whose every
        # coordinate is very negative reads a normaliser of 0, and there is no average to show
        return ComparisonData(f"Linear attention is undefined here: {exc}.", tokens, 0, "",
                              v_axes, empty, empty, empty[:, None], empty[:, None], empty, 0,
                              "")  # fmt: skip
    c = min(max(state.coord, 0), Va.shape[1] - 1)
    i = min(max(state.position, 1), n) - 1
    worst = int(np.argmax(cmp.max_abs_difference)) if n else 0
    caption = (
        f"Linear: elu + 1, normalised (a weighted average, like softmax's). At i = {i + 1} the "
        f"outputs differ by up to {fmt_tiny(cmp.max_abs_difference[i])}; the most at "
        f"“{tokens[worst]}” (i = {worst + 1}): {fmt_tiny(cmp.max_abs_difference[worst])}. "
        "Both equal v_1 at i = 1, where there is only one key. " + why_softmax_cannot()
    )
    return ComparisonData(
        "", tokens, c, v_axes[c] if c < len(v_axes) else str(c + 1), v_axes,
        cmp.linear[:, c].copy(), cmp.softmax[:, c].copy(), cmp.linear, cmp.softmax,
        cmp.max_abs_difference, i, caption,
    )  # fmt: skip


# ---- memory as n grows ------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GrowthData:
    """Numbers held, against n, on log10 axes.

    ``n`` (m,) lengths 1 .. ``plot_n``; ``memory`` (m,) S (+ z when normalised), flat;
    ``kv_cache`` (m,) ``n (d_k + d_v)``; ``scores`` (m,) ``n^2``; ``x``/``y_*`` their log10;
    ``current`` the scenario's n with ``at_current`` the three numbers there; ``x_ticks`` and
    ``y_ticks`` (log10 value, label) at whole decades.
    """

    d_k: int
    d_v: int
    normalised: bool
    n: NDArray[np.int64]
    memory: NDArray[np.int64]
    kv_cache: NDArray[np.int64]
    scores: NDArray[np.int64]
    current: int
    at_current: tuple[int, int, int]
    crossover: int
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    y_range: tuple[float, float]
    caption: str

    @property
    def x(self) -> Array:
        return np.log10(self.n.astype(float))

    def log(self, values: NDArray[np.int64]) -> Array:
        return np.log10(values.astype(float))


def _decade_label(k: int) -> str:
    return f"{10**k:,}".replace(",", "\u2009") if k < 4 else f"1e{k}"


def growth_data(n_current: int, d_k: int, d_v: int, state: LinearLabState) -> GrowthData:
    """The engine's :func:`~attnsim.engine.linear.memory_sizes` from 1 to the state's plot_n
    (stretched to include the scenario's n), beside the softmax score matrix's n²."""
    top = max(int(state.plot_n), int(n_current), PLOT_N_MIN)
    grid = np.unique(np.round(np.logspace(0, math.log10(top), GROWTH_POINTS)).astype(np.int64))
    current = max(int(n_current), 1)
    grid = np.unique(np.append(grid, current))
    sizes = memory_sizes(grid, d_k, d_v, normalised=state.normalise)
    scores = grid * grid
    j = int(np.searchsorted(grid, current))
    at = (int(sizes.linear_numbers[j]), int(sizes.kv_cache_numbers[j]), int(scores[j]))
    y_top = math.log10(max(float(scores[-1]), float(sizes.linear_numbers[0])))
    decades_x = range(0, math.floor(math.log10(top)) + 1)
    y_hi = math.ceil(y_top)
    step = 1 if y_hi <= 9 else 2
    x_ticks = tuple((float(k), _decade_label(k)) for k in decades_x)
    y_ticks = tuple((float(k), _decade_label(k)) for k in range(0, y_hi + 1, step))
    z = f" + z ({d_k})" if state.normalise else ""
    caption = (
        f"At n = {current}: the memory S ({d_v} × {d_k}{z}) holds {at[0]} numbers, a KV cache "
        f"n × (d_k + d_v) = {at[1]}, softmax's score matrix n² = {at[2]}. The cache is larger "
        f"from n = {sizes.crossover} on; S never grows."
    )
    return GrowthData(
        d_k, d_v, bool(state.normalise), grid, sizes.linear_numbers, sizes.kv_cache_numbers,
        scores, current, at, sizes.crossover, x_ticks, y_ticks, (0.0, y_top), caption,
    )  # fmt: skip
