"""Modern attention variants: rotary positions, linear distance biases, window and sink masks,
and key/value heads shared between query heads.

Each is a function of plain arrays, checked against the formulation the common implementations
use (see tests/engine/test_variants.py). The token-by-token key/value cache that reads them is
in :mod:`attnsim.engine.kv_cache`.

Conventions: a head's queries are ``(..., n, d)``, one token per row; a stack of heads puts the
head axis third from the end, ``(..., h, n, d)``; masks are boolean, True = the query may read
the key (as in :func:`attnsim.engine.attention.attention`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .attention import _as_float, _check_mask, _finite_number, _require_finite, _softmax_inplace

Array = NDArray[np.floating]

__all__ = [
    "ROPE_BASE",
    "ROPE_LAYOUTS",
    "SharingCounts",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "grouped_query_attention",
    "repeat_kv",
    "rope_angle",
    "rope_angles",
    "rope_frequencies",
    "rope_permutation",
    "sharing_counts",
    "sliding_window_mask",
]

ROPE_BASE = 10000.0
# "interleaved": pair i is coordinates (2i, 2i+1), as in the RoFormer paper and GPT-J.
# "rotate_half": pair i is coordinates (i, i + d/2), as in GPT-NeoX and Llama.
ROPE_LAYOUTS = ("interleaved", "rotate_half")


def _count(value: object, name: str, *, minimum: int) -> int:
    """``value`` as an int >= ``minimum`` (bools and non-integral floats refused)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        out = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        if isinstance(value, float) and value.is_integer():
            out = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if out < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return out


def _check_base(base: float) -> float:
    return _finite_number(base, "base", lambda b: b > 1.0, "finite and > 1")


def _even_width(d: object) -> int:
    width = _count(d, "d", minimum=2)
    if width % 2:
        raise ValueError(f"d must be even (RoPE rotates pairs of coordinates), got {d!r}")
    return width


# --------------------------------------------------------------------------------------- RoPE


def rope_frequencies(d: int, *, base: float = ROPE_BASE) -> Array:
    """The rotation frequencies of RoPE: ``theta_i = base ** (-2 i / d)`` for ``i < d / 2``.

    Pair 0 turns by one radian per position; the last pair by almost ``1 / base``. Shape (d/2,).
    """
    width = _even_width(d)
    b = _check_base(base)
    return b ** (-2.0 * np.arange(width // 2) / width)


def rope_angles(positions: ArrayLike, d: int, *, base: float = ROPE_BASE) -> Array:
    """The angle each pair is turned by at each position: ``positions[..., None] * theta``.

    ``positions`` of shape ``P`` (integers or reals, finite) gives shape ``P + (d/2,)``, in
    radians, not reduced modulo 2 pi (the offset property is about differences of these).
    """
    theta = rope_frequencies(d, base=base)
    pos = _as_float(positions, "positions")
    _require_finite(pos, "positions")
    return pos.astype(np.float64, copy=False)[..., None] * theta


def rope_angle(position: float, pair: int, d: int, *, base: float = ROPE_BASE) -> float:
    """The angle in radians by which pair ``pair`` (0-based, ``< d/2``) of a ``d``-wide query or
    key is turned at ``position``: ``position * base ** (-2 pair / d)``, not reduced mod 2 pi."""
    width = _even_width(d)
    i = _count(pair, "pair", minimum=0)
    if i >= width // 2:
        raise ValueError(f"pair must be < d/2 = {width // 2}, got {pair!r}")
    p = _finite_number(position, "position")
    return p * float(rope_frequencies(width, base=base)[i])


def rope_permutation(d: int) -> NDArray[np.intp]:
    """The coordinate order that turns the interleaved layout into the rotate-half one.

    ``perm = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]``: for any x and positions,
    ``apply_rope(x[..., perm], layout="rotate_half") == apply_rope(x)[..., perm]``,
    and since a permutation preserves dot products, both layouts give the same scores.
    """
    width = _even_width(d)
    return np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])


def apply_rope(
    x: ArrayLike,
    positions: ArrayLike | None = None,
    *,
    base: float = ROPE_BASE,
    layout: str = "interleaved",
) -> Array:
    """Rotary position embedding of queries or keys.

    Parameters
    ----------
    x : array, shape (..., n, d), d even
        One row per token.
    positions : array broadcastable to (..., n), optional
        The position of each row; ``0 .. n-1`` when omitted.
    base : float
        ``theta_i = base ** (-2 i / d)``; 10000 in the paper and most models.
    layout : "interleaved" or "rotate_half"
        Which coordinates form pair i: ``(2i, 2i+1)`` or ``(i, i + d/2)``. Pair i at
        position p is turned by the angle ``p * theta_i`` in its plane,
        ``(a, b) -> (a cos - b sin, a sin + b cos)``.

    Returns
    -------
    array, shape of ``x``: the rotated rows. Because each rotation is orthogonal and the angle is
    linear in p, ``rope(q, m) · rope(k, n)`` depends on m and n only through ``n - m``.
    """
    if layout not in ROPE_LAYOUTS:
        raise ValueError(f"layout must be one of {ROPE_LAYOUTS}, got {layout!r}")
    xa = _as_float(x, "x")
    if xa.ndim < 2:
        raise ValueError(f"x must have shape (..., n, d), got {xa.shape}")
    _require_finite(xa, "x")
    n, width = xa.shape[-2], xa.shape[-1]
    _even_width(width)
    pos = np.arange(n, dtype=np.float64) if positions is None else positions
    angles = rope_angles(pos, width, base=base)
    try:
        fits = np.broadcast_shapes(angles.shape[:-1], xa.shape[:-1]) == xa.shape[:-1]
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"positions of shape {np.shape(pos)} do not broadcast to the rows of x {xa.shape[:-1]}"
        )
    # angles in float64 (a float32 position times a frequency loses the offset property
    # early), the rotation in the dtype of x
    cos, sin = np.cos(angles).astype(xa.dtype), np.sin(angles).astype(xa.dtype)
    if layout == "interleaved":
        a, b = xa[..., 0::2], xa[..., 1::2]
    else:
        a, b = xa[..., : width // 2], xa[..., width // 2 :]
    first, second = a * cos - b * sin, a * sin + b * cos
    out = np.empty((*xa.shape[:-1], width), first.dtype)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : width // 2], out[..., width // 2 :] = first, second
    return out


# -------------------------------------------------------------------------------------- ALiBi


def alibi_slopes(h: int) -> Array:
    """The per-head slopes of ALiBi (Press, Smith and Lewis, 2022), shape (h,).

    For h a power of two, head i (0-based) gets ``2 ** (-8 (i + 1) / h)``: a geometric
    sequence from ``2 ** (-8/h)`` down to ``2 ** -8``. Otherwise, as in the reference
    implementation: the slopes of the largest power of two ``c < h``, followed by the
    even-indexed slopes (0, 2, 4, ...) of ``2c`` heads, ``h - c`` of them.
    """
    heads = _count(h, "h", minimum=1)

    def power_of_two(m: int) -> Array:
        return 2.0 ** (-8.0 * np.arange(1, m + 1) / m)

    if heads & (heads - 1) == 0:
        return power_of_two(heads)
    c = 1 << (heads.bit_length() - 1)
    return np.concatenate([power_of_two(c), power_of_two(2 * c)[0::2][: heads - c]])


def alibi_bias(slopes: ArrayLike, n_q: int, n_k: int | None = None, *, q_offset: int = 0) -> Array:
    """ALiBi's additive logit bias: ``bias[h, i, j] = -slopes[h] * |(q_offset + i) - j|``.

    Shape (h, n_q, n_k); add it to ``q k^T / sqrt(d_k)`` before the softmax. Under a causal mask
    (the setting of the paper) the distance is ``i - j >= 0``; keys after the query get the same
    penalty by distance, a common bidirectional reading. ``q_offset`` places query row 0 at that
    position (a cache reading one new token at position t uses ``q_offset = t``).
    """
    m = _as_float(slopes, "slopes")
    if m.ndim != 1 or m.size == 0:
        raise ValueError(f"slopes must be a non-empty 1-D array, got shape {m.shape}")
    _require_finite(m, "slopes")
    rows = _count(n_q, "n_q", minimum=0)
    cols = rows if n_k is None else _count(n_k, "n_k", minimum=0)
    off = _count(q_offset, "q_offset", minimum=0)
    distance = np.abs((off + np.arange(rows))[:, None] - np.arange(cols)[None, :])
    return -m.astype(np.float64)[:, None, None] * distance


# -------------------------------------------------------------------------------------- masks


def sliding_window_mask(
    n_q: int,
    n_k: int | None = None,
    *,
    window: int | None = None,
    sinks: int = 0,
    q_offset: int = 0,
) -> NDArray[np.bool_]:
    """Causal mask with an optional sliding window and attention-sink tokens, shape (n_q, n_k).

    Query row i sits at position ``p = q_offset + i`` and may read key j when ``j <= p`` (causal)
    and either ``p - j < window`` (the ``window`` most recent keys, itself included) or
    ``j < sinks`` (the first tokens, kept as in StreamingLLM). ``window=None`` is plain causal;
    so a row reads at most ``window + sinks`` keys. With ``q_offset = 0`` this is top-left
    aligned like :func:`attnsim.engine.attention.causal_mask`.
    """
    rows = _count(n_q, "n_q", minimum=0)
    cols = rows if n_k is None else _count(n_k, "n_k", minimum=0)
    off = _count(q_offset, "q_offset", minimum=0)
    s = _count(sinks, "sinks", minimum=0)
    p = (off + np.arange(rows))[:, None]
    j = np.arange(cols)[None, :]
    allowed = j <= p
    if window is not None:
        w = _count(window, "window", minimum=1)
        allowed &= (p - j < w) | (j < s)
    return allowed


# ------------------------------------------------------------------------ shared key/value heads


def repeat_kv(x: ArrayLike, h: int) -> Array:
    """Repeat each of g key or value heads ``h / g`` times along the head axis.

    ``x`` (..., g, n, d) -> (..., h, n, d), query head j reading key/value head ``j // (h/g)``
    (the grouping of ``torch.repeat_interleave`` and of ``enable_gqa``). ``h`` must be a
    multiple of g.
    """
    xa = _as_float(x, "x")
    if xa.ndim < 3:
        raise ValueError(f"x must have shape (..., g, n, d), got {xa.shape}")
    heads = _count(h, "h", minimum=1)
    g = xa.shape[-3]
    if g == 0 or heads % g:
        raise ValueError(f"h must be a multiple of the {g} key/value heads, got h={h!r}")
    return np.repeat(xa, heads // g, axis=-3)


def _heads_shape(qa: Array, ka: Array, va: Array) -> tuple[int, int]:
    for name, arr in (("q", qa), ("k", ka), ("v", va)):
        if arr.ndim < 3:
            raise ValueError(f"{name} must have shape (..., heads, n, d), got {arr.shape}")
    h, g = qa.shape[-3], ka.shape[-3]
    if va.shape[-3] != g:
        raise ValueError(f"k has {g} heads but v has {va.shape[-3]}; they must match")
    if g == 0 or h % g:
        raise ValueError(f"the {h} query heads must be a multiple of the {g} key/value heads")
    if qa.shape[-1] != ka.shape[-1]:
        raise ValueError(f"d_k of q ({qa.shape[-1]}) and k ({ka.shape[-1]}) differ")
    if ka.shape[-2] != va.shape[-2]:
        raise ValueError(f"key count ({ka.shape[-2]}) and value count ({va.shape[-2]}) differ")
    return h, g


def grouped_query_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    bias: ArrayLike | None = None,
    scale: bool = True,
) -> tuple[Array, Array]:
    """Scaled dot-product attention with h query heads sharing g key/value heads.

    Parameters
    ----------
    q : (..., h, n_q, d_k)
    k : (..., g, n_k, d_k)
    v : (..., g, n_k, d_v)
        h a multiple of g. Query head j reads key/value head ``j // (h / g)``; g = h is
        standard multi-head attention, g = 1 multi-query attention. Leading dimensions
        broadcast. K and V are never copied per query head.
    mask : bool, broadcastable to (..., h, n_q, n_k), optional
        True where a query may read a key; every query needs one legal key.
    bias : float, broadcastable to (..., h, n_q, n_k), optional
        Added to the logits before the softmax (ALiBi, or an additive mask with -inf).
    scale : bool
        Divide ``q k^T`` by ``sqrt(d_k)``.

    Returns
    -------
    output : (..., h, n_q, d_v)
    weights : (..., h, n_q, n_k)
        The same numbers as :func:`attnsim.engine.attention.attention` on
        ``q, repeat_kv(k, h), repeat_kv(v, h)``, up to rounding.
    """
    qa, ka, va = _as_float(q, "q"), _as_float(k, "k"), _as_float(v, "v")
    h, g = _heads_shape(qa, ka, va)
    for name, arr in (("q", qa), ("k", ka), ("v", va)):
        _require_finite(arr, name)
    dtype = np.result_type(qa, ka, va)
    r = h // g
    n_q, n_k, d_k = qa.shape[-2], ka.shape[-2], qa.shape[-1]
    # Group the query heads under their shared key/value head: (..., g, r, n, d) against
    # (..., g, 1, n, d), so broadcasting does the sharing.
    qg = qa.astype(dtype, copy=False).reshape((*qa.shape[:-3], g, r, n_q, d_k))
    kg = ka.astype(dtype, copy=False)[..., :, None, :, :]
    vg = va.astype(dtype, copy=False)[..., :, None, :, :]
    divisor = math.sqrt(d_k) if scale else 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        logits = np.matmul(qg / divisor if divisor != 1.0 else qg, np.swapaxes(kg, -1, -2))
    lead = logits.shape[:-4]
    full_shape = (*lead, h, n_q, n_k)
    if bias is not None:
        ba = _as_float(bias, "bias")
        if np.isnan(ba).any() or np.isposinf(ba).any():
            raise ValueError("bias must be finite or -inf (a forbidden key); it holds NaN or +inf")
        try:
            full_shape = np.broadcast_shapes(ba.shape, full_shape)
        except ValueError:
            raise ValueError(
                f"bias of shape {ba.shape} does not broadcast to {(*lead, h, n_q, n_k)}"
            ) from None
        grouped = np.broadcast_to(ba.astype(dtype, copy=False), full_shape).reshape(
            (*full_shape[:-3], g, r, n_q, n_k)
        )
        logits = logits + grouped
    if mask is not None:
        allowed = _check_mask(mask, full_shape)
        full_shape = allowed.shape
        grouped_mask = allowed.reshape((*full_shape[:-3], g, r, n_q, n_k))
        logits = np.where(grouped_mask, logits, -np.inf)
    if np.isnan(logits).any():
        raise ValueError("the logits overflowed to NaN (q · k is beyond the float range)")
    # every branch above left a fresh array in logits, so the softmax may overwrite it
    weights = _softmax_inplace(logits)
    out = np.matmul(weights, vg)
    out_lead = out.shape[:-4]
    return (
        out.reshape((*out_lead, h, n_q, va.shape[-1])),
        weights.reshape((*weights.shape[:-4], h, n_q, n_k)),
    )


@dataclass(frozen=True)
class SharingCounts:
    """Parameters and key/value cache of ``layers`` attention layers with h query heads sharing
    g key/value heads, beside standard multi-head attention (g = h) of the same shape.

    Learned matrices (biases omitted): ``Wq`` d_model x h d_k, ``Wk`` d_model x g d_k,
    ``Wv`` d_model x g d_v, ``Wo`` h d_v x d_model. The cache stores one key and one value per
    key/value head per token: ``g (d_k + d_v) dtype_bytes`` bytes per token and layer.
    """

    h: int
    g: int
    d_model: int
    d_k: int
    d_v: int
    dtype_bytes: int
    layers: int

    @property
    def kind(self) -> str:
        """Which sharing this is: MHA (g = h), MQA (g = 1) or GQA (in between)."""
        return "MHA" if self.g == self.h else "MQA" if self.g == 1 else "GQA"

    @property
    def query_params(self) -> int:
        return self.layers * self.d_model * self.h * self.d_k

    @property
    def key_params(self) -> int:
        return self.layers * self.d_model * self.g * self.d_k

    @property
    def value_params(self) -> int:
        return self.layers * self.d_model * self.g * self.d_v

    @property
    def output_params(self) -> int:
        return self.layers * self.h * self.d_v * self.d_model

    @property
    def params(self) -> int:
        return self.query_params + self.key_params + self.value_params + self.output_params

    @property
    def mha_params(self) -> int:
        """The same layer with one key/value head per query head."""
        return self.layers * self.d_model * self.h * (2 * self.d_k + 2 * self.d_v)

    @property
    def kv_bytes_per_token(self) -> int:
        return self.layers * self.g * (self.d_k + self.d_v) * self.dtype_bytes

    @property
    def mha_kv_bytes_per_token(self) -> int:
        return self.layers * self.h * (self.d_k + self.d_v) * self.dtype_bytes

    @property
    def cache_ratio(self) -> float:
        """Cache size relative to multi-head attention: g / h."""
        return self.g / self.h

    def kv_cache_bytes(self, n: int) -> int:
        """Bytes of the key/value cache after ``n`` tokens (one sequence)."""
        return _count(n, "n", minimum=0) * self.kv_bytes_per_token


def sharing_counts(
    h: int,
    g: int,
    d_model: int,
    d_k: int,
    d_v: int | None = None,
    *,
    dtype_bytes: int = 2,
    layers: int = 1,
) -> SharingCounts:
    """Parameter counts and cache bytes of grouped-query (1 < g < h), multi-query (g = 1) or
    multi-head (g = h) attention. ``d_v`` defaults to ``d_k``; ``dtype_bytes`` is the size of one
    cached number (2 for float16 / bfloat16). See :class:`SharingCounts`."""
    heads = _count(h, "h", minimum=1)
    groups = _count(g, "g", minimum=1)
    if heads % groups:
        raise ValueError(f"g must divide h = {heads}, got g={g!r}")
    return SharingCounts(
        h=heads,
        g=groups,
        d_model=_count(d_model, "d_model", minimum=1),
        d_k=_count(d_k, "d_k", minimum=1),
        d_v=_count(d_k if d_v is None else d_v, "d_v", minimum=1),
        dtype_bytes=_count(dtype_bytes, "dtype_bytes", minimum=1),
        layers=_count(layers, "layers", minimum=1),
    )
