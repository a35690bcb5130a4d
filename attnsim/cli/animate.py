"""``attnsim animate``: one panel drawn at every step of a sweep, written as GIF, MP4, APNG or
WebP. Everything is checked before the first frame is drawn (the sweep against the scenario,
the panel, the output's folder), and a half-written file is removed."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from attnsim.export.animation import MAX_FPS, animation_exporter_for, animation_names
from attnsim.export.steps import STEPS, LabSteps, parse_training

from .headless import headless
from .options import UsageError, load_scenario, parse_number, parse_size

__all__ = ["add_animate_parser", "cmd_animate"]

PROG = "attnsim animate"


def add_animate_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    a = sub.add_parser(
        "animate",
        help="write an animation of one panel while one quantity is swept",
        description="Draw one panel at every step of a sweep and write the frames as an "
        "animation (the format from the file's suffix: .gif, .mp4, .apng or .png, .webp).",
    )
    a.add_argument("--scenario", default="river-bank", help="preset name or scenario file")
    a.add_argument("--panel", required=True, metavar="NAME", help="the panel, e.g. heatmap")
    what = a.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--steps",
        choices=sorted(STEPS),
        help="every step of a lab: kernel (the kernel stepper's tiles, --panel kernel_lab) or "
        "memory (the linear memory's fill, --panel linear_lab)",
    )
    what.add_argument(
        "--train",
        metavar="EVERY:FRAMES",
        help="the model of --panel stepper or induction_lab trained from its start, a frame "
        "every EVERY steps",
    )
    what.add_argument(
        "--sweep",
        metavar="SPEC",
        help="temperature:START:END:FRAMES (log steps), scale:START:END:FRAMES (every score "
        "multiplied by this factor before the softmax, log steps), "
        "vector:TOKEN:AXIS:START:END:FRAMES, "
        "wq:HEAD:ROW:COL:START:END:FRAMES or k:START:END:FRAMES (the long-context lab's "
        "distractor keys)",
    )
    a.add_argument("--out", required=True, type=Path, help="the animation file to write")
    a.add_argument("--format", choices=animation_names(), help="instead of the file's suffix")
    a.add_argument("--fps", default=12.0, type=parse_number, help=f"1 to {MAX_FPS} a second")
    a.add_argument("--size", default="800x600", type=parse_size, help="frame size, e.g. 800x600")
    a.add_argument("--hold", default=1.0, type=parse_number, help="seconds on the last frame")
    a.add_argument("--caption", action="store_true", help="write the swept value on each frame")
    a.add_argument("--head", type=int, metavar="N", help="the head shown, from 1")
    return a


def _fail(message: str) -> UsageError:
    return UsageError(f"{PROG}: {message}")


def _checked_out(out: Path, fmt: str | None):
    if out.is_dir():
        raise _fail(f"--out {out} is a folder; name the animation file to write")
    try:
        exp = animation_exporter_for(out, fmt)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise _fail(f"cannot write {out}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise _fail(f"cannot write {out}: permission denied")
    return exp


def cmd_animate(args: argparse.Namespace) -> int:
    from attnsim.export.frames import panel_ids
    from attnsim.export.sweeps import parse_sweep

    sc = load_scenario(args.scenario)
    if args.panel not in panel_ids():
        raise _fail(f"unknown panel {args.panel!r}; choose from {', '.join(panel_ids())}")
    if args.train is not None:
        try:
            sweep = parse_training(args.train, args.panel)
        except ValueError as exc:
            raise _fail(f"--train: {exc}") from None
        if args.panel != sweep.panel:
            raise _fail("--train shows only in the stepper or the induction_lab panel")
    elif args.steps is not None:
        sweep = LabSteps(args.steps)
        if sweep.panel != args.panel:
            raise _fail(f"--steps {args.steps} shows only in the {sweep.panel} panel")
    else:
        try:
            sweep = parse_sweep(args.sweep, sc)
        except ValueError as exc:
            raise _fail(f"--sweep: {exc}") from None
        if sweep.panel is not None and sweep.panel != args.panel:
            raise _fail(f"--sweep {sweep.quantity} shows only in the {sweep.panel} panel")
    if not 1 <= args.fps <= MAX_FPS:
        raise _fail(f"--fps must lie between 1 and {MAX_FPS}, got {args.fps:g}")
    if not 0 <= args.hold <= 60:
        raise _fail(f"--hold must lie between 0 and 60 seconds, got {args.hold:g}")
    heads = len(sc.heads) if sc.mode == "tokens" else 1
    if args.head is not None and not 1 <= args.head <= heads:
        raise _fail(f"--head {args.head} is out of range: {sc.name} has heads 1 to {heads}")
    exp = _checked_out(args.out, args.format)

    headless()
    from attnsim.app import create_app
    from attnsim.export.frames import FrameRenderer, sweep_frames
    from attnsim.model.workbench import Workbench

    create_app()
    wb = Workbench(sc)
    if args.head is not None:
        wb.set_focused_head(args.head - 1)
    try:
        renderer = FrameRenderer(wb, args.panel, args.size)
    except ValueError as exc:  # the panel shows nothing for this scenario
        raise _fail(str(exc)) from None
    start = time.perf_counter()
    try:
        count = exp.write(sweep_frames(renderer, sweep, caption=args.caption), args.out,
                          fps=args.fps, hold=args.hold)  # fmt: skip
    except OSError as exc:  # the disk filled up, the folder went away: no file is left
        raise _fail(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        renderer.close()
        wb.close()
    took = time.perf_counter() - start
    print(f"{PROG}: {count} frames in {took:.1f} s ({count / took:.1f} a second)",
          file=sys.stderr)  # fmt: skip
    print(args.out)
    return 0
