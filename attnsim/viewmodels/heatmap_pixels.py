"""Colours and pooled images of a matrix: pure NumPy, no Qt.

What the kit's matrix canvas (:mod:`attnsim.panels.kit.matrix_canvas`, which every numbered
matrix of every panel goes through) paints: a colour table packed as 0xAARRGGBB words,
each cell's colour index and colour, and for a matrix with more cells than pixels one image of
exactly the pixels drawn (:func:`render_pixels`): blocks of cells pooled first (the largest
value; a block is hatched only if every cell is forbidden), so every cell is read and peaks
survive, into work arrays kept between repaints.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnsim.engine.head_trace import MaskedTable

BoolArray = NDArray[np.bool_]

__all__ = [
    "COLOR_ROWS",
    "POOL_ROWS",
    "block_size",
    "cell_colors",
    "color_index",
    "hatch_pattern",
    "lut_argb",
    "pixel_index",
    "pool",
    "render_pixels",
    "text_on_dark",
]


# ---- colour -------------------------------------------------------------------------------------
def lut_argb(rgb: ArrayLike) -> NDArray[np.uint32]:
    """Pack an (m, 3) uint8 colour table as opaque 0xAARRGGBB words, shape (m,)."""
    c = np.asarray(rgb, dtype=np.uint32)
    if c.ndim != 2 or c.shape[1] < 3:
        raise ValueError(f"a colour table must have shape (m, 3), got {c.shape}")
    return (0xFF000000 | (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]).astype(np.uint32)


def color_index(values: ArrayLike, lo: float, hi: float, levels: int = 256) -> NDArray[np.uint8]:
    """Index into a ``levels``-entry colour table: ``lo`` -> 0, ``hi`` -> levels - 1, clipped.

    ``-inf`` maps to 0 and ``+inf`` to the top (such cells are hatched anyway); NaN (the NaN
    weight rows of the precision lab) maps to 0 too, where casting it would warn.
    """
    raw = np.asarray(values)
    if raw.ndim >= 2 and raw.shape[0] > COLOR_ROWS:
        # A few rows at a time: a 4,096 x 4,096 table would need several float64 copies.
        out = np.empty(raw.shape, dtype=np.uint8 if levels <= 256 else np.uint16)
        for a in range(0, raw.shape[0], COLOR_ROWS):
            out[a : a + COLOR_ROWS] = color_index(raw[a : a + COLOR_ROWS], lo, hi, levels)
        return out  # type: ignore[return-value]
    v = np.asarray(raw, dtype=float)
    out = np.empty(v.shape, dtype=np.uint8 if levels <= 256 else np.uint16)
    return _index_into(v, lo, hi, levels, np.empty(v.shape), out)  # type: ignore[return-value]


def _index_into(
    v: np.ndarray, lo: float, hi: float, levels: int, x: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """:func:`color_index` of float64 ``v`` written into ``out``, ``x`` (float64, like ``v``)
    its work array."""
    span = hi - lo if hi > lo else 1.0
    with np.errstate(invalid="ignore"):
        # (v - lo) * ((levels - 1) / span) + 0.5 in place; fmax maps NaN (and below 0) to 0,
        # as clipping and then zeroing the NaNs did, in one pass.
        np.subtract(v, lo, out=x)
        np.multiply(x, (levels - 1) / span, out=x)
        np.add(x, 0.5, out=x)
    np.fmax(x, 0.0, out=x)
    np.minimum(x, levels - 1, out=x)
    np.copyto(out, x, casting="unsafe")  # truncation, as astype
    return out


COLOR_ROWS = 256  # rows of a table coloured at a time


def cell_colors(values: ArrayLike, lo: float, hi: float, lut: ArrayLike) -> NDArray[np.uint32]:
    """The colour (0xAARRGGBB) of every cell, shape like ``values``."""
    table = np.asarray(lut, dtype=np.uint32)
    return table[color_index(values, lo, hi, table.size)]


def text_on_dark(colors: ArrayLike) -> BoolArray:
    """True where a packed colour is dark enough to need white text (relative luminance)."""
    c = np.asarray(colors, dtype=np.uint32)
    r = ((c >> 16) & 0xFF) / 255.0
    g = ((c >> 8) & 0xFF) / 255.0
    b = (c & 0xFF) / 255.0
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) < 0.45


# ---- images for large matrices -------------------------------------------------------------------
def block_size(n: int, pixels: int) -> int:
    """Cells per pooled block so that ``n`` cells fit in ``pixels`` (1 when they already fit)."""
    if pixels <= 0:
        raise ValueError(f"pixels must be positive, got {pixels}")
    return max(1, -(-n // pixels))


def _pool_rows(a: np.ndarray, k: int, reduce) -> np.ndarray:
    # Whole rows are contiguous, so reducing a (blocks, k, n) view streams memory once.
    n = a.shape[0]
    full = n // k
    out = np.empty((-(-n // k), *a.shape[1:]), dtype=a.dtype)
    if full:
        reduce(a[: full * k].reshape(full, k, *a.shape[1:]), axis=1, out=out[:full])
    if full * k < n:  # a short last block, written in place (no concatenate copy)
        reduce(a[full * k :], axis=0, out=out[full])
    return out


def _pool_cols(a: np.ndarray, k: int, ufunc) -> np.ndarray:
    # Strided column slices: k - 1 elementwise passes beat a reduction over a short last axis.
    out = np.array(a[:, 0::k], copy=True)
    for s in range(1, k):
        part = a[:, s::k]
        w = part.shape[1]
        ufunc(out[:, :w], part, out=out[:, :w])
    return out


def pool(values: ArrayLike, kr: int, kc: int, how: Literal["max", "any"] = "max") -> np.ndarray:
    """Reduce ``kr x kc`` blocks of a matrix: "max" for numbers, "any" for booleans.

    Shape ``(ceil(n_q / kr), ceil(n_k / kc))``; the last block of a row or column may be short.
    Max keeps peaks visible: one strong key among many weak ones still shows.
    """
    a = np.asarray(values)
    reduce, ufunc = (np.max, np.maximum) if how == "max" else (np.any, np.logical_or)
    if kr > 1:
        a = _pool_rows(a, kr, reduce)
    if kc > 1:
        a = _pool_cols(a, kc, ufunc)
    return a


def pixel_index(n: int, pixels: int) -> NDArray[np.intp]:
    """For each of ``pixels`` pixels along an axis, the cell under its centre, shape (pixels,)."""
    # floor((i + 1/2) n / pixels) in whole numbers: in floats a centre that falls exactly on a
    # cell's edge (pixel 5 of 11 over 30 cells: 15.0) could round to the cell before it
    twice = 2 * np.arange(pixels, dtype=np.intp) + 1
    return np.minimum(twice * n // (2 * pixels), n - 1)


@lru_cache(maxsize=8)
def hatch_pattern(height: int, width: int, period: int = 6, thickness: int = 2) -> BoolArray:
    """Diagonal stripes (lower left to upper right), shape (height, width): True on a stripe.

    Cached (the same size comes back on every repaint), hence read-only.
    """
    y = np.arange(height)[:, None]
    x = np.arange(width)[None, :]
    out = ((x + y) % period) < thickness
    out.flags.writeable = False
    return out


POOL_ROWS = 32  # pooled rows made at a time: their unpooled columns stay in the cache


def _scratch(name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """A work array kept between calls (per thread): a repaint at n = 2,048 would otherwise
    map, fault in and free several megabytes of fresh pages."""
    store = _SCRATCH.__dict__
    a = store.get(name)
    if a is None or a.shape != shape or a.dtype != dtype:
        a = store[name] = np.empty(shape, dtype=dtype)
    return a


_SCRATCH = threading.local()


def _pool_into(
    a: np.ndarray, kr: int, kc: int, out: np.ndarray, work: str, where: np.ndarray | None = None
) -> np.ndarray:
    """``pool(a, kr, kc, "max")`` written into ``out`` (shape ``(ceil(n / kr), ceil(m / kc))``):
    a few pooled rows at a time, each pooled along its columns while it is still in the cache.

    With ``where`` (bool, like ``a``), the pool of ``np.where(where, a, -inf)`` without making
    that table: the rows are reduced over the ``where`` cells only, from −∞."""
    n, m = a.shape
    nb = out.shape[0]
    full = n // kr
    rows = _scratch(work, (min(POOL_ROWS, nb), m), a.dtype) if kc > 1 else None
    only = {} if where is None else {"initial": -np.inf}
    for b0 in range(0, nb, POOL_ROWS):
        b1 = min(b0 + POOL_ROWS, nb)
        r = rows[: b1 - b0] if rows is not None else out[b0:b1]
        f1 = min(b1, full)
        if kr == 1:
            if where is None:
                r[...] = a[b0:b1]
            else:
                r.fill(-np.inf)
                np.copyto(r, a[b0:b1], where=where[b0:b1])
        else:
            if f1 > b0:
                cells = slice(b0 * kr, f1 * kr)
                if where is not None:
                    only["where"] = where[cells].reshape(f1 - b0, kr, m)
                np.maximum.reduce(a[cells].reshape(f1 - b0, kr, m), axis=1, out=r[: f1 - b0],
                                  **only)  # fmt: skip
            if b1 > full:  # the short last block
                if where is not None:
                    only["where"] = where[full * kr :]
                np.maximum.reduce(a[full * kr :], axis=0, out=r[full - b0], **only)
        if rows is not None:
            _pool_cols_into(r, kc, out[b0:b1])
    return out


def _pool_cols_into(r: np.ndarray, kc: int, o: np.ndarray) -> None:
    """``o[:, j]`` = the largest of ``r[:, j * kc : (j + 1) * kc]`` (the last block may be
    short). An even block is halved first, pairs of neighbouring columns (never two blocks):
    two halvings take half the time of four strided passes."""
    src, k = r, kc
    while k % 2 == 0:
        m = src.shape[1]
        h = m // 2
        k //= 2
        dst = o if k == 1 else _scratch(f"half{k}", (src.shape[0], m - h), src.dtype)
        np.maximum(src[:, 0 : 2 * h : 2], src[:, 1 : 2 * h : 2], out=dst[:, :h])
        if m > 2 * h:  # an odd column out: the short last block's last cell
            dst[:, h] = src[:, m - 1]
        src = dst
    if k == 1:
        if src is not o:
            np.copyto(o, src)
        return
    np.copyto(o, src[:, 0::k])
    for s in range(1, k):
        part = src[:, s::k]
        w = part.shape[1]
        np.maximum(o[:, :w], part, out=o[:, :w])


def _word(row_bytes: int, k: int) -> np.dtype:
    """The widest unsigned word (8, 4, 2 or 1 bytes) dividing both a row and a block of bytes."""
    for w in (8, 4, 2):
        if row_bytes % w == 0 and k % w == 0:
            return np.dtype(f"u{w}")
    return np.dtype(np.uint8)


def _pool_any_into(mask: np.ndarray, kr: int, kc: int, out: np.ndarray) -> np.ndarray:
    """``pool(mask, kr, kc, "any")`` as 0/1 bytes in ``out``, shape ``(ceil(n / kr), ceil(m /
    kc))``: the mask's bytes OR-ed a whole word (up to 8 cells) at a time, rows first, then the
    ``kc`` bytes of each block as one word when ``kc`` allows (3 times as fast as byte by byte)."""
    b = np.ascontiguousarray(mask).view(np.uint8)
    n, m = b.shape
    nb = out.shape[0]
    full = n // kr
    wt = _word(m, 8)  # OR of words is the OR of their bytes, whatever the word
    src = b.view(wt)
    rows = _scratch("any_rows", (nb, m // wt.itemsize), wt)
    if kr == 1:
        np.copyto(rows, src)
    else:
        if full:
            np.bitwise_or.reduce(src[: full * kr].reshape(full, kr, -1), axis=1,
                                 out=rows[:full])  # fmt: skip
        if full < nb:  # the short last block
            np.bitwise_or.reduce(src[full * kr :], axis=0, out=rows[full])
    bt = _word(m, kc)  # a block's bytes as words: kc // size words per block
    words = rows.view(np.uint8).view(bt)
    kw = kc // bt.itemsize
    acc = words[:, 0::kw]
    if kw > 1:
        acc = _scratch("any_cols", acc.shape, bt)
        np.copyto(acc, words[:, 0::kw])
        for s in range(1, kw):
            part = words[:, s::kw]
            w = part.shape[1]
            np.bitwise_or(acc[:, :w], part, out=acc[:, :w])
    np.not_equal(acc, 0, out=out.view(np.bool_))
    return out


@lru_cache(maxsize=16)
def _block_of_pixel(n: int, pixels: int, k: int) -> NDArray[np.intp] | None:
    """The pooled block under each pixel's centre (read-only), or None when it is every
    block in order (no take needed)."""
    idx = pixel_index(n, pixels) // k
    if idx.size == -(-n // k) and (idx == np.arange(idx.size)).all():
        return None
    idx.flags.writeable = False
    return idx


def render_pixels(
    values: ArrayLike | MaskedTable,
    allowed: ArrayLike | None,
    lo: float,
    hi: float,
    lut: ArrayLike,
    height: int,
    width: int,
    *,
    hatch: int = 0xFF8C8C8C,
    background: int = 0xFFF2F2F2,
    period: int = 6,
    out: np.ndarray | None = None,
) -> tuple[NDArray[np.uint32], tuple[int, int]]:
    """A matrix as an image of exactly ``height x width`` pixels (0xAARRGGBB), and the block size.

    When the matrix has more cells than pixels, blocks of cells are pooled first (max of the
    values; a block is forbidden only if all its cells are), so every cell is read and peaks
    survive. Each pixel then shows the block under its centre. ``allowed`` (n_q, n_k) is the
    mask: forbidden pixels get diagonal stripes over their colour; non-finite values (``-inf``)
    get a plain light background. ``out``, a C-contiguous uint32 ``(height, width)`` array, is
    written and returned instead of a new one (a repaint reuses its image's memory).
    ``values`` may be a :class:`~attnsim.engine.head_trace.MaskedTable` (the masked logits): with
    −∞ in the forbidden cells, its pooled blocks are read from the logits over the allowed cells
    and the table itself is made only when no block is pooled.
    """
    lazy = values if isinstance(values, MaskedTable) and values.fill == -np.inf else None
    v = np.asarray(values) if lazy is None else lazy.values
    n_q, n_k = v.shape
    kr, kc = block_size(n_q, height), block_size(n_k, width)
    nb_q, nb_k = -(-n_q // kr), -(-n_k // kc)
    if kr == 1 and kc == 1:
        pooled = v if lazy is None else np.asarray(lazy.full())
    else:
        where = None if lazy is None else lazy.allowed
        pooled = _pool_into(v, kr, kc, _scratch("pooled", (nb_q, nb_k), v.dtype), "rows", where)
    table, bg = np.asarray(lut, dtype=np.uint32), np.uint32(background)
    colors = _scratch("colors", (nb_q, nb_k), np.dtype(np.uint32))
    # no float copy of the whole table: a few rows at a time, into kept work arrays
    step = min(COLOR_ROWS, nb_q)
    x = _scratch("index_x", (step, nb_k), np.dtype(np.float64))
    idx = _scratch("index", (step, nb_k), np.dtype(np.uint8 if table.size <= 256 else np.uint16))
    # np.take widens its indices to intp itself, slowly: widened here, 3 times as fast in all
    wide = _scratch("index_p", (step, nb_k), np.dtype(np.intp))
    for a in range(0, nb_q, COLOR_ROWS):
        block = pooled[a : a + COLOR_ROWS]
        c = colors[a : a + COLOR_ROWS]
        h = block.shape[0]
        f = np.asarray(block, dtype=np.float64)
        np.copyto(wide[:h], _index_into(f, lo, hi, table.size, x[:h], idx[:h]))
        # every index is in the table (clipped above): "clip" checks nothing and is faster
        np.take(table, wide[:h], out=c, mode="clip")
        finite = np.isfinite(block)
        if not finite.all():
            np.copyto(c, bg, where=~finite)
    rows = _block_of_pixel(n_q, height, kr)
    cols = _block_of_pixel(n_k, width, kc)
    if out is None or out.shape != (height, width) or out.dtype != np.uint32:
        out = np.empty((height, width), dtype=np.uint32)
    # Two 1-D takes (rows, then columns) are several times faster than one 2-D fancy index;
    # every index is a block (no check needed: "clip" also spares the copy "raise" makes of out).
    u32 = np.dtype(np.uint32)
    by_rows = colors
    if rows is not None:
        by_rows = _scratch("by_rows", (height, nb_k), u32)
        np.take(colors, rows, axis=0, out=by_rows, mode="clip")
    if cols is None:
        np.copyto(out, by_rows)
    else:
        np.take(by_rows, cols, axis=1, out=out, mode="clip")
    if allowed is not None:
        ok_cells = np.asarray(allowed, dtype=bool)
        if kr == 1 and kc == 1:
            ok = ok_cells.view(np.uint8)
        else:
            ok = _pool_any_into(ok_cells, kr, kc, _scratch("ok", (nb_q, nb_k), np.dtype(np.uint8)))
        if not ok.all():
            np.putmask(out, _hatched(ok, (n_q, n_k, height, width, period)), np.uint32(hatch))
    return out, (kr, kc)


def _hatched(ok: np.ndarray, key: tuple[int, int, int, int, int]) -> BoolArray:
    """The striped pixels of an image whose pooled blocks are allowed where ``ok`` (0/1 bytes);
    ``key`` is (n_q, n_k, height, width, period). Kept with a copy of ``ok``: the next trace of
    the same scenario has the same mask, and the stripes cost more than a comparison."""
    last = _SCRATCH.__dict__.get("hatched")
    if last is not None and last[0] == key and np.array_equal(last[1], ok):
        return last[2]
    n_q, n_k, height, width, period = key
    rows = _block_of_pixel(n_q, height, block_size(n_q, height))
    cols = _block_of_pixel(n_k, width, block_size(n_k, width))
    shut = ok == 0  # blocks whose every cell is forbidden
    if rows is not None:
        shut = np.take(shut, rows, axis=0)
    if cols is not None:
        shut = np.take(shut, cols, axis=1)
    stripes = hatch_pattern(height, width, period, max(1, period // 3))
    np.logical_and(shut, stripes, out=shut)
    shut.flags.writeable = False
    _SCRATCH.__dict__["hatched"] = (key, ok.copy(), shut)
    return shut
