"""Benchmarks of the modern attention variants.

``kv_cache_generate_n512``: one head (d_k = d_v = 64, float32) generates 512 tokens through the
key/value cache. ``median_ms`` / ``p95_ms`` are the whole :func:`kv_cache_generate` call;
``first64_step_ms`` and ``last64_step_ms`` are the median time of one step among the first and
the last 64 (each step appends one key and one value and reads the cache, so only the read
grows with n); ``full_causal_ms`` is one full causal :func:`attention` over the same 512
tokens, for scale.
"""

from __future__ import annotations

import time

import numpy as np

from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.kv_cache import KVCache, kv_cache_generate

from . import Row, summarize, timeit

N_STEPS = 512
WIDTH = 64
EDGE = 64


def _step_times_ms(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Wall time of each step of one generation, in ms."""
    cache = KVCache(1, 1, q.shape[1], dtype=q.dtype, capacity=q.shape[0])
    stamps = np.empty(q.shape[0] + 1, dtype=np.int64)
    stamps[0] = time.perf_counter_ns()
    for t in range(q.shape[0]):
        cache.step(q[t], k[t], v[t])
        stamps[t + 1] = time.perf_counter_ns()
    return np.diff(stamps) / 1e6


def kv_cache_generate_n512(quick: bool = False) -> list[Row]:
    rng = np.random.default_rng(N_STEPS)
    q, k, v = (rng.standard_normal((N_STEPS, WIDTH)).astype(np.float32) for _ in range(3))
    budget = {"budget_s": 0.3, "min_runs": 3} if quick else {"budget_s": 2.0, "min_runs": 10}
    totals = timeit(lambda: kv_cache_generate(q, k, v), **budget)
    runs = 3 if quick else 15
    _step_times_ms(q, k, v)  # warm-up
    per_step = np.array([_step_times_ms(q, k, v) for _ in range(runs)])
    # the median over runs of each step, then over the steps of each end
    step_medians = np.median(per_step, axis=0)
    first = float(np.median(step_medians[:EDGE]))
    last = float(np.median(step_medians[-EDGE:]))
    mask = causal_mask(N_STEPS)
    full = timeit(lambda: attention(q, k, v, mask=mask), **budget)
    return [
        summarize(
            "kv_cache_generate_n512",
            totals,
            n=N_STEPS,
            d_k=WIDTH,
            dtype="float32",
            first64_step_ms=first,
            last64_step_ms=last,
            last_over_first=last / first if first > 0 else float("inf"),
            full_causal_ms=float(np.median(full)),
        )
    ]


BENCHMARKS = {"kv_cache_generate_n512": kv_cache_generate_n512}
