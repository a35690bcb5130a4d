"""``attnsim bench``: named, stable benchmark results.

Each module listed in :data:`MODULES` defines ``BENCHMARKS``, a dict from result name to a
function taking ``quick: bool`` and returning a list of result rows (a function may produce
several related rows, e.g. one per n). Rows are dicts with ``name``, ``median_ms``, ``p95_ms``,
``runs`` and optional comparison fields such as ``speedup_vs_torch``.
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from importlib import import_module
from typing import Any

import numpy as np

MODULES = [
    "attnsim.benchmarks.engine",
    "attnsim.benchmarks.app",
    "attnsim.benchmarks.training",
    "attnsim.benchmarks.space3d",
    "attnsim.benchmarks.routing",
    "attnsim.benchmarks.labs",
    "attnsim.benchmarks.heatmap",
    "attnsim.benchmarks.fields_anatomy",
    "attnsim.benchmarks.induction",
    "attnsim.benchmarks.kernels",
    "attnsim.benchmarks.variants",
    "attnsim.benchmarks.variant_labs",
    "attnsim.benchmarks.models",
    "attnsim.benchmarks.recovery",
    "attnsim.benchmarks.memory",
    "attnsim.benchmarks.animation",
    "attnsim.benchmarks.ui_gap",
    "attnsim.benchmarks.wide_window",
    "attnsim.benchmarks.lessons",
]

Row = dict[str, object]


def machine_info() -> dict[str, object]:
    info: dict[str, object] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
    }
    try:
        import PySide6

        info["pyside6"] = PySide6.__version__
    except ImportError:  # pragma: no cover
        pass
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = None
    return info


def timeit(
    fn: Callable[[], object],
    *,
    min_runs: int = 7,
    max_runs: int = 200,
    budget_s: float = 1.0,
    warmup: int = 2,
) -> list[float]:
    """Wall times of ``fn()`` in milliseconds: at least ``min_runs``, within about ``budget_s``."""
    for _ in range(warmup):
        fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_runs and (
        len(times) < min_runs or time.perf_counter() - start < budget_s
    ):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return times


def summarize(name: str, times_ms: list[float], **extra: object) -> Row:
    ordered = sorted(times_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    row: Row = {
        "name": name,
        "median_ms": statistics.median(ordered),
        "p95_ms": p95,
        "runs": len(ordered),
    }
    row.update(extra)
    return row


def qt_app():
    """The application for panel benchmarks: offscreen unless a platform was chosen."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from attnsim.app import create_app

    return create_app()


def shown_panel(cls: Callable[..., Any], scenario: Any, size: tuple[int, int], *, events: int = 1):
    """(workbench, panel): a ``cls`` panel on a new workbench of ``scenario``, ``size`` pixels,
    shown, the application's events processed ``events`` times and the panel refreshed: what
    a panel benchmark times its steps from."""
    from attnsim.model.workbench import Workbench

    app = qt_app()
    wb = Workbench(scenario)
    panel = cls(wb)
    panel.resize(*size)
    panel.show()
    for _ in range(events):
        app.processEvents()
    panel.flush()
    return wb, panel


def registry() -> dict[str, Callable[..., list[Row]]]:
    out: dict[str, Callable[..., list[Row]]] = {}
    for mod in MODULES:
        out.update(import_module(mod).BENCHMARKS)
    return out


def run(
    only: list[str] | None = None,
    *,
    quick: bool = False,
    progress: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Run the benchmarks whose names (or row-name prefixes) match ``only`` (all if None)."""
    reg = registry()
    if only:
        unknown = [
            n for n in only if not any(k == n or k.startswith(n) or n.startswith(k) for k in reg)
        ]
        if unknown:
            raise ValueError(f"unknown result {unknown[0]!r}; results: {', '.join(reg)}")
    rows: list[Row] = []
    for key, fn in reg.items():
        if only and not any(key == n or key.startswith(n) or n.startswith(key) for n in only):
            continue
        for row in fn(quick=quick):
            # a group's key keeps all its rows; a row's name (or a prefix of it) keeps that row
            if only and not any(str(row["name"]).startswith(n) or n == key for n in only):
                continue
            rows.append(row)
            if progress:
                progress(row)
    return rows


@contextlib.contextmanager
def extra_panels(count: int, of: str = "heatmap") -> Iterator[list[str]]:
    """Inside, the panel registry holds ``count`` more copies of panel ``of`` (their ids)."""
    from attnsim import panels

    base = next(s for s in panels.PANEL_SPECS if s.panel_id == of)
    copies = [
        base._replace(panel_id=f"{of}_copy{i + 1}", tab=f"Copy {i + 1}") for i in range(count)
    ]
    saved = list(panels.PANEL_SPECS)
    panels.PANEL_SPECS.extend(copies)
    try:
        yield [c.panel_id for c in copies]
    finally:
        panels.PANEL_SPECS[:] = saved
