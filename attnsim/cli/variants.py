"""``attnsim variants``: the tiled, cached, grouped and linear forms checked against plain
attention on a scenario. The numbers come from
:func:`attnsim.engine.variant_checks.variant_report`; this lays them out."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from .options import load_scenario

if TYPE_CHECKING:  # loaded when the command runs, not with the command line
    from attnsim.engine.scenario import Scenario
    from attnsim.engine.variant_checks import Check, MemoryFigures, VariantReport

__all__ = ["cmd_variants", "format_report", "long_context_dict"]

CHECK_TITLES = {
    "tiled": "tiled kernel",
    "kv_cache": "KV-cache generation",
    "gqa": "grouped-query (GQA/MQA)",
    "linear_memory": "linear-attention memory",
}


def _g(x: float) -> str:
    return f"{x:.3g}"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def _cases(c: Check) -> str:
    if c.name == "tiled":
        blocks = {(x.get("block_q"), x.get("block_k")): x.get("divides_n") for x in c.cases}
        text = ", ".join(f"{a}x{b}" for a, b in sorted(blocks))
        odd = sum(not divides for divides in blocks.values())
        return f"blocks {text} ({odd} not dividing n); masks none, causal"
    # every setting once, with the values it took over the cases: "mask none/causal, g 2/1"
    values: dict[str, list[object]] = {}
    for x in c.cases:
        for key, val in x.settings:
            values.setdefault(key, [])
            if val not in values[key]:
                values[key].append(val)
    return ", ".join(f"{key} {'/'.join(str(v) for v in vals)}" for key, vals in values.items())


def _check_line(c: Check) -> str:
    title = CHECK_TITLES.get(c.name, c.name)
    if c.skipped:
        return f"SKIP  {title:26s} {c.skipped}"
    verdict = "PASS" if c.passed else "FAIL"
    sign = "<=" if c.passed else "> "
    return (f"{verdict}  {title:26s} max |diff| {c.max_abs_diff:.2e} {sign} {c.tolerance:.1e} "
            f"vs {c.reference}: {_cases(c)}")  # fmt: skip


def _precision_lines(r: VariantReport) -> list[str]:
    head = ("dtype", "mask", "stored", "leaked", "NaN rows", "silent rows", "probe logit")
    rows = [(*head, "probe leak")]
    for p in r.precision:
        rows.append((p.dtype, p.mask_label, _g(p.stored_mask_value), _g(p.leaked_weight),
                     str(p.nan_rows), str(p.silent_rows), _g(p.probe_masked_logit),
                     _g(p.probe_leak)))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.rjust(w) if i > 1 else cell.ljust(w)
                             for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]  # fmt: skip


def _memory_lines(m: MemoryFigures) -> list[str]:
    lines = []
    for p in m.peak:
        lines.append(f"  peak scores, n {p.n_q}x{p.n_k}: plain {_bytes(p.plain_bytes)}, tiled "
                     f"{_bytes(p.tiled_bytes)} (tile {p.block_q}x{p.block_k}, {p.itemsize}-byte "
                     f"numbers), plain/tiled {p.ratio:.3g}")  # fmt: skip
    lin = m.linear
    pairs = ", ".join(
        f"n {n} {a} vs {b}"
        for n, a, b in zip(lin.n, lin.linear_numbers, lin.kv_cache_numbers, strict=True)
    )
    lines.append(f"  linear memory vs KV cache (numbers held): {pairs}; "
                 f"the cache is larger from n {lin.crossover}")  # fmt: skip
    for s in m.sharing:
        lines.append(f"  h {s.h}, g {s.g} ({s.kind}): {s.params} parameters "
                     f"(MHA {s.mha_params}), KV cache {s.kv_bytes_per_token} B/token "
                     f"({s.cache_ratio:.3g} x MHA)")  # fmt: skip
    return lines


def format_report(r: VariantReport) -> str:
    """The readable report: one line per check, the precision table, the memory lines."""
    lines = [f"{r.scenario}, head 1: {r.n_q} queries x {r.n_k} keys, d_k {r.d_k}, d_v {r.d_v}, "
             f"temperature {_g(r.temperature)}, {'scaled' if r.scale else 'unscaled'}"]  # fmt: skip
    lines += [_check_line(c) for c in r.checks]
    pad = ", ".join(str(i + 1) for i in range(r.precision_mask.shape[0])
                    if not r.precision_mask[i].any())  # fmt: skip
    lines.append(f"precision: additive masks under a causal mask with the first key padded "
                 f"(no legal key for query {pad or 'none'})")  # fmt: skip
    lines += _precision_lines(r)
    lines.append("memory:")
    lines += _memory_lines(r.memory)
    failed = [c for c in r.checks if not c.skipped and not c.passed]
    ran = [c for c in r.checks if not c.skipped]
    lines.append(f"{len(ran) - len(failed)} of {len(ran)} checks within tolerance on {r.scenario}")
    return "\n".join(lines)


def long_context_dict(sc: Scenario) -> dict[str, object]:
    """The long-context lab's sweep on the first head's receiving query, for ``--json``: each
    kind's weights and output change at k = 0 and K, and its largest difference from a plain
    softmax over the concatenated keys."""
    from attnsim.engine.scenario import compute
    from attnsim.viewmodels.context_lab import SUMMARY_STATE, sweep_summary

    head = compute(sc).heads[0]
    i = sc.receiving
    st = SUMMARY_STATE
    return {
        "head": 0,
        "query": i,
        "k_max": st.k_max,
        "noise": st.noise,
        "seed": st.seed,
        "kinds": [asdict(s) for s in sweep_summary(head, i, st)],
    }


def cmd_variants(args: argparse.Namespace) -> int:
    from attnsim.engine.variant_checks import jsonable, variant_report

    sc = load_scenario(args.scenario)
    report = variant_report(sc)
    if args.json:
        out = report.to_dict()
        out["long_context"] = jsonable(long_context_dict(sc))
        print(json.dumps(out, indent=1, allow_nan=False))
    else:
        print(format_report(report))
    return 0 if report.passed else 1
