"""Animated export: a 60-frame temperature sweep (0.1 to 10) of the heatmap at 800 × 600.

``animation_heatmap_sweep60_render``: drawing the 60 frames alone (the figure path: layout,
render into a QImage, placed in the frame, as RGB bytes), with a caption on each;
``..._gif`` and ``..._mp4``: the whole export, frames drawn and encoded into the file (GIF
through Pillow's fast octree palette and LZW, MP4 through ffmpeg's x264 at CRF 18). Each row's
``median_ms`` is one whole sweep; ``fps`` is frames per second of that median; ``target_s`` is
the issue's target for the whole file (10 s). The machine may be shared: the rows say what it
did then, not what it can do alone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from . import Row, qt_app, summarize, timeit

FRAMES = 60
SIZE = (800, 600)
SWEEP = f"temperature:0.1:10:{FRAMES}"
TARGET_S = 10.0


def sweep_rows(quick: bool = False) -> list[Row]:
    qt_app()
    from attnsim.export.animation import animation_exporter
    from attnsim.export.frames import FrameRenderer, sweep_frames
    from attnsim.export.sweeps import parse_sweep
    from attnsim.resources import resolve_scenario

    sc = resolve_scenario("river-bank")
    sweep = parse_sweep(SWEEP, sc)
    renderer = FrameRenderer(sc, "heatmap", SIZE)
    runs = 1 if quick else 3
    rows = []
    try:
        with tempfile.TemporaryDirectory() as folder:

            def render() -> None:
                assert sum(1 for _ in sweep_frames(renderer, sweep, caption=True)) == FRAMES

            jobs = {"render": render}
            for fmt in ("gif", "mp4"):
                exp = animation_exporter(fmt)
                path = Path(folder) / f"sweep{exp.suffix}"

                def write(exp=exp, path=path) -> None:
                    frames = sweep_frames(renderer, sweep, caption=True)
                    assert exp.write(frames, path, fps=12, hold=1.0) == FRAMES

                jobs[fmt] = write
            for what, fn in jobs.items():
                times = timeit(fn, min_runs=runs, max_runs=runs, budget_s=0, warmup=1)
                row = summarize(f"animation_heatmap_sweep60_{what}", times, frames=FRAMES,
                                size=f"{SIZE[0]}x{SIZE[1]}", target_s=TARGET_S)  # fmt: skip
                row["fps"] = FRAMES / (float(row["median_ms"]) / 1000.0)  # type: ignore[arg-type]
                rows.append(row)
    finally:
        renderer.close()
    return rows


BENCHMARKS = {"animation_heatmap_sweep60": sweep_rows}
