"""The "Long-context stability" lab: insert k distractors of one kind into the receiving query's
context and follow the weight on its best key and the change of its output as k grows.

The four kinds, built on the current scenario's head (the query's best key k_b, its value v_b):

- ``noisy``: copies of k_b plus seeded Gaussian noise, carrying nothing (zero values);
- ``high-norm``: the routing lab's long, off-direction key (:func:`distractor_key`), repeated,
  carrying nothing;
- ``duplicate``: the fact itself, k_b with v_b, repeated;
- ``superseded``: k_b again with another value (the routing lab's contradicting value −v_b).

The sweep, the weights and the outputs are :mod:`attnsim.engine.long_context`'s numbers; this
module picks the scenario's rows, builds the rows of each kind and writes the verdicts.
The settings are one frozen dataclass, :class:`ContextLabState`, held by the workbench.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnsim.engine.attention import HeadTrace
from attnsim.engine.long_context import (
    KINDS,
    DistractorSweep,
    distractor_sweep,
    distractor_sweeps,
    duplicated_facts,
    noisy_copies,
    repeated_rows,
    superseded_facts,
    sweep_reference_diff,
)
from attnsim.engine.numbers import fmt_fixed, fmt_number, fmt_percent
from attnsim.engine.routing import distractor_key, distractor_value
from attnsim.engine.settings import LabSettings, Setting

Array = NDArray[np.float64]

__all__ = [
    "KINDS",
    "KIND_NAMES",
    "K_LIMIT",
    "NOISE_MAX",
    "SEED_MAX",
    "SETTINGS",
    "SUMMARY_STATE",
    "Bar",
    "ContextData",
    "ContextLabState",
    "KindCurve",
    "SweepSet",
    "SweepSummary",
    "context_data",
    "kind_rows",
    "sweep_set",
    "sweep_summary",
]

K_LIMIT = 256  # the largest K: the bars of n + K keys stay countable
NOISE_MAX = 10.0  # noise is relative to |k_b|; beyond 10 the copies are just random keys
SEED_MAX = 2**31 - 1
KIND_NAMES = {
    "noisy": "noisy copies of the best key",
    "high-norm": "a long, irrelevant key",
    "duplicate": "the fact duplicated",
    "superseded": "a superseded fact",
}


@dataclass(frozen=True)
class ContextLabState:
    """The lab's settings: the ``kind`` of distractor (one of :data:`KINDS`), the ``k`` shown
    (0 .. ``k_max``), the sweep's end ``k_max`` (K), and for noisy copies the relative ``noise``
    and the ``seed``."""

    kind: str = "noisy"
    k: int = 4
    k_max: int = 32
    noise: float = 0.2
    seed: int = 0


def _k_within(st: ContextLabState) -> ContextLabState:
    # a shorter sweep keeps the marker on its end
    return replace(st, k=min(st.k, st.k_max))


SETTINGS = LabSettings("Long-context lab", ContextLabState, (
    Setting("kind", "distractor kind", "choice", choices=KINDS,
            names=tuple(KIND_NAMES[k] for k in KINDS),
            tip="What is inserted k times into the receiving query's context: noisy copies of "
                "its best key, a long key pointing elsewhere (both carry a zero value), the fact "
                "itself (key and value), or a later fact with the same key and another value"),
    Setting("k_max", "K", lo=1, hi=K_LIMIT, then=_k_within,
            tip=f"K: the sweep runs over k = 0 .. K (at most {K_LIMIT})"),
    Setting("k", "k", hi=lambda st: st.k_max,
            tip="How many distractors the bars show (marked on both plots)"),
    Setting("noise", "noise", "real", hi=NOISE_MAX,
            tip="Noise of the noisy copies, relative to the best key's length: each copy is "
                "k_b + noise·|k_b|·z/√d_k with z standard normal"),
    Setting("seed", "seed", hi=SEED_MAX,
            tip="The noisy copies are drawn from this seed, the same every time"),
))  # fmt: skip


# ---- the rows of each kind ------------------------------------------------------------------
def kind_rows(
    kind: str, q: Array, K: Array, V: Array, best: int, state: ContextLabState
) -> tuple[Array, Array]:
    """The ``state.k_max`` inserted keys (K, d_k) and values (K, d_v) of ``kind`` for query
    ``q`` whose best key is ``best``."""
    count, d_v = state.k_max, V.shape[1]
    if kind == "noisy":
        keys = noisy_copies(K[best], count, noise=state.noise, seed=state.seed)
        return keys, np.zeros((count, d_v))
    if kind == "high-norm":
        key = distractor_key(q, K, best, "large-norm")
        return repeated_rows(key, count), repeated_rows(
            distractor_value(V, best, "large-norm"), count
        )
    if kind == "duplicate":
        return duplicated_facts(K[best], V[best], count)
    if kind == "superseded":
        return superseded_facts(K[best], distractor_value(V, best, "near-duplicate"), count)
    raise ValueError(f"the distractor kind must be one of {KINDS}, got {kind!r}")


# ---- what the panel draws -------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class KindCurve:
    """One kind's sweep over k = 0 .. K: ``best_weight``, ``fact_weight`` (the original plus
    its copies: duplicates only, else None), ``shift`` = ||o_k − o_0||, and its verdict."""

    kind: str
    name: str
    best_weight: Array
    fact_weight: Array | None
    shift: Array
    verdict: str


@dataclass(frozen=True, eq=False)
class Bar:
    """The route at the chosen k: ``weights`` (n + k,), ``labels``, ``role`` per bar
    (0 another original key, 1 the best key, 2 an inserted row, 3 a key the query may not read)."""

    weights: Array
    labels: tuple[str, ...]
    role: NDArray[np.int_]


@dataclass(frozen=True, eq=False)
class ContextData:
    """Everything the lab shows. ``message`` is non-empty when there is no route to disturb
    (then the curves are empty)."""

    message: str
    kind: str
    k: int
    k_max: int
    query_label: str
    best_label: str
    curves: tuple[KindCurve, ...]
    bars: Bar | None
    summary: str

    @property
    def chosen(self) -> KindCurve | None:
        return next((c for c in self.curves if c.kind == self.kind), None)


def _verdict(kind: str, s: DistractorSweep, k: int, target: Array, beats: bool) -> str:
    """One sentence on what ``k`` rows of ``kind`` did, from the sweep's numbers; ``target`` is
    the value the inserted rows carry."""
    w0, wk = fmt_fixed(s.best_weight[0], 3), fmt_fixed(s.best_weight[k], 3)
    took, moved = fmt_percent(s.distractor_weight[k]), fmt_number(s.shift[k], 3)
    if kind == "noisy":
        return (
            f"{k} look-alikes take {took} of the weight (best key {w0} → {wk}); carrying "
            f"nothing, they shrink the output by {moved}: plausible neighbours dilute the answer."
        )
    if kind == "high-norm":
        contest = "outscores" if beats else "still scores below"
        return (
            f"Long but pointing away from the query, it {contest} the best key; {k} copies "
            f"take {took} (best key {w0} → {wk}) and move the output {moved}: length, not "
            "relevance, buys weight."
        )
    before = fmt_number(float(np.linalg.norm(s.outputs[0] - target)), 3)
    after = fmt_number(float(np.linalg.norm(s.outputs[k] - target)), 3)
    if kind == "duplicate":
        fact = fmt_fixed(s.best_weight[k] + s.distractor_weight[k], 3)
        return (
            f"{k} copies split the weight (the original {w0} → {wk}) but the fact as a whole "
            f"rises to {fact}; the output moves {moved} towards the fact's own value (distance "
            f"{before} → {after}): the answer is kept, only louder."
        )
    return (
        f"{k} later facts with the same key tie with the original ({wk} each) and pull the "
        f"output {moved} towards the new value (distance {before} → {after}): the route looks "
        "steady, the answer changes."
    )


@dataclass(frozen=True, eq=False)
class SweepSet:
    """The four kinds' sweeps for one query (in :data:`KINDS` order), with the value each
    kind's rows carry (``targets``) and whether its first row outscores the best key
    (``beats``). They depend on the scenario, the query, K, the noise and the seed, not on k
    or the chosen kind, so a drag of k reuses them. ``message`` is non-empty when there is no
    route to disturb (then ``sweeps`` is empty)."""

    message: str
    best: int
    sweeps: tuple[DistractorSweep, ...]
    targets: tuple[Array, ...]
    beats: tuple[bool, ...]
    allowed: NDArray[np.bool_]


def sweep_set(trace: HeadTrace, receiving: int, state: ContextLabState) -> SweepSet:
    """Every kind's sweep over k = 0 .. ``state.k_max`` for the receiving query of ``trace``."""
    q = np.asarray(trace.Q[receiving], dtype=np.float64)
    K = np.asarray(trace.K, dtype=np.float64)
    V = np.asarray(trace.V, dtype=np.float64)
    allowed = np.asarray(trace.mask[receiving], dtype=bool)
    if not allowed.any():
        return SweepSet("may read no key", -1, (), (), (), allowed)
    with np.errstate(over="ignore", invalid="ignore"):
        raw = K @ q
    if not np.all(np.isfinite(raw[allowed])):
        return SweepSet("overflow", -1, (), (), (), allowed)
    best = int(np.argmax(np.where(allowed, raw, -np.inf)))
    rows = [kind_rows(kind, q, K, V, best, state) for kind in KINDS]
    try:  # every kind at once (the same numbers as one by one)
        sweeps = distractor_sweeps(q, K, V, rows, divisor=trace.divisor, allowed=allowed)
    except ValueError:  # one by one, to name the kind that cannot be weighed
        for kind, (ek, ev) in zip(KINDS, rows, strict=True):
            try:
                distractor_sweep(q, K, V, ek, ev, divisor=trace.divisor, allowed=allowed)
            except ValueError as exc:
                why = f"cannot weigh {KIND_NAMES[kind]}: {exc}"
                return SweepSet(why, best, (), (), (), allowed)
        raise
    targets = tuple(ev[0] if len(ev) else np.zeros(V.shape[1]) for _, ev in rows)
    beats = tuple(bool(s.extra_logits[0] > s.logits[best]) if s.k_max else False for s in sweeps)
    return SweepSet("", best, sweeps, targets, beats, allowed)


def context_data(
    trace: HeadTrace,
    receiving: int,
    query_label: str,
    key_labels: tuple[str, ...],
    state: ContextLabState,
    sweeps: SweepSet | None = None,
) -> ContextData:
    """The four kinds' curves and verdicts for the receiving query of ``trace``, the bars at
    ``state.k``. ``sweeps``: :func:`sweep_set` of the same trace, query and state, if the
    caller kept it."""
    k_show = min(max(state.k, 0), state.k_max)
    ss = sweep_set(trace, receiving, state) if sweeps is None else sweeps
    best_label = key_labels[ss.best] if ss.best >= 0 else ""
    if ss.message:
        reason = {
            "may read no key": f"The query “{query_label}” may read no key",
            "overflow": "The scores q · k overflow float64",
        }.get(ss.message, f"The engine {ss.message}")
        return ContextData(
            f"{reason}: there is no route to disturb.", state.kind, k_show, state.k_max,
            query_label, best_label, (), None, "",
        )  # fmt: skip
    # The verdicts speak of the whole sweep, k = K: they stay put while k is dragged (a
    # re-wrapped paragraph per mouse move would cost more than the rest of the redraw).
    k_verdict = state.k_max
    curves = []
    for kind, s, target, beats in zip(KINDS, ss.sweeps, ss.targets, ss.beats, strict=True):
        fact = s.best_weight + s.distractor_weight if kind == "duplicate" else None
        verdict = _verdict(kind, s, k_verdict, target, beats)
        curves.append(KindCurve(kind, KIND_NAMES[kind], s.best_weight, fact, s.shift, verdict))
    chosen = ss.sweeps[KINDS.index(state.kind)]
    role = np.where(ss.allowed, 0, 3)
    role[ss.best] = 1
    bars = Bar(
        chosen.weights_at(k_show),
        tuple(key_labels) + tuple(f"d{i + 1}" for i in range(k_show)),
        np.concatenate([role, np.full(k_show, 2)]).astype(int),
    )
    summary = (
        f"{KIND_NAMES[state.kind].capitalize()}, k = {k_show}: weight on “{best_label}” "
        f"{fmt_fixed(chosen.best_weight[0], 3)} → {fmt_fixed(chosen.best_weight[k_show], 3)}, "
        f"on the inserted rows {fmt_fixed(chosen.distractor_weight[k_show], 3)}; "
        f"||o_k − o_0|| = {fmt_number(chosen.shift[k_show], 4)}."
    )
    return ContextData(
        "", state.kind, k_show, state.k_max, query_label, best_label, tuple(curves), bars, summary
    )


# ---- the command line's summary -------------------------------------------------------------
SUMMARY_STATE = ContextLabState(k=64, k_max=64)


@dataclass(frozen=True)
class SweepSummary:
    """One kind's sweep at its ends, for ``attnsim variants --json``: the weight on the best
    key at k = 0 and k = K, the inserted rows' weight and ||o_K − o_0|| at K, and the largest
    difference of the sweep from a plain softmax over the concatenated keys at any k."""

    kind: str
    k_max: int
    best_weight_0: float
    best_weight_k_max: float
    distractor_weight_k_max: float
    shift_k_max: float
    max_abs_diff: float


def sweep_summary(
    trace: HeadTrace, receiving: int, state: ContextLabState = SUMMARY_STATE
) -> tuple[SweepSummary, ...]:
    """The four kinds' :class:`SweepSummary` for the receiving query (empty when the query has
    no route to disturb)."""
    ss = sweep_set(trace, receiving, state)
    if ss.message:
        return ()
    q, K, V = (np.asarray(x, dtype=np.float64) for x in (trace.Q[receiving], trace.K, trace.V))
    out = []
    for kind, s in zip(KINDS, ss.sweeps, strict=True):
        ek, ev = kind_rows(kind, q, K, V, ss.best, state)
        diff = sweep_reference_diff(s, q, K, V, ek, ev, divisor=trace.divisor, allowed=ss.allowed)
        top = s.k_max
        out.append(
            SweepSummary(
                kind,
                top,
                float(s.best_weight[0]),
                float(s.best_weight[top]),
                float(s.distractor_weight[top]),
                float(s.shift[top]),
                diff,
            )
        )
    return tuple(out)
