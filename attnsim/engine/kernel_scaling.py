"""Forward time and peak memory of plain, tiled and linear attention as the sequence grows.

Time is measured (the median of a few runs of each engine function on random causal inputs);
memory is the analytic figure of the intermediate arrays each computation materialises:
:func:`~attnsim.engine.kernels.peak_memory` for plain and tiled attention, and the running
memory ``S`` (d x d) plus its normaliser ``z`` (d) of :func:`~attnsim.engine.linear.memory_sizes`
for causal linear attention. All three are causal, so they solve the same problem.

The measurement is a generator of progress fractions so a background job can report progress
and stop between runs; :func:`measure_scaling` drives it to the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from .attention import attention, causal_mask
from .kernels import DEFAULT_BLOCK_K, DEFAULT_BLOCK_Q, peak_memory, tiled_attention
from .linear import linear_memory, memory_sizes
from .settings import whole_number

__all__ = [
    "METHODS",
    "N_MAX",
    "N_MIN",
    "ScalingResult",
    "measure_scaling",
    "scaling_sizes",
    "scaling_steps",
]

METHODS = ("plain", "tiled", "linear")
N_MIN = 64
N_MAX = 4096  # beyond this the n x n plain computation needs hundreds of MiB per run
REPEATS_MAX = 15
D_MAX = 512


@dataclass(frozen=True, eq=False)
class ScalingResult:
    """``n`` (m,) the sizes; ``seconds`` and ``memory_bytes`` (3, m), rows in :data:`METHODS`
    order; ``seconds`` is the median of ``repeats`` runs of one forward pass."""

    n: NDArray[np.int64]
    d: int
    repeats: int
    seconds: NDArray[np.float64]
    memory_bytes: NDArray[np.int64]

    def method(self, name: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """(seconds, bytes) of one method."""
        i = METHODS.index(name)
        return self.seconds[i], self.memory_bytes[i]


def scaling_sizes(n_max: int, n_min: int = N_MIN) -> tuple[int, ...]:
    """``n_min, 2 n_min, 4 n_min, ...`` up to ``n_max`` (both powers of two)."""
    hi = whole_number(n_max, "n_max", N_MIN, N_MAX)
    lo = whole_number(n_min, "n_min", 1, hi)
    for name, v in (("n_max", hi), ("n_min", lo)):
        if v & (v - 1):
            raise ValueError(f"{name} must be a power of two, got {v}")
    sizes, n = [], lo
    while n <= hi:
        sizes.append(n)
        n *= 2
    return tuple(sizes)


def _memory(n: int, d: int, itemsize: int) -> tuple[int, int, int]:
    pm = peak_memory(n, n, d, DEFAULT_BLOCK_Q, DEFAULT_BLOCK_K, np.dtype(f"f{itemsize}"))
    linear = int(memory_sizes(n, d, d, normalised=True).linear_numbers[0]) * itemsize
    return pm.plain_bytes, pm.tiled_bytes, linear


def _forward(method: str, q, k, v, mask) -> Callable[[], object]:
    if method == "plain":
        return lambda: attention(q, k, v, mask=mask)
    if method == "tiled":
        return lambda: tiled_attention(q, k, v, mask=mask)
    return lambda: linear_memory(q, k, v, feature_map="elu+1", normalise=True)


def scaling_steps(
    sizes: tuple[int, ...], *, d: int = 64, repeats: int = 3, seed: int = 0
) -> Iterator[tuple[float, ScalingResult | None]]:
    """Time each method at each size; yields ``(fraction done, None)`` after every run and
    ``(1.0, result)`` at the end. Stop iterating to cancel.

    Progress counts timed runs weighted by n (a rough cost), so the bar moves evenly enough.
    Each method runs once untimed at each size before its timed runs.
    """
    d = whole_number(d, "d", 1, D_MAX)
    repeats = whole_number(repeats, "repeats", 1, REPEATS_MAX)
    if not sizes:
        raise ValueError("sizes must name at least one n")
    ns = [whole_number(n, "n", 1, N_MAX) for n in sizes]
    return _measured(ns, d, repeats, np.random.default_rng(seed))  # arguments checked now


def _measured(ns: list[int], d: int, repeats: int, rng: np.random.Generator):
    # One BLAS thread for every method: the tiled kernel runs its tiles on one anyway, and on a
    # shared machine threaded BLAS turned a 1 ms product into 20 ms now and then, which would
    # compare thread scheduling instead of the algorithms.
    with threadpool_limits(limits=1, user_api="blas"):
        yield from _timed(ns, d, repeats, rng)


def _timed(ns: list[int], d: int, repeats: int, rng: np.random.Generator):
    total = float(sum(ns) * len(METHODS) * repeats)
    done = 0.0
    seconds = np.zeros((len(METHODS), len(ns)))
    memory = np.zeros((len(METHODS), len(ns)), dtype=np.int64)
    for j, n in enumerate(ns):
        # Unit-variance q and k over sqrt(d) keep the logits O(1), as in a trained model.
        q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
        mask = causal_mask(n)
        memory[:, j] = _memory(n, d, q.itemsize)
        for i, method in enumerate(METHODS):
            run = _forward(method, q, k, v, mask)
            run()  # untimed: the first call pays for page faults and cold caches
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
                done += n
                yield done / total, None
            seconds[i, j] = float(np.median(times))
    yield 1.0, ScalingResult(np.array(ns, dtype=np.int64), d, repeats, seconds, memory)


def measure_scaling(
    sizes: tuple[int, ...], *, d: int = 64, repeats: int = 3, seed: int = 0
) -> ScalingResult:
    """:func:`scaling_steps` run to the end."""
    for _, res in scaling_steps(sizes, d=d, repeats=repeats, seed=seed):
        if res is not None:
            return res
    raise RuntimeError("the measurement ended without a result")  # pragma: no cover
