"""The "Position and sharing" lab: rotary positions as a rotation in a plane, ALiBi and
window/sink masks on the current scenario's weights, and key/value heads shared between query
heads.

Everything here is drawn from :mod:`attnsim.engine.variants`: the angles, rotated vectors and
scores of RoPE, the ALiBi bias, the window mask, the recomputed weights and the sharing counts
are the engine's numbers; this module only picks the scenario's rows, clamps the lab's settings
to the scenario and writes the sentences.

The lab's settings are one frozen dataclass, :class:`PositionLabState`, held by the workbench
(undoable like every edit), and declared once as :data:`SETTINGS`, whose check raises
ValueError with the reason, which the panel shows inline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.attention import HeadTrace
from attnsim.engine.numbers import fmt_fixed, fmt_number
from attnsim.engine.settings import LabSettings, Setting
from attnsim.engine.variants import (
    ROPE_BASE,
    SharingCounts,
    alibi_bias,
    alibi_slopes,
    apply_rope,
    grouped_query_attention,
    rope_angle,
    rope_frequencies,
    sharing_counts,
    sliding_window_mask,
)

Array = NDArray[np.float64]

__all__ = [
    "DTYPE_BYTES",
    "HEADS_MAX",
    "MASK_MODES",
    "MODE_NAMES",
    "POSITION_MAX",
    "SETTINGS",
    "SHIFT_MAX",
    "SIZE_MAX",
    "MaskData",
    "PositionLabState",
    "RotationData",
    "SharingData",
    "fmt_bytes",
    "kv_group",
    "mask_data",
    "rope_width",
    "rotation_data",
    "sharing_data",
]

POSITION_MAX = 100  # the query and key position sliders run over 0 .. POSITION_MAX
SHIFT_MAX = 1000  # "shift both" moves both positions by c in 0 .. SHIFT_MAX
HEADS_MAX = 256  # h and g are counted, not drawn one by one, beyond what fits
SIZE_MAX = 10**7  # d_model, d_k and n above this are refused (the counts stay readable)
MASK_MODES = ("none", "alibi", "window")
MODE_NAMES = {"none": "no bias or mask", "alibi": "ALiBi", "window": "sliding window + sinks"}
DTYPE_BYTES = {"float32": 4, "float16 / bfloat16": 2, "int8": 1}


@dataclass(frozen=True)
class PositionLabState:
    """The lab's settings.

    RoPE: the scenario key ``key`` (0-based) is rotated against the receiving query, over their
    first ``width`` coordinates (0: the largest even number <= d_k); ``pair`` is the plane
    shown; the query sits at ``q_pos + shift``, the key at ``k_pos + shift``.
    Masks: ``mode`` is one of :data:`MASK_MODES`; ALiBi uses head ``alibi_head`` of
    ``alibi_heads`` heads' slopes; the window keeps the ``window`` most recent keys and the
    first ``sinks`` ones. Sharing: ``h`` query heads over ``g`` key/value heads of width ``d_k``
    in a ``d_model`` model, a cache of ``n`` tokens of ``dtype_bytes`` bytes per number.
    """

    key: int = 0
    width: int = 0
    pair: int = 0
    q_pos: int = 5
    k_pos: int = 2
    shift: int = 0
    mode: str = "none"
    alibi_heads: int = 8
    alibi_head: int = 0
    window: int = 3
    sinks: int = 1
    h: int = 32
    g: int = 8
    d_model: int = 4096
    d_k: int = 128
    n: int = 8192
    dtype_bytes: int = 2


def _even_width(st: PositionLabState) -> str:
    if st.width % 2:
        return f"d must be even (RoPE turns pairs of coordinates), got {st.width}"
    return ""


def _g_divides_h(st: PositionLabState) -> str:
    if st.h % st.g:
        return (
            f"g = {st.g} does not divide h = {st.h}: each key/value head must serve the same "
            "number of query heads"
        )
    return ""


def _pair_within(st: PositionLabState) -> PositionLabState:
    # a narrower d has fewer pairs: keep the plane on the last one that exists
    return replace(st, pair=min(st.pair, max(st.width // 2 - 1, 0)))


# Scenario-dependent settings (key, width, pair) are clamped when drawn, since the scenario can
# change under them; here they only have to lie in their outer bounds.
SETTINGS = LabSettings("Position lab", PositionLabState, (
    Setting("key", "key", tip="The scenario key rotated against the receiving query"),
    Setting("width", "d", then=_pair_within,
            tip="d: how many leading coordinates of q and k RoPE turns (even, at most d_k); "
                "it also sets the frequencies θ_i = 10000^(−2i/d)"),
    Setting("pair", "pair i", tip="Which pair of coordinates (2i+1, 2i+2) the plane shows"),
    Setting("q_pos", "query position m", hi=POSITION_MAX),
    Setting("k_pos", "key position n", hi=POSITION_MAX),
    Setting("shift", "shift both by c", hi=SHIFT_MAX,
            tip="Move the query and the key by the same c: every angle changes, the score "
                "does not"),
    Setting("mode", "add", "choice", choices=MASK_MODES,
            names=tuple(MODE_NAMES[m] for m in MASK_MODES),
            tip="What is added to the scenario's logits before the softmax"),
    Setting("alibi_heads", "ALiBi heads", lo=1, hi=HEADS_MAX,
            tip="How many heads share out ALiBi's slopes"),
    Setting("alibi_head", "ALiBi head", hi=lambda st: st.alibi_heads - 1, offset=1,
            tip="Which head's slope is applied"),
    Setting("window", "window w", lo=1, tip="Each query reads its w most recent keys"),
    Setting("sinks", "sinks s", tip="The first s keys stay readable by every query"),
    Setting("h", "query heads h", lo=1, hi=HEADS_MAX, tip="Query heads"),
    Setting("g", "key/value heads g", lo=1, hi=HEADS_MAX,
            tip="Key/value heads; g must divide h"),
    Setting("d_model", "d_model", lo=1, hi=SIZE_MAX, tip="Width of the model's residual stream"),
    Setting("d_k", "d_k", lo=1, hi=SIZE_MAX, tip="Width of one head's queries, keys and values"),
    Setting("n", "cached tokens n", lo=1, hi=SIZE_MAX, tip="Tokens held in the key/value cache"),
    Setting("dtype_bytes", "cache dtype", "choice", choices=tuple(DTYPE_BYTES.values()),
            names=tuple(DTYPE_BYTES), tip="The size of one cached number"),
), rules=(_even_width, _g_divides_h))  # fmt: skip


# ---- RoPE -------------------------------------------------------------------------------------
def rope_width(d_k: int, width: int) -> int:
    """The number of coordinates RoPE turns: ``width`` if it fits, else the largest even
    number <= d_k (0 when d_k < 2: there is no pair to turn)."""
    top = d_k - d_k % 2
    return top if width <= 0 or width > top else width - width % 2


def _degrees(angle: float) -> str:
    """An angle in radians as degrees in [0, 360): the plane shows it turned that far."""
    return f"{fmt_fixed(math.degrees(angle) % 360.0, 1)}°"


@dataclass(frozen=True, eq=False)
class RotationData:
    """One pair of the receiving query and of a key, before and after RoPE.

    ``q_pair``/``k_pair`` (2,) the pair's coordinates, ``q_rot``/``k_rot`` (2,) turned by
    ``q_angle``/``k_angle`` radians (positions ``q_at``/``k_at``); ``score`` is the whole rotated
    dot product over the first ``d`` coordinates, ``score_unshifted`` the same at shift 0,
    ``plain_score`` without rotation, ``pair_score`` the chosen pair's part of ``score``.
    ``message`` is non-empty when there is nothing to rotate (d_k < 2).
    """

    message: str
    q_label: str
    k_label: str
    key: int
    d: int
    d_k: int
    pair: int
    theta: float
    q_at: int
    k_at: int
    shift: int
    q_pair: Array
    k_pair: Array
    q_rot: Array
    k_rot: Array
    q_angle: float
    k_angle: float
    score: float
    score_unshifted: float
    plain_score: float
    pair_score: float
    key_labels: tuple[str, ...]

    @property
    def readout(self) -> str:
        """The numbers under the plane, in words."""
        if self.message:
            return self.message
        i = self.pair
        return (
            f"θ_{i} = {ROPE_BASE:g}^(−2·{i}/{self.d}) = {fmt_number(self.theta, 4)} rad per "
            f"position. Query at {self.q_at}: turned {_degrees(self.q_angle)}; key at "
            f"{self.k_at}: turned {_degrees(self.k_angle)}; "
            f"offset {self.k_at - self.q_at}. "
            f"|q pair| = {fmt_number(math.hypot(*self.q_pair), 3)}, |k pair| = "
            f"{fmt_number(math.hypot(*self.k_pair), 3)}. "
            f"q_rot · k_rot = {fmt_number(self.score, 4)} (pair {i}: "
            f"{fmt_number(self.pair_score, 4)}), unrotated q · k = "
            f"{fmt_number(self.plain_score, 4)}."
        )

    @property
    def shift_text(self) -> str:
        """The "shift both" check: the score at shift c beside the score at shift 0."""
        if self.message:
            return ""
        diff = abs(self.score - self.score_unshifted)
        return (
            f"Shift both by c = {self.shift}: score {fmt_number(self.score, 6)} vs "
            f"{fmt_number(self.score_unshifted, 6)} at c = 0 (difference "
            f"{fmt_number(diff, 2) if diff == 0 or diff >= 1e-2 else f'{diff:.1e}'}): "
            "only the offset counts."
        )


def _dot(a: Array, b: Array) -> float:
    """``a · b`` that overflows to ±inf, never to NaN: summed on the vectors scaled to at most 1,
    so only the final product by the two scales can overflow. (Summed directly, products of
    1e200-sized coordinates overflow to +inf and -inf and their sum is NaN or ±inf depending
    on the order the BLAS kernel adds them in.)"""
    sa, sb = float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0))
    if sa == 0.0 or sb == 0.0:
        return 0.0
    core = float((a / sa) @ (b / sb))
    return 0.0 if core == 0.0 else core * sa * sb


def rotation_data(
    Q: ArrayLike,
    K: ArrayLike,
    receiving: int,
    query_label: str,
    key_labels: tuple[str, ...],
    state: PositionLabState,
) -> RotationData:
    """RoPE on the receiving query ``Q[receiving]`` and key ``K[state.key]`` (clamped), their
    first d coordinates, at the state's positions. Q (n_q, d_k), K (n_k, d_k)."""
    Qa, Ka = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64)
    d_k = int(Qa.shape[1])
    j = min(max(state.key, 0), Ka.shape[0] - 1)
    d = rope_width(d_k, state.width)
    zero = np.zeros(2)
    if d < 2:
        return RotationData(
            f"d_k = {d_k}: RoPE turns pairs of coordinates, and this scenario has fewer than "
            "two.", query_label, key_labels[j], j, 0, d_k, 0, 0.0, state.q_pos + state.shift,
            state.k_pos + state.shift, state.shift, zero, zero, zero, zero, 0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, key_labels,
        )  # fmt: skip
    pair = min(state.pair, d // 2 - 1)
    q, k = Qa[receiving, :d], Ka[j, :d]
    q_at, k_at = state.q_pos + state.shift, state.k_pos + state.shift
    q_rot = apply_rope(q[None, :], [q_at])[0]
    k_rot = apply_rope(k[None, :], [k_at])[0]
    q0 = apply_rope(q[None, :], [state.q_pos])[0]
    k0 = apply_rope(k[None, :], [state.k_pos])[0]
    sl = slice(2 * pair, 2 * pair + 2)
    score, unshifted = _dot(q_rot, k_rot), _dot(q0, k0)
    plain, pair_score = _dot(q, k), _dot(q_rot[sl], k_rot[sl])
    return RotationData(
        "", query_label, key_labels[j], j, d, d_k, pair, float(rope_frequencies(d)[pair]),
        q_at, k_at, state.shift, q[sl].copy(), k[sl].copy(), q_rot[sl].copy(), k_rot[sl].copy(),
        rope_angle(q_at, pair, d), rope_angle(k_at, pair, d), score, unshifted, plain,
        pair_score, key_labels,
    )  # fmt: skip


# ---- ALiBi and window/sink masks --------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MaskData:
    """The scenario's weights (n_q, n_k) and the same head recomputed with the chosen bias or
    mask: ``weights``, ``forbidden`` (True: the key may not be read), ``bias`` (n_q, n_k) or
    None; ``empty_rows`` lists queries left with no legal key (drawn all hatched, weight 0)."""

    mode: str
    base_weights: Array
    base_forbidden: NDArray[np.bool_]
    weights: Array
    forbidden: NDArray[np.bool_]
    bias: Array | None
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    title: str
    caption: str
    empty_rows: tuple[int, ...]
    max_change: float
    receiving: int


def mask_data(
    trace: HeadTrace,
    receiving: int,
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    state: PositionLabState,
) -> MaskData:
    """The head of ``trace`` recomputed by the engine with ALiBi or a window/sink mask.

    The scenario's own mask stays (a bias or a window only ever removes or penalises keys);
    the logits are the trace's, ``q · k`` divided by its divisor, so with no bias and no mask
    the weights are the scenario's.
    """
    base_w = np.asarray(trace.weights, dtype=np.float64)
    base_allowed = np.asarray(trace.mask, dtype=bool)
    n_q, n_k = base_w.shape
    allowed, bias = base_allowed, None
    mode = state.mode if state.mode in MASK_MODES else "none"
    if mode == "alibi":
        heads = max(1, state.alibi_heads)
        head = min(max(state.alibi_head, 0), heads - 1)
        slope = float(alibi_slopes(heads)[head])
        bias = alibi_bias([slope], n_q, n_k)[0]
        title = f"Weights with ALiBi, head {head + 1} of {heads} (slope m = {fmt_number(slope, 4)})"
        caption = (
            "ALiBi adds −m·|i − j| to each logit: a key d positions away loses "
            f"{fmt_number(slope, 4)}·d. Slopes 2^(−8k/h), k = 1..h, as in the paper."
        )
    elif mode == "window":
        allowed = base_allowed & sliding_window_mask(
            n_q, n_k, window=state.window, sinks=state.sinks
        )
        title = f"Weights with a window of w = {state.window} and s = {state.sinks} sinks"
        caption = (
            f"Causal: query i reads key j ≤ i when i − j < {state.window} (the most recent keys) "
            f"or j < {state.sinks} (sink tokens kept from the start). Hatched: forbidden."
        )
    else:
        title = "Weights of the scenario (no bias, no mask added)"
        caption = "Pick ALiBi or a sliding window to recompute these weights with the engine."
    live = allowed.any(axis=1)
    weights = np.zeros_like(base_w)
    if mode == "none":
        weights = base_w.copy()
    elif live.any():
        # Queries with no legal key have no route; the others are recomputed as one head.
        q = np.asarray(trace.Q, dtype=np.float64)[live] / trace.divisor
        b = None if bias is None else bias[live][None]
        with np.errstate(over="ignore", invalid="ignore"):
            try:
                _, w = grouped_query_attention(
                    q[None], np.asarray(trace.K)[None], np.asarray(trace.V)[None],
                    mask=allowed[live][None], bias=b, scale=False,
                )  # fmt: skip
                weights[live] = w[0]
            except ValueError as exc:  # logits beyond the float range
                caption = f"The engine cannot weigh this scenario: {exc}."
                weights[:] = np.nan
    empty = tuple(int(i) for i in np.flatnonzero(~live))
    if empty and mode != "none":
        names = ", ".join(row_labels[i] for i in empty[:3]) + (" …" if len(empty) > 3 else "")
        caption += f" No legal key left for {names}: weight 0."
    finite = np.isfinite(weights) & np.isfinite(base_w)
    change = float(np.max(np.abs(weights - base_w)[finite], initial=0.0))
    return MaskData(
        mode, base_w, ~base_allowed, weights, ~allowed, bias, row_labels, col_labels, title,
        caption, empty, change, receiving,
    )  # fmt: skip


# ---- shared key/value heads ---------------------------------------------------------------------
def kv_group(h: int, g: int) -> NDArray[np.int_]:
    """Which key/value head each of the h query heads reads: ``j // (h / g)``, shape (h,)."""
    return np.arange(h) // (h // g)


def fmt_bytes(n: float) -> str:
    """Bytes in binary units, three significant digits: 512 B, 1.50 KiB, 2.00 GiB."""
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(v) < 1024 or unit == "PiB":
            return f"{int(v)} B" if unit == "B" else f"{v:.3g} {unit}"
        v /= 1024
    raise AssertionError  # pragma: no cover


def _count_text(x: int) -> str:
    """A count with thousands separated (thin spaces), so 16777216 reads as 16 777 216."""
    return f"{x:,}".replace(",", "\u2009")


@dataclass(frozen=True, eq=False)
class SharingData:
    """The sharing diagram (``group`` (h,): the key/value head of each query head) and the
    counts; ``rows`` are (what, this layout, multi-head attention) texts for the table."""

    h: int
    g: int
    group: NDArray[np.int_]
    counts: SharingCounts
    n: int
    rows: tuple[tuple[str, str, str], ...]
    caption: str


def sharing_data(state: PositionLabState) -> SharingData:
    """The counts of :func:`attnsim.engine.variants.sharing_counts` for the state's shape."""
    c = sharing_counts(state.h, state.g, state.d_model, state.d_k, dtype_bytes=state.dtype_bytes)
    n = state.n
    mha = sharing_counts(state.h, state.h, state.d_model, state.d_k, dtype_bytes=c.dtype_bytes)
    rows = (
        ("Wk + Wv parameters", _count_text(c.key_params + c.value_params),
         _count_text(mha.key_params + mha.value_params)),
        ("all parameters (Wq Wk Wv Wo)", _count_text(c.params), _count_text(c.mha_params)),
        ("KV cache per token", fmt_bytes(c.kv_bytes_per_token),
         fmt_bytes(c.mha_kv_bytes_per_token)),
        (f"KV cache, n = {_count_text(n)}", fmt_bytes(c.kv_cache_bytes(n)),
         fmt_bytes(mha.kv_cache_bytes(n))),
    )  # fmt: skip
    per = c.h // c.g
    caption = (
        f"{c.kind}: {c.h} query heads share {c.g} key/value head{'s' if c.g > 1 else ''} "
        f"({per} per group); the cache is {fmt_fixed(100 * c.cache_ratio, 1)} % of multi-head "
        "attention's. One layer, biases left out."
    )
    return SharingData(c.h, c.g, kv_group(c.h, c.g), c, n, rows, caption)
