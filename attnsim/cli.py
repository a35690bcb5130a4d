"""attnsim's command line. Everything but ``gui`` runs headless (no display needed)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

from attnsim.cli_headless import headless as _headless
from attnsim.cli_model import add_model_parser, cmd_model, with_model_export
from attnsim.cli_models import add_models_parser, cmd_models

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad arguments or a bad scenario: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1600x1000, got {text!r}") from None
    if not (200 <= w <= 8000 and 200 <= h <= 8000):
        raise argparse.ArgumentTypeError(f"size {w}x{h} is out of range (200 to 8000 per side)")
    return w, h


def _formats(text: str) -> tuple[str, ...]:
    from attnsim.export import FORMATS

    items = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    bad = [f for f in items if f not in FORMATS]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown format {bad[0] if bad else text!r}; choose from {', '.join(FORMATS)}"
        )
    return items


def _scale(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"scale must be a number, got {text!r}") from None
    if not 1.0 <= v <= 4.0:
        raise argparse.ArgumentTypeError(f"scale must be between 1 and 4, got {v}")
    return v


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None


def _whole(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must lie in [{lo}, {hi}], got {v}")
        return v

    return parse


def _panel_ids(text: str) -> list[str]:
    from attnsim.panels import PANEL_SPECS

    known = [s.panel_id for s in PANEL_SPECS]
    items = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in items if p not in known]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown panel {bad[0] if bad else text!r}; choose from {', '.join(known)}"
        )
    return list(dict.fromkeys(items))


def _load(name_or_path: str):
    from attnsim.engine.scenario import ScenarioError
    from attnsim.resources import resolve_scenario

    try:
        return resolve_scenario(name_or_path)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attnsim", description="A visual simulator of scaled dot-product attention.")
    p.add_argument("--scenario", help="preset name or scenario file to open")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    g = sub.add_parser("gui", help="open the app (the default)")
    g.add_argument("--scenario", help="preset name or scenario file to open")

    sub.add_parser("scenarios", help="list the preset scenarios")
    e = sub.add_parser("export", help="write one figure per panel")
    e.add_argument("--scenario", help="preset name or scenario file (or --model below)")
    e.add_argument("--out", required=True, type=Path, help="folder (file with --model)")
    e.add_argument("--format", default="png,svg,pdf", type=_formats)
    e.add_argument("--scale", default=2.0, type=_scale, help="PNG scale, 1 to 4")
    e.add_argument("--size", default="1600x1000", type=_size, help="window size, e.g. 1600x1000")
    e.add_argument(
        "--panels",
        type=_panel_ids,
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
    e.add_argument("--temperature", type=_number, metavar="T", help="the softmax temperature")

    s = sub.add_parser("screenshot", help="write a PNG of the whole main window")
    s.add_argument("--scenario", default="river-bank")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--size", default="1600x1000", type=_size)

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
    i.add_argument("--steps", type=_whole(0, 100_000), default=1000, help="training steps")
    i.add_argument("--seed", type=_whole(0, 2**32 - 1), default=0, help="the (first) seed")
    i.add_argument("--seeds", type=_whole(1, 100), default=1, help="train seeds S .. S+K-1")
    i.add_argument("--layers", type=_whole(1, 3), default=2)
    i.add_argument("--heads", type=_whole(1, 8), default=1, help="heads per layer")
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
    return p


def _version() -> str:
    from attnsim import __version__

    return f"attnsim {__version__}"


def cmd_scenarios(_: argparse.Namespace) -> int:
    from attnsim.resources import preset_titles

    for name, title in preset_titles().items():
        print(f"{name}\t{title}")
    return 0


def _window(scenario, size: tuple[int, int]):
    """The main window on ``scenario`` (a name, a path or a Scenario), shown offscreen."""
    from attnsim.app import MainWindow, create_app
    from attnsim.model.workbench import Workbench

    sc = _load(scenario) if isinstance(scenario, str) else scenario
    app = create_app()
    win = MainWindow(Workbench(sc), ask=lambda *_: False, restore_layout=False)
    win.resize(*size)
    win.show()
    for _ in range(5):
        app.processEvents()
    for panel in win.panels.built().values():  # export makes the others as it needs them
        panel.flush()
    app.processEvents()
    return app, win


def _export_scenario(args: argparse.Namespace):
    """The scenario with the export's --mask, --temperature and --receiving, validated."""
    from attnsim.engine.scenario import ScenarioError

    sc = _load(args.scenario)
    changes: dict[str, object] = {}
    if args.mask is not None:
        changes["mask"] = args.mask
    if args.temperature is not None:
        changes["temperature"] = args.temperature
    if args.receiving is not None:
        labels = sc.query_labels
        r = args.receiving
        if r in labels:
            changes["receiving"] = r
        elif r.strip().lstrip("+-").isdigit():
            i = int(r)
            if not 1 <= i <= len(labels):
                raise UsageError(
                    f"attnsim export: --receiving {r} is out of range: the queries are "
                    f"1 to {len(labels)} ({', '.join(labels)})"
                )
            changes["receiving"] = i - 1
        else:
            raise UsageError(
                f"attnsim export: --receiving {r!r} is not a query token of {sc.name} "
                f"({', '.join(labels)}) nor a position"
            )
    try:
        sc = sc.replace(**changes)
    except ScenarioError as exc:
        raise UsageError(f"attnsim export: {exc}") from None
    if args.head is not None:
        n = len(sc.heads) if sc.mode == "tokens" else 1
        if not 1 <= args.head <= n:
            raise UsageError(
                f"attnsim export: --head {args.head} is out of range: {sc.name} has "
                f"{n} head{'s' if n != 1 else ''} (1 to {n})"
            )
    return sc


def cmd_export(args: argparse.Namespace) -> int:
    sc = _export_scenario(args)
    _headless()
    _, win = _window(sc, args.size)
    if args.head is not None:
        win.wb.set_focused_head(args.head - 1)
    if args.mode == "figure":
        for pid in args.panels or ():
            why = win.panels[pid].figure_unavailable()
            if why:
                raise UsageError(
                    f"attnsim export: {pid} has no figure for this scenario ({why}); "
                    "use --panel for the whole panel"
                )
    skipped: dict[str, str] = {}
    files = win.export_all(args.out, args.format, args.scale, mode=args.mode,
                           panels=args.panels, titles=args.titles, skipped=skipped)  # fmt: skip
    win.wb.undo_stack.setClean()
    for pid, why in skipped.items():
        print(f"attnsim export: skipped {pid}: {why}", file=sys.stderr)
    for f in files:
        print(f)
    return 0


def cmd_screenshot(args: argparse.Namespace) -> int:
    _headless()
    from attnsim.export import grab_image

    _, win = _window(args.scenario, args.size)
    image = grab_image(win, 1.0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(args.out), "PNG"):
        raise UsageError(f"could not write {args.out}")
    print(args.out)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    _headless()
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


def cmd_train(args: argparse.Namespace) -> int:
    from attnsim.engine.experiments import train_model

    if args.epochs < 0:
        raise UsageError(f"attnsim train: --epochs must be 0 or more, got {args.epochs}")
    r = train_model(args.model, args.epochs, seed=args.seed)
    if args.json:
        r = {k: v for k, v in r.items() if k != "params"}
        print(json.dumps(r, indent=1))
        return 0
    print(
        f"model {r['model']} ({r['optimizer']}, lr {r['lr']}), seed {r['seed']}, "
        f"{r['epochs']} epochs"
    )
    print(f"final mean loss {r['final_loss']:.6f}")
    for s in r["sentences"]:
        ok = "✓" if s["correct"] else "✗"
        row = ", ".join(f"{t} {w:.2f}" for t, w in s["attention"])
        sentence = " ".join(s["tokens"])
        print(
            f"{ok} {sentence:24s} label {s['label']:8s} predicted {s['prediction']:8s} "
            f"attention of '{s['tokens'][-1]}': {row}"
        )
    return 0


def _induction_run(cfg, seed: int, steps: int) -> dict:
    from dataclasses import asdict

    from attnsim.engine.induction import InductionTrainer, forward, one_blas_thread
    from attnsim.engine.induction_circuits import (
        ablation_table,
        evaluation_batch,
        head_scores,
        induction_criterion,
    )

    trainer = InductionTrainer(cfg, seed=seed)
    t0 = time.perf_counter()
    with one_blas_thread():
        for _ in range(steps):
            trainer.step()
    seconds = time.perf_counter() - t0
    toks, half = evaluation_batch(trainer), trainer.half_len
    scores = head_scores(forward(trainer.params, toks), half)
    loss, _, rows = ablation_table(trainer.params, toks, half)
    crit = induction_criterion(trainer.params, toks, half)
    return {
        "seed": seed,
        "steps": steps,
        "seconds": seconds,
        "steps_per_s": steps / seconds if seconds > 0 else None,
        "loss": loss,
        "loss_first_half": crit.first_loss,
        "loss_repeated_half": crit.repeated_loss,
        "previous_token": scores.previous_token.astype(float).tolist(),
        "induction": scores.induction.astype(float).tolist(),
        "ablation": [asdict(r) for r in rows],
        "criterion": asdict(crit),
    }


def _head_verdict(c: dict) -> str:
    if c["layer"] < 0:
        return "no induction head: a one-layer model has no later head to compose"
    where = f"L{c['layer']}H{c['head']} (induction {c['induction']:.2f}, zero-ablation gives "
    where += f"back {100 * c['ablation_share']:.0f} % of the gap)"
    return f"induction head {where}" if c["met"] else f"no induction head; best candidate {where}"


def _print_induction_run(r: dict) -> None:
    rate = f", {r['steps_per_s']:.0f} steps/s" if r["steps_per_s"] else ""
    print(f"seed {r['seed']}: {r['steps']} steps in {r['seconds']:.1f} s{rate}")
    first, rep = r["loss_first_half"], r["loss_repeated_half"]
    print(f"loss: first half {first:.3f}, repeated half {rep:.3f} ({100 * rep / first:.0f} %)")
    print(f"{'head':6s} {'prev-token':>10s} {'induction':>10s}")
    for layer, (prev, ind) in enumerate(zip(r["previous_token"], r["induction"], strict=True)):
        for h, (p, i) in enumerate(zip(prev, ind, strict=True)):
            print(f"L{layer}H{h:<4d} {p:10.3f} {i:10.3f}")
    print(f"ablation (baseline loss {r['loss']:.3f}, repeated half {rep:.3f}):")
    print(f"{'head':6s} {'mode':5s} {'loss':>8s} {'delta':>8s} {'repeated':>9s} {'delta':>8s}")
    for a in r["ablation"]:
        print(f"L{a['layer']}H{a['head']:<4d} {a['mode']:5s} {a['loss']:8.3f} {a['delta']:+8.3f} "
              f"{a['repeated_loss']:9.3f} {a['repeated_delta']:+8.3f}")  # fmt: skip
    print(_head_verdict(r["criterion"]))


def cmd_induction(args: argparse.Namespace) -> int:
    from attnsim.engine.induction import Config

    cfg = Config(n_layers=args.layers, n_heads=args.heads)
    runs = [_induction_run(cfg, s, args.steps) for s in range(args.seed, args.seed + args.seeds)]
    where = [f"L{c['layer']}H{c['head']}" for c in (r["criterion"] for r in runs) if c["met"]]
    if args.json:
        summary = {"formed": len(where), "seeds": len(runs), "where": where}
        print(json.dumps({"config": vars(cfg), "runs": runs, **summary}, indent=1))
        return 0
    print(f"model {cfg.n_layers} layers x {cfg.n_heads} heads, d_model {cfg.d_model}, "
          f"d_head {cfg.d_head}, vocabulary {cfg.d_vocab}")  # fmt: skip
    if len(runs) == 1:
        _print_induction_run(runs[0])
        return 0
    for r in runs:
        first, rep = r["loss_first_half"], r["loss_repeated_half"]
        print(f"seed {r['seed']}: loss first half {first:.3f}, repeated {rep:.3f}; "
              f"{_head_verdict(r['criterion'])}")  # fmt: skip
    places = ", ".join(f"{w} x{where.count(w)}" for w in sorted(set(where)))
    print(f"an induction head formed in {len(where)} of {len(runs)} seeds"
          + (f": {places}" if places else ""))  # fmt: skip
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from attnsim.engine.audit import run_audit

    sc = _load(args.scenario)
    checks = run_audit(sc)
    failed = [c for c in checks if not c.passed]
    if args.json:
        print(json.dumps({"scenario": sc.name, "passed": not failed,
                          "checks": [c.to_dict() for c in checks]}, indent=1))  # fmt: skip
    else:
        for c in checks:
            print(f"{'PASS' if c.passed else 'FAIL'}  {c.name:34s} {c.detail}")
        print(f"{len(checks) - len(failed)} of {len(checks)} checks pass on {sc.name}")
    return 1 if failed else 0


def cmd_variants(args: argparse.Namespace) -> int:
    from attnsim.cli_variants import format_report, long_context_dict
    from attnsim.engine.variant_checks import jsonable, variant_report

    sc = _load(args.scenario)
    report = variant_report(sc)
    if args.json:
        out = report.to_dict()
        out["long_context"] = jsonable(long_context_dict(sc))
        print(json.dumps(out, indent=1, allow_nan=False))
    else:
        print(format_report(report))
    return 0 if report.passed else 1


def cmd_experiment(args: argparse.Namespace) -> int:
    from attnsim.engine.experiments import entropy_vs_dk, three_fields

    if args.name == "entropy":
        r = entropy_vs_dk(rng=args.rng)
        if args.json:
            print(json.dumps(r, indent=1))
            return 0
        print(
            f"attention entropy over {r['n_keys']} random keys, {r['trials']} trials, "
            f"seed {r['seed']} ({r['rng']} generator); maximum {r['max_entropy']:.2f} bits"
        )
        for d, raw, sc, sd in zip(
            r["d_k"], r["entropy_unscaled"], r["entropy_scaled"], r["score_sd"], strict=True
        ):
            print(f"d_k = {d:4d}: without scaling {raw:4.2f} bits, with 1/√d_k {sc:4.2f} bits; "
                  f"score SD {sd:6.2f} vs √d_k {d ** 0.5:6.2f}")  # fmt: skip
        return 0
    r = three_fields(rng=args.rng)
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "keys"}, indent=1))
        return 0
    for res in r["results"]:
        fields = ", ".join(f"{f} {w:.2f}" for f, w in res["per_field"].items())
        print(f"{res['query']:36s} weight by field: {fields} | entropy {res['entropy']:.2f} bits")
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    # Start-up makes hundreds of thousands of objects and almost no garbage: the cyclic
    # collector would walk them again and again (about 6 % of the time to the first frame).
    # It comes back once the window is up, with what start-up made frozen out of its way.
    gc.disable()
    from attnsim.app import MainWindow, create_app
    from attnsim.model.workbench import Workbench

    t0 = time.perf_counter()
    scenario = getattr(args, "scenario", None)
    sc = _load(scenario or "river-bank")
    app = create_app(sys.argv[:1])
    wb = Workbench(sc)
    if scenario and (scenario.endswith(".json") or Path(scenario).exists()):
        wb.path = Path(scenario)
    win = MainWindow(wb)
    win.show()
    from PySide6.QtCore import QTimer

    QTimer.singleShot(0, _collector_back_on)
    if os.environ.get("ATTNSIM_FIRST_PAINT"):
        # For the startup benchmark: report the first painted frame, then quit.
        def painted() -> None:
            for panel in win.panels.built().values():  # the panels on screen
                panel.flush()
            win.repaint()
            collector = (
                f"collector {'on' if gc.isenabled() else 'off'}, {gc.get_freeze_count()} frozen"
            )
            print(f"first-paint {time.perf_counter() - t0:.6f} {collector}", flush=True)
            app.quit()

        QTimer.singleShot(0, painted)
        return app.exec()
    report = os.environ.get("ATTNSIM_STARTUP_REPORT")
    if report:
        from attnsim.app.report import startup_report

        return startup_report(app, win, Path(report))
    win.offer_recovery()
    return app.exec()


def _collector_back_on() -> None:
    gc.freeze()
    gc.enable()


COMMANDS = {
    "gui": cmd_gui,
    "scenarios": cmd_scenarios,
    "export": with_model_export(cmd_export),
    "screenshot": cmd_screenshot,
    "bench": cmd_bench,
    "train": cmd_train,
    "audit": cmd_audit,
    "experiment": cmd_experiment,
    "induction": cmd_induction,
    "variants": cmd_variants,
    "models": cmd_models,
    "model": cmd_model,
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


if __name__ == "__main__":
    sys.exit(main())
