"""Mask semantics, reduced precision and dropout: the parts of the routing contract that a
formula leaves implicit.

- A **Boolean mask** says which keys a query may read (True = allowed, as everywhere in the
  engine). An **additive mask** is added to the logits: 0 where allowed, a large negative value
  where forbidden. They agree only when that value drives the forbidden weight to zero in the
  dtype the softmax runs in.
- **Reduced precision**: float16 and bfloat16 are emulated in NumPy by rounding to the format
  after every operation (the steps are listed in :func:`low_precision_attention`). A finite
  mask value can overflow to -inf (-1e9 in float16), a logit added to the dtype's minimum can
  overflow too, a row with no legal key becomes NaN with -inf and a silent uniform route with a
  finite value, and a large enough logit turns a finite mask into a live route.
- **Dropout** on the weights changes the realised mixture; its expectation is the mixture
  without dropout, and evaluation (``train=False``) leaves the weights alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _as_float, _require_finite, attention

Array = NDArray[np.floating]

__all__ = [
    "DTYPES",
    "MASK_LABELS",
    "ROW_BLOCK",
    "DropoutRoute",
    "LowPrecisionRoute",
    "PrecisionRow",
    "additive_to_bool",
    "bool_to_additive",
    "dropout_attention",
    "dropout_weights",
    "dtype_min",
    "left_padded_causal_mask",
    "low_precision_attention",
    "mask_value_for",
    "precision_table",
    "round_bfloat16",
    "round_to",
]

DTYPES = ("float64", "float32", "float16", "bfloat16")
# The additive mask values the table compares; "min" is the dtype's most negative finite value.
MASK_LABELS = ("-inf", "-1e4", "-1e9", "min")
# The largest finite bfloat16: float32's exponent range with 8 significant bits.
BFLOAT16_MAX = float(np.float32((2 - 2**-7) * 2.0**127))
# Beyond the margin of a -1e4 mask, yet representable in float16 (max 65504).
DEFAULT_LARGE_LOGIT = 2e4


def _check_dtype(dtype: object) -> str:
    name = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return name


def round_bfloat16(x: ArrayLike) -> NDArray[np.float32]:
    """``x`` rounded to bfloat16, returned as float32 holding exactly those values.

    bfloat16 keeps float32's sign and 8-bit exponent and 8 significant bits (7 stored): the low
    16 bits of the float32 pattern are rounded away, to nearest with ties to even. Values past
    the largest bfloat16 round to +-inf; NaN stays NaN. Subnormals are kept, as in PyTorch.
    """
    a = np.asarray(x, dtype=np.float32)
    flat = np.ascontiguousarray(a).reshape(-1)
    out = np.empty(flat.shape, dtype=np.float32)
    # A million numbers at a time: the 64-bit patterns of a 4,096 x 1,024 matrix would be
    # several 34 MB temporaries.
    for s in range(0, flat.size, _BF16_CHUNK):
        bits = flat[s : s + _BF16_CHUNK].view(np.uint32).astype(np.uint64)
        # Adding 0x7FFF plus the lowest kept bit and truncating is round-to-nearest-even; an
        # overflow of the mantissa carries into the exponent, which is the correct rounding.
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        out[s : s + _BF16_CHUNK] = rounded.view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out.reshape(a.shape))


_BF16_CHUNK = 1 << 20


def round_to(x: ArrayLike, dtype: object) -> Array:
    """``x`` rounded to ``dtype`` (one of :data:`DTYPES`).

    float64 returns float64; the others return float32 arrays holding values representable in
    the format, so the next operation runs in float32 and is rounded again (how float16 and
    bfloat16 are computed on hardware without native arithmetic, and how NumPy's float16 is).
    """
    name = _check_dtype(dtype)
    a = np.asarray(x, dtype=np.float64 if name == "float64" else np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "float16":
            return a.astype(np.float16).astype(np.float32)
        if name == "bfloat16":
            return round_bfloat16(a)
    return a.copy()


def dtype_min(dtype: object) -> float:
    """The most negative finite value of ``dtype`` (-65504 for float16, about -3.39e38 for
    bfloat16): the additive mask value some libraries use instead of -inf."""
    name = _check_dtype(dtype)
    if name == "bfloat16":
        return -BFLOAT16_MAX
    return float(np.finfo(np.dtype(name)).min)


def mask_value_for(label: str, dtype: object) -> float:
    """The additive mask value a label of :data:`MASK_LABELS` stands for in ``dtype``."""
    if label not in MASK_LABELS:
        raise ValueError(f"mask label must be one of {', '.join(MASK_LABELS)}, got {label!r}")
    return dtype_min(dtype) if label == "min" else float(label)


def bool_to_additive(mask: ArrayLike, value: float = -np.inf) -> NDArray[np.float64]:
    """The additive mask of a Boolean one: 0 where ``mask`` is True (allowed), ``value`` where
    it is False. ``value`` must be -inf or a finite negative number. Same shape, float64."""
    m = np.asarray(mask)
    if m.dtype != bool:
        raise ValueError(f"mask must be a boolean array (True = allowed), got dtype {m.dtype}")
    v = float(value)
    if not (np.isneginf(v) or (math.isfinite(v) and v < 0)):
        raise ValueError(f"value must be -inf or a finite negative number, got {value!r}")
    return np.where(m, 0.0, v)


def additive_to_bool(additive: ArrayLike, *, forbidden_at: float = -1e4) -> NDArray[np.bool_]:
    """The Boolean mask an additive one declares: True (allowed) where the entry is above
    ``forbidden_at``, False at or below it.

    The threshold is the declaration: with the default, -1e4, -1e9, any dtype minimum and -inf
    all mean "forbidden", while small biases (ALiBi distances, say) stay allowed. NaN or +inf
    entries have no meaning as a mask and raise.
    """
    a = _as_float(additive, "additive")
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError("additive must not contain NaN or +inf")
    t = float(forbidden_at)
    if not math.isfinite(t) or t >= 0:
        raise ValueError(f"forbidden_at must be a finite negative number, got {forbidden_at!r}")
    return a > t


def left_padded_causal_mask(n: int, pad: int) -> NDArray[np.bool_]:
    """Causal mask of ``n`` positions whose first ``pad`` are padding (no query may read them).

    Query ``i < pad`` then has no legal key at all: the fully masked row that -inf turns into
    NaN. Shape (n, n), True = allowed.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(pad, bool) or not isinstance(pad, int | np.integer) or not 0 <= pad <= n:
        raise ValueError(f"pad must be an integer in [0, {n}], got {pad!r}")
    m = np.tri(n, n, dtype=bool)
    m[:, :pad] = False
    return m


@dataclass(frozen=True, eq=False)
class LowPrecisionRoute:
    """One head computed in a given dtype with an additive mask.

    ``mask`` (n_q, n_k) True = allowed; ``masked_logits``, ``weights`` (n_q, n_k) and
    ``output`` (n_q, d_v) as computed (values representable in ``dtype``, NaN where the
    arithmetic produced it); ``leaked`` (n_q,) the weight each row puts on forbidden keys (NaN
    for a NaN row); ``nan_rows`` (n_q,) True where a row's weights hold NaN.
    ``stored_mask_value`` is ``mask_value`` after rounding to the dtype.
    """

    dtype: str
    mask_value: float
    stored_mask_value: float
    mask: NDArray[np.bool_]
    masked_logits: Array
    weights: Array
    output: Array
    leaked: Array
    nan_rows: NDArray[np.bool_]

    @property
    def no_legal_key(self) -> NDArray[np.bool_]:
        """Rows the mask forbids entirely, shape (n_q,)."""
        return ~self.mask.any(axis=-1)


def _softmax_rounded(logits: Array, additive: Array, name: str) -> tuple[Array, Array]:
    """Masked logits and weights from logits, rounding after each step (see the caller)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        masked = round_to(logits + additive, name)
        top = np.max(masked, axis=-1, keepdims=True)  # a max of representable values: exact
        shifted = round_to(masked - top, name)
        e = round_to(np.exp(shifted), name)
        total = round_to(np.sum(e, axis=-1, keepdims=True), name)
        weights = round_to(e / total, name)
    return masked, weights


# Rows of a table computed at a time: a 4,096-key table in float32 is then 4 MB a step instead
# of several 64 MB tables (each row's softmax needs only its own row, so the numbers are the same).
ROW_BLOCK = 256


def _checked_qkv(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike):
    qa, ka, va = _as_float(q, "q"), _as_float(k, "k"), _as_float(v, "v")
    for arr_name, arr in (("q", qa), ("k", ka), ("v", va)):
        if arr.ndim != 2:
            raise ValueError(f"{arr_name} must have shape (n, d), got {arr.shape}")
        _require_finite(arr, arr_name)
    if qa.shape[1] != ka.shape[1] or ka.shape[0] != va.shape[0]:
        raise ValueError(f"q {qa.shape}, k {ka.shape}, v {va.shape} do not fit (n, d_k) / (n, d_v)")
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (qa.shape[0], ka.shape[0]):
        raise ValueError(
            f"mask must be a boolean array of shape {(qa.shape[0], ka.shape[0])}, "
            f"got dtype {m.dtype} and shape {m.shape}"
        )
    return qa, ka, va, m


@dataclass(frozen=True, eq=False)
class _Rounded:
    """q, k, v rounded to a dtype once (step 1 of :func:`low_precision_attention`), so that
    row blocks and several mask values reuse them."""

    name: str
    q: Array
    k: Array
    v: Array
    d_k: int
    scale: bool

    @classmethod
    def of(cls, qa: Array, ka: Array, va: Array, name: str, scale: bool) -> _Rounded:
        def rounded(a: Array) -> Array:
            # round_to's numbers; float64 and float32 need no copy of their own here (nothing
            # writes into these), which saves three n x d copies at 4,096 tokens
            if name in ("float64", "float32"):
                return np.asarray(a, dtype=np.float64 if name == "float64" else np.float32)
            return round_to(a, name)

        return cls(name, rounded(qa), rounded(ka), rounded(va), int(qa.shape[1]), bool(scale))

    def logits(self, rows: slice) -> Array:
        """Steps 2 and 3 for the queries ``rows``."""
        name = self.name
        with np.errstate(over="ignore", invalid="ignore"):
            scores = round_to(self.q[rows] @ self.k.T, name)
            if not self.scale:
                return scores
            return round_to(scores / math.sqrt(self.d_k), name)

    def route(self, logits: Array, m: NDArray[np.bool_], mask_value: float) -> tuple[Array, Array]:
        """Steps 4 to 8 on a block of logits whose mask rows are ``m``."""
        additive = round_to(bool_to_additive(m, mask_value), self.name)
        return _softmax_rounded(logits, additive, self.name)


def low_precision_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike,
    mask_value: float = -np.inf,
    dtype: object = "float32",
    scale: bool = True,
) -> LowPrecisionRoute:
    """Attention with an additive mask in ``dtype``, rounding where hardware would.

    Parameters
    ----------
    q : (n_q, d_k), k : (n_k, d_k), v : (n_k, d_v), finite
    mask : bool (n_q, n_k), True = allowed. Rows with no legal key are allowed here (they are
        the point): the result shows what each mask value makes of them.
    mask_value : -inf or a finite negative number, added to the forbidden logits.
    dtype : one of :data:`DTYPES`.

    The computation, rounding to ``dtype`` after every numbered step (float16 / bfloat16 steps
    run in float32 in between, products and sums accumulate in float32 as on tensor cores):
    (1) q, k, v and the mask value; (2) scores ``q k^T``; (3) logits ``scores / sqrt(d_k)``;
    (4) masked logits ``logits + additive mask``; (5) ``masked - row max``; (6) ``exp``;
    (7) the row sum; (8) weights ``exp / sum``; (9) output ``weights v``.
    """
    name = _check_dtype(dtype)
    qa, ka, va, m = _checked_qkv(q, k, v, mask)
    bool_to_additive(m[:0], mask_value)  # refuses a bad mask value before any work
    stored = float(round_to(mask_value, name))
    r = _Rounded.of(qa, ka, va, name, scale)
    everything = slice(None)
    masked, weights = r.route(r.logits(everything), m, mask_value)
    with np.errstate(over="ignore", invalid="ignore"):
        output = round_to(weights @ r.v, name)
    nan_rows = np.isnan(weights).any(axis=-1)
    leaked = np.where(m, 0.0, weights).sum(axis=-1)
    return LowPrecisionRoute(
        dtype=name,
        mask_value=float(mask_value),
        stored_mask_value=stored,
        mask=m.copy(),
        masked_logits=masked,
        weights=weights,
        output=output,
        leaked=leaked,
        nan_rows=nan_rows,
    )


@dataclass(frozen=True)
class PrecisionRow:
    """One (dtype, mask value) cell of :func:`precision_table`.

    ``leaked_weight``: the largest weight a row with at least one legal key puts on forbidden
    keys (NaN rows excluded). ``nan_rows``: rows whose weights hold NaN. ``silent_rows``: rows
    with no legal key that came out finite (a uniform-looking route over forbidden keys instead
    of an error). The probe: one query with an allowed key of logit 0 and a forbidden key of
    logit ``large_logit``; ``probe_masked_logit`` is that key's logit after the mask,
    ``probe_route_finite`` whether it is finite (a route the softmax still weighs), and
    ``probe_leak`` the weight it receives.
    """

    dtype: str
    mask_label: str
    mask_value: float
    stored_mask_value: float
    leaked_weight: float
    nan_rows: int
    silent_rows: int
    large_logit: float
    probe_masked_logit: float
    probe_route_finite: bool
    probe_leak: float


def precision_table(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike,
    dtypes: tuple[str, ...] = DTYPES,
    mask_labels: tuple[str, ...] = MASK_LABELS,
    large_logit: float = DEFAULT_LARGE_LOGIT,
    scale: bool = True,
) -> tuple[PrecisionRow, ...]:
    """For each dtype and mask value, what the additive mask does to ``q, k, v`` under ``mask``
    (see :class:`PrecisionRow`), in the order dtypes x mask labels.

    Each row of a cell is :func:`low_precision_attention`'s row; they are computed
    :data:`ROW_BLOCK` query rows at a time, the logits of a block once per dtype for every mask
    value, so the peak memory does not grow as several (n_q, n_k) tables."""
    big = float(large_logit)
    if not math.isfinite(big) or big <= 0:
        raise ValueError(f"large_logit must be a positive finite number, got {large_logit!r}")
    names = [_check_dtype(dtype) for dtype in dtypes]
    values = {(nm, lb): mask_value_for(lb, nm) for nm in names for lb in mask_labels}
    qa, ka, va, m = _checked_qkv(q, k, v, mask)
    n_q = qa.shape[0]
    no_key = ~m.any(axis=-1)
    rows = []
    for name in names:
        r = _Rounded.of(qa, ka, va, name, scale)
        leaked = {lb: np.zeros(n_q) for lb in mask_labels}
        nan = {lb: np.zeros(n_q, dtype=bool) for lb in mask_labels}
        for start in range(0, n_q, ROW_BLOCK):
            block = slice(start, min(start + ROW_BLOCK, n_q))
            logits = r.logits(block)
            for label in mask_labels:
                _, w = r.route(logits, m[block], values[name, label])
                nan[label][block] = np.isnan(w).any(axis=-1)
                leaked[label][block] = np.where(m[block], 0.0, w).sum(axis=-1)
        for label in mask_labels:
            value = values[name, label]
            legal = ~no_key & ~nan[label]
            probe_logits = round_to(np.array([[0.0, big]]), name)
            probe_add = round_to(np.array([[0.0, value]]), name)
            masked, w = _softmax_rounded(probe_logits, probe_add, name)
            rows.append(
                PrecisionRow(
                    dtype=name,
                    mask_label=label,
                    mask_value=value,
                    stored_mask_value=float(round_to(value, name)),
                    leaked_weight=float(leaked[label][legal].max()) if legal.any() else 0.0,
                    nan_rows=int(nan[label].sum()),
                    silent_rows=int((no_key & ~nan[label]).sum()),
                    large_logit=big,
                    probe_masked_logit=float(masked[0, 1]),
                    probe_route_finite=bool(np.isfinite(masked[0, 1])),
                    probe_leak=float(w[0, 1]),
                )
            )
    return tuple(rows)


def _check_p(p: float) -> float:
    try:
        pf = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"p must be a number in [0, 1), got {p!r}") from None
    if not 0.0 <= pf < 1.0:
        raise ValueError(f"p must be a number in [0, 1), got {p!r}")
    return pf


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def dropout_weights(
    weights: ArrayLike, p: float, *, seed: int, train: bool = True
) -> tuple[Array, NDArray[np.bool_]]:
    """Inverted dropout on attention weights.

    Each weight is kept with probability ``1 - p`` (independently, from ``seed``) and divided
    by ``1 - p``, so its expectation is unchanged; dropped weights become 0 and a row no longer
    sums to 1. With ``train=False`` (evaluation) the weights come back unchanged and every
    entry is kept. Returns ``(new weights, kept)`` of the shape of ``weights``.
    """
    pf, s = _check_p(p), _check_seed(seed)
    w = _as_float(weights, "weights")
    if not train:
        return w.copy(), np.ones(w.shape, dtype=bool)
    keep = np.random.default_rng(s).random(w.shape) >= pf
    return np.where(keep, w / (1.0 - pf), 0.0), keep


@dataclass(frozen=True, eq=False)
class DropoutRoute:
    """One head with dropout on its weights.

    ``weights`` (n_q, n_k) before dropout; ``kept`` and ``dropped_weights`` after it;
    ``output`` (n_q, d_v) the realised mixture ``dropped_weights @ v``; ``expected_output`` the
    mixture without dropout, which is the expectation of ``output`` over seeds.
    """

    p: float
    seed: int
    train: bool
    weights: Array
    kept: NDArray[np.bool_]
    dropped_weights: Array
    output: Array
    expected_output: Array


def dropout_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    p: float,
    seed: int,
    train: bool = True,
    mask: ArrayLike | None = None,
    scale: bool = True,
) -> DropoutRoute:
    """``attention(q, k, v)`` with :func:`dropout_weights` applied to its weights.

    q (n_q, d_k), k (n_k, d_k), v (n_k, d_v); mask as in ``attention()``.
    """
    expected, w = attention(q, k, v, mask=mask, scale=scale)
    dropped, kept = dropout_weights(w, p, seed=seed, train=train)
    va = np.asarray(v, dtype=w.dtype)
    return DropoutRoute(
        p=_check_p(p),
        seed=_check_seed(seed),
        train=bool(train),
        weights=w,
        kept=kept,
        dropped_weights=dropped,
        output=dropped @ va,
        expected_output=expected,
    )
