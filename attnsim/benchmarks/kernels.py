"""Attention kernel benchmarks.

``tiled_attention_n2048``: :func:`~attnsim.engine.kernels.tiled_attention` with its default
blocks on one head at n = 2048, d_k = 64, float32, beside ``attention()`` on the same inputs
(the ``attention_forward_n2048`` computation), timed in the same run so both see the same
machine load. ``ratio_vs_attention`` is tiled / plain median time (target <= 2). The row also
records the peak intermediate memory of both and ``OPENBLAS_NUM_THREADS``: the kernel runs its
tile products on one BLAS thread, the plain computation on the default threads.
"""

from __future__ import annotations

import os

import numpy as np

from attnsim.engine.attention import attention
from attnsim.engine.kernels import DEFAULT_BLOCK_K, DEFAULT_BLOCK_Q, peak_memory, tiled_attention

from . import Row, summarize, timeit

TARGET_RATIO = 2.0


def _budget(quick: bool) -> dict[str, float | int]:
    return {"budget_s": 0.3, "min_runs": 5} if quick else {"budget_s": 2.0, "min_runs": 15}


def tiled_attention_n2048(quick: bool = False) -> list[Row]:
    n, d = 2048, 64
    rng = np.random.default_rng(n)  # the inputs of attention_forward_n2048
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    plain = timeit(lambda: attention(q, k, v), **_budget(quick))
    tiled = timeit(lambda: tiled_attention(q, k, v), **_budget(quick))
    ref, _ = attention(q, k, v)
    out, _ = tiled_attention(q, k, v)
    mem = peak_memory(n, n, d, DEFAULT_BLOCK_Q, DEFAULT_BLOCK_K, np.float32)
    return [
        summarize(
            "tiled_attention_n2048",
            tiled,
            n=n,
            d_k=d,
            dtype="float32",
            block_q=DEFAULT_BLOCK_Q,
            block_k=DEFAULT_BLOCK_K,
            attention_median_ms=float(np.median(plain)),
            ratio_vs_attention=float(np.median(tiled) / np.median(plain)),
            target_ratio=TARGET_RATIO,
            max_abs_diff=float(np.abs(out - ref).max()),
            plain_peak_bytes=mem.plain_bytes,
            tiled_peak_bytes=mem.tiled_bytes,
            openblas_threads=os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        )
    ]


BENCHMARKS = {"tiled_attention_n2048": tiled_attention_n2048}
