"""Scaled dot-product attention, masks, head traces and multi-head blocks.

Row-vector convention throughout: a sentence is a matrix ``X`` of shape ``(n, d)``, one token
per row, and projections act on the right (``Q = X @ Wq``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .head_trace import HeadTrace, _frozen

Array = NDArray[np.floating]

__all__ = [
    "HeadTrace",
    "MultiHeadTrace",
    "attention",
    "causal_mask",
    "direct_trace",
    "entropy_bits",
    "head_trace",
    "multi_head",
    "multi_head_counts",
    "route_arrays",
    "softmax",
]


def _as_float(a: ArrayLike, name: str) -> Array:
    arr = np.asarray(a)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    return arr


def _require_finite(arr: Array, name: str) -> None:
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        value = arr[tuple(bad)]
        raise ValueError(f"{name} contains a non-finite value ({value}) at index {tuple(bad)}")


def softmax(x: ArrayLike, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    Parameters
    ----------
    x : array_like, any shape
        Logits. ``-inf`` entries receive exactly zero weight; ``+inf`` entries share the whole
        weight of their slice equally.
    axis : int
        The axis that sums to one.

    Returns
    -------
    ndarray, same shape as ``x``

    Raises
    ------
    ValueError
        If any slice along ``axis`` is entirely ``-inf`` (no legal entry), or holds NaN.
    """
    z = _as_float(x, "x")
    if z.size == 0:
        return z.copy()
    return _softmax_inplace(np.array(z, copy=True), axis)


def _softmax_inplace(z: Array, axis: int = -1) -> Array:
    """Softmax that may overwrite ``z`` (a float array the caller owns)."""
    top = np.max(z, axis=axis, keepdims=True)
    if np.isnan(top).any():
        raise ValueError("softmax input contains NaN")
    if np.isneginf(top).any():
        raise ValueError("softmax: a slice is entirely -inf, so no entry can receive weight")
    if np.isposinf(top).any():
        # Within a slice holding +inf, only the +inf entries compete and they tie; rewrite
        # that slice as 0 (winners) / -inf (the rest) so inf - inf never happens.
        pos = np.isposinf(top)
        z = np.where(pos, np.where(np.isposinf(z), 0.0, -np.inf), z)
        top = np.where(pos, 0.0, top)
    z -= top
    np.exp(z, out=z)
    z /= np.sum(z, axis=axis, keepdims=True)
    return z


def entropy_bits(weights: ArrayLike, axis: int = -1) -> Array:
    """Shannon entropy in bits of each distribution along ``axis`` (``0 log 0 = 0``).

    ``weights`` of shape ``(..., n)`` gives an array of shape ``(...)``.
    """
    w = np.asarray(weights, dtype=float)
    # log2 only where w > 0 (0 log 0 = 0), one temporary array, and the products summed in
    # one pass: this runs on every redraw of a 2,048 x 2,048 heatmap.
    logs = np.zeros_like(w)
    np.log2(w, out=logs, where=w > 0)
    logs *= w
    return -np.sum(logs, axis=axis)


def causal_mask(n_q: int, n_k: int | None = None) -> NDArray[np.bool_]:
    """Boolean causal mask of shape ``(n_q, n_k)``: True on and below the diagonal.

    Query ``i`` may read keys ``0..i`` (top-left aligned, as ``torch``'s ``is_causal``).
    """
    if n_k is None:
        n_k = n_q
    if n_q < 0 or n_k < 0:
        raise ValueError(f"causal_mask needs non-negative sizes, got n_q={n_q}, n_k={n_k}")
    return np.tri(n_q, n_k, k=0, dtype=bool)


def _finite_number(
    value: object, name: str, ok: Callable[[float], bool] | None = None, rule: str = "finite"
) -> float:
    """``value`` as a finite float for which ``ok`` holds, else ValueError: "``name`` must be
    a number", or "must be ``rule``"."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or (ok is not None and not ok(x)):
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return x


def _check_temperature(temperature: float) -> float:
    return _finite_number(temperature, "temperature", lambda t: t > 0, "positive and finite")


def _check_mask(mask: ArrayLike, logits_shape: tuple[int, ...]) -> NDArray[np.bool_]:
    m = np.asarray(mask)
    if m.dtype != bool:
        raise ValueError(
            f"mask must be a boolean array (True = allowed), got dtype {m.dtype}; "
            "an additive 0/-inf mask should be converted with mask == 0"
        )
    try:
        shape = np.broadcast_shapes(m.shape, logits_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the logits shape {logits_shape}"
        ) from None
    if shape[-2:] != logits_shape[-2:]:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the logits shape {logits_shape}"
        )
    full = np.broadcast_to(m, shape)
    empty = ~full.any(axis=-1)
    if empty.any():
        where = tuple(int(i) for i in np.argwhere(empty)[0])
        raise ValueError(
            f"mask leaves query row {where[-1]} (index {where}) with no legal key; "
            "every query needs at least one allowed key"
        )
    return full


def _logits(
    q: Array, k: Array, scale: bool, temperature: float, scores: Array | None = None
) -> Array:
    """``q k^T / (sqrt(d_k) * t)`` as a new array (from ``scores = q k^T`` when given).

    Overflow becomes +-inf, which softmax treats as a limit; NaN is refused.
    """
    divisor = (math.sqrt(q.shape[-1]) if scale else 1.0) * temperature
    with np.errstate(over="ignore", invalid="ignore"):
        if scores is None:
            logits = np.matmul(q, np.swapaxes(k, -1, -2))
            if divisor != 1.0:
                logits /= divisor
        else:
            logits = scores / divisor
    if logits.size and np.isnan(logits.max()):
        raise ValueError(
            "the logits overflowed to NaN (q · k is beyond the float range); rescale q and k"
        )
    return logits


def _validate_qkv(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[Array, Array, Array]:
    qa, ka, va = _as_float(q, "q"), _as_float(k, "k"), _as_float(v, "v")
    for name, arr in (("q", qa), ("k", ka), ("v", va)):
        if arr.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got {arr.shape}")
    if qa.shape[-1] != ka.shape[-1]:
        raise ValueError(
            f"d_k of q ({qa.shape[-1]}) and k ({ka.shape[-1]}) differ; queries and keys "
            "must have the same width"
        )
    if ka.shape[-2] != va.shape[-2]:
        raise ValueError(
            f"key count ({ka.shape[-2]}) and value count ({va.shape[-2]}) differ; every key "
            "needs exactly one value"
        )
    for name, arr in (("q", qa), ("k", ka), ("v", va)):
        _require_finite(arr, name)
    dtype = np.result_type(qa, ka, va)
    return qa.astype(dtype, copy=False), ka.astype(dtype, copy=False), va.astype(dtype, copy=False)


def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
    scale: bool = True,
) -> tuple[Array, Array]:
    """Scaled dot-product attention.

    Parameters
    ----------
    q : array, shape (..., n_q, d_k)
    k : array, shape (..., n_k, d_k)
    v : array, shape (..., n_k, d_v)
        Leading (batch / head) dimensions broadcast against each other.
    mask : bool array broadcastable to (..., n_q, n_k), optional
        True where a query may read a key.
    temperature : float
        Logits are divided by it after scaling; must be positive and finite.
    scale : bool
        Divide ``q k^T`` by ``sqrt(d_k)``.

    Returns
    -------
    output : array, shape (..., n_q, d_v)
    weights : array, shape (..., n_q, n_k)
        Each row sums to 1 over the legal keys; masked keys get exactly 0.
    """
    t = _check_temperature(temperature)
    qa, ka, va = _validate_qkv(q, k, v)
    divisor = (math.sqrt(qa.shape[-1]) if scale else 1.0) * t
    # Dividing the n_q x d_k queries costs far less than dividing the n_q x n_k logits.
    with np.errstate(over="ignore", invalid="ignore"):
        logits = np.matmul(qa / divisor if divisor != 1.0 else qa, np.swapaxes(ka, -1, -2))
    if mask is not None:
        full = _check_mask(mask, logits.shape)
        if full.shape != logits.shape:
            logits = np.broadcast_to(logits, full.shape).copy()
        np.copyto(logits, -np.inf, where=~full)
    try:
        weights = _softmax_inplace(logits)
    except ValueError as exc:
        if "NaN" in str(exc):
            raise ValueError(
                "the logits overflowed to NaN (q · k is beyond the float range); rescale q and k"
            ) from None
        raise
    return np.matmul(weights, va), weights


def _row_entropy(weights: Array, logits: Array, masked_logits: Array, mask_value: float) -> Array:
    """Entropy in bits of each row of ``weights`` (n_q, n_k), from the logits softmax saw.

    This saves a logarithm per cell over ``-sum w log w`` (the heatmap of a 2,048-token head
    shows it on every redraw): with l the logits, m a row's largest and w* its largest weight,
    ln Z = -ln w*, so H = -ln w* - (sum w l - m). Agrees with :func:`entropy_bits` to about
    1e-12 bits; falls back to it if the logits overflowed.
    """
    w = weights
    if w.size == 0:
        return np.zeros(w.shape[:-1])
    # Where the mask put -inf the weight is 0; the unmasked logits there are finite.
    lg = logits if np.isneginf(mask_value) else masked_logits
    rows = np.arange(w.shape[0])
    top = np.argmax(w, axis=-1)
    w_top = w[rows, top]
    m = lg[rows, top]
    with np.errstate(invalid="ignore", over="ignore"):
        if float(np.abs(m).max()) < 64.0:
            mean_gap = np.einsum("ij,ij->i", w, lg) - m
        else:
            # sum w l - m cancels catastrophically when the logits are large (1e12 at T = 1e-3
            # and values near the bound): subtract first. l - m is exact wherever w is not 0.
            mean_gap = np.einsum("ij,ij->i", w, lg - m[:, None])
        h = -np.log(w_top) - mean_gap
    if not np.isfinite(h).all():
        return entropy_bits(w)
    return np.maximum(h, 0.0) / math.log(2.0)


def route_arrays(
    qa: Array,
    ka: Array,
    va: Array,
    *,
    mask: ArrayLike | None,
    temperature: float,
    scale: bool,
    mask_value: float,
) -> tuple[Array, Array, NDArray[np.bool_], Array, Array, Array]:
    """The arrays of :func:`direct_trace` (scores, logits, full mask, masked logits, weights,
    output) from q, k, v (2-D) the caller has already checked, and a checked temperature and
    mask value. For callers that run many small heads and need no entropy (the routing lab's
    perturbation trials); the numbers are the trace's, by construction."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = qa @ ka.T
    logits = _logits(qa, ka, scale, temperature, scores)
    n_q, n_k = logits.shape
    if mask is None:
        full = np.ones((n_q, n_k), dtype=bool)
        masked = logits
    else:
        full = np.ascontiguousarray(_check_mask(mask, logits.shape))
        masked = np.where(full, logits, mask_value)
    weights = softmax(masked)
    output = weights @ va
    return scores, logits, full, masked, weights, output


def direct_trace(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
    scale: bool = True,
    mask_value: float = -np.inf,
) -> HeadTrace:
    """Trace of one head whose queries, keys and values are given directly.

    Parameters
    ----------
    q : (n_q, d_k), k : (n_k, d_k), v : (n_k, d_v)
    mask : bool (n_q, n_k) or broadcastable, optional
    mask_value : float
        What forbidden logits are replaced by. ``-inf`` is correct; ``0.0`` reproduces the
        classic mistake where forbidden keys still receive weight.
    """
    t = _check_temperature(temperature)
    qa, ka, va = _validate_qkv(q, k, v)
    if qa.ndim != 2:
        raise ValueError(f"a head trace needs 2-D q, k, v; got q of shape {qa.shape}")
    if not (np.isneginf(mask_value) or np.isfinite(mask_value)):
        raise ValueError(f"mask_value must be -inf or finite, got {mask_value}")
    # route_arrays' numbers with at most three (n_q, n_k) tables alive at once: the logits are
    # divided in place of the scores, and the softmax runs in place of the masked logits.
    divisor = (math.sqrt(qa.shape[-1]) if scale else 1.0) * t
    with np.errstate(over="ignore", invalid="ignore"):
        logits = qa @ ka.T
        if divisor != 1.0:  # x / 1 is x: route_arrays' copy holds the same numbers
            logits /= divisor
    if logits.size and np.isnan(logits.max()):
        raise ValueError(
            "the logits overflowed to NaN (q · k is beyond the float range); rescale q and k"
        )
    if mask is None:
        full = np.ones(logits.shape, dtype=bool)
        masked = logits
    else:
        full = np.ascontiguousarray(_check_mask(mask, logits.shape))
        masked = np.where(full, logits, mask_value)
    if masked is logits or not np.isneginf(mask_value):
        weights = softmax(masked)  # the entropy below reads these logits
    else:
        weights = _softmax_inplace(masked)  # the entropy reads the unmasked logits
    entropy = _row_entropy(weights, logits, masked, float(mask_value))
    del masked
    output = weights @ va
    q_ro = _frozen(qa)
    k_ro = q_ro if ka is qa else _frozen(ka)
    v_ro = q_ro if va is qa else k_ro if va is ka else _frozen(va)
    return HeadTrace(
        Q=q_ro,
        K=k_ro,
        V=v_ro,
        logits=_frozen(logits),
        weights=_frozen(weights),
        output=_frozen(output),
        mask=_frozen(full),
        entropy=_frozen(entropy),
        temperature=t,
        scale=bool(scale),
        mask_value=float(mask_value),
    )


def head_trace(
    X: ArrayLike,
    Wq: ArrayLike,
    Wk: ArrayLike,
    Wv: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
    scale: bool = True,
    mask_value: float = -np.inf,
) -> HeadTrace:
    """Trace of one head over a sentence.

    Parameters
    ----------
    X : (n, d)
    Wq, Wk : (d, d_k)
    Wv : (d, d_v)
    mask, temperature, scale, mask_value : as in :func:`direct_trace`.

    Returns
    -------
    HeadTrace with ``Q = X @ Wq``, ``K = X @ Wk``, ``V = X @ Wv`` and every later stage.
    """
    Xa = _as_float(X, "X")
    mats = {"Wq": _as_float(Wq, "Wq"), "Wk": _as_float(Wk, "Wk"), "Wv": _as_float(Wv, "Wv")}
    if Xa.ndim != 2:
        raise ValueError(f"X must have shape (n, d), got {Xa.shape}")
    _require_finite(Xa, "X")
    for name, W in mats.items():
        if W.ndim != 2 or W.shape[0] != Xa.shape[1]:
            raise ValueError(
                f"{name} must have shape (d, ·) with d = {Xa.shape[1]} (the width of X), "
                f"got {W.shape}"
            )
        _require_finite(W, name)
    # One product per distinct projection: equal Wq, Wk or Wv (an identity head) share it.
    made: list[tuple[Array, Array]] = []
    qkv = []
    for name in ("Wq", "Wk", "Wv"):
        W = mats[name]
        same = [P for M, P in made if M.shape == W.shape and (M is W or np.array_equal(M, W))]
        P = same[0] if same else Xa @ W
        made.append((W, P))
        qkv.append(P)
    tr = direct_trace(
        *qkv,
        mask=mask,
        temperature=temperature,
        scale=scale,
        mask_value=mask_value,
    )
    return HeadTrace(
        **{f: getattr(tr, f) for f in tr.__dataclass_fields__ if f not in ("X", "Wq", "Wk", "Wv")},
        X=_frozen(Xa),
        Wq=_frozen(mats["Wq"]),
        Wk=_frozen(mats["Wk"]),
        Wv=_frozen(mats["Wv"]),
    )


@dataclass(frozen=True, eq=False)
class MultiHeadTrace:
    """A multi-head self-attention sublayer.

    ``heads`` holds one :class:`HeadTrace` per head; ``concat`` is (n, h * d_v);
    ``Wo`` is (h * d_v, d); ``delta = concat @ Wo`` and the residual ``Y = X + delta`` are (n, d).
    """

    X: Array
    heads: tuple[HeadTrace, ...]
    concat: Array
    Wo: Array
    delta: Array
    Y: Array
    counts: dict[str, int] = field(default_factory=dict)


def multi_head(
    X: ArrayLike,
    heads: list[tuple[ArrayLike, ArrayLike, ArrayLike]],
    Wo: ArrayLike | None = None,
    *,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
    scale: bool = True,
    mask_value: float = -np.inf,
) -> MultiHeadTrace:
    """Run several heads over the same ``X``, concatenate, project with ``Wo``, add residual.

    Parameters
    ----------
    X : (n, d)
    heads : list of (Wq (d, d_k), Wk (d, d_k), Wv (d, d_v)), one per head
    Wo : (h * d_v, d), optional
        Identity-like default only when ``h * d_v == d``; otherwise required.
    """
    if not heads:
        raise ValueError("multi_head needs at least one head")
    Xa = _as_float(X, "X")
    traces = tuple(
        head_trace(
            Xa, Wq, Wk, Wv, mask=mask, temperature=temperature, scale=scale, mask_value=mask_value
        )
        for Wq, Wk, Wv in heads
    )
    # One head's output is the concatenation; without Wo the update is that concatenation
    # (the identity moves no number), so neither is copied.
    concat = (
        traces[0].output
        if len(traces) == 1
        else np.concatenate([t.output for t in traces], axis=-1)
    )
    d = Xa.shape[1]
    if Wo is None:
        if concat.shape[1] != d:
            raise ValueError(
                f"Wo is required: the concatenated heads have width {concat.shape[1]}, "
                f"the model width is {d}"
            )
        Woa = np.eye(d)
    else:
        Woa = _as_float(Wo, "Wo")
        if Woa.shape != (concat.shape[1], d):
            raise ValueError(
                f"Wo must have shape (h*d_v, d) = {(concat.shape[1], d)}, got {Woa.shape}"
            )
        _require_finite(Woa, "Wo")
    delta = concat if Wo is None else concat @ Woa
    d_k = traces[0].d_k
    d_v = traces[0].V.shape[1]
    return MultiHeadTrace(
        X=Xa,
        heads=traces,
        concat=concat,
        Wo=Woa,
        delta=delta,
        Y=_frozen(Xa + delta),
        counts=multi_head_counts(Xa.shape[0], len(traces), d, d_k, d_v)["totals"],
    )


def multi_head_counts(
    n: int, h: int, d: int, d_k: int, d_v: int, *, blocks: int = 1
) -> dict[str, object]:
    """Count the objects of a standard multi-head self-attention sublayer.

    Returns a dict with ``rows`` (one per object: name, kind 'learned'/'computed', count,
    shape as text) and ``totals``: learned Q/K/V projection matrices, learned matrices (with
    Wo), computed Q/K/V matrices, computed vectors (queries + keys + values), queries, keys,
    values and learned parameters (biases omitted), all multiplied by ``blocks``.
    """
    for name, val in (("n", n), ("h", h), ("d", d), ("d_k", d_k), ("d_v", d_v), ("blocks", blocks)):
        if int(val) != val or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    rows = [
        ("Input X", "computed", 1, f"{n} × {d}"),
        ("Query projections Wq", "learned", h, f"{d} × {d_k}"),
        ("Key projections Wk", "learned", h, f"{d} × {d_k}"),
        ("Value projections Wv", "learned", h, f"{d} × {d_v}"),
        ("Queries Q", "computed", h, f"{n} × {d_k}"),
        ("Keys K", "computed", h, f"{n} × {d_k}"),
        ("Values V", "computed", h, f"{n} × {d_v}"),
        ("Scores S", "computed", h, f"{n} × {n}"),
        ("Attention weights A", "computed", h, f"{n} × {n}"),
        ("Head mixtures H", "computed", h, f"{n} × {d_v}"),
        ("Concatenated head outputs", "computed", 1, f"{n} × {h * d_v}"),
        ("Output projection Wo", "learned", 1, f"{h * d_v} × {d}"),
        ("Attention update Δ", "computed", 1, f"{n} × {d}"),
        ("Residual result Y", "computed", 1, f"{n} × {d}"),
    ]
    totals = {
        "qkv_projection_matrices": 3 * h * blocks,
        "output_projections": blocks,
        "learned_matrices": (3 * h + 1) * blocks,
        "computed_qkv_matrices": 3 * h * blocks,
        "queries": n * h * blocks,
        "keys": n * h * blocks,
        "values": n * h * blocks,
        "computed_vectors": 3 * n * h * blocks,
        "parameters": (h * (2 * d * d_k + d * d_v) + h * d_v * d) * blocks,
    }
    return {"rows": rows, "totals": totals}
