"""The live audit: attention's invariants and metamorphic relations, run on a real state.

Each check returns the numbers it compared, so a failure says by how much. A positive audit
shows that the implementation obeys the mechanism on this state; it says nothing about whether
a head has learned anything useful.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from .attention import HeadTrace, attention, softmax
from .scenario import Scenario, compute

__all__ = [
    "Check",
    "audit_summary",
    "audit_trace",
    "ranking_reversals",
    "reference_attention",
    "run_audit",
]

TOL = 1e-9


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str
    value: float
    head: int = 0
    skipped: bool = False  # not run (``passed`` stays True: nothing failed)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def audit_summary(checks: list[Check]) -> tuple[int, int, int]:
    """(passed, run, skipped): how many of the checks that ran pass, and how many did not run."""
    run = [c for c in checks if not c.skipped]
    return sum(c.passed for c in run), len(run), len(checks) - len(run)


def reference_attention(
    q: NDArray, k: NDArray, v: NDArray, mask: NDArray | None, temperature: float, scale: bool,
    mask_value: float = -math.inf,
) -> tuple[NDArray, NDArray]:  # fmt: skip
    """A deliberately plain, loop-by-loop implementation to compare the vectorised one with."""
    n_q, d_k = q.shape
    n_k = k.shape[0]
    divisor = (math.sqrt(d_k) if scale else 1.0) * temperature
    weights = np.zeros((n_q, n_k))
    out = np.zeros((n_q, v.shape[1]))
    for i in range(n_q):
        logits = []
        for j in range(n_k):
            s = sum(float(q[i, c]) * float(k[j, c]) for c in range(d_k)) / divisor
            legal = mask is None or bool(mask[i, j])
            logits.append(s if legal else mask_value)
        top = max(logits)
        exps = [math.exp(x - top) if x != -math.inf else 0.0 for x in logits]
        total = sum(exps)
        for j in range(n_k):
            weights[i, j] = exps[j] / total
            out[i] += weights[i, j] * v[j]
    return out, weights


def _fmt(x: float) -> str:
    return f"{x:.2e}"


def audit_trace(tr: HeadTrace, *, head: int = 0, seed: int = 0) -> list[Check]:
    """Run every check on one head's state (its Q, K, V, mask and options)."""
    rng = np.random.default_rng(seed)
    q, k, v = tr.Q, tr.K, tr.V
    mask = tr.mask
    has_mask = not bool(mask.all())
    w = tr.weights
    n_q, n_k = w.shape
    checks: list[Check] = []

    def add(name: str, passed: bool, detail: str, value: float, skipped: bool = False) -> None:
        checks.append(Check(name, bool(passed), detail, float(value), head, skipped))

    # Two correct computations of one logit in another order (a permutation, BLAS blocking,
    # the loop below) may differ by rounding: at most about d_k ulps of sum |q_c k_c| / divisor.
    # Weights move by at most that much, so every comparison below allows it: large or tied
    # logits must not raise an alarm that only rounding caused.
    d_k = max(q.shape[1], 1)
    divisor = (math.sqrt(d_k) if tr.scale else 1.0) * tr.temperature
    # Every (n_q, n_k) array below is made a block of query rows at a time (each row is its
    # own softmax), so the audit holds a few blocks, not a few copies of the weights.
    blocks = _row_blocks(n_q, n_k)
    abs_k = np.abs(k).T
    magnitude = 0.0
    if q.size and k.size:
        magnitude = max(float(np.max(np.abs(q[b]) @ abs_k)) for b in blocks) / divisor
    noise = 4.0 * d_k * np.finfo(float).eps * magnitude

    err = _block_max(blocks, lambda b: np.abs(np.where(mask[b], w[b], 0.0).sum(axis=-1) - 1.0))
    add("weights over legal keys sum to 1", err < TOL, f"largest |Σw − 1| = {_fmt(err)}", err)

    leak = _block_max(blocks, lambda b: np.where(mask[b], 0.0, w[b])) if has_mask else 0.0
    detail = (
        f"largest weight on a masked key = {leak:.4g}"
        + (" (the mask fills with 0, not −∞)" if tr.mask_value == 0 and leak > 0 else "")
        if has_mask
        else "no key is masked"
    )
    add("masked keys get exactly 0", leak == 0.0, detail, leak)

    perm = rng.permutation(n_k)
    kp, vp = k[perm], v[perm]
    d_w = d_o = 0.0
    for b in blocks:
        out_p, w_p = _recompute(tr, q[b], kp, vp, mask[b][:, perm])
        d_w = max(d_w, float(np.max(np.abs(w_p - w[b][:, perm]))))
        d_o = max(d_o, float(np.max(np.abs(out_p - tr.output[b]))))
    scale_o = max(1.0, float(np.max(np.abs(tr.output))))
    add(
        "permuting keys and values together",
        d_w < TOL + noise and d_o < (1e-9 + noise) * scale_o,
        f"weights permute (max diff {_fmt(d_w)}), output stays (max diff {_fmt(d_o)})",
        max(d_w, d_o),
    )

    vperm = rng.permutation(n_k) if n_k > 1 else np.arange(n_k)
    # The same computation twice, once with the values swapped: the route must be identical
    # to the bit, and the new output must be that route applied to the new payload.
    v_swapped = v[vperm]
    d_w = d_o = moved = 0.0
    for b in blocks:
        _, w_same = _recompute(tr, q[b], k, v, mask[b])
        out_s, w_s = _recompute(tr, q[b], k, v_swapped, mask[b])
        d_w = max(d_w, float(np.max(np.abs(w_s - w_same))))
        d_o = max(d_o, float(np.max(np.abs(out_s - w_same @ v_swapped))) / scale_o)
        moved = max(moved, float(np.max(np.abs(out_s - tr.output[b]))))
    add(
        "swapping values keeps the route",
        d_w == 0.0 and d_o < 1e-12,
        f"weights change by {_fmt(d_w)}; the output moves by {moved:.4g}, "
        f"to w·v′ within {_fmt(d_o)}",
        max(d_w, d_o),
    )

    c = 100.0

    def shift(b: slice) -> NDArray:
        # every logit that takes part in the softmax (with mask value 0, the masked ones too)
        # the trace's masked logits of these rows, without making the whole table
        ml = np.where(mask[b], tr.logits[b], tr.mask_value)
        return np.abs(softmax(np.where(np.isfinite(ml), ml + c, -np.inf)) - w[b])

    d_w = _block_max(blocks, shift)
    add(
        "adding a constant to every logit", d_w < TOL, f"+{c:g} changes weights by {_fmt(d_w)}", d_w
    )

    worst = 0
    # Logits within rounding of each other are tied: a tie may stay a tie or break either way.
    tie = 2.0 * noise + 4.0 * np.finfo(float).eps * float(np.max(np.abs(tr.logits), initial=0.0))
    for t in (0.25, 4.0):
        for b in blocks:
            _, wt = _recompute(tr, q[b], k, v, mask[b], temperature=tr.temperature * t)
            for r, i in enumerate(range(b.start, b.stop)):
                worst += ranking_reversals(tr.logits[i, mask[i]], wt[r, mask[i]], tie)
    add(
        "temperature keeps the ranking",
        worst == 0,
        f"{worst} order reversals at T×0.25 and T×4",
        worst,
    )

    cq = 3.0
    d_w = 0.0
    for b in blocks:
        _, w_q = _recompute(tr, q[b] * cq, k, v, mask[b])
        _, w_t = _recompute(tr, q[b], k, v, mask[b], temperature=tr.temperature / cq)
        d_w = max(d_w, float(np.max(np.abs(w_q - w_t))))
    add(
        "q × c equals temperature ÷ c",
        d_w < 1e-9 + cq * noise,
        f"c = {cq:g}: max diff {_fmt(d_w)}",
        d_w,
    )

    if n_q * n_k * q.shape[1] <= 200_000:
        out_r, w_r = reference_attention(q, k, v, mask, tr.temperature, tr.scale, tr.mask_value)
        d_w = float(np.max(np.abs(w_r - w)))
        d_o = float(np.max(np.abs(out_r - tr.output))) / scale_o
        add(
            "reference loop = vectorised engine",
            d_w < 1e-12 + noise and d_o < 1e-12 + noise,
            f"weights {_fmt(d_w)}, output {_fmt(d_o)} (relative)",
            max(d_w, d_o),
        )
    else:
        add("reference loop = vectorised engine", True, "too large for the loop", 0.0, True)
    return checks


AUDIT_BLOCK_BYTES = 16 * 2**20  # the (rows, n_k) float64 blocks the audit works in


def _row_blocks(n_q: int, n_k: int) -> list[slice]:
    rows = max(1, AUDIT_BLOCK_BYTES // max(1, 8 * n_k))
    return [slice(a, min(a + rows, n_q)) for a in range(0, n_q, rows)]


def _block_max(blocks: list[slice], part: Callable[[slice], NDArray]) -> float:
    """The largest entry of ``part(b)`` over the blocks (0 for none)."""
    return max((float(np.max(part(b), initial=0.0)) for b in blocks), default=0.0)


def ranking_reversals(logits: NDArray, weights: NDArray, tie: float = 0.0) -> int:
    """How many times ``weights`` (n,) order two keys against their ``logits`` (n,).

    Keys whose logits differ by at most ``tie`` are tied and may come out in either order;
    a reversal is a key with a clearly larger logit whose weight is smaller by more than
    rounding (a relative 1e-12). Counted between consecutive groups of tied keys.
    """
    if logits.size < 2:
        return 0
    order = np.argsort(-logits, kind="stable")
    ls, ws = logits[order], weights[order]
    group = np.concatenate([[0], np.cumsum(-np.diff(ls) > tie)])
    n_groups = int(group[-1]) + 1
    lo = np.full(n_groups, np.inf)
    hi = np.full(n_groups, -np.inf)
    np.minimum.at(lo, group, ws)
    np.maximum.at(hi, group, ws)
    # a later (smaller-logit) group may not hold a weight above an earlier group's smallest
    slack = 1e-12 * np.maximum(lo[:-1], hi[1:]) + 1e-300
    return int(np.sum(hi[1:] - lo[:-1] > slack))


def _recompute(
    tr: HeadTrace,
    q: NDArray,
    k: NDArray,
    v: NDArray,
    mask: NDArray,
    temperature: float | None = None,
) -> tuple[NDArray, NDArray]:
    t = tr.temperature if temperature is None else temperature
    if tr.mask_value == 0.0:
        divisor = (math.sqrt(q.shape[1]) if tr.scale else 1.0) * t
        w = softmax(np.where(mask, q @ k.T / divisor, 0.0))
        return w @ v, w
    return attention(q, k, v, mask=mask, temperature=t, scale=tr.scale)


def run_audit(sc: Scenario) -> list[Check]:
    """Audit every head of a scenario."""
    result = compute(sc)
    checks: list[Check] = []
    for h, tr in enumerate(result.heads):
        checks.extend(audit_trace(tr, head=h))
    return checks
