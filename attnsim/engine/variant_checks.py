"""The engine's other ways of computing attention, checked against ``attention()`` on one head.

For the first head of a scenario (its Q, K, V as :func:`attnsim.engine.scenario.compute` gives
them) this runs the tiled kernel, token-by-token generation through a KV cache, grouped-query
attention and the linear-attention memory, and reports the largest absolute difference of each
from its reference with the tolerance it is held to; then the precision table of that head under
a left-padded causal mask, and the memory figures (peak materialised bytes, linear memory vs KV
cache, key/value head sharing) at the head's widths. ``attnsim variants`` prints it.

Every number is computed here by the engine functions themselves; nothing is copied in.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from .attention import attention, causal_mask
from .kernels import DEFAULT_BLOCK_K, DEFAULT_BLOCK_Q, PeakMemory, peak_memory, tiled_attention
from .kv_cache import kv_cache_generate
from .linear import MemorySizes, _features, linear_attention_sum, linear_memory, memory_sizes
from .precision import PrecisionRow, left_padded_causal_mask, precision_table
from .scenario import Scenario, compute
from .variants import SharingCounts, grouped_query_attention, repeat_kv, sharing_counts

Array = NDArray[np.float64]

__all__ = [
    "BLOCK_CANDIDATES",
    "Case",
    "Check",
    "MemoryFigures",
    "VariantReport",
    "check_gqa",
    "check_kv_cache",
    "check_linear_memory",
    "check_tiled",
    "gqa_heads",
    "jsonable",
    "memory_figures",
    "padded_mask",
    "variant_report",
]

# Issue 13's bound for the tiled kernel in float64 (1e-12 relative), used for every check: each
# computes the same sums in another order, so they may differ by rounding only.
REL_TOL = 1e-12
# Block sizes tried (square tiles), plus the kernel's default tile. Small ones leave a short last
# block on most n; a size is dropped when it would make more than MAX_TILES tiles, so a
# 4,096-token scenario still checks in seconds.
BLOCK_CANDIDATES = (1, 2, 3, 5, 16, 64, 100, 384)
MAX_TILES = 1024
# Grouped-query checks: h query heads over each g (g = 2 is GQA, g = 1 is MQA).
GQA_HEADS = 4
GQA_GROUPS = (2, 1)
GQA_SEED = 0
# Each extra head is the scenario's matrix plus noise of this fraction of its largest entry:
# the heads differ (so a wrong sharing would show) while staying on the scenario's scale.
GQA_NOISE = 0.1
# The memory figures' settings.
PEAK_N = 2048  # the size of the kernel benchmark (tiled_attention_n2048)
PEAK_DTYPE = "float32"  # what that benchmark measures in; one dtype so both sizes compare
LINEAR_NS = (64, 512, 4096)
SHARING_H = 32
SHARING_GROUPS = (32, 8, 1)
PADDED_ROWS = 1  # left-padded tokens of the precision mask: one query with no legal key


@dataclass(frozen=True)
class Case:
    """One computation of a check: its settings (name, value pairs) and its max |difference|."""

    settings: tuple[tuple[str, object], ...]
    max_abs_diff: float

    def get(self, name: str) -> object:
        """The value of one setting (None if the case has no such setting)."""
        return dict(self.settings).get(name)

    def to_dict(self) -> dict[str, object]:
        return {**dict(self.settings), "max_abs_diff": self.max_abs_diff}


@dataclass(frozen=True)
class Check:
    """One way of computing attention against its reference, over several cases.

    ``tolerance`` is :data:`REL_TOL` times the size of the numbers involved (the largest value
    times the largest logit, or for the linear memory the largest row sum of |coefficients|,
    each at least 1): rounding errors grow with both. ``skipped`` is
    non-empty when the check does not apply to the scenario (and then ``cases`` is empty).
    """

    name: str
    reference: str
    tolerance: float
    cases: tuple[Case, ...]
    skipped: str = ""

    @property
    def max_abs_diff(self) -> float:
        return max((c.max_abs_diff for c in self.cases), default=0.0)

    @property
    def passed(self) -> bool:
        # NaN compares False, so a NaN difference fails
        return all(c.max_abs_diff <= self.tolerance for c in self.cases)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "reference": self.reference,
            "passed": None if self.skipped else self.passed,
            "skipped": self.skipped,
            "max_abs_diff": self.max_abs_diff,
            "tolerance": self.tolerance,
            "cases": [c.to_dict() for c in self.cases],
        }


def _diff(a: Array, b: Array) -> float:
    return float(np.max(np.abs(a - b))) if np.size(a) else 0.0


def _tolerance(q: Array, k: Array, v: Array, divisor: float) -> float:
    # Cauchy-Schwarz: no logit is larger than |q|max |k|max / divisor.
    qn = float(np.linalg.norm(q, axis=-1).max(initial=0.0))
    kn = float(np.linalg.norm(k, axis=-1).max(initial=0.0))
    vmax = float(np.abs(v).max(initial=0.0))
    return REL_TOL * max(1.0, vmax) * max(1.0, qn * kn / divisor)


def _divisor(q: Array, scale: bool) -> float:
    return math.sqrt(q.shape[-1]) if scale else 1.0


def _blocks(n_q: int, n_k: int) -> list[tuple[int, int]]:
    pairs = [
        (b, b) for b in BLOCK_CANDIDATES if math.ceil(n_q / b) * math.ceil(n_k / b) <= MAX_TILES
    ]
    return [*pairs, (DEFAULT_BLOCK_Q, DEFAULT_BLOCK_K)]


def _masks(n_q: int, n_k: int) -> tuple[tuple[str, NDArray[np.bool_] | None], ...]:
    return (("none", None), ("causal", causal_mask(n_q, n_k)))


def check_tiled(q: Array, k: Array, v: Array, *, scale: bool = True) -> Check:
    """The tiled kernel at every block size of :func:`_blocks`, unmasked and causal, against
    ``attention()`` with the same mask. q (n_q, d_k), k (n_k, d_k), v (n_k, d_v)."""
    n_q, n_k = q.shape[0], k.shape[0]
    cases = []
    for mask_name, mask in _masks(n_q, n_k):
        ref, _ = attention(q, k, v, mask=mask, scale=scale)
        for bq, bk in _blocks(n_q, n_k):
            out, _ = tiled_attention(q, k, v, mask=mask, block_q=bq, block_k=bk, scale=scale)
            divides = n_q % bq == 0 and n_k % bk == 0
            settings = (("mask", mask_name), ("block_q", bq), ("block_k", bk),
                        ("divides_n", divides))  # fmt: skip
            cases.append(Case(settings, _diff(out, ref)))
    return Check("tiled", "attention()", _tolerance(q, k, v, _divisor(q, scale)), tuple(cases))


def _needs_self_attention(name: str, reference: str, q: Array, k: Array) -> Check | None:
    if q.shape[0] == k.shape[0]:
        return None
    why = f"needs as many queries as keys (self-attention), has {q.shape[0]} and {k.shape[0]}"
    return Check(name, reference, 0.0, (), skipped=why)


def check_kv_cache(q: Array, k: Array, v: Array, *, scale: bool = True) -> Check:
    """Generation one token at a time through a KV cache against causal ``attention()``.
    Self-attention only (n_q = n_k); otherwise the check is skipped."""
    reference = "attention(), causal mask"
    skip = _needs_self_attention("kv_cache", reference, q, k)
    if skip is not None:
        return skip
    ref, _ = attention(q, k, v, mask=causal_mask(q.shape[0]), scale=scale)
    run = kv_cache_generate(q, k, v, scale=scale)
    case = Case((("mask", "causal"), ("steps", len(run.steps))), _diff(run.output, ref))
    return Check("kv_cache", reference, _tolerance(q, k, v, _divisor(q, scale)), (case,))


def gqa_heads(
    q: Array, k: Array, v: Array, h: int, g: int, *, seed: int = GQA_SEED
) -> tuple[Array, Array, Array]:
    """h query heads (h, n_q, d_k) and g key and value heads (g, n_k, d), head 0 being the
    scenario's own q, k, v and every other head that plus seeded noise (see GQA_NOISE)."""
    rng = np.random.default_rng(seed)

    def stack(x: Array, heads: int) -> Array:
        spread = float(np.abs(x).max(initial=0.0)) or 1.0
        noise = rng.standard_normal((heads, *x.shape)) * (GQA_NOISE * spread)
        noise[0] = 0.0
        return x[None] + noise

    return stack(q, h), stack(k, g), stack(v, g)


def check_gqa(q: Array, k: Array, v: Array, *, scale: bool = True) -> Check:
    """Grouped-query (h = 4 over g = 2) and multi-query (g = 1) attention, unmasked and causal,
    against ``attention()`` on the key/value heads repeated per query head."""
    cases = []
    tol = 0.0
    for g in GQA_GROUPS:
        qh, kh, vh = gqa_heads(q, k, v, GQA_HEADS, g)
        tol = max(tol, _tolerance(qh, kh, vh, _divisor(q, scale)))
        for mask_name, mask in _masks(q.shape[0], k.shape[0]):
            out, _ = grouped_query_attention(qh, kh, vh, mask=mask, scale=scale)
            ref, _ = attention(
                qh, repeat_kv(kh, GQA_HEADS), repeat_kv(vh, GQA_HEADS), mask=mask, scale=scale
            )
            settings = (("mask", mask_name), ("h", GQA_HEADS), ("g", g), ("seed", GQA_SEED))
            cases.append(Case(settings, _diff(out, ref)))
    return Check("gqa", "attention() on repeat_kv heads", tol, tuple(cases))


def check_linear_memory(q: Array, k: Array, v: Array) -> Check:
    """The running memory ``S_i`` of causal linear attention against its explicit sum, raw
    (phi = identity) and normalised with elu + 1. Self-attention only."""
    reference = "linear_attention_sum()"
    skip = _needs_self_attention("linear_memory", reference, q, k)
    if skip is not None:
        return skip
    cases = []
    tol = 0.0
    for feature_map, normalise in ((None, False), ("elu+1", True)):
        trace = linear_memory(q, k, v, feature_map=feature_map, normalise=normalise)
        ref = linear_attention_sum(q, k, v, feature_map=feature_map, normalise=normalise)
        settings = (("feature_map", feature_map or "identity"), ("normalise", normalise))
        cases.append(Case(settings, _diff(trace.output, ref)))
        # each output is a sum of (phi(q_i) . phi(k_j)) v_j: its rounding grows with the sum of
        # the absolute coefficients of a row (the denominator, once normalised) times |v|
        coeff = np.abs(np.tril(_features(q, feature_map) @ _features(k, feature_map).T))
        size = max(1.0, float(np.abs(v).max(initial=0.0)))
        tol = max(tol, REL_TOL * size * max(1.0, float(coeff.sum(axis=1).max(initial=0.0))))
    return Check("linear_memory", reference, tol, tuple(cases))


def padded_mask(n_q: int, n_k: int, pad: int = PADDED_ROWS) -> NDArray[np.bool_]:
    """The precision table's mask: causal with the first ``pad`` keys padding, so the first
    query has no legal key (:func:`left_padded_causal_mask`; the same rule when n_q != n_k)."""
    if n_q == n_k:
        return left_padded_causal_mask(n_q, pad)
    m = causal_mask(n_q, n_k)
    m[:, :pad] = False
    return m


@dataclass(frozen=True)
class MemoryFigures:
    """Peak materialised bytes (plain vs tiled) at the scenario's size and at :data:`PEAK_N`;
    linear memory vs KV cache at :data:`LINEAR_NS`; key/value sharing at h = 32."""

    peak: tuple[PeakMemory, ...]
    linear: MemorySizes
    sharing: tuple[SharingCounts, ...]

    def to_dict(self) -> dict[str, object]:
        lin = self.linear
        return {
            "peak": [{**asdict(p), "ratio": p.ratio} for p in self.peak],
            "linear_vs_kv_cache": {
                "d_k": lin.d_k,
                "d_v": lin.d_v,
                "normalised": lin.normalised,
                "n": lin.n.tolist(),
                "linear_numbers": lin.linear_numbers.tolist(),
                "kv_cache_numbers": lin.kv_cache_numbers.tolist(),
                "crossover": lin.crossover,
            },
            "sharing": [
                {
                    **asdict(s),
                    "kind": s.kind,
                    "params": s.params,
                    "mha_params": s.mha_params,
                    "kv_bytes_per_token": s.kv_bytes_per_token,
                    "mha_kv_bytes_per_token": s.mha_kv_bytes_per_token,
                    "cache_ratio": s.cache_ratio,
                }
                for s in self.sharing
            ],
        }


def memory_figures(n_q: int, n_k: int, d_k: int, d_v: int) -> MemoryFigures:
    """The memory figures for a head of these sizes (see :class:`MemoryFigures`). The shared
    heads use d_model = h d_k, the usual width of a layer of h heads."""
    peak = tuple(
        peak_memory(a, b, d_v, dtype=PEAK_DTYPE) for a, b in ((n_q, n_k), (PEAK_N, PEAK_N))
    )
    linear = memory_sizes(np.array(LINEAR_NS), d_k, d_v, normalised=True)
    sharing = tuple(sharing_counts(SHARING_H, g, SHARING_H * d_k, d_k, d_v) for g in SHARING_GROUPS)
    return MemoryFigures(peak, linear, sharing)


@dataclass(frozen=True, eq=False)
class VariantReport:
    """Everything ``attnsim variants`` prints for one scenario's first head."""

    scenario: str
    n_q: int
    n_k: int
    d_k: int
    d_v: int
    temperature: float
    scale: bool
    checks: tuple[Check, ...]
    precision_mask: NDArray[np.bool_]
    precision: tuple[PrecisionRow, ...]
    memory: MemoryFigures

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: plain Python numbers, with -inf, inf and NaN as the strings
        "-inf", "inf" and "nan" so the output is strict JSON."""
        no_key = np.flatnonzero(~self.precision_mask.any(axis=1))
        return jsonable(
            {
                "scenario": self.scenario,
                "head": 0,
                "n_q": self.n_q,
                "n_k": self.n_k,
                "d_k": self.d_k,
                "d_v": self.d_v,
                "temperature": self.temperature,
                "scale": self.scale,
                "relative_tolerance": REL_TOL,
                "passed": self.passed,
                "checks": [c.to_dict() for c in self.checks],
                "precision": {
                    "mask": "causal",
                    "padded_keys": PADDED_ROWS,
                    "rows_without_legal_key": no_key.tolist(),
                    "rows": [asdict(r) for r in self.precision],
                },
                "memory": self.memory.to_dict(),
            }
        )


def jsonable(x: object) -> object:
    """``x`` with NumPy scalars made Python ones and non-finite floats written as strings."""
    if isinstance(x, dict):
        return {str(key): jsonable(val) for key, val in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(val) for val in x]
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        f = float(x)
        return f if math.isfinite(f) else ("nan" if math.isnan(f) else ("inf" if f > 0 else "-inf"))
    return x


def variant_report(sc: Scenario) -> VariantReport:
    """Run every check, the precision table and the memory figures on ``sc``'s first head.

    The queries are divided by the scenario's temperature first, so every computation (some
    take no temperature) sees the scenario's logits; ``scale`` is the scenario's.
    """
    head = compute(sc).heads[0]
    q = np.asarray(head.Q, dtype=np.float64) / sc.temperature
    k = np.asarray(head.K, dtype=np.float64)
    v = np.asarray(head.V, dtype=np.float64)
    n_q, n_k, d_k, d_v = q.shape[0], k.shape[0], q.shape[1], v.shape[1]
    checks = (
        check_tiled(q, k, v, scale=sc.scale),
        check_kv_cache(q, k, v, scale=sc.scale),
        check_gqa(q, k, v, scale=sc.scale),
        check_linear_memory(q, k, v),
    )
    mask = padded_mask(n_q, n_k)
    return VariantReport(
        scenario=sc.name,
        n_q=n_q,
        n_k=n_k,
        d_k=d_k,
        d_v=d_v,
        temperature=sc.temperature,
        scale=sc.scale,
        checks=checks,
        precision_mask=mask,
        precision=precision_table(q, k, v, mask=mask, scale=sc.scale),
        memory=memory_figures(n_q, n_k, d_k, d_v),
    )
