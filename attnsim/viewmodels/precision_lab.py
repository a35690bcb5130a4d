"""The "Precision and masks" lab: the current scenario's weights computed in a chosen dtype with
a chosen mask style, where a forbidden key gets weight and where a row turns NaN; the whole
precision table beside them; and dropout on the weights, in training and in evaluation.

Every number is :mod:`attnsim.engine.precision`'s (``low_precision_attention``,
``precision_table``, ``dropout_attention``) or :func:`attnsim.engine.attention.attention`'s (the
float64 Boolean reference); this module picks the scenario's rows, builds the padded mask and
the large logit, compares, and writes the sentences.

Two things are made here rather than in the scenario:

- **Left padding**: the first ``pad`` positions are padding tokens no query may read. With a
  self-attention scenario the mask is also causal (the engine's ``left_padded_causal_mask``), so
  the queries at the padding positions have no legal key at all: the row -inf turns into NaN.
- **A large logit**: ``logit`` is added to one entry of the logits (by default the receiving
  query's first forbidden key) through one extra coordinate of q and k, so the engine's own
  computation sees it. A finite mask value plus a large enough logit is a finite, live route.

The lab's settings are one frozen dataclass, :class:`PrecisionLabState`, held by the workbench.
:data:`SETTINGS` declares them; its check raises ValueError naming the setting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.attention import HeadTrace, attention
from attnsim.engine.numbers import fmt_number, fmt_significant
from attnsim.engine.precision import (
    DEFAULT_LARGE_LOGIT,
    DTYPES,
    MASK_LABELS,
    ROW_BLOCK,
    PrecisionRow,
    dropout_attention,
    left_padded_causal_mask,
    low_precision_attention,
    mask_value_for,
    precision_table,
    round_to,
)
from attnsim.engine.settings import LabSettings, Setting

Array = NDArray[np.float64]

__all__ = [
    "LOGIT_MAX",
    "MASK_STYLES",
    "P_MAX",
    "SEED_MAX",
    "SETTINGS",
    "STYLE_NAMES",
    "DropoutData",
    "LabInputs",
    "PrecisionData",
    "PrecisionLabState",
    "TableData",
    "dropout_data",
    "lab_inputs",
    "padded_mask",
    "padding_problem",
    "precision_data",
    "table_data",
    "table_rows",
]

# "boolean" selects the legal keys; the others are added to the logits (the engine's labels).
MASK_STYLES = ("boolean", *MASK_LABELS)
STYLE_NAMES = {
    "boolean": "Boolean (select keys)",
    "-inf": "additive −∞",
    "-1e4": "additive −1e4",
    "-1e9": "additive −1e9",
    "min": "additive dtype minimum",
}
# The large logit rides on an extra coordinate of q, which is rounded to the dtype first: above
# float16's largest value (65504) it would be inf there, and inf · 0 = NaN on every other key.
LOGIT_MAX = 60000.0
P_MAX = 0.95  # dropout keeps at least 5 % of the weights
SEED_MAX = 2**31 - 1


@dataclass(frozen=True)
class PrecisionLabState:
    """The lab's settings.

    Masks: the weights in ``dtype`` (one of the engine's DTYPES) with mask ``style`` (one of
    :data:`MASK_STYLES`); ``pad`` leading padding positions; with ``boost``, ``logit`` is added
    to the logit of query ``boost_row`` and key ``boost_key`` (-1: the receiving query, and its
    first forbidden key). Dropout: with ``dropout`` on, weights dropped with probability ``p``
    from ``seed``; ``train`` False is evaluation, where dropout is off.
    """

    dtype: str = "float16"
    style: str = "-1e4"
    pad: int = 0
    boost: bool = False
    logit: float = DEFAULT_LARGE_LOGIT
    boost_row: int = -1
    boost_key: int = -1
    dropout: bool = True
    p: float = 0.1
    seed: int = 0
    train: bool = True


# Rows and keys of the large logit are clamped when drawn, as the scenario may change under
# them; the padding is bounded by the scenario's keys in :func:`padding_problem`.
SETTINGS = LabSettings("Precision lab", PrecisionLabState, (
    Setting("dtype", "dtype", "choice", choices=DTYPES,
            tip="The format every step is rounded to (bfloat16 is emulated)"),
    Setting("style", "mask", "choice", choices=MASK_STYLES,
            names=tuple(STYLE_NAMES[m] for m in MASK_STYLES),
            tip="Boolean: forbidden keys are left out of the softmax. Additive: the value is "
                "added to their logits."),
    Setting("pad", "left padding",
            tip="Left padding: the first positions are padding no query may read (causal in "
                "self-attention, so the padding queries have no legal key)"),
    Setting("boost", "large logit", "flag",
            tip="Add this logit to one cell (the receiving query's first forbidden key, or the "
                "cell you click)"),
    Setting("logit", "large logit value", "real", hi=LOGIT_MAX, open_lo=True,
            tip=f"The logit added, up to {LOGIT_MAX:g} (float16 holds 65504)"),
    Setting("boost_row", "row of the large logit", lo=-1),
    Setting("boost_key", "key of the large logit", lo=-1),
    Setting("dropout", "dropout", "flag"),
    Setting("p", "dropout p", "real", hi=P_MAX, tip="The probability that a weight is dropped"),
    Setting("seed", "seed", hi=SEED_MAX,
            tip="The random generator's seed: which weights are dropped"),
    Setting("train", "mode", "flag", names=("train", "eval")),
))  # fmt: skip


def padding_problem(state: PrecisionLabState, n_keys: int) -> str:
    """Why the padding does not fit a scenario of ``n_keys`` keys ("" when it does)."""
    if state.pad > n_keys:
        return f"the left padding {state.pad} is more than the scenario's {n_keys} keys"
    return ""


# ---- inputs -------------------------------------------------------------------------------------
def padded_mask(mask: NDArray[np.bool_], pad: int) -> tuple[NDArray[np.bool_], str]:
    """The scenario's mask with the first ``pad`` positions as left padding, and a note.

    Square (self-attention): also causal, through the engine's ``left_padded_causal_mask``, so
    the padding queries are left with no legal key. Otherwise only the padding keys are closed.
    """
    m = np.asarray(mask, dtype=bool)
    n_q, n_k = m.shape
    pad = min(max(int(pad), 0), n_k)
    if pad == 0:
        return (m if not m.flags.writeable else m.copy()), ""  # a read-only mask is shared
    if n_q == n_k:
        return m & left_padded_causal_mask(n_k, pad), (
            f"Left padding: {_positions(pad)} padding, the mask causal."
        )
    out = m.copy()
    out[:, :pad] = False
    return out, f"Left padding: {_positions(pad)} padding (queries are not the keys' tokens)."


def _positions(pad: int) -> str:
    return "position 1 is" if pad == 1 else f"positions 1–{pad} are"


@dataclass(frozen=True, eq=False)
class LabInputs:
    """What the lab computes on: ``q`` (the scenario's queries divided by the trace's divisor,
    so the engine runs unscaled), ``k``, ``v``, the padded ``mask`` and, with the large logit,
    the cell ``boost`` (row, key) it is added to (one more coordinate of q and k)."""

    q: Array
    k: Array
    v: Array
    mask: NDArray[np.bool_]
    boost: tuple[int, int] | None
    note: str


def _boost_cell(mask: NDArray[np.bool_], receiving: int, st: PrecisionLabState):
    n_q, n_k = mask.shape
    row = receiving if st.boost_row < 0 else min(st.boost_row, n_q - 1)
    if st.boost_key >= 0:
        return row, min(st.boost_key, n_k - 1)
    closed = np.flatnonzero(~mask[row])
    return (row, int(closed[0])) if closed.size else None


def lab_inputs(trace: HeadTrace, receiving: int, st: PrecisionLabState) -> LabInputs:
    """The scenario's head as the lab computes it (see :class:`LabInputs`)."""
    q = np.asarray(trace.Q, dtype=np.float64) / trace.divisor
    k = np.asarray(trace.K, dtype=np.float64)
    v = np.asarray(trace.V, dtype=np.float64)
    mask, note = padded_mask(trace.mask, st.pad)
    boost = _boost_cell(mask, receiving, st) if st.boost else None
    if st.boost and boost is None:
        note = (note + " " if note else "") + (
            "The receiving query has no forbidden key to put the large logit on: click a cell."
        )
    if boost is not None:
        # q_i · k_j gains exactly logit · 1; every other product gains logit · 0 or 0 · 1.
        i, j = boost
        q = np.hstack([q, np.zeros((q.shape[0], 1))])
        k = np.hstack([k, np.zeros((k.shape[0], 1))])
        q[i, -1], k[j, -1] = st.logit, 1.0
    return LabInputs(q, k, v, mask, boost, note)


# ---- the weights in a dtype ---------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PrecisionData:
    """The weights (n_q, n_k) in the chosen dtype and mask style, with what went wrong.

    ``forbidden`` (True: the mask closes the key), ``leaked_cells`` forbidden cells with weight
    above 0, ``leaked`` (n_q,) each row's weight on forbidden keys (NaN for a NaN row),
    ``nan_rows`` rows with NaN weights, ``empty_rows`` rows with no legal key (under the Boolean
    style they get no route: weight 0); ``reference`` the float64 Boolean weights (NaN on empty
    rows, made again from ``inputs`` when asked) and ``max_diff`` the largest
    |weight − reference| where both are numbers. ``weights`` are float32 (exactly the dtype's
    numbers) unless the dtype is float64.
    """

    dtype: str
    style: str
    mask_value: float | None
    stored_mask_value: float | None
    weights: Array
    inputs: LabInputs
    forbidden: NDArray[np.bool_]
    leaked_cells: NDArray[np.bool_]
    leaked: Array
    nan_rows: NDArray[np.bool_]
    empty_rows: NDArray[np.bool_]
    boost: tuple[int, int] | None
    logit: float
    leaked_total: float
    max_diff: float
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    receiving: int
    title: str
    summary: str
    caption: str

    @property
    def reference(self) -> Array:
        """The float64 Boolean weights (NaN on rows with no legal key), made when asked: the
        lab keeps only ``max_diff``, not a second (n_q, n_k) table."""
        return _reference(self.inputs)

    @property
    def silent_rows(self) -> NDArray[np.bool_]:
        """Rows with no legal key that still came out as numbers (a route over forbidden keys)."""
        return self.empty_rows & ~self.nan_rows & (self.style != "boolean")


def _reference(inp: LabInputs, rows: slice = slice(None)) -> Array:
    """float64 Boolean weights of the queries ``rows``: the legal keys' softmax; rows with no
    legal key stay NaN."""
    mask = inp.mask[rows]
    live = mask.any(axis=1)
    ref = np.full(mask.shape, np.nan)
    if live.any():
        _, w = attention(inp.q[rows][live], inp.k, inp.v, mask=mask[live], scale=False)
        ref[live] = w
    return ref


def _weights_rows(inp: LabInputs, rows: slice, st: PrecisionLabState, value: float | None):
    """The lab's weights of the queries ``rows`` in ``st.dtype`` (float64), and the stored mask
    value (None for the Boolean style)."""
    mask = inp.mask[rows]
    q = inp.q[rows]
    if value is None:
        # Boolean semantics select the legal keys; a row with none has no route to compute.
        live = mask.any(axis=1)
        weights = np.zeros(mask.shape)
        if live.any():
            r = low_precision_attention(
                q[live], inp.k, inp.v, mask=mask[live], mask_value=-np.inf, dtype=st.dtype,
                scale=False,
            )  # fmt: skip
            weights[live] = r.weights
        return weights, None
    r = low_precision_attention(
        q, inp.k, inp.v, mask=mask, mask_value=value, dtype=st.dtype, scale=False
    )
    return np.asarray(r.weights, dtype=np.float64), r.stored_mask_value


def _names(labels: tuple[str, ...], idx: NDArray[np.intp], most: int = 3) -> str:
    shown = ", ".join(labels[i] for i in idx[:most])
    return shown + (" …" if idx.size > most else "")


def precision_data(
    inp: LabInputs,
    receiving: int,
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    st: PrecisionLabState,
) -> PrecisionData:
    """The head of ``inp`` in ``st.dtype`` with ``st.style``, against float64 Boolean."""
    mask = inp.mask
    live = mask.any(axis=1)
    n_q, n_k = mask.shape
    value = None if st.style == "boolean" else mask_value_for(st.style, st.dtype)
    stored = None
    # Row blocks: the whole (n_q, n_k) tables of the engine and of the reference never exist at
    # once. The weights are kept in float32 unless the dtype is float64: a float16, bfloat16 or
    # float32 number is a float32 number, so nothing shown changes.
    weights = np.empty((n_q, n_k), dtype=np.float64 if st.dtype == "float64" else np.float32)
    forbidden = ~mask
    leaked_cells = np.empty((n_q, n_k), dtype=bool)
    nan_rows = np.empty(n_q, dtype=bool)
    leaked = np.empty(n_q)
    max_diff = 0.0
    for start in range(0, n_q, ROW_BLOCK):
        rows = slice(start, min(start + ROW_BLOCK, n_q))
        w, stored = _weights_rows(inp, rows, st, value)
        weights[rows] = w
        nan_rows[rows] = np.isnan(w).any(axis=1)
        with np.errstate(invalid="ignore"):
            leaked_cells[rows] = forbidden[rows] & (w > 0)
        leaked[rows] = np.where(forbidden[rows], w, 0.0).sum(axis=1)
        reference = _reference(inp, rows)
        both = np.isfinite(w) & np.isfinite(reference)
        max_diff = max(max_diff, float(np.max(np.abs(w - reference)[both], initial=0.0)))
    if value is not None and n_q == 0:
        stored = float(round_to(value, st.dtype))
    leaked_total = float(leaked[~nan_rows].sum())
    empty = ~live
    dtype_text = st.dtype
    if value is None:
        title = f"Weights in {dtype_text}, Boolean mask"
    else:
        title = f"Weights in {dtype_text}, additive mask {_short(value)}"
        if stored is not None and stored != value:
            title += f" (stored as {_short(stored)})"
    n_leak = int(leaked_cells.sum())
    # A line each: a phrase wrapped in its middle ("… with a | Boolean mask") read badly.
    summary = (
        f"Leaked weight on forbidden keys: {fmt_significant(leaked_total)} in total "
        f"({n_leak} cell{'s' if n_leak != 1 else ''})\nNaN rows: {int(nan_rows.sum())}\n"
        f"Largest difference from float64 with a Boolean mask: {fmt_significant(max_diff)}"
    )
    parts = [inp.note] if inp.note else []
    if inp.boost is not None:
        i, j = inp.boost
        kind = "forbidden" if forbidden[i, j] else "allowed"
        parts.append(
            f"Large logit +{fmt_number(st.logit, 0)} on {row_labels[i]} → {col_labels[j]} "
            f"({kind}): weight {fmt_number(weights[i, j], 3)}."
        )
    if nan_rows.any():
        parts.append(
            f"NaN rows ({_names(row_labels, np.flatnonzero(nan_rows))}): every key is −∞, "
            "so the softmax divides 0 by 0."
        )
    silent = empty & ~nan_rows & (st.style != "boolean")
    if silent.any():
        parts.append(
            f"No legal key, yet finite ({_names(row_labels, np.flatnonzero(silent))}): a silent "
            "route over forbidden keys."
        )
    if st.style == "boolean" and empty.any():
        parts.append(
            f"No legal key ({_names(row_labels, np.flatnonzero(empty))}): the Boolean mask "
            "declares no route; weights left at 0."
        )
    return PrecisionData(
        st.dtype, st.style, value, stored, weights, inp, forbidden, leaked_cells, leaked,
        nan_rows, empty, inp.boost, float(st.logit), leaked_total, max_diff, row_labels,
        col_labels, receiving, title, summary, " ".join(parts),
    )  # fmt: skip


# ---- the precision table ------------------------------------------------------------------------
TABLE_HEADER = ("dtype", "mask", "stored", "leak", "NaN", "silent", "+L")


@dataclass(frozen=True)
class TableData:
    """The engine's precision table as texts: ``header`` and ``rows`` (one per dtype × mask
    value), ``current`` the row of the lab's choice (None for the Boolean style)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    keys: tuple[tuple[str, str], ...]
    current: int | None
    large_logit: float
    caption: str


def _short(x: float) -> str:
    if math.isinf(x) or abs(x) < 1e5:
        return fmt_number(x, 0)
    return f"{x:.2e}".replace("-", "−").replace("e+", "e")


def table_rows(inp: LabInputs, logit: float) -> tuple[PrecisionRow, ...]:
    """The engine's :func:`precision_table` on the lab's inputs (the probe uses ``logit``)."""
    return precision_table(
        inp.q, inp.k, inp.v, mask=inp.mask, large_logit=logit, scale=False
    )  # fmt: skip


def table_data(rows: tuple[PrecisionRow, ...], st: PrecisionLabState) -> TableData:
    """The rows of :func:`table_rows` as texts, the state's (dtype, mask) marked current."""
    texts, keys = [], []
    for r in rows:
        texts.append((
            r.dtype, r.mask_label.replace("-", "−"), _short(r.stored_mask_value),
            fmt_significant(r.leaked_weight),
            str(r.nan_rows), str(r.silent_rows),
            fmt_significant(r.probe_leak) if r.probe_route_finite else "−∞",
        ))  # fmt: skip
        keys.append((r.dtype, r.mask_label))
    key = (st.dtype, st.style)
    current = keys.index(key) if key in keys else None
    big = rows[0].large_logit if rows else st.logit
    caption = (
        "leak: the largest weight a row with a legal key puts on forbidden keys; silent: rows "
        f"with no legal key that come out finite; +L: the weight of a forbidden key of logit "
        f"{fmt_number(big, 0)} beside an allowed one at 0, or −∞ where the mask keeps its "
        "logit at −∞ (no route at all)."
    )
    return TableData(TABLE_HEADER, tuple(texts), tuple(keys), current, big, caption)


# ---- dropout ------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class DropoutData:
    """Dropout on the scenario's weights: ``realised`` (n_q, n_k) the weights the output uses,
    ``expected`` the undropped weights (their expectation over seeds), ``kept`` which survived,
    ``output_diff`` (n_q, d_v) realised output minus the reference; ``max_diff`` its largest
    magnitude (exactly 0 in evaluation or with dropout off)."""

    active: bool
    train: bool
    p: float
    seed: int
    realised: Array
    expected: Array
    kept: NDArray[np.bool_]
    forbidden: NDArray[np.bool_]
    output_diff: Array
    max_diff: float
    row_sums: Array
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    v_labels: tuple[str, ...]
    receiving: int
    summary: str


def dropout_data(
    trace: HeadTrace,
    receiving: int,
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    v_labels: tuple[str, ...],
    st: PrecisionLabState,
) -> DropoutData:
    """The engine's :func:`dropout_attention` on the scenario's head (its own mask)."""
    q = np.asarray(trace.Q, dtype=np.float64) / trace.divisor
    p = st.p if st.dropout else 0.0
    r = dropout_attention(
        q, trace.K, trace.V, p=p, seed=st.seed, train=st.train, mask=trace.mask, scale=False
    )
    diff = r.output - r.expected_output
    max_diff = float(np.max(np.abs(diff), initial=0.0))
    sums = r.dropped_weights.sum(axis=1)
    if not st.train:
        mode = "Evaluation: dropout is off, the weights are the reference's"
    elif not st.dropout:
        mode = "Training with dropout switched off: nothing is dropped"
    else:
        kept = int(r.kept[trace.mask].sum())
        mode = (
            f"Training, p = {fmt_significant(p)}, seed {st.seed}: {kept} of "
            f"{int(trace.mask.sum())} legal weights kept and scaled by 1/(1 − p) = "
            f"{fmt_number(1 / (1 - p), 3)}; {row_labels[receiving]}'s weights sum to "
            f"{fmt_number(sums[receiving], 3)}"
        )
    exact = " (exactly)" if max_diff == 0.0 else ""
    summary = (
        f"{mode}.\nLargest difference from the output without dropout: "
        f"{fmt_significant(max_diff)}{exact}."
    )
    return DropoutData(
        bool(st.dropout), bool(st.train), p, st.seed, r.dropped_weights, r.weights, r.kept,
        ~np.asarray(trace.mask, dtype=bool), diff, max_diff, sums, row_labels, col_labels,
        v_labels, receiving, summary,
    )  # fmt: skip
