"""attnsim's command line: the parser, the table of commands, and ``main``, which runs one and
turns any failure into one line on stderr and exit status 2. Everything but ``gui`` runs headless
(no display needed). Each command lives in the module named for what it does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attnsim.export.registry import names as format_names

from .animate import add_animate_parser, cmd_animate
from .bench import cmd_bench
from .experiments import cmd_audit, cmd_experiment, cmd_scenarios, cmd_train
from .export import cmd_export, cmd_screenshot
from .export_code import add_export_code_parser, cmd_export_code
from .gui import cmd_gui
from .induction import cmd_induction
from .install import add_models_parser, cmd_models
from .lessons import add_lesson_parsers, cmd_lesson, cmd_lessons
from .options import (
    Parser,
    UsageError,
    panel_ids,
    parse_formats,
    parse_number,
    parse_scale,
    parse_size,
    whole,
)
from .real_models import add_model_parser, cmd_model, with_model_export
from .variants import cmd_variants

__all__ = ["COMMANDS", "EXIT_USAGE", "UsageError", "build_parser", "describe_error", "main"]

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="attnsim", description="A visual simulator of scaled dot-product attention.")
    p.add_argument("--scenario", help="preset name or scenario file to open")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", parser_class=Parser)

    g = sub.add_parser("gui", help="open the app (the default)")
    g.add_argument("--scenario", help="preset name or scenario file to open")
    g.add_argument("--lesson", help="a lesson to start: a shipped lesson's id or a .toml file")

    sub.add_parser("scenarios", help="list the preset scenarios in teaching order, one line each")
    e = sub.add_parser("export", help="write one figure per panel")
    e.add_argument("--scenario", help="preset name or scenario file (or --model below)")
    e.add_argument("--out", required=True, type=Path, help="folder (file with --model)")
    formats = format_names()
    e.add_argument(
        "--format",
        default=",".join(formats),
        type=parse_formats,
        help=f"one or more of {', '.join(formats)} (default: all of them)",
    )
    e.add_argument("--scale", default=2.0, type=parse_scale, help="PNG scale, 1 to 4")
    e.add_argument(
        "--size", default="1600x1000", type=parse_size, help="window size, e.g. 1600x1000"
    )
    e.add_argument(
        "--panels",
        type=panel_ids,
        metavar="NAME,...",
        help="only these panels (ids as in the file names, e.g. heatmap,space3d)",
    )
    kind = e.add_mutually_exclusive_group()
    kind.add_argument(
        "--figure",
        dest="mode",
        action="store_const",
        const="figure",
        help="content only (matrices, plots, views) on white: the default",
    )
    kind.add_argument(
        "--panel",
        dest="mode",
        action="store_const",
        const="panel",
        help="the whole panel as on screen, controls included",
    )
    e.set_defaults(mode="figure")
    e.add_argument("--titles", action="store_true", help="draw each panel's title above it")
    e.add_argument("--mask", choices=["none", "causal"], help="the scenario's mask")
    e.add_argument("--head", type=int, metavar="N", help="the head: from 1, from 0 with --model")
    e.add_argument(
        "--receiving",
        metavar="TOKEN|INDEX",
        help="the receiving query: its label, or its position counting from 1",
    )
    e.add_argument("--temperature", type=parse_number, metavar="T", help="the softmax temperature")

    add_export_code_parser(sub, parse_number)

    s = sub.add_parser("screenshot", help="write a PNG of the whole main window")
    s.add_argument("--scenario", default="river-bank")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--size", default="1600x1000", type=parse_size)

    b = sub.add_parser("bench", help="run the benchmarks")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--only", nargs="+", metavar="NAME", help="run only these results")
    b.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")

    t = sub.add_parser("train", help="train a tiny classifier headless")
    t.add_argument("--model", required=True, choices=["sense-2d", "sense-8d", "biased"])
    t.add_argument("--epochs", required=True, type=int)
    t.add_argument("--seed", type=int, default=None)
    t.add_argument("--json", action="store_true")

    a = sub.add_parser("audit", help="check attention's invariants on a scenario")
    a.add_argument("--scenario", required=True)
    a.add_argument("--json", action="store_true")

    i = sub.add_parser("induction", help="train the two-layer induction-head model headless")
    i.add_argument("--steps", type=whole(0, 100_000), default=1000, help="training steps")
    i.add_argument("--seed", type=whole(0, 2**32 - 1), default=0, help="the (first) seed")
    i.add_argument("--seeds", type=whole(1, 100), default=1, help="train seeds S .. S+K-1")
    i.add_argument("--layers", type=whole(1, 3), default=2)
    i.add_argument("--heads", type=whole(1, 8), default=1, help="heads per layer")
    i.add_argument("--json", action="store_true")

    va = sub.add_parser("variants", help="check the tiled, cached, grouped and linear forms")
    va.add_argument("--scenario", default="river-bank", help="preset name or scenario file")
    va.add_argument("--json", action="store_true")

    x = sub.add_parser("experiment", help="print an experiment's numbers")
    x.add_argument("name", choices=["entropy", "fields"])
    x.add_argument("--json", action="store_true")
    x.add_argument("--rng", choices=["reference", "numpy"], default="reference")
    add_models_parser(sub)
    add_model_parser(sub, e)
    add_animate_parser(sub)
    add_lesson_parsers(sub)
    return p


def _version() -> str:
    from attnsim import __version__

    return f"attnsim {__version__}"


COMMANDS = {
    "gui": cmd_gui,
    "scenarios": cmd_scenarios,
    "export": with_model_export(cmd_export),
    "export-code": cmd_export_code,
    "screenshot": cmd_screenshot,
    "bench": cmd_bench,
    "train": cmd_train,
    "audit": cmd_audit,
    "experiment": cmd_experiment,
    "induction": cmd_induction,
    "variants": cmd_variants,
    "models": cmd_models,
    "model": cmd_model,
    "animate": cmd_animate,
    "lessons": cmd_lessons,
    "lesson": cmd_lesson,
}


def describe_error(exc: BaseException) -> str:
    """One line saying what went wrong, for any failure of a subcommand (no traceback)."""
    if isinstance(exc, UsageError):
        text = str(exc).removeprefix("attnsim: ")
    elif isinstance(exc, OSError) and exc.filename is not None:
        where = str(exc.filename)
        if getattr(exc, "filename2", None):
            where += f" -> {exc.filename2}"
        text = f"{where}: {exc.strerror or exc}"
    elif isinstance(exc, RecursionError):
        text = "the input is nested too deeply to read"
    elif isinstance(exc, MemoryError):
        text = "out of memory (the input is too large for this machine)"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"input is not UTF-8 text ({exc.reason} at byte {exc.start})"
    elif isinstance(exc, ValueError | OSError) and str(exc):
        text = str(exc)  # ScenarioError and friends already name the file and the field
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return " ".join(text.splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        command = args.command or "gui"
        return COMMANDS[command](args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # every failure: one line, exit 2
        print(f"attnsim: error: {describe_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
