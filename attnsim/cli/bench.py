"""``attnsim bench``: run the benchmarks, one table row (or one JSON object) per result."""

from __future__ import annotations

import argparse
import json

from .headless import headless
from .options import UsageError

__all__ = ["cmd_bench", "format_row"]


def cmd_bench(args: argparse.Namespace) -> int:
    headless()
    from attnsim.benchmarks import machine_info, run

    printed = []

    def progress(row):
        if args.json:
            return
        if not printed:
            print(f"{'result':32s} {'median ms':>10s} {'p95 ms':>10s} {'runs':>6s}  comparison")
        printed.append(row)
        print(format_row(row), flush=True)

    try:
        results = run(args.only, quick=args.quick, progress=progress)
    except ValueError as exc:
        raise UsageError(f"attnsim bench: {exc}") from None
    if args.json:
        print(json.dumps({"machine": machine_info(), "results": results}, indent=1))
    return 0


def format_row(row: dict) -> str:
    extra = ", ".join(
        f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in row.items()
        if k not in ("name", "median_ms", "p95_ms", "runs")
    )
    timing = f"{row['median_ms']:10.3f} {row['p95_ms']:10.3f} {row['runs']:6d}"
    return f"{row['name']:32s} {timing}  {extra}"
