"""A tiled attention kernel: the same result as :func:`~attnsim.engine.attention.attention`,
computed block by block with an online softmax (the schedule of FlashAttention).

For each block of queries the kernel walks over the key blocks keeping, per query row, the
running maximum ``m`` of the logits seen so far, the running sum ``l`` of ``exp(logit - m)``
and an accumulator ``acc`` of ``exp(logit - m) v``. When a new key block raises the maximum,
``l`` and ``acc`` are rescaled by ``exp(m_old - m_new)``, so at the end ``acc / l`` is exactly
the softmax-weighted mixture: only one tile of scores ever exists at a time, never the
``n_q x n_k`` matrix. The schedule changes, the routing contract does not; the results differ
from the direct computation only by rounding in a different accumulation order.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from .attention import _check_mask, _check_temperature, _validate_qkv

Array = NDArray[np.floating]

__all__ = [
    "DEFAULT_BLOCK_K",
    "DEFAULT_BLOCK_Q",
    "PeakMemory",
    "TileStep",
    "TiledTrace",
    "peak_memory",
    "skipped_tiles",
    "tiled_attention",
    "tiled_block_trace",
]

# Measured on the n = 2048, d_k = 64, float32 benchmark (attnsim/benchmarks/kernels.py): a
# 256 x 512 tile (512 KiB in float32) stays in cache and leaves 32 steps, few enough that the
# Python loop costs little; 128 x 512 and 512 x 512 measured within 10 % of it.
DEFAULT_BLOCK_Q = 256
DEFAULT_BLOCK_K = 512
# From this many score cells on, the tile products run on one BLAS thread: OpenBLAS's threads
# wait on each other over products this small, and on a busy two-core machine the n = 2048
# kernel took 100-700 ms with the default threads against 17-21 ms with one. Below it, entering
# the limit (about 0.3 ms) would cost more than the product.
ONE_THREAD_FROM_CELLS = 128 * 128
# Up to this many scores (n_q x n_k) an untraced 2-D head computes all its tiles at once.
BATCH_CELLS = 128 * 128


@dataclass(frozen=True, eq=False)
class TileStep:
    """The state of one query block after one key block was folded in.

    ``rows`` and ``cols`` are the half-open index ranges ``(start, stop)`` of the tile.
    ``skipped`` is True when the mask forbids every cell of the tile, so the kernel never
    computed it and ``m``, ``l``, ``acc`` are those of the previous step.
    Arrays carry the leading (batch / head) dimensions of the inputs, then:
    ``tile_max`` (..., rows) the largest legal logit of this tile per row (-inf if none);
    ``alpha`` (..., rows) the factor ``exp(m_old - m_new)`` the old ``l`` and ``acc`` were
    multiplied by (0 where nothing had been seen, 1 for a skipped tile);
    ``m``, ``l`` (..., rows) and ``acc`` (..., rows, d_v) after the step.
    """

    q_block: int
    k_block: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    skipped: bool
    tile_max: Array
    alpha: Array
    m: Array
    l: Array  # noqa: E741 - the name the online-softmax literature uses
    acc: Array


@dataclass(frozen=True, eq=False)
class TiledTrace:
    """Every step of :func:`tiled_attention`, in execution order.

    ``steps`` runs over query blocks, and within each over all key blocks; ``skipped`` is a
    (n_query_blocks, n_key_blocks) boolean array of the tiles the mask removed entirely;
    ``output`` is the final ``acc / l`` (..., n_q, d_v).
    """

    block_q: int
    block_k: int
    n_q: int
    n_k: int
    steps: tuple[TileStep, ...]
    skipped: NDArray[np.bool_]
    output: Array

    @property
    def n_query_blocks(self) -> int:
        """``ceil(n_q / block_q)``."""
        return int(self.skipped.shape[0])

    @property
    def n_key_blocks(self) -> int:
        """``ceil(n_k / block_k)``."""
        return int(self.skipped.shape[1])

    @property
    def computed_tiles(self) -> int:
        """The number of tiles whose scores were actually computed."""
        return int((~self.skipped).sum())

    def steps_for(self, q_block: int) -> tuple[TileStep, ...]:
        """The steps of one query block, one per key block."""
        if not 0 <= q_block < self.n_query_blocks:
            raise ValueError(f"q_block must be in [0, {self.n_query_blocks}), got {q_block}")
        return tuple(s for s in self.steps if s.q_block == q_block)


def _check_block(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def tiled_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    block_q: int = DEFAULT_BLOCK_Q,
    block_k: int = DEFAULT_BLOCK_K,
    scale: bool = True,
    temperature: float = 1.0,
    trace: bool = False,
) -> tuple[Array, TiledTrace | None]:
    """Scaled dot-product attention by tiles with an online softmax.

    Parameters
    ----------
    q : array, shape (..., n_q, d_k)
    k : array, shape (..., n_k, d_k)
    v : array, shape (..., n_k, d_v)
        As in :func:`~attnsim.engine.attention.attention`: leading dimensions broadcast.
    mask : bool array broadcastable to (..., n_q, n_k), optional
        True where a query may read a key. A row with no legal key raises ValueError, as in
        ``attention()``. A tile the mask forbids entirely (for every leading index) is skipped.
    block_q, block_k : int
        Rows of queries per block and keys per tile; need not divide n_q or n_k (the last
        block is shorter).
    scale, temperature : as in ``attention()``.
    trace : bool
        Also return a :class:`TiledTrace` of every step (copies of m, l and acc per step).

    Returns
    -------
    output : array, shape (..., n_q, d_v)
        Equal to ``attention(q, k, v, ...)[0]`` up to rounding.
    trace : TiledTrace or None
    """
    bq = _check_block(block_q, "block_q")
    bk = _check_block(block_k, "block_k")
    t = _check_temperature(temperature)
    qa, ka, va = _validate_qkv(q, k, v)
    n_q, n_k, d_v = qa.shape[-2], ka.shape[-2], va.shape[-1]
    lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
    if n_k == 0 and n_q > 0:
        raise ValueError("k has no keys (n_k = 0): every query needs at least one key")
    full = None if mask is None else _check_mask(mask, (*lead, n_q, n_k))
    if full is not None:
        lead = full.shape[:-2]
    divisor = (math.sqrt(qa.shape[-1]) if scale else 1.0) * t
    dtype = qa.dtype
    out = np.empty((*lead, n_q, d_v), dtype=dtype)
    n_qb, n_kb = -(-n_q // bq), -(-n_k // bk)
    skipped = np.zeros((n_qb, n_kb), dtype=bool)
    steps: list[TileStep] = []
    # Small heads (the labs' n = 64): which tiles the mask forbids entirely, in one pass rather
    # than a test per tile. Large ones keep the test per tile, which makes no n x n temporaries.
    known = full is not None and n_q * n_k < ONE_THREAD_FROM_CELLS
    if known:
        skipped[:] = skipped_tiles(full, bq, bk)
    # Small 2-D heads without a trace (the labs' n = 64): every key block's products at once.
    batched = known or full is None
    batched = batched and not trace and not lead and n_k % bk == 0 and n_q * n_k <= BATCH_CELLS
    limit = (
        threadpool_limits(limits=1, user_api="blas")
        if n_q * n_k >= ONE_THREAD_FROM_CELLS
        else contextlib.nullcontext()
    )
    with limit, np.errstate(over="ignore", invalid="ignore"):
        for qi in range(n_qb):
            qs, qe = qi * bq, min(n_q, (qi + 1) * bq)
            qb = qa[..., qs:qe, :]
            if divisor != 1.0:
                qb = qb / divisor
            if batched:
                rows = None if full is None else full[qs:qe]
                out[qs:qe] = _key_blocks_at_once(qb, ka, va, rows, bk, skipped[qi])
                continue
            m = np.full((*lead, qe - qs), -np.inf, dtype=dtype)
            l_sum = np.zeros_like(m)
            acc = np.zeros((*lead, qe - qs, d_v), dtype=dtype)
            none_seen, no_rescale = np.full_like(m, -np.inf), np.ones_like(m)  # a skipped step's
            for ki in range(n_kb):
                ks, ke = ki * bk, min(n_k, (ki + 1) * bk)
                if not known and full is not None and not full[..., qs:qe, ks:ke].any():
                    skipped[qi, ki] = True
                if skipped[qi, ki]:
                    if trace:
                        steps.append(
                            _step(
                                qi,
                                ki,
                                qs,
                                qe,
                                ks,
                                ke,
                                True,
                                none_seen,
                                no_rescale,
                                m,
                                l_sum,
                                acc,
                            )
                        )
                    continue
                # Slice the keys before transposing: BLAS needs unit-stride rows to stay fast.
                s = np.matmul(qb, np.swapaxes(ka[..., ks:ke, :], -1, -2))
                if full is not None:
                    tile_forbid = ~full[..., qs:qe, ks:ke]
                    if s.shape != tile_forbid.shape:
                        s = np.broadcast_to(s, tile_forbid.shape).copy()
                    np.copyto(s, -np.inf, where=tile_forbid)
                # the ufuncs' reductions themselves: the array methods add a Python layer
                tile_max = np.maximum.reduce(s, axis=-1)
                m_new = np.maximum(m, tile_max)
                # A row whose keys so far are all masked has m = -inf; shifting by 0 there keeps
                # exp(-inf - -inf) = NaN out and gives those rows exactly zero weight.
                shift = m_new if full is None else np.where(m_new == -np.inf, 0.0, m_new)
                alpha = np.exp(m - shift)
                s -= shift[..., None]
                np.exp(s, out=s)
                l_sum = alpha * l_sum + np.add.reduce(s, axis=-1)
                acc = alpha[..., None] * acc + np.matmul(s, va[..., ks:ke, :])
                m = m_new
                if trace:
                    steps.append(
                        _step(qi, ki, qs, qe, ks, ke, False, tile_max, alpha, m, l_sum, acc)
                    )
            out[..., qs:qe, :] = acc / l_sum[..., None]
    if out.size and np.isnan(out).any():
        raise ValueError("the logits overflowed (q · k is beyond the float range); rescale q and k")
    if not trace:
        return out, None
    return out, TiledTrace(
        block_q=bq,
        block_k=bk,
        n_q=n_q,
        n_k=n_k,
        steps=tuple(steps),
        skipped=skipped,
        output=out,
    )


def _key_blocks_at_once(
    qb: Array, ka: Array, va: Array, rows: NDArray[np.bool_] | None, bk: int,
    skipped: NDArray[np.bool_],
) -> Array:  # fmt: skip
    """One query block's output by the online softmax over key blocks of ``bk`` keys (``n_k``
    a multiple of ``bk``), as the step-by-step loop of :func:`tiled_attention` computes it, the
    same operations on the same numbers in the same order, so the same output to the bit: the
    tiles' products, maxima and exponentials are made for every key block in one call each
    (a batched matmul makes each tile's product with the tile's own shapes), and only the
    running sum and accumulator go key block by key block. ``rows``: the block's mask rows
    (None: no mask); ``skipped``: the key blocks the mask forbids entirely, left out."""
    n_k, d_k = ka.shape
    n_kb = n_k // bk
    s = np.matmul(qb, np.swapaxes(ka.reshape(n_kb, bk, d_k), -1, -2))  # (n_kb, rows, bk)
    if rows is not None:
        forbid = ~rows.reshape(rows.shape[0], n_kb, bk).transpose(1, 0, 2)
        np.copyto(s, -np.inf, where=forbid)
    tile_max = np.maximum.reduce(s, axis=-1)  # (n_kb, rows)
    m = np.maximum.accumulate(tile_max, axis=0)  # the running max after each key block
    m_old = np.concatenate([np.full((1, s.shape[1]), -np.inf, dtype=s.dtype), m[:-1]])
    shift = m if rows is None else np.where(m == -np.inf, 0.0, m)
    alpha = np.exp(m_old - shift)
    s -= shift[..., None]
    np.exp(s, out=s)
    sums = np.add.reduce(s, axis=-1)
    products = np.matmul(s, va.reshape(n_kb, bk, va.shape[1]))  # (n_kb, rows, d_v)
    l_sum = np.zeros(s.shape[1], dtype=s.dtype)
    acc = np.zeros((s.shape[1], va.shape[1]), dtype=s.dtype)
    for ki in range(n_kb):
        if skipped[ki]:
            continue  # the loop leaves m, l and acc as they are: so does this
        l_sum = alpha[ki] * l_sum + sums[ki]
        acc = alpha[ki][:, None] * acc + products[ki]
    return acc / l_sum[:, None]


def skipped_tiles(mask: ArrayLike, block_q: int, block_k: int) -> NDArray[np.bool_]:
    """The (ceil(n_q / block_q), ceil(n_k / block_k)) tiles a boolean ``mask`` (..., n_q, n_k)
    forbids entirely, for every leading index: the tiles :func:`tiled_attention` skips."""
    bq = _check_block(block_q, "block_q")
    bk = _check_block(block_k, "block_k")
    m = np.asarray(mask)
    if m.dtype != np.bool_ or m.ndim < 2:
        raise ValueError(f"mask must be a boolean array of at least 2 dimensions, got {m.dtype} "
                         f"{m.shape}")  # fmt: skip
    legal = m.reshape(-1, *m.shape[-2:]).any(axis=0)
    n_q, n_k = legal.shape
    n_qb, n_kb = -(-n_q // bq), -(-n_k // bk)
    padded = np.zeros((n_qb * bq, n_kb * bk), dtype=bool)
    padded[:n_q, :n_k] = legal
    return ~padded.reshape(n_qb, bq, n_kb, bk).any(axis=(1, 3))


def tiled_block_trace(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    q_block: int,
    mask: ArrayLike | None = None,
    block_q: int = DEFAULT_BLOCK_Q,
    block_k: int = DEFAULT_BLOCK_K,
    scale: bool = True,
    temperature: float = 1.0,
) -> TiledTrace:
    """:func:`tiled_attention`'s trace of one query block, with the whole output.

    The online softmax of a query row reads only that row's scores, so a row goes through the
    same key-block steps whichever rows share its block: the query blocking is a schedule, and
    only the key blocking shapes the arithmetic. This computes the whole output with every
    query in one block (one pass over the key blocks) and steps only ``q_block`` at
    ``block_q`` rows, instead of recording every block (at n = 64 in 2 x 2 tiles, 1,024 steps
    where a view shows 32). ``steps`` holds that block's steps (rows in absolute positions);
    ``skipped`` covers every tile, as in the full trace. Arguments as in
    :func:`tiled_attention`; ``q_block`` must be in [0, ceil(n_q / block_q)).
    """
    bq = _check_block(block_q, "block_q")
    qa, ka, va = _validate_qkv(q, k, v)
    n_q, n_k = qa.shape[-2], ka.shape[-2]
    n_qb = -(-n_q // bq)
    if isinstance(q_block, bool) or not isinstance(q_block, int | np.integer):
        raise ValueError(f"q_block must be a whole number, got {q_block!r}")
    if not 0 <= q_block < n_qb:
        raise ValueError(f"q_block must be in [0, {n_qb}), got {q_block}")
    opts = {"block_k": block_k, "scale": scale, "temperature": temperature}
    out, _ = tiled_attention(qa, ka, va, mask=mask, block_q=max(n_q, 1), **opts)
    qs, qe = q_block * bq, min(n_q, (q_block + 1) * bq)
    rows_mask = None
    if mask is not None:
        lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
        full = _check_mask(mask, (*lead, n_q, n_k))
        rows_mask = full[..., qs:qe, :]
    bk = _check_block(block_k, "block_k")
    skipped = (
        np.zeros((n_qb, -(-n_k // bk)), dtype=bool) if mask is None else skipped_tiles(full, bq, bk)
    )
    flat = qa.ndim == ka.ndim == va.ndim == 2 and (rows_mask is None or rows_mask.ndim == 2)
    if flat and n_k and n_k % bk == 0 and (qe - qs) * n_k <= BATCH_CELLS:
        divisor = (math.sqrt(qa.shape[-1]) if scale else 1.0) * _check_temperature(temperature)
        qb = qa[qs:qe] if divisor == 1.0 else qa[qs:qe] / divisor
        with np.errstate(over="ignore", invalid="ignore"):
            steps = _block_steps(qb, ka, va, rows_mask, bk, skipped[q_block], int(q_block), qs)
    else:
        _, tr = tiled_attention(
            qa[..., qs:qe, :], ka, va, mask=rows_mask, block_q=bq, trace=True, **opts
        )
        assert tr is not None
        # Built directly rather than with dataclasses.replace, which inspects the fields of
        # each of the block's steps (a millisecond an edit at n = 64 in 2 x 2 tiles).
        qb_index, rows = int(q_block), (qs, qe)
        steps = tuple(
            TileStep(qb_index, s.k_block, rows, s.cols, s.skipped, s.tile_max, s.alpha, s.m,
                     s.l, s.acc)
            for s in tr.steps
        )  # fmt: skip
    return TiledTrace(
        block_q=bq, block_k=bk, n_q=n_q, n_k=n_k, steps=steps, skipped=skipped, output=out,
    )  # fmt: skip


def _block_steps(
    qb: Array, ka: Array, va: Array, rows: NDArray[np.bool_] | None, bk: int,
    skipped: NDArray[np.bool_], q_block: int, qs: int,
) -> tuple[TileStep, ...]:  # fmt: skip
    """The steps :func:`tiled_attention` records for one query block (``qb``: its scaled
    queries, rows ``qs`` on; ``rows``: its mask rows or None; ``skipped``: its key blocks the
    mask forbids entirely), with ``n_k`` a multiple of ``bk``: the same operations on the same
    numbers as the step-by-step loop, so the same steps to the bit, but every tile's product,
    maximum and exponentials made in one call each (as :func:`_key_blocks_at_once` does);
    only the running sum and accumulator, and the steps' copies, go key block by key block."""
    n_k, d_k = ka.shape
    n_kb, n_rows, d_v = n_k // bk, qb.shape[0], va.shape[1]
    s = np.matmul(qb, np.swapaxes(ka.reshape(n_kb, bk, d_k), -1, -2))  # (n_kb, rows, bk)
    if rows is not None:
        np.copyto(s, -np.inf, where=~rows.reshape(n_rows, n_kb, bk).transpose(1, 0, 2))
    tile_max = np.maximum.reduce(s, axis=-1)  # (n_kb, rows)
    m = np.maximum.accumulate(tile_max, axis=0)  # the running max after each key block
    m_old = np.concatenate([np.full((1, n_rows), -np.inf, dtype=s.dtype), m[:-1]])
    shift = m if rows is None else np.where(m == -np.inf, 0.0, m)
    alpha = np.exp(m_old - shift)
    s -= shift[..., None]
    np.exp(s, out=s)
    sums = np.add.reduce(s, axis=-1)
    products = np.matmul(s, va.reshape(n_kb, bk, d_v))  # (n_kb, rows, d_v)
    m_now = np.full(n_rows, -np.inf, dtype=s.dtype)
    l_sum = np.zeros(n_rows, dtype=s.dtype)
    acc = np.zeros((n_rows, d_v), dtype=s.dtype)
    none_seen, no_rescale = np.full_like(m_now, -np.inf), np.ones_like(m_now)  # a skipped step's
    qe, steps = qs + n_rows, []
    for ki in range(n_kb):
        if skipped[ki]:  # the loop leaves m, l and acc as they are, and records that
            steps.append(_step(q_block, ki, qs, qe, ki * bk, (ki + 1) * bk, True, none_seen,
                               no_rescale, m_now, l_sum, acc))  # fmt: skip
            continue
        l_sum = alpha[ki] * l_sum + sums[ki]
        acc = alpha[ki][:, None] * acc + products[ki]
        m_now = m[ki]
        steps.append(_step(q_block, ki, qs, qe, ki * bk, (ki + 1) * bk, False, tile_max[ki],
                           alpha[ki], m_now, l_sum, acc))  # fmt: skip
    return tuple(steps)


def _step(qi, ki, qs, qe, ks, ke, skipped, tile_max, alpha, m, l_sum, acc) -> TileStep:
    return TileStep(
        q_block=qi,
        k_block=ki,
        rows=(qs, qe),
        cols=(ks, ke),
        skipped=skipped,
        tile_max=np.array(tile_max),
        alpha=np.array(alpha),
        m=np.array(m),
        l=np.array(l_sum),
        acc=np.array(acc),
    )


@dataclass(frozen=True)
class PeakMemory:
    """Materialised bytes of the intermediate arrays of one attention head.

    ``plain_bytes``: the n_q x n_k logits plus the n_q x n_k weights of the direct computation.
    ``tiled_bytes``: one block_q x block_k tile (exponentiated in place) plus ``m`` and ``l``
    (block_q each) and the accumulator (block_q x d) of the tiled kernel. Inputs and the
    n_q x d output are common to both and not counted.
    """

    n_q: int
    n_k: int
    d: int
    block_q: int
    block_k: int
    itemsize: int
    plain_bytes: int
    tiled_bytes: int

    @property
    def ratio(self) -> float:
        """``plain_bytes / tiled_bytes``: how many times less the tiled kernel holds."""
        return self.plain_bytes / self.tiled_bytes if self.tiled_bytes else math.inf


def peak_memory(
    n_q: int,
    n_k: int,
    d: int,
    block_q: int = DEFAULT_BLOCK_Q,
    block_k: int = DEFAULT_BLOCK_K,
    dtype: object = np.float32,
) -> PeakMemory:
    """Peak materialised intermediate bytes of plain vs tiled attention (see :class:`PeakMemory`).

    ``d`` is the value width (the accumulator's columns). A block larger than the sequence is
    clipped to it, as the kernel does.
    """
    for name, val in (("n_q", n_q), ("n_k", n_k), ("d", d)):
        if isinstance(val, bool) or not isinstance(val, int | np.integer) or val < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {val!r}")
    bq = min(_check_block(block_q, "block_q"), n_q)
    bk = min(_check_block(block_k, "block_k"), n_k)
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        raise ValueError(f"dtype must be a NumPy dtype, got {dtype!r}") from None
    if not np.issubdtype(np.dtype(dtype), np.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype!r}")
    plain = 2 * int(n_q) * int(n_k) * itemsize
    tiled = (bq * bk + 2 * bq + bq * int(d)) * itemsize
    return PeakMemory(
        n_q=int(n_q),
        n_k=int(n_k),
        d=int(d),
        block_q=bq,
        block_k=bk,
        itemsize=itemsize,
        plain_bytes=plain,
        tiled_bytes=tiled,
    )
